// Routes of the REST catalog spec: /v1/{prefix}/namespaces/{namespace}/tables/{table}.
// The prefix comes from GET /v1/config and is used as given (Unity's spans several segments).
// A multi-level namespace is one path segment: each level URL-encoded, joined by the
// `namespace-separator` the server announces in its url-encoded form, by default %1F (the
// unit separator). The `parent` query parameter joins the raw levels with the decoded separator
// and is then query-encoded like any other value.
import { IcebergError } from "../errors.ts";
import type { TableIdentifier } from "./catalog.ts";

export const DEFAULT_NAMESPACE_SEPARATOR = "%1F";

export class RestPaths {
  readonly #root: string;
  readonly #separator: string;

  constructor(prefix: string | undefined, separator = DEFAULT_NAMESPACE_SEPARATOR) {
    const trimmed = prefix?.replace(/^\/+|\/+$/g, "");
    this.#root = trimmed ? `v1/${trimmed}` : "v1";
    this.#separator = separator;
  }

  namespaces(): string {
    return `${this.#root}/namespaces`;
  }

  namespace(namespace: readonly string[]): string {
    return `${this.namespaces()}/${this.namespaceSegment(namespace)}`;
  }

  tables(namespace: readonly string[]): string {
    return `${this.namespace(namespace)}/tables`;
  }

  table(identifier: TableIdentifier): string {
    return `${this.tables(identifier.namespace)}/${encodeURIComponent(identifier.name)}`;
  }

  namespaceSegment(namespace: readonly string[]): string {
    if (namespace.length === 0) throw new IcebergError("validation", "a namespace needs at least one level");
    return namespace.map(encodeURIComponent).join(this.#separator);
  }

  /** The `parent` query value of listNamespaces, before query encoding. */
  parentParam(namespace: readonly string[]): string {
    return namespace.join(decodeURIComponent(this.#separator));
  }
}
