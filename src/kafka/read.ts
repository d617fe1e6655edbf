// Reads planned partitions from their start offset to their stop offset (exclusive).
//
// Each read thread is a worker with its own Consumer, so its own connections and its own fetch
// session per broker: the library keeps one incremental fetch session (KIP-227) per broker and
// consumer, and two requests in flight on one session would break its epochs. A worker takes the
// next partition, fetches it with explicit offsets (never joining a group) until its position
// reaches the stop offset, then takes the next one; up to `maxThreads` partitions are in flight.
// While the caller handles a batch, the worker already fetches the next one.
//
// A partition is done when its position (the offset after the last record batch fetched) reaches
// the stop offset, not when a count of messages is: offsets skip over compacted records, control
// records (transaction markers) and aborted transactions. Records at or past the stop offset are
// never delivered, even when the broker returns them.
//
// Reads are read_committed. Aborted transactions are filtered here as the Java client does, from
// the aborted-transaction list of each fetch response: @platformatic/kafka filters only the
// aborted records whose abort marker comes in the same response, and would deliver the others.
//
// A fetch that fails after the library's retries (broker gone, topic deleted, offset out of range)
// stops every worker cleanly: the result says what was delivered up to which offset per partition,
// so that the caller can commit that much and the next sync resumes there.
import type { Consumer } from "@platformatic/kafka";
import type { KafkaCluster } from "./connection.ts";
import { describeCause, KafkaError, protocolErrorId } from "./errors.ts";

export interface PartitionRange {
  topic: string;
  partition: number;
  startOffset: bigint;
  /** Exclusive. */
  stopOffset: bigint;
}

export type Bytes = Uint8Array;

export interface KafkaMessage {
  topic: string;
  partition: number;
  offset: bigint;
  /** Milliseconds since the epoch: the producer's time, or the broker's for LogAppendTime topics. */
  timestamp: bigint;
  /** Null for a message without key. */
  key: Bytes | null;
  /** Null for a tombstone. */
  value: Bytes | null;
  headers: ReadonlyArray<readonly [Bytes | null, Bytes | null]>;
}

/**
 * Messages of one partition, in offset order. Keys, values and headers are views into the fetch
 * response (no copy): holding one keeps its response (up to maxBytesPerFetch) in memory.
 */
export interface MessageBatch {
  topic: string;
  partition: number;
  messages: KafkaMessage[];
  /** Every offset below this one has now been delivered or skipped: the offset to resume from. */
  nextOffset: bigint;
}

export interface ReadOptions {
  /** Partitions read at the same time. Default 2. */
  maxThreads?: number;
  /**
   * Bytes asked per fetch (one partition per fetch). Default 1 MiB, Java's max.partition.fetch.bytes.
   * On a local broker 256-512 KiB costs least CPU and memory (bench/kafka-read.ts); more saves
   * round trips to a distant broker. The broker returns at least one record batch even if larger.
   */
  maxBytesPerFetch?: number;
  /** How long the broker may hold a fetch that has no data yet. Reads stop below the last stable offset, so data is normally there at once. Default 500 ms. */
  maxWaitMs?: number;
  /** Attempts the library makes for a failing fetch before the read stops. Default 3. */
  retries?: number;
  /** Aborting stops the read cleanly, as a failure does; the result's status is "aborted". */
  signal?: AbortSignal;
}

export type ReadStatus = "complete" | "aborted" | "failed";

export interface PartitionProgress {
  topic: string;
  partition: number;
  startOffset: bigint;
  stopOffset: bigint;
  /** Offsets below this one were delivered (the callback returned) or skipped: what the caller may commit. */
  nextOffset: bigint;
  complete: boolean;
  messages: number;
  /** Key and value bytes delivered. */
  bytes: number;
}

export interface ReadResult {
  status: ReadStatus;
  /** In the order of the ranges given. */
  partitions: PartitionProgress[];
  /** Why the read failed, when status is "failed". */
  error?: KafkaReadError;
  messages: number;
  bytes: number;
  durationMs: number;
}

/** A fetch failed: names the topic, partition and the offset that could not be fetched. */
export class KafkaReadError extends KafkaError {
  override name = "KafkaReadError";
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;

  constructor(topic: string, partition: number, offset: bigint, message: string, options?: ErrorOptions) {
    super(`reading ${topic} partition ${partition} at offset ${offset}: ${message}`, options);
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
  }
}

const readCommitted = 1;
// Record batch attributes (Kafka's DefaultRecordBatch).
const logAppendTimeAttribute = 0x08;
const transactionalAttribute = 0x10;
const controlAttribute = 0x20;
// A fetch that returns nothing while data should be there is retried this many times, then reported.
const maxEmptyFetches = 5;

/**
 * Handles one batch. Returning (or resolving to) `false` declines the batch and stops the read:
 * the batch does not count as read, and the status is "aborted".
 */
export type BatchHandler = (batch: MessageBatch) => undefined | false | Promise<undefined | false>;

/**
 * Reads every range, calling `onBatch` for each batch of messages. Calls to `onBatch` never overlap
 * (one batch at a time, across all partitions) and the read waits for the promise it returns; a
 * batch counts as read once that promise resolved. Resolves when every partition is read, or once
 * the read stopped after a failed fetch, an abort or a declined batch (see `status`). Rejects,
 * after stopping, with the error `onBatch` threw.
 */
export async function readPartitions(
  cluster: KafkaCluster,
  ranges: readonly PartitionRange[],
  onBatch: BatchHandler,
  options: ReadOptions = {},
): Promise<ReadResult> {
  const started = performance.now();
  const seen = new Set<string>();
  for (const { topic, partition } of ranges) {
    // Two reads of one partition would deliver its messages twice.
    const key = `${partition}:${topic}`;
    if (seen.has(key)) throw new KafkaError(`${topic} partition ${partition} is listed twice in the ranges to read`);
    seen.add(key);
  }
  const read = new Read(cluster, onBatch, options);
  const progress = ranges.map((r) => read.track(r));
  // Longest first, so that a long partition does not start last and run alone.
  const queue = [...progress].sort((a, b) => compare(b.stopOffset - b.startOffset, a.stopOffset - a.startOffset));
  const threads = Math.max(1, Math.min(options.maxThreads ?? 2, queue.length));
  const onAbort = () => read.stop();
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.all(Array.from({ length: threads }, () => read.worker(queue)));
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  if (read.callbackError !== undefined) throw read.callbackError;
  let messages = 0;
  let bytes = 0;
  for (const p of progress) {
    messages += p.messages;
    bytes += p.bytes;
  }
  const result: ReadResult = {
    status: read.failure ? "failed" : progress.every((p) => p.complete) ? "complete" : "aborted",
    partitions: progress,
    messages,
    bytes,
    durationMs: performance.now() - started,
  };
  if (read.failure) result.error = read.failure;
  return result;
}

/** State shared by the workers of one read. */
class Read {
  failure: KafkaReadError | undefined;
  callbackError: unknown;
  #stopping = false;
  #delivery: Promise<unknown> = Promise.resolve();
  readonly #cluster: KafkaCluster;
  readonly #onBatch: BatchHandler;
  readonly #maxBytes: number;
  readonly #maxWaitMs: number;
  readonly #retries: number;

  constructor(cluster: KafkaCluster, onBatch: BatchHandler, options: ReadOptions) {
    this.#cluster = cluster;
    this.#onBatch = onBatch;
    this.#maxBytes = options.maxBytesPerFetch ?? 1024 * 1024;
    this.#maxWaitMs = options.maxWaitMs ?? 500;
    this.#retries = options.retries ?? 3;
  }

  track(range: PartitionRange): PartitionProgress {
    const { topic, partition, startOffset, stopOffset } = range;
    const complete = startOffset >= stopOffset;
    return { topic, partition, startOffset, stopOffset, nextOffset: startOffset, complete, messages: 0, bytes: 0 };
  }

  stop(): void {
    this.#stopping = true;
  }

  /** One read thread: takes partitions from the queue until it is empty or the read stops. */
  async worker(queue: PartitionProgress[]): Promise<void> {
    let consumer: Consumer | undefined;
    try {
      for (let next = queue.shift(); next && !this.#stopping; next = queue.shift()) {
        if (next.complete) continue;
        consumer ??= this.#cluster.newConsumer({ retries: this.#retries });
        await this.#readPartition(consumer, next);
      }
    } finally {
      await consumer?.close(true).catch(() => {});
    }
  }

  async #readPartition(consumer: Consumer, progress: PartitionProgress): Promise<void> {
    const { topic, partition, stopOffset } = progress;
    // Tracking the topic makes the library route every fetch to the partition's current leader,
    // and refresh the metadata when leadership moves.
    consumer.topics.track(topic);
    // The fetch in flight, if any: it is left to finish before the consumer can be closed.
    let inflight: Promise<unknown> | undefined;
    try {
      let target: { node: number; topicId: string };
      try {
        target = await this.#target(consumer, topic, partition);
      } catch (error) {
        this.#fail(progress, progress.nextOffset, error);
        return;
      }
      let position = progress.nextOffset;
      let pending = this.#fetch(consumer, target, partition, position);
      inflight = pending;
      const out: Decoded = { messages: [], next: position, bytes: 0 };
      let emptyFetches = 0;
      while (!this.#stopping) {
        let response: FetchResponse;
        try {
          response = await pending;
        } catch (error) {
          this.#fail(progress, position, error);
          return;
        } finally {
          inflight = undefined;
        }
        if (this.#stopping) return;
        out.messages = [];
        out.next = position;
        out.bytes = 0;
        const partitionResponse = decodeResponse(response, target.topicId, topic, partition, position, stopOffset, out);
        if (out.next <= position) {
          // Nothing came back although the plan saw data up to the stop offset.
          const logEnd = partitionResponse?.lastStableOffset ?? -1n;
          if ((logEnd >= 0n && logEnd <= position) || ++emptyFetches > maxEmptyFetches) {
            const detail = logEnd >= 0n ? `the log now ends at ${logEnd}` : "the broker returns no data";
            this.#failWith(
              new KafkaReadError(
                topic,
                partition,
                position,
                `${detail}, below the stop offset ${stopOffset} (log truncated?)`,
              ),
            );
            return;
          }
          pending = this.#fetch(consumer, target, partition, position);
          inflight = pending;
          continue;
        }
        emptyFetches = 0;
        const next = minOffset(out.next, stopOffset);
        const done = next >= stopOffset;
        if (!done) {
          // Fetch ahead while the caller handles this batch.
          pending = this.#fetch(consumer, target, partition, out.next);
          inflight = pending;
        }
        if (out.messages.length > 0) {
          const delivered = await this.#deliver({ topic, partition, messages: out.messages, nextOffset: next });
          if (!delivered) return;
          progress.messages += out.messages.length;
          progress.bytes += out.bytes;
        }
        progress.nextOffset = next;
        position = out.next;
        if (done) {
          progress.complete = true;
          return;
        }
      }
    } finally {
      await inflight?.catch(() => {});
      consumer.topics.untrack(topic);
    }
  }

  async #target(consumer: Consumer, topic: string, partition: number): Promise<{ node: number; topicId: string }> {
    const metadata = await consumer.metadata({ topics: [topic] });
    const topicMetadata = metadata.topics.get(topic);
    const leader = topicMetadata?.partitions[partition]?.leader;
    if (!topicMetadata || leader === undefined || leader < 0) {
      throw new KafkaError(`no leader for ${topic} partition ${partition} in the cluster metadata`);
    }
    return { node: leader, topicId: topicMetadata.id };
  }

  #fetch(
    consumer: Consumer,
    target: { node: number; topicId: string },
    partition: number,
    fetchOffset: bigint,
  ): Promise<FetchResponse> {
    const fetched = consumer.fetch({
      node: target.node,
      maxBytes: this.#maxBytes,
      maxWaitTime: this.#maxWaitMs,
      minBytes: 1,
      isolationLevel: readCommitted,
      topics: [
        {
          topicId: target.topicId,
          partitions: [
            { partition, fetchOffset, partitionMaxBytes: this.#maxBytes, currentLeaderEpoch: -1, lastFetchedEpoch: -1 },
          ],
        },
      ],
    });
    // Awaited later; until then a rejection must not count as unhandled.
    fetched.catch(() => {});
    return fetched;
  }

  /** Hands the batch to the callback once the previous delivery is over; false when the read stopped meanwhile. */
  #deliver(batch: MessageBatch): Promise<boolean> {
    const delivery = this.#delivery.then(async () => {
      if (this.#stopping) return false;
      try {
        if ((await this.#onBatch(batch)) !== false) return true;
        this.#stopping = true;
        return false;
      } catch (error) {
        if (this.callbackError === undefined) this.callbackError = error;
        this.#stopping = true;
        return false;
      }
    });
    this.#delivery = delivery;
    return delivery;
  }

  #fail(progress: PartitionProgress, offset: bigint, error: unknown): void {
    if (this.#stopping && !this.failure) return; // aborted meanwhile: the error is the abort's consequence
    this.#failWith(readError(this.#cluster, progress.topic, progress.partition, offset, error));
  }

  #failWith(error: KafkaReadError): void {
    this.failure ??= error;
    this.#stopping = true;
  }
}

interface Decoded {
  messages: KafkaMessage[];
  /** Offset after the last record batch seen (data, control or aborted). */
  next: bigint;
  bytes: number;
}

type FetchResponse = Awaited<ReturnType<Consumer["fetch"]>>;
type FetchPartition = FetchResponse["responses"][number]["partitions"][number];

/**
 * Appends the data records of [position, stop) in the response to `out.messages` and sets
 * `out.next`. Returns the partition's part of the response, if any. This is the hot loop: one
 * object per message and two bigints (offset, timestamp), no other allocation per message.
 */
function decodeResponse(
  response: FetchResponse,
  topicId: string,
  topic: string,
  partition: number,
  position: bigint,
  stop: bigint,
  out: Decoded,
): FetchPartition | undefined {
  let found: FetchPartition | undefined;
  for (const topicResponse of response.responses) {
    // Fetch v12 and older identify topics by name, which the library maps back to the id.
    if (topicResponse.topicId !== topicId && topicResponse.topicId !== topic) continue;
    for (const p of topicResponse.partitions) {
      if (p.partitionIndex === partition) found = p;
    }
  }
  const batches = found?.records;
  if (!batches || batches.length === 0) return found;

  const aborted = found!.abortedTransactions;
  // Aborted transactions by first offset, consumed as the batches pass them (Java's algorithm).
  const pendingAborts =
    aborted && aborted.length > 0 ? [...aborted].sort((a, b) => compare(a.firstOffset, b.firstOffset)) : undefined;
  let abortedProducers: Set<bigint> | undefined;
  let nextAbort = 0;

  const messages = out.messages;
  let next = out.next;
  let bytes = out.bytes;
  for (const batch of batches) {
    const base = batch.firstOffset;
    const lastOffset = base + BigInt(batch.lastOffsetDelta);
    if (lastOffset < position) continue;
    if (lastOffset >= next) next = lastOffset + 1n;
    const attributes = batch.attributes;
    if (pendingAborts && (attributes & transactionalAttribute) !== 0) {
      while (nextAbort < pendingAborts.length && pendingAborts[nextAbort]!.firstOffset <= lastOffset) {
        abortedProducers ??= new Set();
        abortedProducers.add(pendingAborts[nextAbort]!.producerId);
        nextAbort++;
      }
      if (abortedProducers?.has(batch.producerId)) {
        // The abort marker closes the aborted transaction; later batches of the producer are live again.
        if ((attributes & controlAttribute) !== 0 && isAbortMarker(batch.records[0]?.key ?? null)) {
          abortedProducers.delete(batch.producerId);
        }
        continue;
      }
    }
    if ((attributes & controlAttribute) !== 0) continue;
    if (base >= stop) continue;

    // Offsets relative to the batch as numbers, so that the per-record test needs no bigint.
    const fromDelta = position > base ? Number(position - base) : 0;
    const stopDelta = stop - base;
    const toDelta = stopDelta > 0x7fffffffn ? 0x7fffffff : Number(stopDelta);
    const logAppendTime = (attributes & logAppendTimeAttribute) !== 0;
    const firstTimestamp = batch.firstTimestamp;
    const maxTimestamp = batch.maxTimestamp;
    for (const record of batch.records) {
      const delta = record.offsetDelta;
      if (delta < fromDelta) continue;
      if (delta >= toDelta) break;
      const key = record.key;
      const value = record.value;
      messages.push({
        topic,
        partition,
        offset: base + BigInt(delta),
        timestamp: logAppendTime ? maxTimestamp : firstTimestamp + record.timestampDelta,
        key,
        value,
        headers: record.headers,
      });
      if (key !== null) bytes += key.length;
      if (value !== null) bytes += value.length;
    }
  }
  out.next = next;
  out.bytes = bytes;
  return found;
}

/** A control record's key is version (int16) then type (int16): 0 is ABORT, 1 is COMMIT. */
function isAbortMarker(key: Bytes | null): boolean {
  return key !== null && key.length >= 4 && ((key[2]! << 8) | key[3]!) === 0;
}

function readError(
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  offset: bigint,
  error: unknown,
): KafkaReadError {
  const connection = cluster.connectionError(error);
  if (connection) return new KafkaReadError(topic, partition, offset, connection.message, { cause: error });
  // Not allowed to read: the error names the ACL, and its cause makes it kind auth, which fails
  // the sync with nothing more committed (a rerun would meet the same refusal).
  const refused = cluster.authorizationError(`fetching ${topic} partition ${partition}`, error, { topics: [topic] });
  if (refused) return new KafkaReadError(topic, partition, offset, refused.message, { cause: refused });
  const cause = cluster.scrub(describeCause(error));
  const id = protocolErrorId(error);
  const hint =
    id === "OFFSET_OUT_OF_RANGE"
      ? "the offset is no longer in the log (retention deleted messages during the read?)"
      : id === "UNKNOWN_TOPIC_OR_PARTITION" || id === "UNKNOWN_TOPIC_ID"
        ? "the topic or partition no longer exists (deleted during the read?)"
        : undefined;
  return new KafkaReadError(topic, partition, offset, hint ? `${hint} (${cause})` : cause, { cause: error });
}

function minOffset(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
