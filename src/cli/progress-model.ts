// The progress of a sync per topic, folded from its events (pipeline/events.ts), and drawn as one
// line per topic: a bar, messages read of messages to read, the rate and the time left. Pure:
// the clock is the events' `at` and the `now` the caller passes, so the maths and the lines are
// unit-tested; progress-terminal.ts puts them on a terminal.
//
// The bar follows the offsets (the read position of each partition between where it started and
// where it stops), so it is full exactly when every partition is read; the count shows
// messages. "To read" counts offsets, an upper bound of the messages: a transaction marker or a
// compacted-away message takes an offset and is never read, so a complete topic can show
// 998 / 1,000.
import type { SyncEvent } from "../pipeline/events.ts";

/** The rate is measured over this much of the recent past, so it follows a read that speeds up or slows down. */
export const RATE_WINDOW_MS = 10_000;

/** `stopped`: the sync ended early (Ctrl-C, a broker lost) before the topic was read to its end; what was read landed. */
export type TopicState = "reading" | "committing" | "committed" | "done" | "stopped" | "failed";

export interface TopicProgress {
  readonly topic: string;
  /** Offsets to read over the topic's partitions. */
  readonly toRead: number;
  /** Offsets read so far: each partition's read position minus where it started. */
  readonly offsetsRead: number;
  /** Messages read so far. */
  readonly messages: number;
  readonly state: TopicState;
  /** Messages per second over the last RATE_WINDOW_MS; undefined until two readings exist. */
  readonly rate: number | undefined;
  /** Seconds until every offset is read at that rate; undefined when unknown. */
  readonly secondsLeft: number | undefined;
}

interface Sample {
  readonly at: number;
  readonly messages: number;
}

interface TopicFold {
  toRead: number;
  /** Per partition: where reading started, where it stops, the read position, the messages read. */
  partitions: Map<number, { start: bigint; stop: bigint; next: bigint; messages: number }>;
  samples: Sample[];
  state: TopicState;
}

export class SyncProgress {
  readonly #topics = new Map<string, TopicFold>();
  #planned = false;

  get planned(): boolean {
    return this.#planned;
  }

  apply(event: SyncEvent): void {
    switch (event.type) {
      case "planned": {
        this.#planned = true;
        for (const t of event.tables) this.#fold(t.topic);
        for (const p of event.partitions) {
          const fold = this.#fold(p.topic);
          fold.partitions.set(p.partition, {
            start: p.startOffset,
            stop: p.stopOffset,
            next: p.startOffset,
            messages: 0,
          });
          fold.toRead += Number(p.stopOffset - p.startOffset);
        }
        for (const fold of this.#topics.values()) fold.samples.push({ at: event.at, messages: 0 });
        break;
      }
      case "partition-progress": {
        const fold = this.#topics.get(event.topic);
        const partition = fold?.partitions.get(event.partition);
        if (!fold || !partition) return;
        partition.next = event.nextOffset;
        partition.messages = event.messages;
        const messages = sum([...fold.partitions.values()].map((p) => p.messages));
        fold.samples.push({ at: event.at, messages });
        // Keep the window's samples, and the last one before it as its start.
        while (fold.samples.length > 2 && fold.samples[1]!.at <= event.at - RATE_WINDOW_MS) fold.samples.shift();
        fold.state = offsetsRead(fold) >= fold.toRead ? "committing" : "reading";
        break;
      }
      case "table-committed": {
        const fold = this.#topics.get(event.report.topic);
        if (fold && offsetsRead(fold) >= fold.toRead) fold.state = "committed";
        break;
      }
      case "finished":
        for (const fold of this.#topics.values()) fold.state = offsetsRead(fold) >= fold.toRead ? "done" : "stopped";
        break;
      case "failed":
        for (const fold of this.#topics.values()) if (fold.state !== "committed") fold.state = "failed";
        break;
    }
  }

  /** Each topic's progress at `now` (ms since the epoch), in the plan's order. */
  topics(now: number): TopicProgress[] {
    return [...this.#topics].map(([topic, fold]) => {
      const read = offsetsRead(fold);
      const last = fold.samples.at(-1);
      const messages = last?.messages ?? 0;
      const reading = fold.state === "reading";
      const measured = reading ? messageRate(fold.samples, now) : undefined;
      return {
        topic,
        toRead: fold.toRead,
        offsetsRead: read,
        messages,
        state: fold.state,
        rate: measured,
        secondsLeft: reading ? secondsLeft(fold.toRead - read, measured) : fold.toRead === read ? 0 : undefined,
      };
    });
  }

  #fold(topic: string): TopicFold {
    let fold = this.#topics.get(topic);
    if (!fold) {
      fold = { toRead: 0, partitions: new Map(), samples: [], state: "reading" };
      this.#topics.set(topic, fold);
    }
    return fold;
  }
}

function offsetsRead(fold: TopicFold): number {
  return sum([...fold.partitions.values()].map((p) => Number(p.next - p.start)));
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/**
 * Messages per second between the oldest sample of the window and `now`; undefined with fewer
 * than two samples or no time passed. Measured up to `now`, not to the last sample, so a read
 * that stalls shows its rate falling.
 */
export function messageRate(samples: readonly Sample[], now: number): number | undefined {
  if (samples.length < 2) return undefined;
  const first = samples[0]!;
  const last = samples.at(-1)!;
  const elapsed = Math.max(now, last.at) - first.at;
  if (elapsed <= 0) return undefined;
  return ((last.messages - first.messages) * 1000) / elapsed;
}

/** Seconds to read `remaining` at `rate` messages per second; undefined when the rate is unknown or zero. */
export function secondsLeft(remaining: number, rate: number | undefined): number | undefined {
  if (remaining <= 0) return 0;
  if (rate === undefined || !(rate > 0)) return undefined;
  return Math.ceil(remaining / rate);
}

/** `1:05`, `12:00`, `1:02:03`; `--:--` when unknown. */
export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return "--:--";
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** `850/s`, `12.4k/s`, `1.2M/s`; `-/s` when unknown. */
export function formatRate(rate: number | undefined): string {
  if (rate === undefined) return "-/s";
  if (rate < 1000) return `${Math.round(rate)}/s`;
  if (rate < 1_000_000) return `${(rate / 1000).toFixed(rate < 10_000 ? 1 : 0)}k/s`;
  return `${(rate / 1_000_000).toFixed(1)}M/s`;
}

/** A bar of `width` cells, full in proportion to done/total (full when there is nothing to do). */
export function bar(done: number, total: number, width: number): string {
  const fraction = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
  const full = Math.floor(fraction * width);
  return "█".repeat(full) + "░".repeat(width - full);
}

const STATE_TEXT: Record<Exclude<TopicState, "reading">, string> = {
  committing: "read, committing",
  committed: "committed",
  done: "done",
  stopped: "stopped early; what was read landed",
  failed: "failed",
};

const BAR_WIDTH = 24;
const number = new Intl.NumberFormat("en-US");

/** One line per topic, names padded to one width; each line cut to `columns` so that none wraps. */
export function progressLines(topics: readonly TopicProgress[], columns: number): string[] {
  const nameWidth = Math.min(32, Math.max(0, ...topics.map((t) => t.topic.length)));
  return topics.map((t) => {
    const name = t.topic.length > nameWidth ? `${t.topic.slice(0, nameWidth - 1)}…` : t.topic.padEnd(nameWidth);
    const percent = t.toRead <= 0 ? 100 : Math.floor((Math.min(t.offsetsRead, t.toRead) * 100) / t.toRead);
    const count = `${number.format(t.messages)} / ${number.format(t.toRead)}`;
    const tail =
      t.toRead === 0 && t.state !== "failed"
        ? "up to date"
        : t.state === "reading"
          ? `${formatRate(t.rate)}  ${formatDuration(t.secondsLeft)} left`
          : STATE_TEXT[t.state];
    const line = `${name}  ${bar(t.offsetsRead, t.toRead, BAR_WIDTH)} ${String(percent).padStart(3)}%  ${count}  ${tail}`;
    return fit(line, columns);
  });
}

/** Cut to `columns` characters (counting code points; the bar's cells are one column each). */
function fit(line: string, columns: number): string {
  const chars = [...line];
  return chars.length <= columns ? line : chars.slice(0, Math.max(0, columns)).join("");
}
