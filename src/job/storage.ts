// destination.iceberg.storage: how floe reaches the object store of the tables, per store.
// Everything is optional: credentials the catalog vends for a table win over static keys here,
// and with neither the store's own SDK chain applies (AWS_* variables, ~/.aws, instance
// metadata). The endpoint, region and addressing here win over what the catalog says, because
// they describe the way from floe's machine (a VPC endpoint, a local MinIO).
//
//   storage:
//     s3:
//       endpoint: http://127.0.0.1:9000
//       region: us-east-1
//       path_style_access: true
//       access_key_id: ${AWS_ACCESS_KEY_ID}
//       secret_access_key: ${AWS_SECRET_ACCESS_KEY}
import { z } from "zod";
import { Secret } from "./secret.ts";
import {
  type AzureStorageSettings,
  azureSchema,
  azureSettings,
  type GcsStorageSettings,
  gcsSchema,
  gcsSettings,
} from "./storage-cloud.ts";

const MIB = 1024 * 1024;

export interface StorageSettings {
  readonly s3: S3StorageSettings | undefined;
  /** false: the stores may not fall back to the machine's own credentials (floe serve). Default true. */
  readonly ambientCredentials?: boolean | undefined;
  readonly gcs?: GcsStorageSettings | undefined;
  readonly azure?: AzureStorageSettings | undefined;
}

export interface S3StorageSettings {
  readonly endpoint: string | undefined;
  readonly region: string | undefined;
  readonly pathStyleAccess: boolean | undefined;
  readonly credentials:
    | { readonly accessKeyId: string; readonly secretAccessKey: Secret; readonly sessionToken: Secret | undefined }
    | undefined;
  readonly requestChecksums: "when-supported" | "when-required" | undefined;
  readonly partSizeBytes: number | undefined;
}

const nonEmpty = z.string().min(1, "must not be empty");
const secret = nonEmpty.transform((value) => new Secret(value));

const s3 = z
  .strictObject({
    endpoint: z
      .url({ protocol: /^https?$/, error: "expected an http(s) URL" })
      .optional()
      .describe("S3-compatible stores (MinIO, Ceph, R2): the API's URL. Omitted: AWS S3."),
    region: nonEmpty.optional().describe("The bucket's region. Omitted: the catalog's, else AWS_REGION."),
    path_style_access: z
      .boolean()
      .optional()
      .describe("host/bucket/key addressing instead of bucket.host/key. Default: true with an endpoint."),
    access_key_id: nonEmpty.optional().describe("Static keys, used when the catalog vends none."),
    secret_access_key: secret.optional(),
    session_token: secret.optional(),
    request_checksums: z
      .enum(["when_supported", "when_required"])
      .optional()
      .describe(
        "when_required for stores that refuse the SDK's CRC checksums. Default: when_required with an endpoint.",
      ),
    part_size_bytes: z
      .int()
      .min(5 * MIB, "at least 5 MiB (5242880), S3's smallest part")
      .max(5 * 1024 * MIB, "at most 5 GiB, S3's largest part")
      .optional()
      .describe("Multipart upload part size. Default 8 MiB; files above twice that go up in parts."),
  })
  .superRefine((c, ctx) => {
    if (c.access_key_id !== undefined && c.secret_access_key === undefined) {
      ctx.addIssue({ code: "custom", path: ["secret_access_key"], message: "required with access_key_id" });
    }
    if (c.secret_access_key !== undefined && c.access_key_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["access_key_id"], message: "required with secret_access_key" });
    }
    if (c.session_token !== undefined && c.access_key_id === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["session_token"],
        message: "only used with access_key_id and secret_access_key",
      });
    }
  });

export const storageSchema = z
  .strictObject({ s3: s3.optional(), gcs: gcsSchema.optional(), azure: azureSchema.optional() })
  .describe("How floe reaches the tables' object store (s3://, gs://, abfss:// and wasbs:// locations).");

export function storageSettings(input: z.output<typeof storageSchema>): StorageSettings {
  const cloud = {
    ...(input.gcs === undefined ? {} : { gcs: gcsSettings(input.gcs) }),
    ...(input.azure === undefined ? {} : { azure: azureSettings(input.azure) }),
  };
  const s = input.s3;
  if (s === undefined) return { s3: undefined, ...cloud };
  return {
    ...cloud,
    s3: {
      endpoint: s.endpoint,
      region: s.region,
      pathStyleAccess: s.path_style_access,
      credentials:
        s.access_key_id !== undefined && s.secret_access_key !== undefined
          ? { accessKeyId: s.access_key_id, secretAccessKey: s.secret_access_key, sessionToken: s.session_token }
          : undefined,
      requestChecksums:
        s.request_checksums === undefined
          ? undefined
          : s.request_checksums === "when_required"
            ? "when-required"
            : "when-supported",
      partSizeBytes: s.part_size_bytes,
    },
  };
}
