// Crash points inside a table commit, where src/pipeline/fault-points.ts cannot reach (iceberg/ knows
// nothing of the sync): preloaded into a `floe sync` child with `node --import`, this wraps the
// write of the local and the S3 FileIO so that the process SIGKILLs itself at the n-th write of
// one kind of file (counted over both).
//
//   FLOE_TEST_KILL_AT_WRITE=<kind>:<n>:<when>
//     kind   data (.parquet), deletion-vector (.puffin), manifest (…-m<k>.avro),
//            manifest-list (snap-….avro), metadata (….metadata.json: the SQL catalog's commit)
//     when   before   nothing of the file written
//            during   half of its bytes under its final name, as a FileIO without an atomic
//                     publish (write then rename) would leave it (on S3: an object of half
//                     the bytes, which S3 itself never leaves, to prove floe ignores it)
//            after    the whole file written
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { LocalFileIO, localPath } from "#src/iceberg/io/local-file-io.ts";
import { S3FileIO } from "#src/iceberg/io/s3-file-io.ts";

/** The kinds of file, by location; a manifest list's name starts with snap-. */
export const WRITE_KINDS: Readonly<Record<string, RegExp>> = {
  data: /\.parquet$/,
  "deletion-vector": /\.puffin$/,
  manifest: /-m\d+\.avro$/,
  "manifest-list": /(^|[/\\])snap-[^/\\]+\.avro$/,
  metadata: /\.metadata\.json$/,
};
const WHEN = ["before", "during", "after"] as const;

const spec = process.env.FLOE_TEST_KILL_AT_WRITE;
if (spec) {
  const [kind = "", n = "", when = ""] = spec.split(":");
  const pattern = WRITE_KINDS[kind];
  const occurrence = Number(n);
  if (!pattern || !Number.isSafeInteger(occurrence) || occurrence < 1 || !WHEN.includes(when as never)) {
    throw new Error(
      `FLOE_TEST_KILL_AT_WRITE=${spec}: expected <kind>:<n>:<when>, kind one of ${Object.keys(WRITE_KINDS).join(", ")}, ` +
        `n >= 1, when one of ${WHEN.join(", ")}`,
    );
  }
  let seen = 0;
  const localWrite = LocalFileIO.prototype.write;
  LocalFileIO.prototype.write = async function (location: string, bytes: Uint8Array): Promise<void> {
    if (!pattern.test(location) || ++seen !== occurrence) return localWrite.call(this, location, bytes);
    if (when === "during") {
      const path = localPath(location);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, bytes.subarray(0, bytes.length >> 1));
    }
    if (when === "after") await localWrite.call(this, location, bytes);
    process.kill(process.pid, "SIGKILL");
  };
  const s3Write = S3FileIO.prototype.write;
  S3FileIO.prototype.write = async function (location: string, bytes: Uint8Array): Promise<void> {
    if (!pattern.test(location) || ++seen !== occurrence) return s3Write.call(this, location, bytes);
    if (when === "during") await s3Write.call(this, location, bytes.subarray(0, bytes.length >> 1));
    if (when === "after") await s3Write.call(this, location, bytes);
    process.kill(process.pid, "SIGKILL");
  };
}
