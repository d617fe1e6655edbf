// S3 and S3-compatible stores (MinIO, Ceph, R2, versitygw) on the AWS SDK v3.
//
// A write is one PutObject, or above the multipart threshold a multipart upload whose parts go up
// in parallel and which is completed only once every part is in: S3 makes an object visible under
// its key only when a PutObject or a CompleteMultipartUpload succeeds, so a crash never leaves a
// half-written file under its final name. A failed upload is aborted (its parts deleted); one cut
// short by a crash leaves parts that no listing shows, which the bucket's lifecycle rule
// (AbortIncompleteMultipartUpload) removes.
//
// Throttling (503 SlowDown), 5xx answers and broken connections are retried by the SDK's standard
// strategy, exponential backoff with jitter. Failures become StorageErrors that name the
// operation, the path and where the credentials came from.
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig as SdkS3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { FileIO, FileIOContext, FileIOFactory, ListedFile } from "./file-io.ts";
import { RefreshingCredentials } from "./refreshing-credentials.ts";
import { describeCredentialSource, type S3ClientConfig, type S3StorageOptions, s3ClientConfig } from "./s3-config.ts";
import { parseS3Location } from "./s3-location.ts";
import { classifyS3Failure, type StorageOperation, storageError } from "./storage-error.ts";

// One connection pool for every table's client: a sync opens a FileIO per table load.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 32 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 32 });

/** Connecting and waiting for an answer: a wrong endpoint fails in seconds, not minutes. */
const CONNECTION_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 120_000;

export class S3FileIO implements FileIO {
  readonly config: S3ClientConfig;
  readonly #client: S3Client;
  readonly #credentials: RefreshingCredentials | undefined;

  constructor(config: S3ClientConfig, renewal?: FileIOContext["refresh"], options: S3StorageOptions = {}) {
    this.config = config;
    const { credentials, credentialSource } = config;
    this.#credentials =
      credentials === undefined
        ? undefined
        : new RefreshingCredentials(
            credentials,
            credentialSource.kind === "catalog" && renewal !== undefined
              ? {
                  refresh: renewal,
                  select: (fresh) => {
                    const next = s3ClientConfig(fresh.properties, options, fresh.origin);
                    return next.credentialSource.kind === "catalog" ? next.credentials : undefined;
                  },
                }
              : undefined,
          );
    const refreshing = this.#credentials;
    const sdkConfig: SdkS3ClientConfig = {
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
      ...(config.region === undefined ? {} : { region: config.region }),
      forcePathStyle: config.forcePathStyle,
      // On AWS a bucket in another region than the one given answers with a redirect that names
      // its region; the SDK follows it (region detection). Other stores have one region.
      followRegionRedirects: config.endpoint === undefined,
      requestChecksumCalculation: config.requestChecksumCalculation,
      responseChecksumValidation: config.requestChecksumCalculation,
      maxAttempts: config.maxAttempts,
      retryMode: "standard",
      requestHandler: {
        httpAgent,
        httpsAgent,
        connectionTimeout: CONNECTION_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
      },
      ...(credentialSource.kind === "none"
        ? {
            credentials: async () => {
              throw Object.assign(new Error(describeCredentialSource(credentialSource)), {
                name: "CredentialsProviderError",
              });
            },
          }
        : {}),
      ...(refreshing === undefined
        ? {}
        : {
            // The SDK caches an identity until five minutes before its expiration; an expiration
            // of now makes it ask each time, and RefreshingCredentials decides when to renew.
            credentials: async () => {
              const c = await refreshing.get();
              return {
                accessKeyId: c.accessKeyId,
                secretAccessKey: c.secretAccessKey,
                ...(c.sessionToken === undefined ? {} : { sessionToken: c.sessionToken }),
                expiration: new Date(),
              };
            },
          }),
    };
    this.#client = new S3Client(sdkConfig);
  }

  /** How many times the catalog was asked for fresh credentials. */
  get credentialRenewals(): number {
    return this.#credentials?.renewals ?? 0;
  }

  async write(location: string, bytes: Uint8Array): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    await this.#call("write", location, async () => {
      if (bytes.byteLength <= this.config.multipartThresholdBytes) {
        await this.#client.send(
          new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength }),
        );
        return;
      }
      // Aborts the multipart upload when a part or the completion fails (leavePartsOnError false).
      const upload = new Upload({
        client: this.#client,
        params: { Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength },
        partSize: this.config.partSizeBytes,
        queueSize: 4,
        leavePartsOnError: false,
      });
      await upload.done();
    });
  }

  async read(location: string): Promise<Uint8Array> {
    const { bucket, key } = parseS3Location(location);
    return this.#call("read", location, async () => {
      const answer = await this.#client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return answer.Body ? await answer.Body.transformToByteArray() : new Uint8Array(0);
    });
  }

  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    if (length === 0) return new Uint8Array(0);
    const { bucket, key } = parseS3Location(location);
    const bytes = await this.#call("read range", location, async () => {
      const answer = await this.#client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }),
      );
      return answer.Body ? await answer.Body.transformToByteArray() : new Uint8Array(0);
    });
    if (bytes.byteLength !== length) {
      throw new Error(
        `${location}: wanted ${length} bytes at offset ${offset}, the object has only ${bytes.byteLength} there`,
      );
    }
    return bytes;
  }

  async exists(location: string): Promise<boolean> {
    const { bucket, key } = parseS3Location(location);
    return this.#call("exists", location, async () => {
      try {
        await this.#client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return true;
      } catch (error) {
        if (classifyS3Failure(error).kind === "not-found") return false;
        throw error;
      }
    });
  }

  async delete(location: string): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    await this.#call("delete", location, async () => {
      await this.#client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    });
  }

  /** ListObjectsV2 under the prefix, page by page; locations keep the prefix's scheme (s3:// or s3a://). */
  async *list(prefix: string): AsyncIterable<ListedFile> {
    const { bucket, key } = parseS3Location(prefix);
    const dir = key === "" || key.endsWith("/") ? key : `${key}/`;
    const scheme = prefix.slice(0, prefix.indexOf("://") + 3);
    let token: string | undefined;
    do {
      const page = await this.#call("list", prefix, () =>
        this.#client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: dir,
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        ),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield {
          location: `${scheme}${bucket}/${object.Key}`,
          size: object.Size ?? 0,
          lastModifiedMs: object.LastModified?.getTime() ?? 0,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  /** Runs one operation; vended credentials refused as expired or unknown are renewed and it runs once more. */
  async #call<T>(operation: StorageOperation, location: string, run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const failure = classifyS3Failure(error);
        const refusedCredentials = ["expired-credentials", "invalid-credentials", "access-denied"].includes(
          failure.kind,
        );
        if (attempt === 1 && refusedCredentials && this.#credentials?.renewable) {
          try {
            await this.#credentials.renew();
            continue;
          } catch {
            // The catalog gave nothing fresh: report the store's refusal.
          }
        }
        throw storageError(failure, operation, location, this.#context(location), error);
      }
    }
  }

  #context(location: string) {
    return {
      endpoint: this.config.endpoint,
      region: this.config.region,
      bucket: parseS3Location(location).bucket,
      credentialSource: this.config.credentialSource,
    };
  }
}

/** The FileIO of s3:// tables, with the job's static settings under the catalog's properties. */
export function s3FileIOFactory(options: S3StorageOptions = {}): FileIOFactory {
  return (_location, properties, context) =>
    new S3FileIO(s3ClientConfig(properties, options, context?.credentialOrigin), context?.refresh, options);
}
