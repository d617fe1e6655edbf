// Iceberg REST catalog client (apache/iceberg open-api/rest-catalog-open-api.yaml), a thin
// layer over fetch. It first calls GET /v1/config: the catalog's properties are the server's
// `defaults`, then the client's, then the server's `overrides`; they give the route `prefix`,
// the `namespace-separator` and the `endpoints` the server offers. Responses are read with the
// int64-safe JSON parser (snapshot ids are int64s) and the schemas of rest-responses.ts: an
// answer that is not what the spec says is a corrupt IcebergError naming the call, the URL and
// the JSON path of the problem.
//
// Status codes follow the spec and Java's ErrorHandlers: 404 is NoSuchTable/NoSuchNamespace,
// 409 AlreadyExists (create) or CommitFailed (commit), and on commit 500, 502, 503 and 504
// leave the commit state unknown (503 is "request could have been partially processed").
// GET and HEAD are retried on network failures and 502/503/504; nothing else is, because a
// repeated POST could apply twice. A request that times out is not retried either: each attempt
// would wait as long again for a server that does not answer.

import type { z } from "zod";
import { parseJson, stringifyJson } from "../../lib/int64-json.ts";
import { IcebergError } from "../errors.ts";
import type { FileIO, FileIOFactory, StorageProperties } from "../io/file-io.ts";
import { storageFileIO } from "../io/storage-file-io.ts";
import { isJsonObject, parseDocument, readJsonDocument } from "../spec/json.ts";
import {
  CommitConflictError,
  createTableRequestJson,
  type TableRequirement,
  type TableUpdate,
  tableRequirementToJson,
  tableUpdateToJson,
} from "../spec/table-update.ts";
import { type AuthSession, anonymous, bearerToken } from "./auth.ts";
import {
  type Catalog,
  CatalogError,
  type CatalogMissing,
  commitStateUnknown,
  identifierToString,
  type LoadedTable,
  namespaceToString,
  noSuch,
  refused,
  type TableCreation,
  type TableIdentifier,
} from "./catalog.ts";
import { networkFailure, redactUrl, redirectTarget, sleep } from "./http.ts";
import { OAuth2ClientCredentials } from "./oauth2.ts";
import { DEFAULT_NAMESPACE_SEPARATOR, RestPaths } from "./rest-paths.ts";
import {
  type ConfigResponse,
  commitTableResponseJson,
  configResponseJson,
  errorResponseJson,
  type LoadTableResult,
  listNamespacesResponseJson,
  listTablesResponseJson,
  loadCredentialsResponseJson,
  loadTableResultJson,
} from "./rest-responses.ts";
import {
  parseStorageCredentials,
  type StorageCredential,
  stringValues,
  tableStorageProperties,
} from "./storage-credentials.ts";
import { UNITY_ICEBERG_REST_PATH } from "./unity.ts";

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Tables' files by the scheme of their location, with no static storage settings. */
const defaultFileIO = storageFileIO();

/** A static bearer token, or OAuth2 client credentials exchanged for tokens. */
export type RestCredential =
  | { token: string }
  | { clientId: string; clientSecret: string; scope?: string | undefined; oauth2ServerUri?: string | undefined };

/** Polaris needs this scope for a client-credentials token; other servers take what they are given. */
export const DEFAULT_OAUTH2_SCOPE = "PRINCIPAL_ROLE:ALL";

export interface RestCatalogOptions {
  /** How floe names the catalog (messages, logs). */
  name?: string;
  /** Base URI, without /v1. */
  uri: string;
  warehouse?: string;
  credential?: RestCredential;
  /** Sent with every request (e.g. X-Iceberg-Access-Delegation). */
  headers?: Readonly<Record<string, string>>;
  /** Client catalog properties, between the server's defaults and overrides. */
  properties?: Readonly<Record<string, string>>;
  /** Builds each table's FileIO from the merged catalog properties and the table's config. */
  fileIO?: FileIOFactory;
  /** Waiting for the answer to one request, connecting included. Default 30 s. */
  requestTimeoutMs?: number;
  /** Attempts of an idempotent request on transient failures, and the first backoff. */
  retry?: { attempts: number; initialDelayMs: number };
}

/**
 * The routes the spec says a server offers when /v1/config lists no `endpoints`. The HEAD
 * routes are not among them, so existence checks then fall back to GET.
 */
const defaultEndpoints = new Set([
  "GET /v1/{prefix}/namespaces",
  "POST /v1/{prefix}/namespaces",
  "GET /v1/{prefix}/namespaces/{namespace}",
  "DELETE /v1/{prefix}/namespaces/{namespace}",
  "POST /v1/{prefix}/namespaces/{namespace}/properties",
  "GET /v1/{prefix}/namespaces/{namespace}/tables",
  "POST /v1/{prefix}/namespaces/{namespace}/tables",
  "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
  "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
  "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
  "POST /v1/{prefix}/namespaces/{namespace}/register",
  "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
  "POST /v1/{prefix}/tables/rename",
  "POST /v1/{prefix}/transactions/commit",
]);
const HEAD_NAMESPACE = "HEAD /v1/{prefix}/namespaces/{namespace}";
const HEAD_TABLE = "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}";
const LOAD_CREDENTIALS = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials";
/** A table config key (Iceberg 1.9+): the path of the table's credentials endpoint. */
const REFRESH_CREDENTIALS_ENDPOINT = "client.refresh-credentials-endpoint";

/** What each call needs on Unity Catalog, for the hint of a 403. */
const unityPrivileges: Record<string, string> = {
  getConfig: "USE CATALOG",
  listNamespaces: "USE CATALOG",
  createNamespace: "USE CATALOG and CREATE SCHEMA",
  namespaceExists: "USE CATALOG and USE SCHEMA",
  dropNamespace: "ownership of the schema",
  listTables: "USE CATALOG and USE SCHEMA",
  tableExists: "USE CATALOG, USE SCHEMA and SELECT",
  loadTable: "USE CATALOG, USE SCHEMA, SELECT and EXTERNAL USE SCHEMA",
  createTable: "USE CATALOG, USE SCHEMA, CREATE TABLE and EXTERNAL USE SCHEMA",
  dropTable: "ownership of the table",
  commitTable: "USE CATALOG, USE SCHEMA, MODIFY and EXTERNAL USE SCHEMA",
};

export function authSessionFor(uri: string, credential: RestCredential | undefined, timeoutMs?: number): AuthSession {
  if (credential === undefined) return anonymous;
  if ("token" in credential) return bearerToken(credential.token);
  return new OAuth2ClientCredentials({
    tokenUri: resolveEndpoint(uri, credential.oauth2ServerUri ?? "v1/oauth/tokens"),
    clientId: credential.clientId,
    clientSecret: credential.clientSecret,
    scope: credential.scope ?? DEFAULT_OAUTH2_SCOPE,
    ...(timeoutMs === undefined ? {} : { requestTimeoutMs: timeoutMs }),
  });
}

/** An absolute endpoint stays as is; a relative one hangs off the catalog URI. */
export function resolveEndpoint(uri: string, endpoint: string): string {
  if (/^https?:\/\//.test(endpoint)) return endpoint;
  return `${uri.replace(/\/+$/, "")}/${endpoint.replace(/^\/+/, "")}`;
}

/** Connects: authenticates and reads GET /v1/config. */
export async function connectRestCatalog(options: RestCatalogOptions): Promise<RestCatalog> {
  const catalog = new RestCatalog(
    options,
    authSessionFor(options.uri, options.credential, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
  );
  await catalog.configure();
  return catalog;
}

interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: string;
  /** A commit: a request broken in flight leaves its outcome unknown. */
  commit?: boolean;
}

interface ErrorResponse {
  message: string;
  type: string | undefined;
  /** False when the body is not an IcebergErrorResponse (a web server's or a proxy's page). */
  iceberg: boolean;
}

export class RestCatalog implements Catalog {
  readonly name: string;
  readonly #options: RestCatalogOptions;
  readonly #auth: AuthSession;
  readonly #base: string;
  #paths = new RestPaths(undefined);
  #properties: Record<string, string> = {};
  #endpoints: ReadonlySet<string> = defaultEndpoints;
  /** The config of each table's last load, for the FileIO of the metadata a commit returns. */
  readonly #tableConfig = new Map<string, Record<string, string>>();
  readonly #storageCredentials = new Map<string, StorageCredential[]>();

  constructor(options: RestCatalogOptions, auth: AuthSession) {
    this.name = options.name ?? "rest";
    this.#options = options;
    this.#auth = auth;
    if (/^[a-z]+:\/\/[^/]*@/i.test(options.uri)) {
      // fetch refuses such URLs, quoting them whole, password included.
      throw new IcebergError(
        "validation",
        "the catalog uri carries user:password; give credentials as `credential` instead",
      );
    }
    this.#base = options.uri.replace(/\/+$/, "");
  }

  /** The merged catalog properties (defaults, client, overrides). */
  get properties(): Readonly<Record<string, string>> {
    return this.#properties;
  }

  async configure(): Promise<void> {
    const call = "getConfig";
    const response = await this.#send(call, "GET", "v1/config", { query: { warehouse: this.#options.warehouse } });
    if (!response.ok) {
      const error = await this.#errorOf(response);
      if (!error.iceberg && response.status !== 401 && response.status !== 403) {
        throw this.#notIcebergRest(call, response, error.message);
      }
      if (response.status === 404 || response.status === 400) {
        throw refused(
          call,
          `${error.message}; check \`warehouse\` (${JSON.stringify(this.#options.warehouse ?? "")}; on Unity: the catalog name)`,
          response.status,
        );
      }
      throw this.#failureOf(call, response, error);
    }
    let config: unknown;
    try {
      config = parseJson(await response.text());
    } catch {
      throw this.#notIcebergRest(call, response, "a body that is not JSON");
    }
    if (!isJsonObject(config)) throw this.#notIcebergRest(call, response, "JSON that is not a catalog configuration");
    this.#configureWith(parseDocument(configResponseJson, config, this.#document(call, "ConfigResponse", response)));
  }

  /**
   * The answer of GET /v1/config came from something other than an Iceberg REST catalog: the
   * `uri` points at a web server, a UI, or the wrong path on the right host.
   */
  #notIcebergRest(call: string, response: Response, what: string): CatalogError {
    const status = response.ok ? "" : ` HTTP ${response.status} with`;
    return new CatalogError(
      "not-found",
      call,
      `${redactUrl(this.#base).replace(/\/$/, "")} does not look like an Iceberg REST catalog endpoint: GET ${redactUrl(response.url)} ` +
        `answered${status} ${what}. \`uri\` is the base that /v1/config hangs off, often with a path such as ` +
        `/api/catalog (Polaris); for Databricks Unity Catalog it is https://<workspace>${UNITY_ICEBERG_REST_PATH} ` +
        "(or use type: unity with workspace_url)",
      response.ok ? {} : { status: response.status },
    );
  }

  #configureWith(config: ConfigResponse): void {
    const client = {
      ...this.#options.properties,
      ...(this.#options.warehouse === undefined ? {} : { warehouse: this.#options.warehouse }),
    };
    this.#properties = { ...(config.defaults ?? {}), ...client, ...(config.overrides ?? {}) };
    this.#paths = new RestPaths(
      this.#properties.prefix,
      this.#properties["namespace-separator"] ?? DEFAULT_NAMESPACE_SEPARATOR,
    );
    if (config.endpoints) this.#endpoints = new Set(config.endpoints);
  }

  async listNamespaces(parent?: readonly string[]): Promise<string[][]> {
    const call = parent?.length ? `listNamespaces ${namespaceToString(parent)}` : "listNamespaces";
    const query = { parent: parent?.length ? this.#paths.parentParam(parent) : undefined };
    return this.#pages(call, this.#paths.namespaces(), query, async (response) => {
      const page = await this.#read(call, response, listNamespacesResponseJson, "ListNamespacesResponse");
      return { items: page.namespaces ?? [], next: page["next-page-token"] };
    });
  }

  async createNamespace(
    namespace: readonly string[],
    properties: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    const call = `createNamespace ${namespaceToString(namespace)}`;
    const response = await this.#send(call, "POST", this.#paths.namespaces(), {
      body: JSON.stringify({ namespace, properties }),
    });
    if (response.status === 409) throw await this.#alreadyExists(call, response);
    if (!response.ok) throw await this.#failure(call, response);
    await response.body?.cancel();
  }

  async namespaceExists(namespace: readonly string[]): Promise<boolean> {
    const call = `namespaceExists ${namespaceToString(namespace)}`;
    const method = this.#endpoints.has(HEAD_NAMESPACE) ? "HEAD" : "GET";
    const response = await this.#send(call, method, this.#paths.namespace(namespace));
    await response.body?.cancel();
    if (response.status === 404) return false;
    if (!response.ok) throw await this.#failure(call, response);
    return true;
  }

  async dropNamespace(namespace: readonly string[]): Promise<void> {
    const call = `dropNamespace ${namespaceToString(namespace)}`;
    const response = await this.#send(call, "DELETE", this.#paths.namespace(namespace));
    if (response.ok) {
      await response.body?.cancel();
      return;
    }
    const error = await this.#errorOf(response);
    // Java answers 409; older servers 400 with NamespaceNotEmptyException.
    if (response.status === 409 || error.type === "NamespaceNotEmptyException") {
      throw new CatalogError("validation", call, error.message, { status: response.status });
    }
    if (response.status === 404) throw noSuch("namespace", call, error.message);
    throw this.#failureOf(call, response, error);
  }

  async listTables(namespace: readonly string[]): Promise<TableIdentifier[]> {
    const call = `listTables ${namespaceToString(namespace)}`;
    const identifiers = await this.#pages(call, this.#paths.tables(namespace), {}, async (response) => {
      const page = await this.#read(call, response, listTablesResponseJson, "ListTablesResponse");
      return { items: page.identifiers ?? [], next: page["next-page-token"] };
    });
    return identifiers.map((i) => ({ namespace: i.namespace, name: i.name }));
  }

  async tableExists(identifier: TableIdentifier): Promise<boolean> {
    const call = `tableExists ${identifierToString(identifier)}`;
    const method = this.#endpoints.has(HEAD_TABLE) ? "HEAD" : "GET";
    const response = await this.#send(call, method, this.#paths.table(identifier));
    await response.body?.cancel();
    if (response.status === 404) return false;
    if (!response.ok) throw await this.#failure(call, response);
    return true;
  }

  async loadTable(identifier: TableIdentifier): Promise<LoadedTable> {
    const call = `loadTable ${identifierToString(identifier)}`;
    const response = await this.#send(call, "GET", this.#paths.table(identifier));
    if (!response.ok) throw await this.#failure(call, response, { notFound: "table" });
    return this.#loaded(identifier, await this.#read(call, response, loadTableResultJson, "LoadTableResult"));
  }

  async createTable(identifier: TableIdentifier, table: TableCreation): Promise<LoadedTable> {
    const call = `createTable ${identifierToString(identifier)}`;
    const response = await this.#send(call, "POST", this.#paths.tables(identifier.namespace), {
      body: createTableRequestJson(identifier.name, table),
    });
    if (response.status === 409) throw await this.#alreadyExists(call, response);
    if (!response.ok) throw await this.#failure(call, response, { notFound: "namespace" });
    return this.#loaded(identifier, await this.#read(call, response, loadTableResultJson, "LoadTableResult"));
  }

  async dropTable(identifier: TableIdentifier, options: { purge?: boolean } = {}): Promise<void> {
    const call = `dropTable ${identifierToString(identifier)}`;
    const response = await this.#send(call, "DELETE", this.#paths.table(identifier), {
      query: { purgeRequested: String(options.purge ?? false) },
    });
    if (!response.ok) throw await this.#failure(call, response, { notFound: "table" });
    await response.body?.cancel();
    this.#tableConfig.delete(identifierToString(identifier));
    this.#storageCredentials.delete(identifierToString(identifier));
  }

  async commitTable(
    identifier: TableIdentifier,
    requirements: readonly TableRequirement[],
    updates: readonly TableUpdate[],
  ): Promise<LoadedTable> {
    const call = `commitTable ${identifierToString(identifier)}`;
    const body = stringifyJson({
      identifier: { namespace: identifier.namespace, name: identifier.name },
      requirements: requirements.map(tableRequirementToJson),
      updates: updates.map(tableUpdateToJson),
    });
    const response = await this.#send(call, "POST", this.#paths.table(identifier), { body, commit: true });
    if (!response.ok) {
      const error = await this.#errorOf(response);
      switch (response.status) {
        case 409:
          throw new CommitConflictError(`${call}: ${error.message}`);
        case 500:
        case 502:
        case 503:
        case 504:
          throw commitStateUnknown(call, `HTTP ${response.status}: ${error.message}`, { status: response.status });
        case 404:
          throw noSuch("table", call, error.message);
        default:
          throw this.#failureOf(call, response, error);
      }
    }
    const result = await this.#read(call, response, commitTableResponseJson, "CommitTableResponse");
    // CommitTableResponse has no config: the table keeps the config and credentials of its last load.
    return this.#loaded(identifier, result, { commit: true });
  }

  async close(): Promise<void> {}

  #loaded(
    identifier: TableIdentifier,
    result: Pick<LoadTableResult, "metadata" | "metadata-location"> &
      Partial<Pick<LoadTableResult, "config" | "storage-credentials">>,
    from: { commit?: boolean } = {},
  ): LoadedTable {
    const key = identifierToString(identifier);
    if (!from.commit) {
      this.#tableConfig.set(key, stringValues(result.config ?? {}));
      this.#storageCredentials.set(key, parseStorageCredentials(result["storage-credentials"] ?? []));
    }
    return {
      identifier,
      metadata: result.metadata,
      metadataLocation: result["metadata-location"] ?? "",
      io: this.#fileIO(identifier, result.metadata.location),
    };
  }

  /**
   * Table config overrides catalog properties; the storage credential whose prefix is the
   * longest match of the table location overrides both (spec: check storage-credentials first).
   * The FileIO asks for fresh ones through #freshStorage when vended credentials near expiry.
   */
  #fileIO(identifier: TableIdentifier, location: string): FileIO {
    const storage = this.#storageOf(identifier, location);
    const factory = this.#options.fileIO ?? defaultFileIO;
    return factory(location, storage.properties, {
      credentialOrigin: storage.origin,
      refresh: () => this.#freshStorage(identifier, location),
    });
  }

  #storageOf(identifier: TableIdentifier, location: string): StorageProperties {
    const key = identifierToString(identifier);
    return tableStorageProperties(
      location,
      this.#properties,
      this.#tableConfig.get(key) ?? {},
      this.#storageCredentials.get(key) ?? [],
    );
  }

  /**
   * The table's storage properties asked again: from the credentials endpoint where the catalog
   * offers it (LoadCredentialsResponse: storage-credentials only), else by loading the table.
   */
  async #freshStorage(identifier: TableIdentifier, location: string): Promise<StorageProperties> {
    const key = identifierToString(identifier);
    const endpoint = this.#tableConfig.get(key)?.[REFRESH_CREDENTIALS_ENDPOINT];
    if (endpoint !== undefined || this.#endpoints.has(LOAD_CREDENTIALS)) {
      const call = `loadCredentials ${key}`;
      // The endpoint is a path under the catalog's URI (or that URI and the path).
      const path =
        endpoint === undefined
          ? `${this.#paths.table(identifier)}/credentials`
          : (endpoint.startsWith(this.#base) ? endpoint.slice(this.#base.length) : endpoint).replace(/^\/+/, "");
      const response = await this.#send(call, "GET", path);
      if (!response.ok) throw await this.#failure(call, response, { notFound: "table" });
      const answer = await this.#read(call, response, loadCredentialsResponseJson, "LoadCredentialsResponse");
      this.#storageCredentials.set(key, parseStorageCredentials(answer["storage-credentials"] ?? []));
    } else {
      await this.loadTable(identifier);
    }
    return this.#storageOf(identifier, location);
  }

  /** Follows next-page-token until the listing ends; `read` reads one page's items and token. */
  async #pages<T>(
    call: string,
    path: string,
    query: Record<string, string | undefined>,
    read: (response: Response) => Promise<{ items: readonly T[]; next: string | null | undefined }>,
  ): Promise<T[]> {
    const items: T[] = [];
    let pageToken: string | undefined;
    do {
      const response = await this.#send(call, "GET", path, { query: { ...query, pageToken } });
      if (!response.ok) throw await this.#failure(call, response, { notFound: "namespace" });
      const page = await read(response);
      items.push(...page.items);
      pageToken = page.next ? page.next : undefined;
    } while (pageToken !== undefined);
    return items;
  }

  /**
   * Sends one request. Renews the token once on 401/419. Retries GET and HEAD on network
   * failures and 502/503/504 with exponential backoff. A network failure becomes
   * CatalogError of kind io, except a POST that broke after it was sent: a commit then has
   * an unknown outcome.
   */
  async #send(call: string, method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const url = new URL(`${this.#base}/${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const idempotent = method === "GET" || method === "HEAD";
    const { attempts, initialDelayMs } = this.#options.retry ?? { attempts: 3, initialDelayMs: 200 };
    const timeoutMs = this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { ...this.#options.headers, accept: "application/json" };
      if (options.body !== undefined) headers["content-type"] = "application/json";
      const authorization = await this.#auth.authorization(call);
      if (authorization !== undefined) headers.authorization = authorization;
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          ...(options.body === undefined ? {} : { body: options.body }),
          redirect: "manual",
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const failure = networkFailure(error);
        if (!failure) throw error;
        const timedOut = failure.code === "timeout";
        if (idempotent && attempt < attempts && !timedOut) {
          await sleep(initialDelayMs * 4 ** (attempt - 1));
          continue;
        }
        const where = redactUrl(url.toString());
        const broke = timedOut
          ? `the catalog at ${where} did not answer within ${timeoutMs / 1000} s (request_timeout)`
          : `the connection to ${where} broke mid-request (${failure.code})`;
        if (!failure.beforeRequest && options.commit) {
          throw commitStateUnknown(call, broke, { cause: error });
        }
        throw new CatalogError(
          "io",
          call,
          failure.beforeRequest
            ? `cannot reach the catalog at ${where} (${failure.code}); check \`uri\``
            : timedOut
              ? `${broke}; check \`uri\` and that the catalog is up`
              : `${broke}${idempotent ? "" : "; the request may have been applied"}`,
          { cause: error },
        );
      }
      if ((response.status === 401 || response.status === 419) && !renewed && this.#auth.renew()) {
        renewed = true;
        await response.body?.cancel();
        continue;
      }
      if (idempotent && attempt < attempts && [502, 503, 504].includes(response.status)) {
        await response.body?.cancel();
        await sleep(initialDelayMs * 4 ** (attempt - 1));
        continue;
      }
      const target = redirectTarget(response);
      if (target !== undefined) {
        await response.body?.cancel();
        throw refused(
          call,
          `the catalog at ${redactUrl(url.toString())} answered a redirect (HTTP ${response.status}) to ${target}; ` +
            "floe does not follow a catalog's redirects: set `uri` to where it leads",
          response.status,
        );
      }
      return response;
    }
  }

  /** The body of a successful response as the spec's document `name`. */
  async #read<T extends z.ZodType>(call: string, response: Response, schema: T, name: string): Promise<z.output<T>> {
    return readJsonDocument(schema, await response.text(), this.#document(call, name, response));
  }

  #document(call: string, name: string, response: Response): string {
    return `${call}: the catalog's ${name} (${redactUrl(response.url)})`;
  }

  /**
   * The IcebergErrorResponse's message and type; for anything else, the start of a plain-text
   * body, or only the title of an HTML page (a whole page in an error message helps no one).
   */
  async #errorOf(response: Response): Promise<ErrorResponse> {
    const text = this.#auth.redact(await response.text());
    const parsed = errorResponseJson.safeParse(jsonOrUndefined(text));
    if (parsed.success) {
      const { message, type } = parsed.data.error;
      return { message: shortReason(message, 200), type: type ?? undefined, iceberg: true };
    }
    // Not an IcebergErrorResponse: a web server's or a proxy's page, or whatever a host that is
    // no catalog answers. Its body is not quoted: the URL may be one a user named to read an
    // internal service's answer back through floe's error messages.
    const trimmed = text.trim();
    if (/html/i.test(response.headers.get("content-type") ?? "") || /^<(!doctype|html)/i.test(trimmed)) {
      const title = shortReason(/<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1] ?? "", 60);
      return { message: `an HTML page${title ? ` ("${title}")` : ""}`, type: undefined, iceberg: false };
    }
    return {
      message: trimmed === "" ? response.statusText || "no detail" : "a body that is not an Iceberg error (not quoted)",
      type: undefined,
      iceberg: false,
    };
  }

  /** 409 to a create: what was to be created exists already. */
  async #alreadyExists(call: string, response: Response): Promise<CatalogError> {
    return new CatalogError("already-exists", call, (await this.#errorOf(response)).message, { status: 409 });
  }

  async #failure(call: string, response: Response, mapping: { notFound?: CatalogMissing } = {}): Promise<Error> {
    return this.#failureOf(call, response, await this.#errorOf(response), mapping);
  }

  #failureOf(
    call: string,
    response: Response,
    error: ErrorResponse,
    mapping: { notFound?: CatalogMissing } = {},
  ): Error {
    const where = redactUrl(response.url);
    switch (response.status) {
      case 401:
      case 419:
        return new CatalogError(
          "auth",
          call,
          `the catalog at ${where} rejected the credentials (HTTP ${response.status}: ${error.message}); ` +
            "check the token, or the OAuth2 client id, secret and scope",
          { status: response.status },
        );
      case 403: {
        const operation = call.split(" ")[0] ?? call;
        const unity = unityPrivileges[operation];
        return new CatalogError(
          "auth",
          call,
          `the catalog at ${where} denied it (HTTP 403: ${error.message}); check the principal's privileges` +
            (unity ? ` (on Unity Catalog: ${unity})` : ""),
          { status: 403 },
        );
      }
      case 404:
        if (error.type === "NoSuchNamespaceException") return noSuch("namespace", call, error.message);
        if (error.type === "NoSuchTableException") return noSuch("table", call, error.message);
        if (mapping.notFound) return noSuch(mapping.notFound, call, error.message);
        return refused(call, `${error.message} (${where})`, 404);
      default:
        return refused(call, error.message, response.status);
    }
  }
}

function jsonOrUndefined(text: string): unknown {
  try {
    return parseJson(text);
  } catch {
    return undefined;
  }
}

/** A reason from a server's answer, for an error message: one line, printable, at most `max` characters. */
function shortReason(text: string, max: number): string {
  const line = text
    .replace(/\p{Cc}+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
