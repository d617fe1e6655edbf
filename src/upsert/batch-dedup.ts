// Within one batch the last offset per key wins: of the messages of one key, only the latest becomes
// a row (or a delete). A change stream orders by the source's position instead (its messages can
// arrive out of it, when a connector replays): a message whose position is below that of its
// key's winner so far loses, an equal one (a duplicate) replaces it, so the later offset of two
// copies of one event wins, with the same row. A message without a position (a tombstone)
// replaces the winner and keeps its position: it follows the delete it comes after. A temporary open-addressing table from key hash to the latest message so far,
// holding message numbers into the batch's own key hashes: no copy of a hash, no object per message.
import { KEY_HASH_WORDS } from "./key-hash.ts";
import type { KeyIndex } from "./key-index.ts";

/** What a winning message does to the table; OP_TYPE gives its `_op_type`. */
export const OP_CREATE = 0;
export const OP_UPDATE = 1;
export const OP_DELETE = 2;
/** `_op_type` by op: c a key new to the table, u a key the table has, d a tombstone. */
export const OP_TYPE = ["c", "u", "d"] as const;

export interface BatchWinners {
  /** Numbers of the winning messages, ascending: offset order. */
  messages: Uint32Array;
  /** The op of each winner, OP_CREATE, OP_UPDATE or OP_DELETE. */
  ops: Uint8Array;
  /** Ordered by source positions: each winner's, a tombstone taking that of the change it follows. */
  positions?: (string | null)[];
}

/**
 * The winners among a batch's messages, given their key hashes in offset order (message i at words
 * [4i, 4i + 4)) and which are tombstones (1) or carry a value (0). The index tells a key the table has
 * (u) from one it lacks (c); a tombstone is d either way.
 */
export function dedupBatch(
  hashes: Uint32Array,
  tombstones: Uint8Array,
  index: KeyIndex,
  positions?: readonly (string | null)[],
): BatchWinners {
  const count = hashes.length / KEY_HASH_WORDS;
  if (tombstones.length !== count) {
    throw new RangeError(`${tombstones.length} tombstone flags for ${count} messages`);
  }
  // At most half full: short probes for the price of 8 bytes a message.
  let capacity = 16;
  while (capacity < count * 2) capacity *= 2;
  const mask = capacity - 1;
  const shift = 32 - Math.log2(capacity);
  /** Message number + 1 of the latest message of the slot's key; 0 for an empty slot. */
  const latest = new Uint32Array(capacity);
  const wins = new Uint8Array(count);
  /** The source position of the slot's winner, when ordering by positions. */
  const slotPositions: (string | null)[] | undefined = positions === undefined ? undefined : new Array(capacity);
  let winners = 0;
  for (let message = 0; message < count; message++) {
    const at = message * KEY_HASH_WORDS;
    const h0 = hashes[at]!;
    const h1 = hashes[at + 1]!;
    const h2 = hashes[at + 2]!;
    const h3 = hashes[at + 3]!;
    let slot = h0 >>> shift;
    let held = latest[slot]!;
    while (held !== 0) {
      const other = (held - 1) * KEY_HASH_WORDS;
      if (hashes[other] === h0 && hashes[other + 1] === h1 && hashes[other + 2] === h2 && hashes[other + 3] === h3)
        break;
      slot = (slot + 1) & mask;
      held = latest[slot]!;
    }
    if (held === 0) {
      winners++;
      if (slotPositions !== undefined) slotPositions[slot] = positions![message] ?? null;
    } else {
      if (slotPositions !== undefined) {
        const mine = positions![message] ?? null;
        const winner = slotPositions[slot] ?? null;
        if (mine !== null && winner !== null && mine < winner) continue;
        slotPositions[slot] = mine ?? winner;
      }
      wins[held - 1] = 0;
    }
    latest[slot] = message + 1;
    wins[message] = 1;
  }

  const messages = new Uint32Array(winners);
  const ops = new Uint8Array(winners);
  let winnerPositions: (string | null)[] | undefined;
  if (slotPositions !== undefined) {
    const byMessage = new Map<number, string | null>();
    for (let slot = 0; slot < capacity; slot++)
      if (latest[slot] !== 0) byMessage.set(latest[slot]! - 1, slotPositions[slot] ?? null);
    winnerPositions = [];
    for (let message = 0; message < count; message++)
      if (wins[message] === 1) winnerPositions.push(byMessage.get(message)!);
  }
  for (let message = 0, w = 0; message < count; message++) {
    if (wins[message] === 0) continue;
    messages[w] = message;
    ops[w] = tombstones[message] === 1 ? OP_DELETE : index.find(hashes, message) >= 0 ? OP_UPDATE : OP_CREATE;
    w++;
  }
  return winnerPositions === undefined ? { messages, ops } : { messages, ops, positions: winnerPositions };
}
