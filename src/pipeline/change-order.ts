// Changes of a key arrive out of source order when a connector replays: a change stream's row
// carries its source position (`_cdc_position`, cdc-envelope.ts), and a batch's winner that is
// older than the row the table holds for its key is stale: it neither lands nor deletes. Inside
// a batch, dedupBatch already orders by position; this compares each winner with the table,
// across syncs. The key index says where the held row is (data file, position), and the file's
// `_cdc_position` column says its position: one column of each data file that holds a row a
// winner would replace, read once per commit round.
//
// A key the table does not hold has no position to compare with: a replayed create of a key
// deleted in an earlier round lands again (a delete leaves no row to remember it by).
import { CDC_POSITION } from "../decode/cdc-envelope.ts";
import { readDataFileColumns } from "../iceberg/scan/data-file-columns.ts";
import { planFiles } from "../iceberg/scan/plan-files.ts";
import { findField, type Schema } from "../iceberg/spec/schema.ts";
import { currentSnapshot } from "../iceberg/spec/table-metadata.ts";
import type { Table } from "../iceberg/table.ts";
import { type BatchWinners, OP_CREATE } from "../upsert/batch-dedup.ts";
import { KEY_HASH_WORDS } from "../upsert/key-hash.ts";
import type { KeyIndex } from "../upsert/key-index.ts";

/** The messages of the winners that are older than their key's row in the table (1 = stale), by message number. */
export async function staleChanges(
  table: Table,
  schema: Schema,
  index: KeyIndex,
  hashes: Uint32Array,
  winners: BatchWinners,
): Promise<Uint8Array | undefined> {
  const positions = winners.positions;
  if (positions === undefined) return undefined;
  const field = findField(schema, CDC_POSITION);
  if (field === undefined) return undefined;
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
  const files = await planFiles(table, currentSnapshot(table.metadata));
  const stale = new Uint8Array(hashes.length / KEY_HASH_WORDS);
  let found = 0;
  for (const [path, rows] of held) {
    const live = files.dataFiles.get(path);
    if (live === undefined) continue;
    const { columns } = await readDataFileColumns(table.io, live.entry.file, schema, [field.id]);
    const values = columns.get(field.id)!;
    for (const { message, mine, position } of rows) {
      const tableHolds = values[position];
      if (typeof tableHolds === "string" && mine < tableHolds) {
        stale[message] = 1;
        found++;
      }
    }
  }
  return found === 0 ? undefined : stale;
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
