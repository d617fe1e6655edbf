// Secrets entered in the UI, encrypted at rest with AES-256-GCM: a random 96-bit IV per value,
// the 128-bit tag kept beside the ciphertext, so that a changed byte fails to decrypt rather
// than yielding another value. The key is 32 bytes from FLOE_SECRET_KEY (base64 or hex), or
// from a key file in the state directory, created on first start with mode 0600.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Marks a sealed value, so that the format can change later. */
const PREFIX = "v1:";

export class SecretKeyError extends Error {
  override name = "SecretKeyError";
}

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES)
      throw new SecretKeyError(`the secret key must be ${KEY_BYTES} bytes, got ${key.length}`);
    this.#key = key;
  }

  /** The key of FLOE_SECRET_KEY, else the state directory's key file, created with 0600 when absent. */
  static open(stateDir: string, env: Readonly<Record<string, string | undefined>> = process.env): SecretBox {
    const fromEnv = env["FLOE_SECRET_KEY"];
    if (fromEnv !== undefined && fromEnv !== "") {
      const key = /^[0-9a-fA-F]{64}$/.test(fromEnv) ? Buffer.from(fromEnv, "hex") : Buffer.from(fromEnv, "base64");
      if (key.length !== KEY_BYTES) {
        throw new SecretKeyError(
          `FLOE_SECRET_KEY must be ${KEY_BYTES} bytes in base64 or hex, got ${key.length} bytes`,
        );
      }
      return new SecretBox(key);
    }
    mkdirSync(stateDir, { recursive: true });
    const file = join(stateDir, "secret.key");
    if (!existsSync(file)) {
      // wx: never overwrite a key another process made meanwhile; the values it sealed need it.
      try {
        writeFileSync(file, randomBytes(KEY_BYTES).toString("base64"), { mode: 0o600, flag: "wx" });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      chmodSync(file, 0o600);
    }
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
    if (key.length !== KEY_BYTES) throw new SecretKeyError(`${file} must hold ${KEY_BYTES} bytes in base64`);
    return new SecretBox(key);
  }

  seal(value: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
  }

  open(sealed: string): string {
    if (!sealed.startsWith(PREFIX)) throw new SecretKeyError("not a sealed secret");
    const raw = Buffer.from(sealed.slice(PREFIX.length), "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretKeyError(
        "a stored secret does not decrypt with this key (FLOE_SECRET_KEY or secret.key changed?)",
      );
    }
  }
}
