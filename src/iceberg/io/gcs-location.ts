// GCS locations as tables name them: gs://bucket/object-name. The object name is everything
// after the bucket and its slash, byte for byte; the JSON API takes it percent-encoded as one
// path segment (slashes included).

export interface GcsLocation {
  readonly bucket: string;
  readonly name: string;
}

export function isGcsLocation(location: string): boolean {
  return /^gs:\/\//i.test(location);
}

export function parseGcsLocation(location: string): GcsLocation {
  const match = /^gs:\/\/([^/]+)\/(.+)$/i.exec(location);
  if (!match) throw new TypeError(`${location} is not a GCS object location (gs://<bucket>/<object>)`);
  return { bucket: match[1]!, name: match[2]! };
}
