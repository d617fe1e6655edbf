// Vended credentials that renew themselves. The catalog says when they expire
// (s3.session-token-expires-at-ms); they are renewed before that, once past half their lifetime
// and at least five minutes ahead, by asking the catalog again (its credentials endpoint, or a
// reload of the table). A store that refuses them as expired or unknown also renews them, once
// per refusal: catalogs that announce no expiry, or keys revoked early.
import type { StorageProperties } from "./file-io.ts";
import type { S3Credentials } from "./s3-config.ts";

/** Anything with an expiry: S3 keys, a GCS token, an Azure SAS. */
export interface Expiring {
  readonly expiresAtMs?: number | undefined;
}

const MAX_MARGIN_MS = 5 * 60_000;
/** Renewals never follow each other closer than this, whatever the catalog hands out. */
const MIN_RENEWAL_INTERVAL_MS = 1000;

export interface CredentialRenewal<C extends Expiring = S3Credentials> {
  /** Asks the catalog; `select` picks the credentials out of its answer (undefined: it vended none). */
  refresh: () => Promise<StorageProperties>;
  select: (fresh: StorageProperties) => C | undefined;
}

export class RefreshingCredentials<C extends Expiring = S3Credentials> {
  #current: C;
  #renewAt: number;
  #renewal: CredentialRenewal<C> | undefined;
  #pending: Promise<void> | undefined;
  #lastRenewal = 0;
  readonly #now: () => number;
  /** How many times the catalog was asked, for tests and reports. */
  renewals = 0;

  constructor(initial: C, renewal: CredentialRenewal<C> | undefined, now: () => number = Date.now) {
    this.#now = now;
    this.#current = initial;
    this.#renewal = renewal;
    this.#renewAt = renewTime(initial, now());
  }

  get current(): C {
    return this.#current;
  }

  get renewable(): boolean {
    return this.#renewal !== undefined;
  }

  /** The credentials to sign the next request with, renewed first when they are due. */
  async get(): Promise<C> {
    if (this.#renewal !== undefined && this.#now() >= this.#renewAt) {
      try {
        await this.renew();
      } catch (error) {
        // Still valid: keep signing with them and ask again at the next request.
        const expiresAt = this.#current.expiresAtMs;
        if (expiresAt === undefined || this.#now() >= expiresAt) throw error;
      }
    }
    return this.#current;
  }

  /** Asks the catalog for fresh credentials; concurrent callers share one request. */
  renew(): Promise<void> {
    if (this.#renewal === undefined) return Promise.resolve();
    this.#pending ??= this.#renewOnce(this.#renewal).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #renewOnce(renewal: CredentialRenewal<C>): Promise<void> {
    const wait = this.#lastRenewal + MIN_RENEWAL_INTERVAL_MS - this.#now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.renewals++;
    this.#lastRenewal = this.#now();
    const fresh = renewal.select(await renewal.refresh());
    if (fresh === undefined) {
      throw new Error("the catalog vended no credentials for the table when asked again");
    }
    this.#current = fresh;
    this.#renewAt = Math.max(renewTime(fresh, this.#now()), this.#now() + MIN_RENEWAL_INTERVAL_MS);
  }
}

/** Half-way through the remaining lifetime, and at least MAX_MARGIN_MS before expiry. */
export function renewTime(credentials: Expiring, now: number): number {
  const expiresAt = credentials.expiresAtMs;
  if (expiresAt === undefined) return Number.POSITIVE_INFINITY;
  const remaining = expiresAt - now;
  return expiresAt - Math.min(MAX_MARGIN_MS, Math.max(0, remaining / 2));
}
