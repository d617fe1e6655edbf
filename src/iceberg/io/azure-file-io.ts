// Azure Blob Storage and ADLS Gen2 (through its Blob endpoint) on @azure/storage-blob.
//
// A write is one Put Blob, or above the threshold blocks staged in parallel (Put Block) and
// committed with one Put Block List: a block blob shows its new content only when the commit
// succeeds, so a crash never leaves a half-written file under its final name; blocks never
// committed are not listed and the service drops them after a week.
//
// The SDK retries throttling (503, 500) and broken connections with exponential backoff. A SAS
// vended by the catalog is renewed before it expires, and once when the service refuses it.
import {
  AnonymousCredential,
  type BlockBlobClient,
  ContainerClient,
  RestError,
  type StoragePipelineOptions,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import {
  type AzureClientConfig,
  type AzureSas,
  type AzureStorageOptions,
  azureClientConfig,
  catalogSas,
  describeAzureCredentialSource,
} from "./azure-config.ts";
import { parseAzureLocation } from "./azure-location.ts";
import type { FileIO, FileIOContext, FileIOFactory, ListedFile } from "./file-io.ts";
import { RefreshingCredentials } from "./refreshing-credentials.ts";
import { StorageError, type StorageErrorKind, type StorageOperation } from "./storage-error.ts";

export class AzureFileIO implements FileIO {
  readonly config: AzureClientConfig;
  readonly #sas: RefreshingCredentials<AzureSas> | undefined;
  readonly #pipeline: StoragePipelineOptions;

  constructor(
    tableLocation: string,
    config: AzureClientConfig,
    renewal?: FileIOContext["refresh"],
    options: AzureStorageOptions = {},
    /** The HTTP client under the SDK's pipeline (tests capture the signed requests). */
    transport?: StoragePipelineOptions["httpClient"],
  ) {
    this.config = config;
    const { credentials, credentialSource } = config;
    const table = parseAzureLocation(tableLocation);
    this.#sas =
      credentials?.kind === "sas"
        ? new RefreshingCredentials<AzureSas>(
            credentials.sas,
            credentialSource.kind === "catalog" && renewal !== undefined
              ? {
                  refresh: renewal,
                  select: (fresh) => {
                    const next = azureClientConfig(table, fresh.properties, options, fresh.origin);
                    return next.credentialSource.kind === "catalog" ? catalogSas(table, fresh.properties) : undefined;
                  },
                }
              : undefined,
          )
        : undefined;
    this.#pipeline = {
      retryOptions: { maxTries: config.maxAttempts, tryTimeoutInMs: 120_000 },
      // No telemetry headers beyond the SDK's user agent; nothing else is contacted.
      userAgentOptions: { userAgentPrefix: "floe" },
      ...(transport === undefined ? {} : { httpClient: transport }),
    };
  }

  get credentialRenewals(): number {
    return this.#sas?.renewals ?? 0;
  }

  async write(location: string, bytes: Uint8Array): Promise<void> {
    await this.#call("write", location, async (blob) => {
      await blob.uploadData(bytes, {
        maxSingleShotSize: this.config.singleUploadThresholdBytes,
        blockSize: this.config.blockSizeBytes,
        concurrency: 4,
      });
    });
  }

  async read(location: string): Promise<Uint8Array> {
    return this.#call("read", location, async (blob) => new Uint8Array(await blob.downloadToBuffer()));
  }

  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    if (length === 0) return new Uint8Array(0);
    const bytes = await this.#call("read range", location, async (blob) => {
      try {
        // One Get Blob with a range; a range that runs past the end comes back short.
        const answer = await blob.download(offset, length);
        return await bytesOf(answer.readableStreamBody);
      } catch (error) {
        // 416: the range starts past the end of the blob.
        if (error instanceof RestError && error.statusCode === 416) return new Uint8Array(0);
        throw error;
      }
    });
    if (bytes.byteLength !== length) {
      throw new Error(
        `${location}: wanted ${length} bytes at offset ${offset}, the blob has only ${bytes.byteLength} there`,
      );
    }
    return bytes;
  }

  async exists(location: string): Promise<boolean> {
    return this.#call("exists", location, async (blob) => {
      try {
        await blob.getProperties();
        return true;
      } catch (error) {
        // A HEAD answer has no body; the SDK takes the code from x-ms-error-code.
        if (error instanceof RestError && error.statusCode === 404 && error.code !== "ContainerNotFound") return false;
        throw error;
      }
    });
  }

  async delete(location: string): Promise<void> {
    await this.#call("delete", location, async (blob) => {
      try {
        await blob.delete();
      } catch (error) {
        if (error instanceof RestError && error.statusCode === 404 && error.code === "BlobNotFound") return;
        throw error;
      }
    });
  }

  /** List Blobs (flat) under the prefix, page by page; locations keep the prefix's form (abfss://, wasbs://). */
  async *list(prefix: string): AsyncIterable<ListedFile> {
    const { path } = parseAzureLocation(prefix);
    const dir = path === "" || path.endsWith("/") ? path : `${path}/`;
    const base = prefix.endsWith("/") ? prefix : `${prefix}/`;
    try {
      const container = await this.#container(prefix);
      for await (const blob of container.listBlobsFlat({ prefix: dir })) {
        yield {
          location: base + blob.name.slice(dir.length),
          size: blob.properties.contentLength ?? 0,
          lastModifiedMs: blob.properties.lastModified.getTime(),
        };
      }
    } catch (error) {
      throw azureStorageError(error, "list", prefix, this.config);
    }
  }

  async #blob(location: string): Promise<BlockBlobClient> {
    // The SDK percent-encodes the name itself, "%" included: a literal "%" of the location
    // (Iceberg's escaped partition values) names the same blob for every reader.
    return (await this.#container(location)).getBlockBlobClient(parseAzureLocation(location).path);
  }

  async #container(location: string): Promise<ContainerClient> {
    const { container } = parseAzureLocation(location);
    const url = `${this.config.accountUrl}/${encodeURIComponent(container)}`;
    const credentials = this.config.credentials;
    let client: ContainerClient;
    if (credentials?.kind === "account-key") {
      client = new ContainerClient(
        url,
        new StorageSharedKeyCredential(credentials.account, credentials.key),
        this.#pipeline,
      );
    } else if (this.#sas !== undefined) {
      const sas = await this.#sas.get();
      client = new ContainerClient(`${url}?${sas.token}`, new AnonymousCredential(), this.#pipeline);
    } else {
      client = new ContainerClient(url, new AnonymousCredential(), this.#pipeline);
    }
    return client;
  }

  /** Runs one operation; a vended SAS refused is renewed and it runs once more. */
  async #call<T>(
    operation: StorageOperation,
    location: string,
    run: (blob: BlockBlobClient) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run(await this.#blob(location));
      } catch (error) {
        const refused = error instanceof RestError && (error.statusCode === 401 || error.statusCode === 403);
        if (attempt === 1 && refused && this.#sas?.renewable) {
          try {
            await this.#sas.renew();
            continue;
          } catch {
            // Nothing fresh: report the service's refusal.
          }
        }
        throw azureStorageError(error, operation, location, this.config);
      }
    }
  }
}

async function bytesOf(body: NodeJS.ReadableStream | undefined): Promise<Uint8Array> {
  if (body === undefined) return new Uint8Array(0);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

const ACCESS_DENIED = new Set([
  "AuthorizationFailure",
  "AuthorizationPermissionMismatch",
  "AuthorizationResourceTypeMismatch",
  "AuthorizationServiceMismatch",
  "AuthorizationSourceIPMismatch",
  "AuthorizationProtocolMismatch",
  "InsufficientAccountPermissions",
]);

export function azureStorageError(
  error: unknown,
  operation: StorageOperation,
  location: string,
  config: AzureClientConfig,
): StorageError {
  const credentials = describeAzureCredentialSource(config.credentialSource);
  const { container } = parseAzureLocation(location);
  let kind: StorageErrorKind;
  let message: string;
  if (error instanceof RestError && error.statusCode !== undefined) {
    const code = error.code ?? `HTTP ${error.statusCode}`;
    const detail = (error.message.split("\n")[0] ?? "").slice(0, 200);
    const said = ` (${code}${detail && detail !== code ? `: ${detail}` : ""})`;
    if (code === "ContainerNotFound") {
      kind = "no-such-bucket";
      message = `container ${container} does not exist at ${config.accountUrl}; check the table location and the account URL`;
    } else if (code === "BlobNotFound" || error.statusCode === 404) {
      kind = "not-found";
      message = `no such blob at ${config.accountUrl}`;
    } else if (ACCESS_DENIED.has(code)) {
      kind = "access-denied";
      message = `access denied${said} with ${credentials}: they do not allow this operation on this path`;
    } else if (error.statusCode === 403 || error.statusCode === 401) {
      // AuthenticationFailed covers a wrong key, a bad signature and a SAS out of its time window.
      kind = /time frame|expired/i.test(error.message) ? "expired-credentials" : "invalid-credentials";
      message = `${config.accountUrl} does not take the credentials${said}: ${credentials}`;
    } else {
      kind = "failed";
      message = `the service failed the request${said}, using ${credentials}`;
    }
  } else {
    const e = error as { code?: unknown; message?: unknown; name?: unknown };
    const text = `${String(e?.code ?? "")} ${String(e?.message ?? error)}`;
    if (/REQUEST_SEND_ERROR|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH/.test(text)) {
      kind = "unreachable";
      message = `cannot reach the Azure account URL ${config.accountUrl} (${text.trim().slice(0, 200)}); check destination.iceberg.storage.azure.endpoint`;
    } else {
      kind = "failed";
      message = `${String(e?.message ?? error)}, using ${credentials}`;
    }
  }
  return new StorageError(kind, operation, location, message, { cause: error });
}

/** The FileIO of abfss:// and wasbs:// tables, with the job's static settings under the catalog's properties. */
export function azureFileIOFactory(options: AzureStorageOptions = {}): FileIOFactory {
  return (location, properties, context) =>
    new AzureFileIO(
      location,
      azureClientConfig(parseAzureLocation(location), properties, options, context?.credentialOrigin),
      context?.refresh,
      options,
    );
}
