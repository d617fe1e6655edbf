// How often a client may try a password: a few wrong guesses are free, then each further wrong
// guess of the same client doubles the wait before the next one is even hashed (1 s, 2 s, 4 s,
// ... at most 15 min), and all clients together get a budget of wrong guesses per minute, so
// that many addresses cannot share out a dictionary attack. An attempt counts as wrong from the
// moment it is let through (guesses sent at once do not all get hashed); a right password
// clears the client and uncounts itself.
// The hash is never computed for a refused attempt: scrypt is the costly part.

export interface LimiterOptions {
  /** Wrong guesses per client before the backoff starts. */
  freeFailures: number;
  firstDelayMs: number;
  maxDelayMs: number;
  /** Wrong guesses of all clients per minute. */
  globalPerMinute: number;
}

export const LOGIN_LIMITS: LimiterOptions = {
  freeFailures: 5,
  firstDelayMs: 1000,
  maxDelayMs: 15 * 60_000,
  globalPerMinute: 60,
};

interface ClientState {
  failures: number;
  /** No attempt before this time. */
  until: number;
  last: number;
}

const MINUTE = 60_000;
/** Clients kept at most, oldest forgotten first: an attacker with many addresses cannot grow the map without bound. */
const MAX_CLIENTS = 10_000;

export class LoginLimiter {
  readonly #options: LimiterOptions;
  readonly #clients = new Map<string, ClientState>();
  /** Times of the wrong guesses of the last minute, all clients. */
  #recent: number[] = [];

  constructor(options: LimiterOptions = LOGIN_LIMITS) {
    this.#options = options;
  }

  /** 0 when `client` may try now, else how many ms to wait (the Retry-After of the 429). */
  waitMs(client: string, now = Date.now()): number {
    this.#recent = this.#recent.filter((t) => t > now - MINUTE);
    const own = Math.max(0, (this.#clients.get(client)?.until ?? 0) - now);
    const global = this.#recent.length >= this.#options.globalPerMinute ? this.#recent[0]! + MINUTE - now : 0;
    return Math.max(own, global);
  }

  failed(client: string, now = Date.now()): void {
    this.#recent.push(now);
    const state = this.#clients.get(client) ?? { failures: 0, until: 0, last: now };
    this.#clients.delete(client);
    state.failures++;
    state.last = now;
    const over = state.failures - this.#options.freeFailures;
    if (over >= 0) {
      state.until = now + Math.min(this.#options.maxDelayMs, this.#options.firstDelayMs * 2 ** Math.min(over, 30));
    }
    this.#clients.set(client, state);
    if (this.#clients.size > MAX_CLIENTS) this.#clients.delete(this.#clients.keys().next().value!);
  }

  /** A right password (counted by `failed` while it was being hashed): the client is cleared, its guess uncounted. */
  succeeded(client: string): void {
    this.#clients.delete(client);
    this.#recent.pop();
  }
}
