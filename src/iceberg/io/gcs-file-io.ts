// Google Cloud Storage on its JSON API, with fetch: no client library, so nothing looks up a
// metadata server or a default project behind floe's back, and the endpoint is one setting.
//
// A write is one media upload, or above the threshold a resumable upload whose chunks go up in
// order: GCS makes an object visible only when the upload that creates it completes, so a crash
// never leaves a half-written file under its final name. A failed resumable upload is cancelled;
// one cut short by a crash expires on its own (a session lives a week) and is never listed.
//
// 429, 5xx and broken connections are retried with exponential backoff and jitter. Failures
// become StorageErrors naming the operation, the path and where the credentials came from.

import type { FileIO, FileIOContext, FileIOFactory, ListedFile } from "./file-io.ts";
import {
  catalogToken,
  describeGcsCredentialSource,
  type GcsClientConfig,
  type GcsStorageOptions,
  type GcsToken,
  gcsClientConfig,
} from "./gcs-config.ts";
import { parseGcsLocation } from "./gcs-location.ts";
import { ServiceAccountTokens } from "./gcs-service-account.ts";
import { RefreshingCredentials } from "./refreshing-credentials.ts";
import { StorageError, type StorageErrorKind, type StorageOperation } from "./storage-error.ts";

const REQUEST_TIMEOUT_MS = 120_000;

interface TokenSource {
  get(): Promise<string>;
  renew(): Promise<void>;
  readonly renewable: boolean;
}

/** An HTTP answer that was not what the operation wanted. */
class GcsHttpError extends Error {
  readonly status: number;
  readonly detail: string;
  constructor(status: number, detail: string) {
    super(`HTTP ${status}${detail ? `: ${detail}` : ""}`);
    this.status = status;
    this.detail = detail;
  }
}

export class GcsFileIO implements FileIO {
  readonly config: GcsClientConfig;
  readonly #tokens: TokenSource | undefined;
  readonly #refreshing: RefreshingCredentials<GcsToken> | undefined;

  constructor(config: GcsClientConfig, renewal?: FileIOContext["refresh"], options: GcsStorageOptions = {}) {
    this.config = config;
    const { credentials, credentialSource } = config;
    if (credentials?.kind === "token") {
      const refreshing = new RefreshingCredentials<GcsToken>(
        credentials.token,
        credentialSource.kind === "catalog" && renewal !== undefined
          ? {
              refresh: renewal,
              select: (fresh) => {
                const next = gcsClientConfig(fresh.properties, options, fresh.origin);
                return next.credentialSource.kind === "catalog" ? catalogToken(fresh.properties) : undefined;
              },
            }
          : undefined,
      );
      this.#refreshing = refreshing;
      this.#tokens = {
        get: async () => (await refreshing.get()).token,
        renew: () => refreshing.renew(),
        get renewable() {
          return refreshing.renewable;
        },
      };
    } else if (credentials?.kind === "service-account") {
      this.#tokens = new ServiceAccountTokens(credentials.keyFile);
    }
  }

  /** How many times the catalog was asked for a fresh token. */
  get credentialRenewals(): number {
    return this.#refreshing?.renewals ?? 0;
  }

  async write(location: string, bytes: Uint8Array): Promise<void> {
    const { bucket, name } = parseGcsLocation(location);
    const upload = `${this.config.endpoint}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o`;
    await this.#call("write", location, async () => {
      if (bytes.byteLength <= this.config.resumableThresholdBytes) {
        const query = new URLSearchParams({ uploadType: "media", name });
        await this.#expect(
          await this.#request("POST", `${upload}?${query}`, {
            body: bytes,
            headers: { "content-type": "application/octet-stream" },
          }),
          [200],
        );
        return;
      }
      await this.#resumable(upload, name, bytes);
    });
  }

  async read(location: string): Promise<Uint8Array> {
    return this.#call("read", location, async () => {
      const response = await this.#request("GET", `${this.#objectUrl(location)}?alt=media`);
      await this.#expect(response, [200], false);
      return new Uint8Array(await response.arrayBuffer());
    });
  }

  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    if (length === 0) return new Uint8Array(0);
    const bytes = await this.#call("read range", location, async () => {
      const response = await this.#request("GET", `${this.#objectUrl(location)}?alt=media`, {
        headers: { range: `bytes=${offset}-${offset + length - 1}` },
      });
      // 416: the range starts past the end of the object.
      if (response.status === 416) {
        await response.body?.cancel();
        return new Uint8Array(0);
      }
      await this.#expect(response, [200, 206], false);
      const all = new Uint8Array(await response.arrayBuffer());
      // A store that ignores Range answers 200 with the whole object.
      return response.status === 200 ? all.subarray(offset, offset + length) : all;
    });
    if (bytes.byteLength !== length) {
      throw new Error(
        `${location}: wanted ${length} bytes at offset ${offset}, the object has only ${bytes.byteLength} there`,
      );
    }
    return bytes;
  }

  async exists(location: string): Promise<boolean> {
    return this.#call("exists", location, async () => {
      const response = await this.#request("GET", this.#objectUrl(location));
      if (response.status === 404 && !isBucketMissing(await response.text())) return false;
      await this.#expect(response, [200]);
      return true;
    });
  }

  async delete(location: string): Promise<void> {
    await this.#call("delete", location, async () => {
      const response = await this.#request("DELETE", this.#objectUrl(location));
      if (response.status === 404) {
        const text = await response.text();
        if (!isBucketMissing(text)) return;
        throw new GcsHttpError(404, errorMessage(text));
      }
      await this.#expect(response, [200, 204]);
    });
  }

  /** The JSON API's objects.list under the prefix, page by page. */
  async *list(prefix: string): AsyncIterable<ListedFile> {
    const { bucket, name } = parseGcsLocation(prefix);
    const dir = name === "" || name.endsWith("/") ? name : `${name}/`;
    let token: string | undefined;
    do {
      const query = new URLSearchParams({ prefix: dir, fields: "items(name,size,updated),nextPageToken" });
      if (token !== undefined) query.set("pageToken", token);
      const page = await this.#call("list", prefix, async () => {
        const response = await this.#request(
          "GET",
          `${this.config.endpoint}/storage/v1/b/${encodeURIComponent(bucket)}/o?${query}`,
        );
        await this.#expect(response, [200], false);
        return (await response.json()) as {
          items?: { name: string; size: string; updated: string }[];
          nextPageToken?: string;
        };
      });
      for (const item of page.items ?? []) {
        yield {
          location: `gs://${bucket}/${item.name}`,
          size: Number(item.size),
          lastModifiedMs: Date.parse(item.updated),
        };
      }
      token = page.nextPageToken;
    } while (token !== undefined);
  }

  /** A resumable upload: start a session, send the chunks in order, cancel it on failure. */
  async #resumable(upload: string, name: string, bytes: Uint8Array): Promise<void> {
    const start = await this.#request("POST", `${upload}?${new URLSearchParams({ uploadType: "resumable", name })}`, {
      headers: {
        "content-type": "application/json; charset=UTF-8",
        "x-upload-content-type": "application/octet-stream",
        "x-upload-content-length": String(bytes.byteLength),
      },
      body: JSON.stringify({ name }),
    });
    await this.#expect(start, [200]);
    const session = start.headers.get("location");
    if (!session) throw new GcsHttpError(start.status, "the store started no resumable upload session (no Location)");
    try {
      const total = bytes.byteLength;
      for (let offset = 0; offset < total; ) {
        const end = Math.min(offset + this.config.chunkSizeBytes, total);
        const response = await this.#request("PUT", session, {
          body: bytes.subarray(offset, end),
          headers: { "content-range": `bytes ${offset}-${end - 1}/${total}` },
        });
        if (end === total) {
          await this.#expect(response, [200, 201]);
          return;
        }
        // 308: the chunk is in; Range says how much the store has (it may keep less than sent).
        if (response.status !== 308) await this.#expect(response, [308]);
        await response.body?.cancel();
        const range = /bytes=0-(\d+)/.exec(response.headers.get("range") ?? "");
        offset = range ? Number(range[1]) + 1 : end;
      }
    } catch (error) {
      // DELETE on the session URI cancels the upload (the JSON API answers 499).
      await fetch(session, { method: "DELETE", signal: AbortSignal.timeout(10_000) })
        .then((r) => r.body?.cancel())
        .catch(() => {});
      throw error;
    }
  }

  #objectUrl(location: string): string {
    const { bucket, name } = parseGcsLocation(location);
    return `${this.config.endpoint}/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(name)}`;
  }

  /** One HTTP request, retried on 429, 5xx and network failures with backoff and jitter. */
  async #request(
    method: string,
    url: string,
    init: { body?: Uint8Array | string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { ...init.headers };
      const token = await this.#tokens?.get();
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      try {
        const response = await fetch(url, {
          method,
          headers,
          ...(init.body === undefined ? {} : { body: init.body }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        if ((response.status === 429 || response.status >= 500) && attempt < this.config.maxAttempts) {
          await response.body?.cancel();
          await backoff(attempt);
          continue;
        }
        return response;
      } catch (error) {
        if (attempt >= this.config.maxAttempts) throw error;
        await backoff(attempt);
      }
    }
  }

  async #expect(response: Response, ok: number[], consume = true): Promise<void> {
    if (ok.includes(response.status)) {
      if (consume) await response.body?.cancel();
      return;
    }
    throw new GcsHttpError(response.status, errorMessage(await response.text()));
  }

  /** Runs one operation; a vended token refused is renewed and the operation runs once more. */
  async #call<T>(operation: StorageOperation, location: string, run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const refused = error instanceof GcsHttpError && (error.status === 401 || error.status === 403);
        if (attempt === 1 && refused && this.#tokens?.renewable) {
          try {
            await this.#tokens.renew();
            continue;
          } catch {
            // Nothing fresh: report the store's refusal.
          }
        }
        throw gcsStorageError(error, operation, location, this.config);
      }
    }
  }
}

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(10_000, 200 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The message of a JSON API error body ({"error": {"code", "message"}}), or its first words. */
function errorMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return message;
  } catch {
    // Not JSON: a proxy's page, or a store that is not GCS.
  }
  return text.trim().slice(0, 200);
}

function isBucketMissing(text: string): boolean {
  return /bucket/i.test(errorMessage(text)) && /not (exist|found)/i.test(errorMessage(text));
}

const NETWORK =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|TimeoutError|fetch failed/;

export function gcsStorageError(
  error: unknown,
  operation: StorageOperation,
  location: string,
  config: GcsClientConfig,
): StorageError {
  const credentials = describeGcsCredentialSource(config.credentialSource);
  const { bucket } = parseGcsLocation(location);
  let kind: StorageErrorKind;
  let message: string;
  if (error instanceof GcsHttpError) {
    const said = ` (${error.message})`;
    switch (true) {
      case error.status === 401:
        kind = /expired/i.test(error.detail) ? "expired-credentials" : "invalid-credentials";
        message = `${config.endpoint} does not take the credentials${said}: ${credentials}`;
        break;
      case error.status === 403:
        kind = "access-denied";
        message = `access denied${said} with ${credentials}: they do not allow this operation on this path`;
        break;
      // An upload can miss only its bucket; elsewhere GCS says which ("The specified bucket does not exist").
      case error.status === 404 &&
        (operation === "write" || isBucketMissing(JSON.stringify({ error: { message: error.detail } }))):
        kind = "no-such-bucket";
        message = `bucket ${bucket} does not exist at ${config.endpoint}; check the table location and the GCS endpoint`;
        break;
      case error.status === 404:
        kind = "not-found";
        message = `no such object at ${config.endpoint}`;
        break;
      default:
        kind = "failed";
        message = `the store failed the request${said}, using ${credentials}`;
    }
  } else {
    const text = `${(error as Error)?.message ?? error} ${String((error as { cause?: { code?: unknown } })?.cause?.code ?? "")}`;
    if (NETWORK.test(text) || NETWORK.test((error as Error)?.name ?? "")) {
      kind = "unreachable";
      message = `cannot reach the GCS endpoint ${config.endpoint} (${text.trim()}); check destination.iceberg.storage.gcs.endpoint or the catalog's gcs.service.host`;
    } else {
      kind = "failed";
      message = `${(error as Error)?.message ?? String(error)}, using ${credentials}`;
    }
  }
  return new StorageError(kind, operation, location, message, { cause: error });
}

/** The FileIO of gs:// tables, with the job's static settings under the catalog's properties. */
export function gcsFileIOFactory(options: GcsStorageOptions = {}): FileIOFactory {
  return (_location, properties, context) =>
    new GcsFileIO(gcsClientConfig(properties, options, context?.credentialOrigin), context?.refresh, options);
}
