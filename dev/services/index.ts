// The real services the tests, the demo and the benchmarks run against, in start order.
import { icebergRest } from "./iceberg-rest.ts";
import { kafka } from "./kafka.ts";
import type { Service } from "./lib.ts";
import { readers } from "./readers.ts";

export const services: Service[] = [kafka, icebergRest, readers];
