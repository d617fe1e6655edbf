// floe's S3 FileIO against two independent S3 implementations, MinIO and versitygw (posix
// backend): whole and ranged reads, existence, deletes, a multipart upload read back byte for
// byte and across a part boundary, with and without the SDK's default request checksums, and
// the failure kinds (missing object, missing bucket, a secret the store does not take).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { s3ClientConfig } from "#src/iceberg/io/s3-config.ts";
import { S3FileIO } from "#src/iceberg/io/s3-file-io.ts";
import { StorageError } from "#src/iceberg/io/storage-error.ts";
import { minio } from "../../dev/services/minio.ts";
import { versitygw, versitygwService } from "../../dev/services/versitygw.ts";

process.env.AWS_EC2_METADATA_DISABLED = "true";

const run = `${process.pid}-${Date.now()}`;
const MIB = 1024 * 1024;

const stores = [
  {
    name: "MinIO",
    endpoint: minio.endpoint,
    region: minio.region,
    keys: { accessKeyId: minio.rootUser, secretAccessKey: minio.rootPassword },
    bucket: minio.warehouseBucket,
    start: async () => {},
  },
  {
    name: "versitygw",
    endpoint: versitygw.endpoint,
    region: versitygw.region,
    keys: { accessKeyId: versitygw.rootUser, secretAccessKey: versitygw.rootPassword },
    bucket: versitygw.bucket,
    start: () => versitygwService.start(),
  },
];

async function storageFailure(promise: Promise<unknown>): Promise<StorageError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StorageError, String(error));
    return error;
  }
  assert.fail("expected a StorageError");
}

for (const store of stores) {
  describe(store.name, () => {
    before(() => store.start());

    const io = (options: { requestChecksums?: "when-supported" | "when-required"; secret?: string } = {}) =>
      new S3FileIO(
        s3ClientConfig(
          {},
          {
            endpoint: store.endpoint,
            region: store.region,
            credentials: { ...store.keys, ...(options.secret ? { secretAccessKey: options.secret } : {}) },
            partSizeBytes: 5 * MIB,
            maxAttempts: 2,
            ...(options.requestChecksums ? { requestChecksums: options.requestChecksums } : {}),
          },
        ),
      );
    const base = `s3://${store.bucket}/file-io-${run}`;
    const written: string[] = [];
    after(async () => {
      await Promise.all(written.map((location) => io().delete(location)));
    });

    for (const requestChecksums of ["when-required", "when-supported"] as const) {
      test(`small and multipart files round-trip, request checksums ${requestChecksums}`, async () => {
        const files = io({ requestChecksums });
        const small = `${base}/${requestChecksums}/small.bin`;
        const large = `${base}/${requestChecksums}/large.bin`;
        written.push(small, large);
        await files.write(small, new TextEncoder().encode("hello, object store"));
        assert.equal(new TextDecoder().decode(await files.read(small)), "hello, object store");
        assert.equal(new TextDecoder().decode(await files.readRange(small, 7, 6)), "object");
        assert.equal(await files.exists(small), true);

        // 11 MiB: above twice the 5 MiB part, so a multipart upload of three parts.
        const bytes = new Uint8Array(randomBytes(11 * MIB));
        await files.write(large, bytes);
        const back = await files.read(large);
        assert.equal(back.byteLength, bytes.byteLength);
        assert.ok(Buffer.from(back).equals(Buffer.from(bytes)), "the same bytes");
        const across = await files.readRange(large, 5 * MIB - 10, 20);
        assert.ok(Buffer.from(across).equals(Buffer.from(bytes.subarray(5 * MIB - 10, 5 * MIB + 10))));
        await assert.rejects(files.readRange(large, 11 * MIB - 5, 10), /wanted 10 bytes at offset .* only 5/);

        await files.delete(small);
        assert.equal(await files.exists(small), false);
        await files.delete(small);
      });
    }

    test("a missing object, a missing bucket and a wrong secret are told apart", async () => {
      const files = io();
      const missing = await storageFailure(files.read(`${base}/no-such-object`));
      assert.equal(missing.kind, "not-found");
      const bucket = await storageFailure(files.write(`s3://floe-no-bucket-${run}/k`, new Uint8Array(1)));
      assert.equal(bucket.kind, "no-such-bucket");
      assert.match(bucket.message, new RegExp(`bucket floe-no-bucket-${run} does not exist at ${store.endpoint}`));
      const wrong = await storageFailure(io({ secret: "not-the-secret" }).write(`${base}/x`, new Uint8Array(1)));
      assert.equal(wrong.kind, "invalid-credentials");
      assert.ok(!wrong.message.includes("not-the-secret"), wrong.message);
    });
  });
}
