// The zod pieces that the job file's sections share: identifiers, secrets, durations.
import { z } from "zod";
import { Secret } from "./secret.ts";

/** Names that become catalog identifiers (namespace, table): safe in every engine's SQL without quoting. */
const IDENTIFIER = /^[A-Za-z0-9_]+$/;

export const identifier = z
  .string()
  .regex(IDENTIFIER, "must be letters, digits and _ (it becomes a catalog identifier)");

export const nonEmpty = z.string().min(1, "must not be empty");

export const secret = z
  .string()
  .min(1, "must not be empty")
  .transform((value) => new Secret(value));

/** A duration with its unit: ms, s, m, h or d ("30s", "1500ms", "2m", "6h", "3d"). */
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;
const DURATION_UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a duration with its unit, rounded; undefined when the text is not one. */
export function parseDurationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * DURATION_UNIT_MS[match[2] as keyof typeof DURATION_UNIT_MS]);
}

/** A timeout-like duration with its unit, "30s", "1500ms" or "2m", as milliseconds: 1 ms to 1 hour. */
export function duration(fallback: string, what: string) {
  return z
    .union([z.string(), z.number()])
    .transform((value, ctx) => {
      const ms = typeof value === "string" ? parseDurationMs(value) : undefined;
      if (ms === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `expected a duration with its unit ("30s", "1500ms" or "2m"), got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      return ms;
    })
    .pipe(z.int().min(1, "must be at least 1ms").max(3_600_000, "at most 1 hour (60m)"))
    .prefault(fallback)
    .describe(`${what} Default ${fallback}.`);
}
