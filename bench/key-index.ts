// Key index benchmark: how fast keys hash, and how fast the index inserts, finds, saves and loads at
// 1M and 10M keys, with its memory per key; what saving one commit's changes costs, written whole
// and appended to the journal, and loading with the journal replayed; then one upsert batch
// (dedup + delete plan + commit).
//
//   node bench/key-index.ts [keys ...]     default: 1000000 10000000
//
// The index is fed uniform random hashes from a seeded PRNG rather than SHA-256 of real keys: a key
// hash is uniform either way, and hashing 10M keys first would only slow the run down (the hash rate
// is measured on its own, on ~10-byte keys).
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dedupBatch } from "../src/upsert/batch-dedup.ts";
import { hashKey, KEY_HASH_WORDS, keyHashes } from "../src/upsert/key-hash.ts";
import { KeyIndex } from "../src/upsert/key-index.ts";
import { loadKeyIndex, saveKeyIndex } from "../src/upsert/key-index-file.ts";
import {
  appendKeyIndexChanges,
  journalPath,
  loadJournaledKeyIndex,
  saveWholeKeyIndex,
} from "../src/upsert/key-index-journal.ts";
import { planDeletes, recordCommit } from "../src/upsert/plan-deletes.ts";

const ROWS_PER_FILE = 100_000;
const sizes = process.argv.slice(2).map(Number);

function randomHashes(count: number, seed: number): Uint32Array {
  const hashes = keyHashes(count);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < hashes.length; i++) {
    // xorshift32
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    hashes[i] = x >>> 0;
  }
  return hashes;
}

/** An index of every key of `hashes`, ROWS_PER_FILE keys per data file, grown from empty. */
function indexOf(hashes: Uint32Array): KeyIndex {
  const index = new KeyIndex("bench", 1n);
  let file = 0;
  for (let k = 0; k < hashes.length / KEY_HASH_WORDS; k++) {
    if (k % ROWS_PER_FILE === 0) file = index.files.intern(`s3://warehouse/db/t/data/${k}.parquet`);
    index.upsert(hashes, k, file, k % ROWS_PER_FILE);
  }
  return index;
}

/** Runs `run`, timing it by the process's CPU time (the machine may be shared) and by the clock. */
async function measure<T>(run: () => T | Promise<T>): Promise<{ result: T; cpuMs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await run();
  const wallMs = performance.now() - start;
  const { user, system } = process.cpuUsage(cpu);
  return { result, cpuMs: (user + system) / 1000, wallMs };
}

function rate(count: number, timing: { cpuMs: number; wallMs: number }): string {
  const perSecond = (ms: number) => (count / ms / 1000).toFixed(2);
  return `${perSecond(timing.cpuMs)} M/s (wall ${perSecond(timing.wallMs)})`;
}

function duration(timing: { cpuMs: number; wallMs: number }): string {
  return `${timing.cpuMs.toFixed(0)} ms cpu (wall ${timing.wallMs.toFixed(0)})`;
}

async function benchHash(): Promise<void> {
  const count = 1_000_000;
  const keys = Array.from({ length: 1000 }, (_, i) => `cust-${100_000 + i * 7919}`); // 11 characters
  const out = keyHashes(1);
  for (let i = 0; i < 200_000; i++) hashKey([keys[i % 1000]], out); // warm-up
  const strings = await measure(() => {
    for (let i = 0; i < count; i++) hashKey([keys[i % 1000]], out);
  });
  const numbers = await measure(() => {
    for (let i = 0; i < count; i++) hashKey([1_000_000_000 + i], out);
  });
  console.log(`hashKey ["cust-1234567"] ${rate(count, strings)}, [1000000123] ${rate(count, numbers)}`);
}

async function benchIndex(keys: number, dir: string): Promise<void> {
  const hashes = randomHashes(keys, 12345);
  const absent = randomHashes(keys, 67890);
  const insert = await measure(() => indexOf(hashes));
  const index = insert.result;
  const hit = await measure(() => {
    let found = 0;
    for (let k = 0; k < keys; k++) if (index.find(hashes, k) >= 0) found++;
    return found;
  });
  const miss = await measure(() => {
    let found = 0;
    for (let k = 0; k < keys; k++) if (index.find(absent, k) >= 0) found++;
    return found;
  });
  if (hit.result !== keys || miss.result !== 0) throw new Error(`${hit.result} hits, ${miss.result} false hits`);
  const update = await measure(() => {
    const file = index.files.intern("s3://warehouse/db/t/data/updates.parquet");
    for (let k = 0; k < keys; k++) index.upsert(hashes, k, file, k);
  });

  const path = join(dir, `bench-${keys}.fkix`);
  const save = await measure(() => saveKeyIndex(index, path));
  const fileBytes = (await stat(path)).size;
  const load = await measure(() => loadKeyIndex(path, "bench"));
  if (load.result?.size !== keys) throw new Error("load lost entries");

  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    [
      `${keys / 1e6}M keys: insert ${rate(keys, insert)}, growth from empty included`,
      `find hit ${rate(keys, hit)}, miss ${rate(keys, miss)}; update ${rate(keys, update)}`,
      `memory ${(index.byteLength / keys).toFixed(1)} B/key (${mib(index.byteLength)} of slots, ` +
        `${((keys / (index.byteLength / 28)) * 100).toFixed(0)}% full)`,
      `save ${duration(save)}, load ${duration(load)}, file ${mib(fileBytes)} (${(fileBytes / keys).toFixed(1)} B/key)`,
    ].join("\n  "),
  );
}

/**
 * Saving one commit of `commitKeys` upserts (half of them keys the index has) into an index of
 * `keys` keys: the whole index written, against the commit's changes appended to the journal.
 */
async function benchJournal(keys: number, commitKeys: number, dir: string): Promise<void> {
  const hashes = randomHashes(keys, 2468);
  const fresh = randomHashes(commitKeys, 1357);
  const index = indexOf(hashes);
  const path = join(dir, `journal-${keys}.fkix`);
  const saved = await saveWholeKeyIndex(index, path);
  const file = index.files.intern("s3://warehouse/db/t/data/commit-2.parquet");
  for (let i = 0; i < commitKeys; i++) {
    if (i % 2 === 0) index.upsert(hashes, (i * 7919) % keys, file, i);
    else index.upsert(fresh, i, file, i);
  }
  index.snapshotId = 2n;
  const append = await measure(() => appendKeyIndexChanges(saved, path));
  const journalBytes = (await stat(journalPath(path))).size;
  const whole = await measure(() => saveKeyIndex(index, join(dir, `whole-${keys}.fkix`)));
  const wholeBytes = (await stat(join(dir, `whole-${keys}.fkix`))).size;
  const load = await measure(() => loadJournaledKeyIndex(path, "bench"));
  const loaded = load.result?.index;
  if (loaded?.size !== index.size || loaded.snapshotId !== 2n) {
    throw new Error(`journal replay gave ${loaded?.size} keys at ${loaded?.snapshotId}, not ${index.size} at 2`);
  }
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  console.log(
    [
      `one commit of ${commitKeys / 1e3}k upserts into ${keys / 1e6}M keys:`,
      `whole save ${duration(whole)}, ${kib(wholeBytes)}`,
      `journal append ${duration(append)}, ${kib(journalBytes)}`,
      `load with the journal replayed ${duration(load)}`,
    ].join("\n  "),
  );
}

/** One sync's batch against an index of `keys` keys: half the messages update keys the table has. */
async function benchBatch(keys: number, messages: number): Promise<void> {
  const known = randomHashes(keys, 4242);
  const index = indexOf(known);
  const fresh = randomHashes(messages, 777);
  const hashes = keyHashes(messages);
  for (let i = 0; i < messages; i++) {
    const from = i % 2 === 0 ? known : fresh;
    const k = i % 2 === 0 ? (i * 7919) % keys : i;
    hashes.set(from.subarray(k * KEY_HASH_WORDS, (k + 1) * KEY_HASH_WORDS), i * KEY_HASH_WORDS);
  }
  const tombstones = new Uint8Array(messages);
  const dedup = await measure(() => dedupBatch(hashes, tombstones, index));
  const plan = await measure(() => planDeletes(index, hashes, dedup.result));
  const winners = dedup.result;
  const rows = winners.messages;
  const commit = await measure(() =>
    recordCommit(index, hashes, winners, [{ path: "new.parquet", messages: rows }], 2n),
  );
  console.log(
    `batch of ${messages / 1e6}M messages, half of them updates, against ${keys / 1e6}M keys:\n  ` +
      `dedup ${rate(messages, dedup)}, plan deletes ${rate(messages, plan)} ` +
      `(${plan.result.positionsDeleted} positions in ${plan.result.files.length} files), ` +
      `record commit ${rate(messages, commit)}`,
  );
}

const dir = await mkdtemp(join(tmpdir(), "floe-bench-"));
try {
  await benchHash();
  for (const keys of sizes.length > 0 ? sizes : [1_000_000, 10_000_000]) await benchIndex(keys, dir);
  for (const keys of sizes.length > 0 ? sizes : [1_000_000, 10_000_000]) await benchJournal(keys, 50_000, dir);
  await benchBatch(10_000_000, 1_000_000);
} finally {
  await rm(dir, { recursive: true, force: true });
}
