// A job's `commit:` policy: when a sync that is still reading commits what it has read so far.
// A round commits every table as soon as the first of its limits is reached, so that what a sync
// holds in memory stays bounded whatever the size of its messages, a long sync that dies keeps
// what it committed, and in continuous mode a message is visible within about one interval:
//   interval       time since the round's first message was read (default 10s): at low traffic
//                  one commit per interval at most, never a commit of nothing
//   max_messages   messages read since the last commit (default 250,000)
//   max_bytes      bytes of keys and values read since the last commit (default 32 MiB): a
//                  decoded message is held as a record until its round is written, several
//                  times its size on the wire, so the byte limit is what bounds memory for
//                  large messages
import { z } from "zod";
import { parseDurationMs } from "./schema-parts.ts";

export interface CommitPolicy {
  /** Milliseconds from a round's first message to its commit. */
  readonly intervalMs: number;
  readonly maxMessages: number;
  readonly maxBytes: number;
}

const SIZE = /^(\d+)\s*(B|KiB|MiB|GiB)?$/;
const UNIT_BYTES = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;

/** Bytes of a size written as an integer or as `<n><unit>` with unit B, KiB, MiB or GiB; undefined when it is neither. */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (match === null) return undefined;
  return Number(match[1]) * UNIT_BYTES[(match[2] ?? "B") as keyof typeof UNIT_BYTES];
}

const byteSize = z.union([
  z.number().int().positive(),
  z.string().transform((text, ctx) => {
    const bytes = parseByteSize(text);
    if (bytes === undefined || bytes <= 0) {
      ctx.addIssue({
        code: "custom",
        message: `expected a positive number of bytes, or <n><unit> with unit KiB, MiB or GiB ("64MiB"), got ${JSON.stringify(text)}`,
      });
      return z.NEVER;
    }
    return bytes;
  }),
]);

const interval = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const ms = typeof value === "string" ? parseDurationMs(value) : undefined;
  if (ms === undefined || ms < 100) {
    ctx.addIssue({
      code: "custom",
      message: `expected a duration of at least 100ms with its unit ("10s", "500ms", "1m"), got ${JSON.stringify(value)}`,
    });
    return z.NEVER;
  }
  return ms;
});

// Measured with bench/sync.ts (1M messages of ~150 bytes, append): 100k and 250k messages per
// commit land at the same rate; the byte limit takes over from the count at ~200 bytes a message.
export const commitPolicySchema = z
  .strictObject({
    interval: interval
      .default(10_000)
      .describe(
        'Commit every table once this long has passed since the first message read after the last commit ("10s").',
      ),
    max_messages: z
      .number()
      .int()
      .positive()
      .default(250_000)
      .describe("Commit every table once this many messages were read since the last commit."),
    max_bytes: byteSize
      .default(32 * 1024 ** 2)
      .describe(
        'Commit every table once this many bytes of keys and values were read since the last commit ("32MiB").',
      ),
  })
  .prefault({})
  .transform((c): CommitPolicy => ({ intervalMs: c.interval, maxMessages: c.max_messages, maxBytes: c.max_bytes }))
  .describe("When a sync that is still reading commits what it has read: the first limit reached.");

export const DEFAULT_COMMIT: CommitPolicy = commitPolicySchema.parse(undefined);
