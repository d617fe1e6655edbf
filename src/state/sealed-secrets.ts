// The secrets of the config store's records (job/secret.ts's SECRET_KEYS): sealed with
// AES-256-GCM (secret-box.ts) before they are written, as {"$sealed": "v1:..."} in place of the
// value, and write-only: what the store hands out for display never holds them, only the paths
// of those that are set. Only the store puts a sealed value in a record; one in a caller's
// input is refused.
import { isSecretPath } from "../job/secret.ts";
import { type Doc, StoreError } from "./config-records.ts";
import type { SecretBox } from "./secret-box.ts";

export const SEALED = "$sealed";

/** A stored record as shown: no secret, and the paths of the secrets that are set. */
export interface Shown {
  readonly [key: string]: unknown;
  readonly secrets_set: string[];
}

/** The record with each secret sealed (a string at a secret's path; sealed ones stay as they are). */
export function sealSecrets(doc: Doc, box: SecretBox): Doc {
  return mapSecrets(doc, (value) => ({ [SEALED]: box.seal(value) }));
}

/**
 * The record with every secret stored in the clear sealed, for the rows of a version that did
 * not take them for secrets (tls.key); sealed ones stay as they are.
 */
export function sealPlainSecrets(doc: Doc, box: SecretBox): Doc {
  return mapTree(doc, (value, path) =>
    path.length > 0 && isSecretPath(path) && typeof value === "string"
      ? { replace: { [SEALED]: box.seal(value) } }
      : undefined,
  ) as Doc;
}

/** Sealed secrets opened; plain values pass through. */
export function openSecrets(doc: Doc, box: SecretBox): Doc {
  return mapTree(doc, (value) => (isSealed(value) ? { replace: box.open(value[SEALED]) } : undefined)) as Doc;
}

/**
 * Refuses a sealed value in what a caller sent: only the store puts them in (a secret an update
 * keeps). Opened as if stored, one would decrypt a ciphertext taken from a copy of config.db
 * (whose key may live apart, in FLOE_SECRET_KEY) into a field the API shows, or send it as a
 * password to a host the caller names.
 */
export function refuseSealed(input: unknown, prefix: string[] = []): void {
  const found: string[] = [];
  mapTree(input, (value, path) => {
    if (typeof value === "object" && value !== null && SEALED in value) found.push([...prefix, ...path].join("."));
    return undefined;
  });
  if (found.length > 0) {
    throw new StoreError(
      400,
      found.map((path) => ({ path, message: `a {"${SEALED}": ...} value is the store's own; give the value itself` })),
    );
  }
}

export function isSealed(value: unknown): value is { [SEALED]: string } {
  return typeof value === "object" && value !== null && typeof (value as Doc)[SEALED] === "string";
}

/** Rebuilds a JSON tree; `visit` may replace a node (its children are then not visited). */
export function mapTree(
  node: unknown,
  visit: (value: unknown, path: string[]) => { replace: unknown } | undefined,
  path: string[] = [],
): unknown {
  const hit = visit(node, path);
  if (hit) return hit.replace;
  if (Array.isArray(node)) return node.map((v, i) => mapTree(v, visit, [...path, String(i)]));
  if (typeof node === "object" && node !== null) {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, mapTree(v, visit, [...path, k])]));
  }
  return node;
}

/** Every secret value (a string or a sealed one at a secret's path, job/secret.ts) replaced. */
export function mapSecrets(doc: Doc, replace: (value: string, path: string[]) => unknown): Doc {
  return mapTree(doc, (value, path) => {
    if (path.length === 0 || !isSecretPath(path)) return undefined;
    if (typeof value === "string") return { replace: replace(value, path) };
    return isSealed(value) ? { replace: replace("", path) } : undefined;
  }) as Doc;
}

/** The document without its secrets, and the paths of those that are set. */
export function shown(doc: Doc): Shown {
  const set: string[] = [];
  const strip = (node: unknown, path: string[]): unknown => {
    if (Array.isArray(node)) return node.map((v, i) => strip(v, [...path, String(i)]));
    if (typeof node !== "object" || node === null) return node;
    const out: Doc = {};
    for (const [key, value] of Object.entries(node)) {
      if (isSecretPath([...path, key]) && (typeof value === "string" || isSealed(value)))
        set.push([...path, key].join("."));
      else out[key] = strip(value, [...path, key]);
    }
    return out;
  };
  const clean = strip(doc, []) as Doc;
  return { ...clean, secrets_set: set };
}
