// destination.iceberg.storage.gcs and .azure: how floe reaches tables in gs://, abfss:// and
// wasbs:// locations. Everything is optional: what the catalog vends for a table (a GCS token, an
// ADLS SAS) wins over static credentials here; the endpoint here wins over the catalog's.
//
//   storage:
//     gcs:
//       endpoint: http://127.0.0.1:4443            # omitted: https://storage.googleapis.com
//       service_account_key_file: /etc/floe/sa.json # or oauth2_token: ${GCS_TOKEN}
//     azure:
//       endpoint: http://127.0.0.1:10000/devstoreaccount1  # omitted: https://<account>.blob.core.windows.net
//       sas_token: ${AZURE_SAS}                     # or account_key: ${AZURE_STORAGE_KEY}
import { z } from "zod";
import { Secret } from "./secret.ts";

export interface GcsStorageSettings {
  readonly endpoint: string | undefined;
  readonly oauth2Token: Secret | undefined;
  readonly serviceAccountKeyFile: string | undefined;
}

export interface AzureStorageSettings {
  readonly endpoint: string | undefined;
  readonly sasToken: Secret | undefined;
  readonly accountKey: Secret | undefined;
}

const nonEmpty = z.string().min(1, "must not be empty");
const secret = nonEmpty.transform((value) => new Secret(value));
const httpUrl = z.url({ protocol: /^https?$/, error: "expected an http(s) URL" });

export const gcsSchema = z
  .strictObject({
    endpoint: httpUrl.optional().describe("The JSON API's root (fake-gcs-server, a private endpoint). Omitted: GCS."),
    oauth2_token: secret.optional().describe("A static OAuth2 access token, used when the catalog vends none."),
    service_account_key_file: nonEmpty
      .optional()
      .describe("A service-account key file (JSON), used when the catalog vends no token."),
  })
  .superRefine((c, ctx) => {
    if (c.oauth2_token !== undefined && c.service_account_key_file !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["service_account_key_file"],
        message: "give either oauth2_token or service_account_key_file",
      });
    }
  });

export const azureSchema = z
  .strictObject({
    endpoint: httpUrl
      .optional()
      .describe("The account's Blob service URL (Azurite, a private endpoint). Omitted: the location's account."),
    sas_token: secret.optional().describe("A SAS token, used when the catalog vends none."),
    account_key: secret.optional().describe("The storage account key (Shared Key), used when the catalog vends none."),
  })
  .superRefine((c, ctx) => {
    if (c.sas_token !== undefined && c.account_key !== undefined) {
      ctx.addIssue({ code: "custom", path: ["account_key"], message: "give either sas_token or account_key" });
    }
  });

export function gcsSettings(input: z.output<typeof gcsSchema> | undefined): GcsStorageSettings | undefined {
  if (input === undefined) return undefined;
  return {
    endpoint: input.endpoint,
    oauth2Token: input.oauth2_token,
    serviceAccountKeyFile: input.service_account_key_file,
  };
}

export function azureSettings(input: z.output<typeof azureSchema> | undefined): AzureStorageSettings | undefined {
  if (input === undefined) return undefined;
  return { endpoint: input.endpoint, sasToken: input.sas_token, accountKey: input.account_key };
}
