import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import {
  metadataFileLocation,
  metadataFileVersion,
  readMetadataFile,
  withPreviousMetadataFile,
  writeMetadataFile,
} from "#src/iceberg/catalog/metadata-file.ts";
import { LocalFileIO } from "#src/iceberg/io/local-file-io.ts";
import { tableMetadataToJson } from "#src/iceberg/spec/table-metadata.ts";
import { newTableMetadata } from "#src/iceberg/spec/table-update.ts";
import { stringifyJson } from "#src/lib/int64-json.ts";

const metadata = newTableMetadata(
  { location: "/wh/ns/t", schema: { schemaId: 0, fields: [] }, spec: { specId: 0, fields: [] } },
  1_700_000_000_000n,
);

test("metadata files are <location>/metadata/<NNNNN>-<uuid>.metadata.json, or under write.metadata.path", () => {
  assert.match(metadataFileLocation(metadata, 0), /^\/wh\/ns\/t\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/);
  assert.match(metadataFileLocation(metadata, 123456), /\/123456-[0-9a-f-]{36}\.metadata\.json$/);
  const moved = { ...metadata, properties: { "write.metadata.path": "/meta/" } };
  assert.match(metadataFileLocation(moved, 7), /^\/meta\/00007-[0-9a-f-]{36}\.metadata\.json$/);
});

test("the version is read back from our names, Java's gzip names and PyIceberg's", () => {
  assert.equal(metadataFileVersion("/t/metadata/00012-6c97e413-d51b-4538-ac70-12fe2a85cb83.metadata.json"), 12);
  assert.equal(metadataFileVersion("s3://b/t/metadata/00003-6c97e413.gz.metadata.json"), 3);
  assert.equal(metadataFileVersion("/t/metadata/v3.metadata.json"), -1);
});

test("the next metadata logs the previous file, keeping previous-versions-max entries", () => {
  const base = {
    ...metadata,
    properties: { "write.metadata.previous-versions-max": "2" },
    metadataLog: [
      { timestampMs: 1n, metadataFile: "/a" },
      { timestampMs: 2n, metadataFile: "/b" },
    ],
  };
  const next = withPreviousMetadataFile({ ...base, lastUpdatedMs: 9n }, base, "/c");
  assert.deepEqual(next.metadataLog, [
    { timestampMs: 2n, metadataFile: "/b" },
    { timestampMs: 1_700_000_000_000n, metadataFile: "/c" },
  ]);
});

test("metadata files round-trip, gzipped ones too", async () => {
  const dir = await mkdtemp(join(tmpdir(), "floe-metadata-file-"));
  try {
    const io = new LocalFileIO();
    const plain = join(dir, "00000-a.metadata.json");
    await writeMetadataFile(io, plain, metadata);
    assert.deepEqual(await readMetadataFile(io, plain), metadata);
    const gz = join(dir, "00001-b.gz.metadata.json");
    await writeFile(gz, gzipSync(stringifyJson(tableMetadataToJson(metadata))));
    assert.deepEqual(await readMetadataFile(io, gz), metadata);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
