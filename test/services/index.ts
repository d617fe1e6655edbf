// The real services of the test harness, in start order.
import { icebergRest } from "./iceberg-rest.ts";
import { kafka } from "./kafka.ts";
import type { Service } from "./lib.ts";
import { readers } from "./readers.ts";

export const services: Service[] = [kafka, icebergRest, readers];
