import { join } from "node:path";
import { restFixtureService } from "./iceberg-rest.ts";
import { localDir, type Service } from "./lib.ts";
import { minio } from "./minio.ts";

const name = "iceberg-rest-s3";
const home = join(localDir, "iceberg-rest-s3");
const port = Number(process.env.FLOE_TEST_REST_S3_PORT ?? 8182);

export const restS3Catalog = {
  uri: `http://127.0.0.1:${port}`,
  port,
  warehouse: `s3://${minio.warehouseBucket}/warehouse`,
  database: join(home, "catalog.db"),
};

export const icebergRestS3: Service = restFixtureService({
  name,
  home,
  uri: restS3Catalog.uri,
  port,
  portSetting: "FLOE_TEST_REST_S3_PORT",
  database: restS3Catalog.database,
  warehouse: restS3Catalog.warehouse,
  directory: home,
  catalogEnv: {
    // Catalog properties: io-impl, s3.endpoint, s3.path-style-access, s3.access-key-id, ...
    CATALOG_IO__IMPL: "org.apache.iceberg.aws.s3.S3FileIO",
    CATALOG_S3_ENDPOINT: minio.endpoint,
    CATALOG_S3_PATH__STYLE__ACCESS: "true",
    CATALOG_S3_ACCESS__KEY__ID: minio.rootUser,
    CATALOG_S3_SECRET__ACCESS__KEY: minio.rootPassword,
    CATALOG_CLIENT_REGION: minio.region,
    // The AWS SDK looks no further than these: no instance metadata, no amazonaws.com.
    AWS_REGION: minio.region,
    AWS_EC2_METADATA_DISABLED: "true",
  },
});
