// S3 locations as tables name them: s3://bucket/key, and the Hadoop spellings s3a:// and s3n://,
// which name the same object (Spark and Hive write s3a:// locations into metadata). The
// location string itself is never rewritten: it comes back in manifests byte for byte.

export const S3_SCHEMES = ["s3", "s3a", "s3n"] as const;

export interface S3Location {
  readonly bucket: string;
  /** The object key: everything after the bucket and its slash, percent signs and all. */
  readonly key: string;
}

export function isS3Location(location: string): boolean {
  return /^s3[an]?:\/\//i.test(location);
}

export function parseS3Location(location: string): S3Location {
  const match = /^s3[an]?:\/\/([^/]+)\/(.+)$/i.exec(location);
  if (!match) {
    throw new TypeError(`${location} is not an S3 object location (s3://<bucket>/<key>)`);
  }
  return { bucket: match[1]!, key: match[2]! };
}
