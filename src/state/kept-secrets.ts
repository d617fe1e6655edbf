// What an update of a stored record keeps of the secrets it leaves out. The UI shows no secret,
// so a form sent back without one means "unchanged"; but a secret is bound to the settings that
// say where it is sent, and kept only while they are unchanged.
import { isSecretPath } from "../job/secret.ts";
import { type Doc, type Kind, StoreError } from "./config-records.ts";
import { isSealed } from "./sealed-secrets.ts";

/** The settings that name the catalog, and so the tables' locations and the store hosts it vends. */
const CATALOG_PLACE = [
  "iceberg.catalog.type",
  "iceberg.catalog.uri",
  "iceberg.catalog.warehouse",
  "iceberg.catalog.workspace_url",
  "iceberg.catalog.catalog",
] as const;

/**
 * The settings that say where each secret is sent, and how: a secret left out of an update is
 * kept only while they are unchanged. Pointing a record at another host must not send the stored
 * password or token there, nor must a changed transport (TLS off, a PLAIN mechanism, another
 * trusted CA, no certificate check) hand it to whoever is on the path; the update is refused,
 * naming the secret to enter again.
 */
const BOUND_TO: Record<Kind, readonly { secret: RegExp; to: readonly string[] }[]> = {
  source: [
    {
      secret: /^kafka\.sasl\.password$/,
      to: [
        "kafka.bootstrap_servers",
        "kafka.security.protocol",
        "kafka.sasl.mechanism",
        "kafka.tls.ca",
        "kafka.tls.insecure_skip_verify",
      ],
    },
    { secret: /^kafka\.tls\.key$/, to: ["kafka.bootstrap_servers"] },
    {
      secret: /^kafka\.schema_registry\.auth\.(basic\.password|bearer\.token)$/,
      to: [
        "kafka.schema_registry.url",
        "kafka.schema_registry.tls.ca",
        "kafka.schema_registry.tls.insecure_skip_verify",
      ],
    },
  ],
  destination: [
    {
      secret: /^iceberg\.catalog\.(token|client_secret)$/,
      to: [
        "iceberg.catalog.type",
        "iceberg.catalog.uri",
        "iceberg.catalog.workspace_url",
        "iceberg.catalog.oauth2_server_uri",
      ],
    },
    // Without its own endpoint, a store's host comes from the catalog (s3.endpoint, gcs.service.host,
    // the table locations it hands out): another catalog may name any host for the store's keys.
    {
      secret: /^iceberg\.storage\.s3\.(secret_access_key|session_token)$/,
      to: ["iceberg.storage.s3.endpoint", ...CATALOG_PLACE],
    },
    { secret: /^iceberg\.storage\.gcs\.oauth2_token$/, to: ["iceberg.storage.gcs.endpoint", ...CATALOG_PLACE] },
    {
      secret: /^iceberg\.storage\.azure\.(sas_token|account_key)$/,
      to: ["iceberg.storage.azure.endpoint", ...CATALOG_PLACE],
    },
  ],
  job: [],
};

/** A setting's value when it is left out: leaving it out is no change from its default. */
const DEFAULTS: Record<string, unknown> = {
  "kafka.security.protocol": "PLAINTEXT",
  "kafka.tls.insecure_skip_verify": false,
  "kafka.schema_registry.tls.insecure_skip_verify": false,
};

function at(doc: unknown, dotted: string): unknown {
  let node = doc;
  for (const key of dotted.split(".")) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = (node as Doc)[key];
  }
  return node;
}

/** A setting as compared across an update: a comma-separated server list is its list. */
function canonical(value: unknown): string {
  if (typeof value === "string" && value.includes(",")) return JSON.stringify(value.split(",").map((s) => s.trim()));
  if (typeof value === "string") return JSON.stringify([value]);
  return JSON.stringify(value ?? null);
}

/**
 * An update's input with the stored secrets it leaves out, where the object that held them is
 * still given; refused (400, naming each secret) when a setting that says where a kept secret
 * goes has changed.
 */
export function keepSecrets(kind: Kind, input: unknown, stored: Doc): unknown {
  const issues: { path: string; message: string }[] = [];
  const merge = (given: unknown, old: unknown, path: string[]): unknown => {
    if (typeof given !== "object" || given === null || Array.isArray(given)) return given;
    if (typeof old !== "object" || old === null || Array.isArray(old)) return given;
    const out: Doc = { ...(given as Doc) };
    for (const [key, value] of Object.entries(old as Doc)) {
      const here = [...path, key];
      // A plain string at a secret's path: stored before that path was a secret (tls.key).
      if (isSecretPath(here) && (isSealed(value) || typeof value === "string") && !(key in out)) {
        const dotted = here.join(".");
        const moved = BOUND_TO[kind]
          .filter((b) => b.secret.test(dotted))
          .flatMap((b) => b.to)
          .filter(
            (target) =>
              canonical(at(input, target) ?? DEFAULTS[target]) !== canonical(at(stored, target) ?? DEFAULTS[target]),
          );
        if (moved.length > 0) {
          issues.push({
            path: dotted,
            message: `${moved.join(", ")} changed: enter ${key} again (a stored secret is not sent to another place)`,
          });
        } else out[key] = value;
      } else if (key in out) out[key] = merge(out[key], value, here);
    }
    return out;
  };
  const merged = merge(input, stored, []);
  if (issues.length > 0) throw new StoreError(400, issues);
  return merged;
}
