// The FileIO of a table, chosen by the scheme of its location: s3:// (s3a://, s3n://) on the AWS
// SDK, gs:// on the GCS JSON API, abfss:// and wasbs:// on the Azure Blob SDK, local paths and
// file: URIs on the filesystem.
import type { AzureStorageOptions } from "./azure-config.ts";
import { isAzureLocation } from "./azure-location.ts";
import type { FileIOFactory } from "./file-io.ts";
import type { GcsStorageOptions } from "./gcs-config.ts";
import { gcsFileIOFactory } from "./gcs-file-io.ts";
import { isGcsLocation } from "./gcs-location.ts";
import { lazyFileIO } from "./lazy-file-io.ts";
import { localFileIO } from "./local-file-io.ts";
import type { S3StorageOptions } from "./s3-config.ts";
import { isS3Location } from "./s3-location.ts";

/** The job's static settings per store. */
export interface StorageOptions {
  readonly s3?: S3StorageOptions | undefined;
  readonly gcs?: GcsStorageOptions | undefined;
  readonly azure?: AzureStorageOptions | undefined;
}

export function storageFileIO(options: StorageOptions = {}): FileIOFactory {
  const s3 = lazyFileIO(async () => (await import("./s3-file-io.ts")).s3FileIOFactory(options.s3));
  const gcs = gcsFileIOFactory(options.gcs);
  const azure = lazyFileIO(async () => (await import("./azure-file-io.ts")).azureFileIOFactory(options.azure));
  return (location, properties, context) => {
    if (isS3Location(location)) return s3(location, properties, context);
    if (isGcsLocation(location)) return gcs(location, properties, context);
    if (isAzureLocation(location)) return azure(location, properties, context);
    return localFileIO(location, properties, context);
  };
}
