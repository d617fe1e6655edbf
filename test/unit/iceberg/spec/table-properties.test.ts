// Table properties: an unset key reads as its default, a value that is not one of the key as the
// default too, except the keys that refuse a wrong value (codec, metrics mode), naming the table.
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorKind } from "#src/iceberg/errors.ts";
import {
  COMMIT_MANIFEST_MERGE_ENABLED,
  COMMIT_RETRY_NUM_RETRIES,
  HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS,
  HISTORY_EXPIRE_MIN_SNAPSHOTS_TO_KEEP,
  propertyValue,
  WRITE_DATA_PATH,
  WRITE_METADATA_METRICS_DEFAULT,
  WRITE_METADATA_PREVIOUS_VERSIONS_MAX,
  WRITE_PARQUET_COMPRESSION_CODEC,
  WRITE_TARGET_FILE_SIZE_BYTES,
} from "#src/iceberg/spec/table-properties.ts";

test("unset keys read as their defaults", () => {
  assert.equal(propertyValue({}, WRITE_TARGET_FILE_SIZE_BYTES), 128 * 1024 * 1024);
  assert.equal(propertyValue({}, WRITE_PARQUET_COMPRESSION_CODEC), "zstd");
  assert.equal(propertyValue({}, WRITE_DATA_PATH), undefined);
  assert.equal(propertyValue({}, COMMIT_RETRY_NUM_RETRIES), 9);
  assert.equal(propertyValue({}, COMMIT_MANIFEST_MERGE_ENABLED), true);
  assert.equal(propertyValue({}, HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS), 5n * 24n * 3600n * 1000n);
  assert.equal(propertyValue({}, WRITE_METADATA_PREVIOUS_VERSIONS_MAX), 100);
});

test("set keys read as their parsed values; a value that is none reads as the default", () => {
  const p = (key: string, value: string) => ({ [key]: value });
  assert.equal(propertyValue(p(WRITE_TARGET_FILE_SIZE_BYTES.key, "1048576"), WRITE_TARGET_FILE_SIZE_BYTES), 1048576);
  assert.equal(
    propertyValue(p(WRITE_TARGET_FILE_SIZE_BYTES.key, "0"), WRITE_TARGET_FILE_SIZE_BYTES),
    128 * 1024 * 1024,
  );
  assert.equal(propertyValue(p(WRITE_TARGET_FILE_SIZE_BYTES.key, ""), WRITE_TARGET_FILE_SIZE_BYTES), 128 * 1024 * 1024);
  assert.equal(propertyValue(p(COMMIT_RETRY_NUM_RETRIES.key, "0"), COMMIT_RETRY_NUM_RETRIES), 0);
  assert.equal(propertyValue(p(COMMIT_MANIFEST_MERGE_ENABLED.key, "false"), COMMIT_MANIFEST_MERGE_ENABLED), false);
  assert.equal(
    propertyValue(p(HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS.key, "60000"), HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS),
    60000n,
  );
  assert.equal(
    propertyValue(p(HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS.key, "soon"), HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS),
    HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS.default,
  );
  assert.equal(
    propertyValue(p(HISTORY_EXPIRE_MIN_SNAPSHOTS_TO_KEEP.key, "0"), HISTORY_EXPIRE_MIN_SNAPSHOTS_TO_KEEP),
    1,
  );
  assert.equal(propertyValue(p(WRITE_DATA_PATH.key, "s3://b/data"), WRITE_DATA_PATH), "s3://b/data");
});

test("a refused value names the table, the key and the value", () => {
  assert.throws(
    () =>
      propertyValue({ [WRITE_PARQUET_COMPRESSION_CODEC.key]: "snappyish" }, WRITE_PARQUET_COMPRESSION_CODEC, "ns.t"),
    (error: unknown) => {
      assert.equal(errorKind(error), "validation");
      assert.match(
        (error as Error).message,
        /^ns\.t: write\.parquet\.compression-codec "snappyish" is not a Parquet codec/,
      );
      return true;
    },
  );
  assert.throws(
    () => propertyValue({ [WRITE_METADATA_METRICS_DEFAULT.key]: "some" }, WRITE_METADATA_METRICS_DEFAULT),
    /invalid metrics mode "some"/,
  );
});
