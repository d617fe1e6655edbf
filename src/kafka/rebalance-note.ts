// The last rebalance of a job's consumer group, kept by the group itself: at every rebalance the
// leader writes into each member's assignment (the user data of the ConsumerProtocol assignment,
// which the classic protocol carries opaquely and DescribeGroups returns) the generation, when
// it assigned it, and what that member gained and gave up (its assignment against the partitions
// its subscription said it owned). Anyone who may describe the group (floe status, the UI) then
// reads the last rebalance without joining the group and without asking each member, for as long
// as the generation lives. Decoding is defensive: the user data of a member that is not floe can
// be anything, and is then no note at all.

/** Topic -> partitions (ascending). */
export type NotedPartitions = ReadonlyMap<string, readonly number[]>;

export interface RebalanceNote {
  generationId: number;
  /** When the leader assigned the generation, ms since the epoch (the leader's clock). */
  assignedAt: number;
  /** Partitions the member owns in this generation and did not own before. */
  gained: NotedPartitions;
  /** Partitions the member owned before and does not own in this generation. */
  gaveUp: NotedPartitions;
}

/** Marks floe's note among other clients' user data, and its layout's version. */
const MARK = "floe.rebalance";
const VERSION = 1;
/** A note larger than this is not floe's (a note names each partition of a job at most twice). */
const MAX_NOTE_BYTES = 1 << 20;

export function encodeRebalanceNote(note: RebalanceNote): Buffer {
  return Buffer.from(
    JSON.stringify({
      [MARK]: VERSION,
      generation: note.generationId,
      assignedAt: note.assignedAt,
      gained: Object.fromEntries(note.gained),
      gaveUp: Object.fromEntries(note.gaveUp),
    }),
  );
}

/** The note in a member's assignment user data; undefined when there is none (or it is not floe's). */
export function decodeRebalanceNote(userData: Uint8Array | null | undefined): RebalanceNote | undefined {
  if (!userData || userData.length === 0 || userData.length > MAX_NOTE_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(userData).toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const o = parsed as Record<string, unknown>;
  if (o[MARK] !== VERSION) return undefined;
  const generationId = o["generation"];
  const assignedAt = o["assignedAt"];
  if (!Number.isSafeInteger(generationId) || !Number.isSafeInteger(assignedAt)) return undefined;
  const gained = partitionsOf(o["gained"]);
  const gaveUp = partitionsOf(o["gaveUp"]);
  if (!gained || !gaveUp) return undefined;
  return { generationId: generationId as number, assignedAt: assignedAt as number, gained, gaveUp };
}

function partitionsOf(value: unknown): Map<string, number[]> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const result = new Map<string, number[]>();
  for (const [topic, partitions] of Object.entries(value)) {
    if (!Array.isArray(partitions) || !partitions.every((p) => Number.isSafeInteger(p) && p >= 0)) return undefined;
    result.set(
      topic,
      [...(partitions as number[])].sort((a, b) => a - b),
    );
  }
  return result;
}

/**
 * The leader's notes for one generation: per member, what it gained and gave up, from what its
 * subscription said it owned and what the assignment gives it.
 */
export function rebalanceNotes(
  members: readonly { memberId: string; owned: NotedPartitions }[],
  assignment: ReadonlyMap<string, NotedPartitions>,
  generationId: number,
  assignedAt: number,
): Map<string, RebalanceNote> {
  const notes = new Map<string, RebalanceNote>();
  for (const { memberId, owned } of members) {
    const assigned = assignment.get(memberId) ?? new Map<string, readonly number[]>();
    notes.set(memberId, {
      generationId,
      assignedAt,
      gained: difference(assigned, owned),
      gaveUp: difference(owned, assigned),
    });
  }
  return notes;
}

/** The partitions of `a` that are not in `b`, by topic; topics left empty are absent. */
export function difference(a: NotedPartitions, b: NotedPartitions): Map<string, number[]> {
  const result = new Map<string, number[]>();
  for (const [topic, partitions] of a) {
    const other = new Set(b.get(topic) ?? []);
    const only = partitions.filter((p) => !other.has(p));
    if (only.length > 0)
      result.set(
        topic,
        [...only].sort((x, y) => x - y),
      );
  }
  return result;
}
