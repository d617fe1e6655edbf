// Schema-registry chores of the tests and the demo: register schemas with the registry of
// dev/services/schema-registry.ts, and frame Avro and Protobuf values in the Confluent wire
// format as Confluent's serializers do.
import { Buffer } from "node:buffer";
import avsc from "avsc";
import { encodeConfluentFrame } from "../src/decode/confluent-frame.ts";
import { bigintLongHook } from "../src/iceberg/spec/avro-long.ts";
import { schemaRegistry } from "./services/schema-registry.ts";

export interface Reference {
  name: string;
  subject: string;
  version: number;
}

/** Registers a schema under a subject (compatibility NONE, so tests may break it on purpose); returns its id. */
export async function registerSchema(
  subject: string,
  schema: string | object,
  options: { schemaType?: "AVRO" | "PROTOBUF" | "JSON"; references?: Reference[]; url?: string } = {},
): Promise<number> {
  const url = options.url ?? schemaRegistry.url;
  const headers = { "content-type": "application/vnd.schemaregistry.v1+json" };
  const config = await fetch(`${url}/config/${encodeURIComponent(subject)}`, {
    method: "PUT",
    headers,
    body: JSON.stringify({ compatibility: "NONE" }),
  });
  await config.body?.cancel();
  const response = await fetch(`${url}/subjects/${encodeURIComponent(subject)}/versions`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      schema: typeof schema === "string" ? schema : JSON.stringify(schema),
      ...(options.schemaType && options.schemaType !== "AVRO" ? { schemaType: options.schemaType } : {}),
      ...(options.references ? { references: options.references } : {}),
    }),
  });
  const body = (await response.json()) as { id?: number; message?: string };
  if (!response.ok || body.id === undefined) {
    throw new Error(`registering ${subject}: HTTP ${response.status} ${body.message ?? ""}`);
  }
  return body.id;
}

/** An Avro writer of a schema whose longs are bigints. */
export function avroWriter(schema: object): avsc.Type {
  return avsc.Type.forSchema(schema as avsc.Schema, {
    typeHook: bigintLongHook,
    wrapUnions: "auto",
  });
}

/** A value as Confluent's Avro serializer writes it: magic 0, the schema id, the binary datum. */
export function avroValue(schemaId: number, writer: avsc.Type, value: unknown): Buffer {
  return Buffer.from(encodeConfluentFrame(schemaId, writer.toBuffer(value)));
}

/** A value as Confluent's Protobuf serializer writes it: magic 0, the schema id, the message indexes, the message. */
export function protobufValue(schemaId: number, messageIndexes: number[], message: Uint8Array): Buffer {
  return Buffer.from(encodeConfluentFrame(schemaId, message, messageIndexes));
}

/** A value as Confluent's JSON Schema serializer writes it: magic 0, the schema id, the JSON text (no message indexes). */
export function jsonSchemaValue(schemaId: number, value: unknown): Buffer {
  return Buffer.from(encodeConfluentFrame(schemaId, new TextEncoder().encode(JSON.stringify(value))));
}
