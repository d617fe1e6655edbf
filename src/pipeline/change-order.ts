// Which message of a key wins, across partitions, rounds and members. Each message gets a
// position that orders the messages of its key (one string comparison), and a batch's winner
// that is older than the row the table holds for its key is stale: it neither lands nor deletes.
// Inside a batch, dedupBatch already orders by position; this compares each winner with the
// table, across syncs and across the members of a job's `cluster:`. The key index says where
// the held row is (data file, position), and the file's ordering columns say its position: those
// columns of each data file that holds a row a winner would replace, read once per plan.
//
// Two orders:
// - a change stream's: its source position (`_cdc_position`, cdc-envelope.ts), because a
//   connector that replays sends a key's changes again, out of source order;
// - `order_by: _kafka_timestamp` (plain upsert): the message's Kafka timestamp, then its
//   partition, then its offset. One total order over every message of the topic, so the table
//   holds each key's greatest message whatever order the messages were read in: by one process
//   or by several members, in one round or many. Partition and offset only break ties: two
//   messages of one key at the same millisecond, the higher partition wins, and within a
//   partition the later offset. A row written by another engine (no `_kafka_*` values) is older
//   than any message.
// Without either, the latest offset read wins: within one partition that is the log's order,
// so a key that only ever is in one partition (a topic keyed by the dedup key) needs nothing more.
//
// A key the table does not hold has no position to compare with: a message older than a delete
// committed in an earlier round lands again (a delete leaves no row to remember it by).
import { CDC_POSITION } from "../decode/cdc-envelope.ts";
import { KAFKA_OFFSET, KAFKA_PARTITION, KAFKA_TIMESTAMP, millisToMicros } from "../decode/system-columns.ts";
import type { KeyValue } from "../iceberg/parquet/key-column-reader.ts";
import { readDataFileColumns } from "../iceberg/scan/data-file-columns.ts";
import { planFiles } from "../iceberg/scan/plan-files.ts";
import { findField, type Schema } from "../iceberg/spec/schema.ts";
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import type { Table } from "../iceberg/table.ts";
import type { Binding } from "../job/job.ts";
import { type BatchWinners, OP_CREATE } from "../upsert/batch-dedup.ts";
import { KEY_HASH_WORDS } from "../upsert/key-hash.ts";
import type { KeyIndex } from "../upsert/key-index.ts";
import type { RowMessages } from "./binding-batch.ts";

/** How the messages of a key are ordered: each message's position, and a held row's, from its columns. */
export interface WinnerOrdering {
  /** Per message of the batch: its position; null: none (it follows the message it comes after). */
  readonly positions: readonly (string | null)[];
  /** The columns a held row's position is made of. */
  readonly columns: readonly string[];
  /** The held row's position from its values of `columns`; null: it has none, any message is newer. */
  heldPosition(values: readonly KeyValue[]): string | null;
}

/** The ordering of a batch's messages, undefined when the latest offset wins. */
export function winnerOrdering(binding: Binding, rows: RowMessages): WinnerOrdering | undefined {
  if (rows.changes) {
    return {
      positions: rows.changes.positions,
      columns: [CDC_POSITION],
      heldPosition: ([position]) => (typeof position === "string" ? position : null),
    };
  }
  if (binding.mode !== "upsert" || binding.orderBy !== KAFKA_TIMESTAMP) return undefined;
  const positions: string[] = new Array(rows.count);
  for (let i = 0; i < rows.count; i++) {
    positions[i] = kafkaOrderPosition(
      BigInt(millisToMicros(rows.timestamps[i]!)),
      rows.partitions[i]!,
      rows.offsets[i]!,
    );
  }
  return {
    positions,
    columns: [KAFKA_TIMESTAMP, KAFKA_PARTITION, KAFKA_OFFSET],
    heldPosition: ([timestamp, partition, offset]) =>
      typeof timestamp === "bigint" && typeof partition === "number" && typeof offset === "bigint"
        ? kafkaOrderPosition(timestamp, partition, offset)
        : null,
  };
}

/** Shifts int64 to unsigned, so that a timestamp before 1970 (Kafka's -1: none) still orders below. */
const INT64_BIAS = 1n << 63n;

/**
 * The position of a message under `order_by: _kafka_timestamp`: its timestamp (microseconds, as
 * `_kafka_timestamp` holds it), partition and offset, each zero-padded to a fixed width so that
 * positions compare as strings in that order.
 */
export function kafkaOrderPosition(timestampMicros: bigint, partition: number, offset: bigint): string {
  return `${(timestampMicros + INT64_BIAS).toString().padStart(20, "0")}/${String(partition).padStart(10, "0")}/${offset.toString().padStart(19, "0")}`;
}

/**
 * The messages of the winners that are older than their key's row in the table at `parent`
 * (1 = stale), by message number; undefined when none is.
 */
export async function staleChanges(
  table: Table,
  schema: Schema,
  index: KeyIndex,
  hashes: Uint32Array,
  winners: BatchWinners,
  ordering: WinnerOrdering,
  parent: Snapshot | undefined,
): Promise<Uint8Array | undefined> {
  const positions = winners.positions;
  if (positions === undefined) return undefined;
  const fields = ordering.columns.map((name) => findField(schema, name));
  if (fields.some((field) => field === undefined)) return undefined;
  const held = new Map<string, { message: number; mine: string; position: number }[]>();
  for (let w = 0; w < winners.messages.length; w++) {
    if (winners.ops[w] === OP_CREATE) continue;
    const message = winners.messages[w]!;
    const mine = positions[w] ?? null;
    if (mine === null) continue;
    const slot = index.find(hashes, message);
    if (slot < 0) continue;
    const path = index.files.path(index.fileAt(slot));
    let rows = held.get(path);
    if (rows === undefined) {
      rows = [];
      held.set(path, rows);
    }
    rows.push({ message, mine, position: index.positionAt(slot) });
  }
  if (held.size === 0) return undefined;
  const files = await planFiles(table, parent);
  const stale = new Uint8Array(hashes.length / KEY_HASH_WORDS);
  const ids = fields.map((field) => field!.id);
  let found = 0;
  for (const [path, rows] of held) {
    const live = files.dataFiles.get(path);
    if (live === undefined) continue;
    const { columns } = await readDataFileColumns(table.io, live.entry.file, schema, ids);
    const values = ids.map((id) => columns.get(id)!);
    for (const { message, mine, position } of rows) {
      const tableHolds = ordering.heldPosition(values.map((column) => column[position] ?? null));
      if (tableHolds !== null && mine < tableHolds) {
        stale[message] = 1;
        found++;
      }
    }
  }
  return found === 0 ? undefined : stale;
}

/** Whether two stale sets drop the same messages. */
export function sameStale(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((flag, i) => flag === b[i]);
}

/** The winners less the stale messages. */
export function withoutStale(winners: BatchWinners, stale: Uint8Array | undefined): BatchWinners {
  if (stale === undefined) return winners;
  let kept = 0;
  for (const m of winners.messages) if (stale[m] === 0) kept++;
  const messages = new Uint32Array(kept);
  const ops = new Uint8Array(kept);
  const positions: (string | null)[] = [];
  for (let w = 0, k = 0; w < winners.messages.length; w++) {
    if (stale[winners.messages[w]!] === 1) continue;
    messages[k] = winners.messages[w]!;
    ops[k] = winners.ops[w]!;
    positions.push(winners.positions?.[w] ?? null);
    k++;
  }
  return { messages, ops, positions };
}
