// Freshness: how long a message took from its produce timestamp (the producer's, or the broker's
// for LogAppendTime topics) to being visible to a reader of its table, that is, to the commit
// that absorbed it. A binding's batch keeps the timestamp of each message it was given; once the
// round's commit landed, the quantiles are taken over all of them.
//
// A producer's clock may be behind or ahead of this machine's, and a replayed backlog is as old
// as it is: freshness is what a reader sees, not how fast floe is.

export interface Freshness {
  /** Half the round's messages were visible this long after they were produced, or sooner. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The oldest message of the round. */
  readonly maxMs: number;
}

/** The produce timestamps of a round's messages, ms since the epoch. */
export class ProduceTimes {
  #times = new Float64Array(1024);
  #count = 0;

  /** A message's timestamp; a negative one (a message without timestamp, the old formats) is left out. */
  add(timestamp: bigint): void {
    const ms = Number(timestamp);
    if (ms < 0) return;
    if (this.#count === this.#times.length) {
      const grown = new Float64Array(this.#times.length * 2);
      grown.set(this.#times);
      this.#times = grown;
    }
    this.#times[this.#count++] = ms;
  }

  get count(): number {
    return this.#count;
  }

  /** The freshness of the messages if they became visible at `visibleAt`; undefined for none. */
  freshness(visibleAt: number): Freshness | undefined {
    const n = this.#count;
    if (n === 0) return undefined;
    // The oldest timestamps are the least fresh: the p99 of freshness is the 1st percentile of time.
    const times = this.#times.subarray(0, n).sort();
    const at = (q: number) => Math.max(0, visibleAt - times[Math.floor(q * (n - 1))]!);
    return { p50Ms: at(0.5), p99Ms: at(0.01), maxMs: at(0) };
  }
}
