// S3 chores of the integration tests, against MinIO (dev/services/minio.ts) with its root
// credentials: what a bucket shows under a prefix, and which multipart uploads are open there.
import { AbortMultipartUploadCommand, ListObjectsV2Command, ListPartsCommand } from "@aws-sdk/client-s3";
import { minio, minioRootClient } from "../../dev/services/minio.ts";

/** Every object key under `prefix`: what any reader of the bucket can see. */
export async function objectKeys(prefix: string, bucket = minio.warehouseBucket): Promise<string[]> {
  const client = minioRootClient();
  try {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      keys.push(...(page.Contents ?? []).map((o) => o.Key!));
      token = page.NextContinuationToken;
    } while (token);
    return keys;
  } finally {
    client.destroy();
  }
}

/**
 * The part numbers a multipart upload holds, while it is open (neither completed nor aborted).
 * MinIO lists open uploads only by their exact key, so the test names the upload.
 */
export async function uploadedParts(key: string, uploadId: string, bucket = minio.warehouseBucket): Promise<number[]> {
  const client = minioRootClient();
  try {
    const answer = await client.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    return (answer.Parts ?? []).map((p) => p.PartNumber!);
  } finally {
    client.destroy();
  }
}

export async function abortUpload(key: string, uploadId: string, bucket = minio.warehouseBucket): Promise<void> {
  const client = minioRootClient();
  try {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
  } finally {
    client.destroy();
  }
}

/** Waits until `condition` holds (a paused sync's file exists, a proxy revoked keys), for at most `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
