// Who may use the API. Every address needs a credential: a password (FLOE_UI_PASSWORD, kept as
// a scrypt hash in the state directory; a login gives a session cookie) or a bearer token
// (FLOE_UI_TOKEN) for scripts. Only on a loopback address may the operator say `--no-auth`
// (nobody else on the host, no proxy in front): then no credential is asked of a direct client,
// and a request that came through a proxy (it carries forwarding headers) is still refused,
// since a same-host reverse proxy would otherwise hand the API to whoever reaches the proxy.
//
// The password is checked with the asynchronous scrypt (the hash runs on libuv's pool, not on
// the event loop that serves the API and runs the syncs), behind a limiter (login-limiter.ts).
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";

/** scrypt cost: N = 2^15, r = 8 (about 32 MiB and a few tens of ms per check). */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const SESSION_MS = 12 * 3600_000;

export class AuthSetupError extends Error {
  override name = "AuthSetupError";
}

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  return bare === "::1";
}

interface PasswordFile {
  algorithm: "scrypt";
  N: number;
  r: number;
  p: number;
  salt: string;
  hash: string;
}

function scryptAsync(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 32, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

async function hashPassword(password: string): Promise<PasswordFile> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT);
  return {
    algorithm: "scrypt",
    N: SCRYPT.N,
    r: SCRYPT.r,
    p: SCRYPT.p,
    salt: salt.toString("base64"),
    hash: hash.toString("base64"),
  };
}

async function matches(stored: PasswordFile, password: string): Promise<boolean> {
  const hash = await scryptAsync(password, Buffer.from(stored.salt, "base64"), {
    N: stored.N,
    r: stored.r,
    p: stored.p,
    maxmem: SCRYPT.maxmem,
  });
  return safeEqual(hash, Buffer.from(stored.hash, "base64"));
}

interface Session {
  expires: number;
  csrf: string;
}

export interface Caller {
  /** Who made the change, for the audit log. */
  actor: string;
  /** The CSRF token state-changing requests of this caller must carry; undefined for bearer-token calls (no cookie). */
  csrf: string | undefined;
}

export interface AuthSetup {
  /** `--no-auth`: no credential asked of direct clients; only on a loopback address, and only when none is set. */
  noAuth?: boolean;
}

export class Auth {
  readonly required: boolean;
  readonly #password: PasswordFile | undefined;
  readonly #token: Buffer | undefined;
  readonly #sessions = new Map<string, Session>();
  /** The CSRF token when no credential is needed (--no-auth): one per process. */
  readonly #openCsrf = randomBytes(24).toString("base64url");

  private constructor(password: PasswordFile | undefined, token: string | undefined) {
    this.#password = password;
    this.#token = token === undefined ? undefined : Buffer.from(token);
    this.required = password !== undefined || token !== undefined;
  }

  /**
   * The credentials of the state directory and the environment. FLOE_UI_PASSWORD is hashed into
   * auth.json; when it differs from the stored hash on a later start, it replaces it (the old
   * password stops working). Without FLOE_UI_PASSWORD, the stored hash stays in force. Without
   * any credential, only `--no-auth` on a loopback address starts.
   */
  static async setUp(
    stateDir: string,
    host: string,
    env: Readonly<Record<string, string | undefined>> = process.env,
    setup: AuthSetup = {},
  ): Promise<Auth> {
    const file = join(stateDir, "auth.json");
    const given = env["FLOE_UI_PASSWORD"] || undefined;
    if (given !== undefined && given.length < 12)
      throw new AuthSetupError("FLOE_UI_PASSWORD must be at least 12 characters");
    const token = env["FLOE_UI_TOKEN"] || undefined;
    if (token !== undefined && token.length < 24)
      throw new AuthSetupError("FLOE_UI_TOKEN must be at least 24 characters");
    let password: PasswordFile | undefined = existsSync(file)
      ? (JSON.parse(readFileSync(file, "utf8")) as PasswordFile)
      : undefined;
    if (given !== undefined && (password === undefined || !(await matches(password, given)))) {
      password = await hashPassword(given);
      // A fresh state directory: the hash is its first file.
      mkdirSync(stateDir, { recursive: true });
      writeFileSync(file, `${JSON.stringify(password)}\n`, { mode: 0o600 });
    }
    if (password === undefined && token === undefined) {
      if (!isLoopback(host)) {
        throw new AuthSetupError(
          `listening on ${host} (not a loopback address) needs a credential: set FLOE_UI_PASSWORD (a password of 12 or more characters, stored as a hash) or FLOE_UI_TOKEN (a bearer token), or listen on 127.0.0.1`,
        );
      }
      if (!setup.noAuth) {
        throw new AuthSetupError(
          "floe serve needs a credential: set FLOE_UI_PASSWORD (a password of 12 or more characters, stored as a hash) or FLOE_UI_TOKEN (a bearer token); or, on a loopback address that no other user of this host and no proxy reaches, give --no-auth",
        );
      }
    }
    return new Auth(password, token);
  }

  /** The caller of a request, or undefined when it must log in first. */
  caller(authorization: string | undefined, sessionId: string | undefined): Caller | undefined {
    if (!this.required) return { actor: "local", csrf: this.#openCsrf };
    const bearer = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
    if (bearer !== undefined && this.#token !== undefined && safeEqual(Buffer.from(bearer), this.#token)) {
      return { actor: "token", csrf: undefined };
    }
    const session = sessionId === undefined ? undefined : this.#sessions.get(sessionId);
    if (session && session.expires > Date.now()) return { actor: "password", csrf: session.csrf };
    if (session) this.#sessions.delete(sessionId!);
    return undefined;
  }

  /** A new session id for the right password; undefined for a wrong one (or when none is set). */
  async login(password: string): Promise<string | undefined> {
    const stored = this.#password;
    if (stored === undefined) return undefined;
    if (!(await matches(stored, password))) return undefined;
    const id = randomBytes(32).toString("base64url");
    this.#sessions.set(id, { expires: Date.now() + SESSION_MS, csrf: randomBytes(24).toString("base64url") });
    return id;
  }

  logout(sessionId: string | undefined): void {
    if (sessionId !== undefined) this.#sessions.delete(sessionId);
  }

  get passwordSet(): boolean {
    return this.#password !== undefined;
  }
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
