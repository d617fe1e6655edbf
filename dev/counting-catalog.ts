// A catalog that counts the commits it lands and the ones it refuses with a conflict (a REST 409,
// a failed compare-and-swap of the SQL catalog): what the concurrency tests and the contention
// bench measure of optimistic commits. Every other call goes to the catalog it wraps.
import { type Catalog, CommitConflictError } from "../src/iceberg/catalog/catalog.ts";

export interface CommitCounts {
  commits: number;
  conflicts: number;
}

export type CountingCatalog = Catalog & { readonly counts: CommitCounts };

export function countingCommits(inner: Catalog): CountingCatalog {
  const counts: CommitCounts = { commits: 0, conflicts: 0 };
  return new Proxy(inner, {
    get(target, property) {
      if (property === "counts") return counts;
      // The catalog's private fields need the catalog itself as `this`.
      const value = Reflect.get(target, property, target);
      if (property !== "commitTable") return typeof value === "function" ? value.bind(target) : value;
      return async (...args: Parameters<Catalog["commitTable"]>) => {
        try {
          const loaded = await target.commitTable(...args);
          counts.commits++;
          return loaded;
        } catch (error) {
          if (error instanceof CommitConflictError) counts.conflicts++;
          throw error;
        }
      };
    },
  }) as CountingCatalog;
}
