import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { isBusy, migrate, openSqlite, transaction, userVersion } from "#src/lib/sqlite.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-sqlite-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function journalMode(db: ReturnType<typeof openSqlite>): string {
  return (db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode;
}

test("openSqlite sets WAL and the pragmas asked for; a lock file keeps the rollback journal", () => {
  const db = openSqlite(join(dir, "a.db"), { busyTimeoutMs: 100, synchronousNormal: true, foreignKeys: true });
  assert.equal(journalMode(db), "wal");
  assert.equal((db.prepare("PRAGMA synchronous").get() as { synchronous: number }).synchronous, 1);
  assert.equal((db.prepare("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys, 1);
  assert.equal((db.prepare("PRAGMA busy_timeout").get() as { timeout: number }).timeout, 100);
  db.close();
  const lock = openSqlite(join(dir, "b.lock"), { busyTimeoutMs: 0, wal: false });
  assert.equal(journalMode(lock), "delete");
  lock.close();
});

test("transaction commits what its work wrote and returns its value; a throw rolls everything back", () => {
  const db = openSqlite(join(dir, "t.db"), { busyTimeoutMs: 100 });
  db.exec("CREATE TABLE t (x INTEGER)");
  assert.equal(
    transaction(db, () => db.prepare("INSERT INTO t VALUES (1)").run().changes),
    1,
  );
  assert.throws(
    () =>
      transaction(db, () => {
        db.prepare("INSERT INTO t VALUES (2)").run();
        throw new Error("half-way");
      }),
    /half-way/,
  );
  assert.deepEqual(
    db
      .prepare("SELECT x FROM t")
      .all()
      .map((r) => r["x"]),
    [1],
  );
  assert.equal(db.isTransaction, false);
  db.close();
});

test("with a busy timeout of 0, a second writer fails at once with an error isBusy recognises", () => {
  const path = join(dir, "busy.lock");
  const holder = openSqlite(path, { busyTimeoutMs: 0, wal: false });
  holder.exec("BEGIN EXCLUSIVE");
  const other = openSqlite(path, { busyTimeoutMs: 0, wal: false });
  const started = Date.now();
  assert.throws(
    () => other.exec("BEGIN EXCLUSIVE"),
    (error) => isBusy(error),
  );
  assert.ok(Date.now() - started < 1000);
  assert.equal(isBusy(new Error("no such table: t")), false);
  holder.exec("ROLLBACK");
  other.exec("BEGIN EXCLUSIVE");
  other.exec("ROLLBACK");
  holder.close();
  other.close();
});

test("migrate applies the missing migrations, once, and refuses a database newer than its list", () => {
  const db = openSqlite(join(dir, "m.db"), { busyTimeoutMs: 100 });
  const tooNew = (version: number) => new Error(`version ${version} is newer`);
  assert.equal(migrate(db, ["CREATE TABLE a (x)"], tooNew), 0);
  assert.equal(migrate(db, ["CREATE TABLE a (x)", "CREATE TABLE b (x)"], tooNew), 1);
  assert.equal(userVersion(db), 2);
  // A failing migration leaves the version it reached.
  assert.throws(() => migrate(db, ["CREATE TABLE a (x)", "CREATE TABLE b (x)", "CREATE TABLE a (y)"], tooNew));
  assert.equal(userVersion(db), 2);
  assert.throws(() => migrate(db, ["CREATE TABLE a (x)"], tooNew), /version 2 is newer/);
  db.close();
});
