// The job's static GCS and Azure settings as the FileIOs take them: secrets revealed here, at the
// one place that hands them to a client.

import type { StorageOptions } from "../iceberg/io/storage-file-io.ts";
import type { StorageSettings } from "../job/storage.ts";

export function cloudStorageOptions(storage: StorageSettings | undefined): Pick<StorageOptions, "gcs" | "azure"> {
  const gcs = storage?.gcs;
  const azure = storage?.azure;
  const ambient = storage?.ambientCredentials === false ? { ambientCredentials: false } : {};
  return {
    ...(gcs === undefined
      ? { gcs: ambient }
      : {
          gcs: {
            ...ambient,
            endpoint: gcs.endpoint,
            oauth2Token: gcs.oauth2Token?.reveal(),
            serviceAccountKeyFile: gcs.serviceAccountKeyFile,
          },
        }),
    ...(azure === undefined
      ? { azure: ambient }
      : {
          azure: {
            ...ambient,
            endpoint: azure.endpoint,
            sasToken: azure.sasToken?.reveal(),
            accountKey: azure.accountKey?.reveal(),
          },
        }),
  };
}
