// A client of the Confluent Schema Registry REST API, as Confluent's registry, Redpanda's
// built-in one, Karapace and Apicurio's ccompat API serve it:
//
//   GET /schemas/ids/{id}                      {schema, schemaType?, references?}
//   GET /subjects/{subject}/versions/{version} {subject, version, id, schema, schemaType?, references?}
//   GET /subjects                              [subject, ...]
//
// schemaType is absent for Avro. A schema id names one schema for good, so a schema fetched by
// id is cached for the client's life. Over node:https rather than fetch: fetch takes no CA of
// its own, and a private registry's certificate is often signed by one.
import { readFileSync } from "node:fs";

export type SchemaType = "AVRO" | "PROTOBUF" | "JSON";

export interface SchemaReference {
  /** The import name: an Avro full name, or a .proto file name. */
  readonly name: string;
  readonly subject: string;
  readonly version: number;
}

export interface RegisteredSchema {
  readonly schemaType: SchemaType;
  readonly schema: string;
  readonly references: readonly SchemaReference[];
}

/** A secret that prints as *** and gives its value only on demand. */
export interface Revealable {
  reveal(): string;
}

export type RegistryAuth =
  | { readonly kind: "none" }
  | { readonly kind: "basic"; readonly username: string; readonly password: Revealable }
  | { readonly kind: "bearer"; readonly token: Revealable };

export interface RegistrySettings {
  /** Base URL, e.g. https://psrc-xxxx.confluent.cloud or http://127.0.0.1:8081 (a path prefix is kept). */
  readonly url: string;
  readonly auth: RegistryAuth;
  readonly tls?: {
    /** PEM text or the path of a PEM file of the CA(s) to trust; undefined: the system's. */
    readonly ca?: string | undefined;
    readonly insecureSkipVerify?: boolean;
  };
  readonly requestTimeoutMs: number;
}

/** tls: the registry's certificate is not trusted, or not for its host name: the settings are wrong, not the network. */
export type RegistryErrorKind = "not-found" | "auth" | "connection" | "protocol" | "tls";

/** A registry request that failed: the kind says whether the message, the settings or the network is at fault. */
export class RegistryError extends Error {
  readonly kind: RegistryErrorKind;

  constructor(kind: RegistryErrorKind, message: string) {
    super(message);
    this.name = "RegistryError";
    this.kind = kind;
  }
}

export class SchemaRegistryClient {
  readonly #settings: RegistrySettings;
  readonly #byId = new Map<number, Promise<RegisteredSchema>>();
  readonly #ca: string | undefined;

  constructor(settings: RegistrySettings) {
    this.#settings = settings;
    const ca = settings.tls?.ca;
    this.#ca = ca === undefined ? undefined : ca.startsWith("-----BEGIN") ? ca : readFileSync(ca, "utf8");
  }

  get url(): string {
    return this.#settings.url;
  }

  /** The schema registered under `id`; fetched once. */
  schemaById(id: number): Promise<RegisteredSchema> {
    let schema = this.#byId.get(id);
    if (schema === undefined) {
      schema = this.#get(`/schemas/ids/${id}`, `schema id ${id}`).then(toSchema);
      // A failure is not cached: the next message with the id asks again.
      schema.catch(() => this.#byId.delete(id));
      this.#byId.set(id, schema);
    }
    return schema;
  }

  /** One version of a subject ("latest" for the newest), with its id. */
  async subjectVersion(subject: string, version: number | "latest"): Promise<RegisteredSchema & { id: number }> {
    const body = await this.#get(
      `/subjects/${encodeURIComponent(subject)}/versions/${version}`,
      `subject ${subject} version ${version}`,
    );
    return { ...toSchema(body), id: Number((body as { id: unknown }).id) };
  }

  async subjects(): Promise<string[]> {
    return (await this.#get("/subjects", "the subjects")) as string[];
  }

  #get(path: string, what: string): Promise<unknown> {
    const base = new URL(this.#settings.url);
    const url = new URL(base.pathname.replace(/\/$/, "") + path, base);
    const headers: Record<string, string> = { accept: "application/vnd.schemaregistry.v1+json, application/json" };
    const auth = this.#settings.auth;
    if (auth.kind === "basic") {
      headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password.reveal()}`).toString("base64")}`;
    } else if (auth.kind === "bearer") {
      headers.authorization = `Bearer ${auth.token.reveal()}`;
    }
    const where = `schema registry ${base.origin}`;
    return new Promise((resolve, reject) => {
      const options = {
        method: "GET",
        headers,
        timeout: this.#settings.requestTimeoutMs,
        ...(url.protocol === "https:"
          ? { ca: this.#ca, rejectUnauthorized: this.#settings.tls?.insecureSkipVerify !== true }
          : {}),
      };
      // Taken here as CommonJS modules, not imported: an ES import of node:http builds its whole
      // namespace, which loads Node's fetch implementation (undici), tens of ms at the start of
      // every command whose modules import this file, a registry in its job or not.
      const send =
        url.protocol === "https:"
          ? process.getBuiltinModule("node:https").request
          : process.getBuiltinModule("node:http").request;
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", (error) => reject(new RegistryError("connection", `${where}: ${what}: ${error.message}`)));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status === 200) {
            try {
              resolve(JSON.parse(text));
            } catch {
              reject(new RegistryError("protocol", `${where}: ${what}: the answer is not JSON`));
            }
            return;
          }
          const message = registryMessage(text);
          if (status === 404) reject(new RegistryError("not-found", `${where}: ${what} is not registered${message}`));
          else if (status === 401 || status === 403) {
            reject(
              new RegistryError("auth", `${where}: ${what}: HTTP ${status}${message}; check schema_registry.auth`),
            );
          } else
            reject(
              new RegistryError(
                status >= 500 ? "connection" : "protocol",
                `${where}: ${what}: HTTP ${status}${message}`,
              ),
            );
        });
      });
      req.on("timeout", () => req.destroy(new Error(`no answer within ${this.#settings.requestTimeoutMs} ms`)));
      req.on("error", (error) => reject(requestError(error as NodeJS.ErrnoException, where, what)));
      req.end();
    });
  }
}

/** Node's codes for a certificate it does not trust, or one for another host. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
  "CERT_HAS_EXPIRED",
]);

function requestError(error: NodeJS.ErrnoException, where: string, what: string): RegistryError {
  if (error.code !== undefined && UNTRUSTED.has(error.code)) {
    return new RegistryError(
      "tls",
      `${where}: ${what}: the registry's certificate is not trusted (${error.message}); set schema_registry.tls.ca to the CA that signed it`,
    );
  }
  if (error.code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return new RegistryError(
      "tls",
      `${where}: ${what}: the registry's certificate is for another host name (${error.message})`,
    );
  }
  return new RegistryError("connection", `${where}: ${what}: ${error.message}`);
}

function registryMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    if (typeof message !== "string") return "";
    // The registry's own words, short and on one line: the rest of a body is never quoted.
    const line = message.replace(/\p{Cc}+/gu, " ").trim();
    return line === "" ? "" : ` (${line.length > 200 ? `${line.slice(0, 200)}…` : line})`;
  } catch {
    return "";
  }
}

function toSchema(body: unknown): RegisteredSchema {
  const b = body as { schema?: unknown; schemaType?: unknown; references?: unknown };
  if (typeof b.schema !== "string") throw new RegistryError("protocol", "the registry's answer has no schema");
  const schemaType = typeof b.schemaType === "string" ? (b.schemaType.toUpperCase() as SchemaType) : "AVRO";
  const references = Array.isArray(b.references)
    ? b.references.map((r: { name: string; subject: string; version: number }) => ({
        name: String(r.name),
        subject: String(r.subject),
        version: Number(r.version),
      }))
    : [];
  return { schemaType, schema: b.schema, references };
}
