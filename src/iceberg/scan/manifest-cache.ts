// What scans have read of manifest lists and manifests, kept for the next scan: both are
// immutable once written (spec "Overview"), so a location always names the same content, and a
// sync plans a table's files again at every commit. One cache per catalog: the tables of a
// long-lived catalog share it, it goes with the catalog, and a file read with one catalog's
// credentials is never handed to the tables of another. Bounded by the estimated memory of what
// it holds; the least recently used goes first.
import type { Catalog } from "../catalog/catalog.ts";

/** The bound of a catalog's cache; Iceberg Java's manifest cache holds up to 100 MiB by default too. */
export const DEFAULT_MANIFEST_CACHE_BYTES = 100 * 1024 * 1024;

interface Slot {
  value: Promise<unknown>;
  /** 0 until the value is loaded. */
  bytes: number;
}

export class ManifestCache {
  readonly maxBytes: number;
  /** In order of use: the first is the least recently used. */
  readonly #slots = new Map<string, Slot>();
  #bytes = 0;

  constructor(maxBytes = DEFAULT_MANIFEST_CACHE_BYTES) {
    if (!(maxBytes >= 0))
      throw new RangeError(`manifest cache: the bound must be a number of bytes >= 0, not ${maxBytes}`);
    this.maxBytes = maxBytes;
  }

  /** The estimated bytes of the loaded values it holds. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The locations it holds, loaded or being loaded. */
  get size(): number {
    return this.#slots.size;
  }

  has(location: string): boolean {
    return this.#slots.has(location);
  }

  /**
   * The value of the file at `location`: loaded once however many callers ask at the same time,
   * then kept while it fits. `weigh` estimates a loaded value's memory; a value heavier than the
   * whole bound is returned and not kept. A failed load is not kept either.
   */
  get<T>(location: string, load: () => Promise<T>, weigh: (value: T) => number): Promise<T> {
    const held = this.#slots.get(location);
    if (held) {
      this.#slots.delete(location);
      this.#slots.set(location, held);
      return held.value as Promise<T>;
    }
    const value = load();
    const slot: Slot = { value, bytes: 0 };
    this.#slots.set(location, slot);
    value.then(
      (loaded) => {
        // Evicted while it loaded: it no longer counts.
        if (this.#slots.get(location) !== slot) return;
        slot.bytes = weigh(loaded);
        if (slot.bytes > this.maxBytes) {
          // Keeping it would push out everything else, and then itself.
          this.#slots.delete(location);
          return;
        }
        this.#bytes += slot.bytes;
        this.#evict();
      },
      () => {
        if (this.#slots.get(location) === slot) this.#slots.delete(location);
      },
    );
    return value;
  }

  #evict(): void {
    for (const [location, slot] of this.#slots) {
      if (this.#bytes <= this.maxBytes) return;
      this.#slots.delete(location);
      this.#bytes -= slot.bytes;
    }
  }
}

const caches = new WeakMap<Catalog, ManifestCache>();

/** The manifest cache of the tables of `catalog`, made on first use. */
export function manifestCacheOf(catalog: Catalog): ManifestCache {
  let cache = caches.get(catalog);
  if (!cache) {
    cache = new ManifestCache();
    caches.set(catalog, cache);
  }
  return cache;
}
