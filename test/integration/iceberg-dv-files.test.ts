// Deletion vectors of several data files in one commit, the first of them large: the pattern that
// DuckDB 1.5.5's iceberg extension (build 45163a28) misread. It reads a DV through DuckDB's
// external file cache and parses the cached buffer from its start instead of from the blob's
// offset; when the first DV it reads of a Puffin file is at least as long as the rest of the file
// up to the 12-byte footer trailer (which it read just before), the cache fills that gap, so the
// one cached range holds the later blobs too, and every later DV of that Puffin file comes back
// as the first one: rows of the other data files vanish and the old versions of upserted rows
// stay. The commits below make that layout possible (one large DV and small ones in one
// RowDelta, then a replaced DV beside live ones), and DuckDB, PyIceberg and Spark must each read
// exactly the model. floe writes one Puffin file per DV, as DuckDB itself does.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { listDeletionVectors } from "#src/iceberg/puffin/deletion-vector-file.ts";
import { readManifestEntries, readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import { isDeletionVector } from "#src/iceberg/spec/manifest.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { arrowRows, byId, createRestTable } from "../helpers/tables.ts";

const namespace = `dvfiles_${process.pid}_${Date.now()}`;
let readers: Readers;

before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

test("one commit with a large DV and small ones, then a replaced DV beside live ones: every engine reads the model", async () => {
  const { catalog, table } = await createRestTable(namespace, "orders");
  const ref = restTable(namespace, "orders");
  const model = new Map<bigint, Row>();
  let nextId = 0n;
  /** Appends one data file of `n` fresh rows; returns its path and its ids by position. */
  const appendFile = async (n: number) => {
    const rows = Array.from({ length: n }, () => {
      const id = nextId++;
      return { id, name: `v1-${id}`, amount: Number(id) / 4 };
    });
    const [file, ...more] = await writeDataFiles(table, arrowRows(table, rows));
    assert.equal(more.length, 0);
    await table.newFastAppend().appendFile(file!).commit();
    for (const row of rows) model.set(row.id, row);
    return { path: file!.filePath, ids: rows.map((r) => r.id) };
  };
  const big = await appendFile(6000);
  const small = [await appendFile(40), await appendFile(40)];

  // Upsert: 2,500 rows of the big file (a DV of about 5 KB) and three rows of each small one
  // (about 50 bytes each) get new versions, the big file's DV first.
  const upsert = (file: { path: string; ids: bigint[] }, positions: number[], version: string) => {
    const rows = positions.map((p) => ({ id: file.ids[p]!, name: `${version}-${file.ids[p]}`, amount: -1 }));
    for (const row of rows) model.set(row.id, row);
    return { path: file.path, positions, rows };
  };
  const changes = [
    upsert(
      big,
      Array.from({ length: 2500 }, (_, i) => i * 2),
      "v2",
    ),
    upsert(small[0]!, [1, 7, 30], "v2"),
    upsert(small[1]!, [0, 2, 39], "v2"),
  ];
  const first = table.newRowDelta().addRows(
    ...(await writeDataFiles(
      table,
      arrowRows(
        table,
        changes.flatMap((c) => c.rows),
      ),
    )),
  );
  for (const c of changes) first.deleteRows(c.path, c.positions);
  await first.commit();
  await readers.assertRows(ref, byId(model.values()), { orderBy: ["id"] });

  // Replace the first small file's DV (its positions merged into a new one) while the big file's
  // and the other small file's DVs of the first commit stay live.
  const again = upsert(small[0]!, [2, 3], "v3");
  await table
    .newRowDelta()
    .addRows(...(await writeDataFiles(table, arrowRows(table, again.rows))))
    .deleteRows(again.path, again.positions)
    .commit();
  await readers.assertRows(ref, byId(model.values()), { orderBy: ["id"] });

  // The layout that keeps DuckDB 1.5.5 right: every live DV is the only blob of its Puffin file.
  const dvs = [];
  for (const manifest of await readManifestList(table, currentSnapshot(table.metadata)!)) {
    for (const entry of await readManifestEntries(table, manifest)) {
      if (isDeletionVector(entry.file)) dvs.push(entry.file);
    }
  }
  assert.equal(dvs.length, 3);
  for (const dv of dvs) {
    const blobs = listDeletionVectors(await table.io.read(dv.filePath));
    assert.deepEqual(
      blobs.map((b) => [b.referencedDataFile, b.offset]),
      [[dv.referencedDataFile, Number(dv.contentOffset)]],
      `${dv.filePath} holds the DV of ${dv.referencedDataFile} alone`,
    );
  }
  await catalog.close();
});
