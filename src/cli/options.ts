// Argument parsers shared by the commands.

import { InvalidArgumentError, Option } from "commander";
import { Secret } from "../job/secret.ts";
import type { ResumeFrom } from "../kafka/plan.ts";

/** For a repeatable option: --config a.yaml --config b.yaml. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function nonNegativeSeconds(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a number of seconds");
  return n;
}

export function positiveSeconds(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a positive number of seconds");
  return n;
}

export function positiveInteger(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

/** A count that may be zero, as --sample takes it (0: sample nothing). */
export function nonNegativeInteger(text: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isSafeInteger(n) || n < 0)
    throw new InvalidArgumentError("expected a whole number");
  return n;
}

/** HOST:PORT ([v6]:PORT too), as --metrics takes it. */
export function listenAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new InvalidArgumentError("expected HOST:PORT, e.g. 127.0.0.1:9464");
  return { host: match[1] ?? match[2]!, port };
}

/** An http(s) URL that carries a secret (a Slack webhook's token): kept as a Secret. */
export function webhookUrl(text: string): Secret {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {}
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new InvalidArgumentError("expected an http:// or https:// URL");
  }
  return new Secret(text);
}

/** --sample of floe check and floe discover: how many messages per topic the columns come from. */
export function sampleOption(): Option {
  return new Option("--sample <messages>", "messages per topic to infer the columns from (0: none)")
    .argParser(nonNegativeInteger)
    .default(1000);
}

/** The places `--resume-from` may name (see ResumeFrom in kafka/plan.ts). */
export const RESUME_FROM_CHOICES = ["group", "earliest", "latest"] as const satisfies readonly ResumeFrom[];
