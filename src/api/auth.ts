// Who may use the API. On a loopback address nobody else can connect, and no credential is
// needed unless one is set. Any other address needs one, or `floe serve` refuses to start: a
// password (set on first start from FLOE_UI_PASSWORD, kept as a scrypt hash in the state
// directory; a login gives a session cookie) or a bearer token (FLOE_UI_TOKEN) for scripts.
import { randomBytes, scryptSync, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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

function hashPassword(password: string): PasswordFile {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, SCRYPT);
  return {
    algorithm: "scrypt",
    N: SCRYPT.N,
    r: SCRYPT.r,
    p: SCRYPT.p,
    salt: salt.toString("base64"),
    hash: hash.toString("base64"),
  };
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

export class Auth {
  readonly required: boolean;
  readonly #password: PasswordFile | undefined;
  readonly #token: Buffer | undefined;
  readonly #sessions = new Map<string, Session>();
  /** The CSRF token when no credential is needed (loopback): one per process. */
  readonly #openCsrf = randomBytes(24).toString("base64url");

  private constructor(password: PasswordFile | undefined, token: string | undefined) {
    this.#password = password;
    this.#token = token === undefined ? undefined : Buffer.from(token);
    this.required = password !== undefined || token !== undefined;
  }

  /**
   * The credentials of the state directory and the environment. A password in FLOE_UI_PASSWORD
   * is hashed into auth.json on first start (later starts keep the stored one). Off loopback,
   * starting without any credential is refused.
   */
  static setUp(stateDir: string, host: string, env: Readonly<Record<string, string | undefined>> = process.env): Auth {
    const file = join(stateDir, "auth.json");
    let password: PasswordFile | undefined;
    if (existsSync(file)) password = JSON.parse(readFileSync(file, "utf8")) as PasswordFile;
    else if (env["FLOE_UI_PASSWORD"]) {
      if (env["FLOE_UI_PASSWORD"].length < 12)
        throw new AuthSetupError("FLOE_UI_PASSWORD must be at least 12 characters");
      password = hashPassword(env["FLOE_UI_PASSWORD"]);
      writeFileSync(file, `${JSON.stringify(password)}\n`, { mode: 0o600 });
    }
    const token = env["FLOE_UI_TOKEN"] || undefined;
    if (token !== undefined && token.length < 24)
      throw new AuthSetupError("FLOE_UI_TOKEN must be at least 24 characters");
    if (!isLoopback(host) && password === undefined && token === undefined) {
      throw new AuthSetupError(
        `listening on ${host} (not a loopback address) needs a credential: set FLOE_UI_PASSWORD (a password of 12 or more characters, stored as a hash on first start) or FLOE_UI_TOKEN (a bearer token), or listen on 127.0.0.1`,
      );
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
  login(password: string): string | undefined {
    const stored = this.#password;
    if (stored === undefined) return undefined;
    const hash = scryptSync(password, Buffer.from(stored.salt, "base64"), 32, {
      N: stored.N,
      r: stored.r,
      p: stored.p,
      maxmem: SCRYPT.maxmem,
    });
    if (!safeEqual(hash, Buffer.from(stored.hash, "base64"))) return undefined;
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
