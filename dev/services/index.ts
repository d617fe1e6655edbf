// The real services the tests, the demo and the benchmarks run against, in start order (the S3
// catalog needs MinIO up).
import { azuriteService } from "./azurite.ts";
import { chromiumService } from "./chromium.ts";
import { debeziumService } from "./debezium.ts";
import { fakeGcsService } from "./fake-gcs-server.ts";
import { icebergRest } from "./iceberg-rest.ts";
import { icebergRestS3 } from "./iceberg-rest-s3.ts";
import { kafka } from "./kafka.ts";
import { kafkaSecure } from "./kafka-secure.ts";
import type { Service } from "./lib.ts";
import { minioService } from "./minio.ts";
import { readers } from "./readers.ts";
import { schemaRegistryService } from "./schema-registry.ts";
import { seaweedfsService } from "./seaweedfs.ts";
import { versitygwService } from "./versitygw.ts";

export const services: Service[] = [
  kafka,
  kafkaSecure,
  icebergRest,
  minioService,
  icebergRestS3,
  versitygwService,
  fakeGcsService,
  azuriteService,
  seaweedfsService,
  schemaRegistryService,
  readers,
  chromiumService,
  debeziumService,
];
