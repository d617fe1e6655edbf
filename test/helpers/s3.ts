// S3 chores of the integration tests, against MinIO (test/services/minio.ts) with its root
// credentials: what a bucket shows under a prefix, and which multipart uploads are open there.
import { ListMultipartUploadsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { minio, minioRootClient } from "../services/minio.ts";

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

/** The keys of the multipart uploads started and neither completed nor aborted under `prefix`. */
export async function openMultipartUploads(prefix: string, bucket = minio.warehouseBucket): Promise<string[]> {
  const client = minioRootClient();
  try {
    const answer = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    return (answer.Uploads ?? []).map((u) => u.Key!);
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
