// MinIO's STS: short-lived credentials (AssumeRole, signed with the root credentials) and their
// revocation (the admin API's revoke-tokens, signed with the temporary credentials themselves:
// a session may revoke the tokens of its own revoke type without admin rights). AssumeRole's
// TokenRevokeType is MinIO's own parameter, which the AWS SDK's STS client does not send, so
// both requests are signed here with the SDK's SigV4 signer.
import { createHash, createHmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import { minio } from "./minio.ts";

export interface TemporaryCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  /** As MinIO says: the token stops working then, unless revoked before. */
  expiresAtMs: number;
  /** The revoke type the token was issued with (revokeTokens takes every token of it). */
  revokeType: string;
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytes(data: SourceData): string | Uint8Array {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** The sha256 (plain and keyed) the SDK's SigV4 signer wants, on node:crypto. */
export class Sha256 {
  readonly #hash;
  constructor(secret?: SourceData) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: SourceData): void {
    this.#hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

async function signedFetch(
  service: "sts" | "s3",
  path: string,
  body: string,
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
): Promise<Response> {
  const url = new URL(path, minio.endpoint);
  const signer = new SignatureV4({ service, region: minio.region, credentials, sha256: Sha256 });
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signed = await signer.sign({
    method: "POST",
    protocol: "http:",
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query,
    headers: { host: url.host, "content-type": "application/x-www-form-urlencoded" },
    body,
  });
  return fetch(url, {
    method: "POST",
    headers: signed.headers as Record<string, string>,
    body,
    signal: AbortSignal.timeout(10_000),
  });
}

/**
 * Temporary credentials of the root user, narrowed by `policy` (an IAM policy document) when
 * given. MinIO grants at least 900 seconds.
 */
export async function assumeRole(
  options: { policy?: object; durationSeconds?: number; revokeType?: string } = {},
): Promise<TemporaryCredentials> {
  const revokeType =
    options.revokeType ?? `floe-test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const form = new URLSearchParams({
    Action: "AssumeRole",
    Version: "2011-06-15",
    DurationSeconds: String(options.durationSeconds ?? 900),
    TokenRevokeType: revokeType,
  });
  if (options.policy !== undefined) form.set("Policy", JSON.stringify(options.policy));
  const response = await signedFetch("sts", "/", form.toString(), {
    accessKeyId: minio.rootUser,
    secretAccessKey: minio.rootPassword,
  });
  const xml = await response.text();
  if (!response.ok) throw new Error(`MinIO AssumeRole answered HTTP ${response.status}: ${xml.slice(0, 500)}`);
  const field = (name: string) => {
    const value = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
    if (value === undefined) throw new Error(`MinIO AssumeRole: no ${name} in ${xml.slice(0, 300)}`);
    return value;
  };
  return {
    accessKeyId: field("AccessKeyId"),
    secretAccessKey: field("SecretAccessKey"),
    sessionToken: field("SessionToken"),
    expiresAtMs: Date.parse(field("Expiration")),
    revokeType,
  };
}

/** Revokes every token of `credentials`' revoke type: from now on MinIO refuses them. */
export async function revokeTokens(credentials: TemporaryCredentials): Promise<void> {
  const response = await signedFetch("s3", "/minio/admin/v3/revoke-tokens/builtin", "", credentials);
  if (!response.ok && response.status !== 204) {
    throw new Error(`MinIO revoke-tokens answered HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  await response.body?.cancel();
}

/** A session policy that allows reading and writing objects under `s3://bucket/prefix` only. */
export function prefixPolicy(location: string): object {
  const match = /^s3[an]?:\/\/([^/]+)\/?(.*)$/.exec(location);
  if (!match) throw new Error(`not an s3 location: ${location}`);
  const [, bucket, prefix] = match;
  const path = prefix!.replace(/\/+$/, "");
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Action: [
          "s3:GetObject",
          "s3:PutObject",
          "s3:DeleteObject",
          "s3:AbortMultipartUpload",
          "s3:ListMultipartUploadParts",
        ],
        Resource: [`arn:aws:s3:::${bucket}/${path}/*`],
      },
      {
        Effect: "Allow",
        Action: ["s3:ListBucket"],
        Resource: [`arn:aws:s3:::${bucket}`],
        Condition: { StringLike: { "s3:prefix": [`${path}/*`] } },
      },
    ],
  };
}
