// Passwords, tokens and client secrets from the job file. A Secret prints as `***` wherever the
// config goes (console.log, util.inspect, JSON.stringify, template strings): only an explicit
// reveal() gives the value, at the one place that hands it to a client.
import { inspect } from "node:util";
import type { JobConfig } from "./job-config.ts";

export const REDACTED = "***";

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

/**
 * The job as plain JSON-ready data, secrets replaced by `***`: what `floe check` prints and what
 * run history stores. Maps become objects.
 */
export function redactJob(job: JobConfig): unknown {
  return redact(job);
}

function redact(value: unknown): unknown {
  if (value instanceof Secret) return REDACTED;
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, redact(v)]));
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
  }
  return value;
}
