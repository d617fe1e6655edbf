// Bytes that break the Puffin, deletion-vector or Roaring format: a corrupt or foreign file, never a
// transient fault, so callers stop rather than retry.
export class FormatError extends Error {
  override name = "FormatError";
}
