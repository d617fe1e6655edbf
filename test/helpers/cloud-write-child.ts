// A writer to be killed: writes `size` random bytes to `location` through floe's GCS or Azure
// FileIO at `endpoint`, in chunks of `chunk` bytes. argv[2] is the JSON of its arguments.
import { randomBytes } from "node:crypto";
import { azureClientConfig } from "#src/iceberg/io/azure-config.ts";
import { AzureFileIO } from "#src/iceberg/io/azure-file-io.ts";
import { parseAzureLocation } from "#src/iceberg/io/azure-location.ts";
import type { FileIO } from "#src/iceberg/io/file-io.ts";
import { gcsClientConfig } from "#src/iceberg/io/gcs-config.ts";
import { GcsFileIO } from "#src/iceberg/io/gcs-file-io.ts";

const args = JSON.parse(process.argv[2]!) as {
  store: "gcs" | "azure";
  endpoint: string;
  location: string;
  size: number;
  chunk: number;
  secret: string;
};
const io: FileIO =
  args.store === "gcs"
    ? new GcsFileIO(
        gcsClientConfig(
          {},
          {
            endpoint: args.endpoint,
            oauth2Token: args.secret,
            resumableThresholdBytes: args.chunk,
            chunkSizeBytes: args.chunk,
          },
          "",
          {},
        ),
      )
    : new AzureFileIO(
        args.location,
        azureClientConfig(
          parseAzureLocation(args.location),
          {},
          {
            endpoint: args.endpoint,
            accountKey: args.secret,
            singleUploadThresholdBytes: args.chunk,
            blockSizeBytes: args.chunk,
          },
          "",
          {},
        ),
      );
await io.write(args.location, new Uint8Array(randomBytes(args.size)));
console.log("written");
