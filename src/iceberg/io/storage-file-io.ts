// The FileIO of a table, chosen by the scheme of its location: s3:// (s3a://, s3n://) on the AWS
// SDK, local paths and file: URIs on the filesystem.
import type { FileIOFactory } from "./file-io.ts";
import { localFileIO } from "./local-file-io.ts";
import type { S3StorageOptions } from "./s3-config.ts";
import { s3FileIOFactory } from "./s3-file-io.ts";
import { isS3Location } from "./s3-location.ts";

/** The job's static settings per store. */
export interface StorageOptions {
  readonly s3?: S3StorageOptions | undefined;
}

export function storageFileIO(options: StorageOptions = {}): FileIOFactory {
  const s3 = s3FileIOFactory(options.s3);
  return (location, properties, context) =>
    isS3Location(location) ? s3(location, properties, context) : localFileIO(location, properties, context);
}
