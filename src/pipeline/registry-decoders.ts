// The decoders of registry-framed values, by schema id, for the bindings of one sync: the schema
// fetched once from the registry (with the schemas it references, depth first), turned into its
// columns and decoder (decode/avro-decoder.ts, decode/protobuf-decoder.ts), or for JSON Schema
// the column types it declares (decode/json-schema-columns.ts: the values are decoded as JSON).
// Fetching is asynchronous and decoding is not, so a batch of messages is prepared (every schema id it
// carries loaded) before its messages are added to the binding's batch.
import type { DeclaredColumns } from "../decode/declared-columns.ts";
import { jsonSchemaColumns } from "../decode/json-schema-columns.ts";
import { type SchemaDecoder, UnsupportedSchemaError } from "../decode/typed-record.ts";
import { type RegisteredSchema, RegistryError, type SchemaRegistryClient } from "../registry/client.ts";

export type RegistryFormat = "avro" | "protobuf";

/** What a schema id gives: its decoder, or why the messages framed with it are bad messages. */
export type DecoderLookup = { readonly decoder: SchemaDecoder } | BadSchema;

/** What a JSON Schema id gives: the columns its schema declares, or why its messages are bad. */
export type JsonSchemaLookup = { readonly columns: DeclaredColumns } | BadSchema;

type BadSchema = { readonly reason: "schema-not-found" | "unsupported-schema"; readonly detail: string };

/**
 * Why the messages of a schema id are bad, when fetching or reading its schema failed for a
 * reason of the schema's own (unknown id, a schema floe cannot read); anything else (the
 * registry unreachable, credentials refused) is rethrown: no message can be decoded then.
 */
function badSchema(error: unknown, schemaId: number): BadSchema {
  if (error instanceof RegistryError && error.kind === "not-found") {
    return { reason: "schema-not-found", detail: `schema id ${schemaId}: ${error.message}` };
  }
  if (error instanceof UnsupportedSchemaError) {
    return { reason: "unsupported-schema", detail: `schema id ${schemaId}: ${error.message}` };
  }
  throw error;
}

const EXPECTED_TYPE = { avro: "AVRO", protobuf: "PROTOBUF" } as const;

export class RegistryDecoders {
  readonly client: SchemaRegistryClient;
  readonly #loaded = { avro: new Map<number, DecoderLookup>(), protobuf: new Map<number, DecoderLookup>() };
  readonly #jsonSchemas = new Map<number, JsonSchemaLookup>();

  constructor(client: SchemaRegistryClient) {
    this.client = client;
  }

  /** The decoder of a schema id, once load() has run for it. */
  lookup(format: RegistryFormat, schemaId: number): DecoderLookup | undefined {
    return this.#loaded[format].get(schemaId);
  }

  /**
   * Loads a schema id's decoder. A schema the registry does not have, or one of another format,
   * is remembered as the reason its messages are bad; an unreachable registry or refused
   * credentials throw (RegistryError): no message can be decoded then.
   */
  async load(format: RegistryFormat, schemaId: number): Promise<void> {
    if (this.#loaded[format].has(schemaId)) return;
    let lookup: DecoderLookup;
    try {
      const registered = await this.client.schemaById(schemaId);
      if (registered.schemaType !== EXPECTED_TYPE[format]) {
        lookup = {
          reason: "unsupported-schema",
          detail: `schema id ${schemaId} is a ${registered.schemaType} schema, and the stream's format is ${format}`,
        };
      } else {
        const references = await this.#references(registered, new Set());
        lookup = {
          decoder:
            // avsc loads only for a job that reads Avro, protobufjs only for one that reads Protobuf.
            format === "avro"
              ? (await import("../decode/avro-decoder.ts")).avroDecoder(
                  registered.schema,
                  references.map((r) => r.schema),
                )
              : (await import("../decode/protobuf-decoder.ts")).protobufDecoder(registered.schema, references),
        };
      }
    } catch (error) {
      lookup = badSchema(error, schemaId);
    }
    this.#loaded[format].set(schemaId, lookup);
  }

  /** The columns of a JSON Schema id, once loadJsonSchema() has run for it. */
  lookupJsonSchema(schemaId: number): JsonSchemaLookup | undefined {
    return this.#jsonSchemas.get(schemaId);
  }

  /**
   * Loads a JSON Schema id's columns, with load()'s rules: an unknown id or another kind of
   * schema is why its messages are bad; an unreachable registry throws. References ($ref to
   * another subject) are not followed: such properties are left to inference.
   */
  async loadJsonSchema(schemaId: number): Promise<void> {
    if (this.#jsonSchemas.has(schemaId)) return;
    let lookup: JsonSchemaLookup;
    try {
      const registered = await this.client.schemaById(schemaId);
      lookup =
        registered.schemaType === "JSON"
          ? { columns: jsonSchemaColumns(registered.schema) }
          : {
              reason: "unsupported-schema",
              detail: `schema id ${schemaId} is a ${registered.schemaType} schema, and the stream's format is json_schema`,
            };
    } catch (error) {
      lookup = badSchema(error, schemaId);
    }
    this.#jsonSchemas.set(schemaId, lookup);
  }

  /** The schemas `schema` references, each after those it references itself. */
  async #references(schema: RegisteredSchema, visiting: Set<string>): Promise<{ name: string; schema: string }[]> {
    const out: { name: string; schema: string }[] = [];
    for (const reference of schema.references) {
      const key = `${reference.subject}/${reference.version}`;
      if (visiting.has(key)) continue;
      visiting.add(key);
      const referenced = await this.client.subjectVersion(reference.subject, reference.version);
      out.push(...(await this.#references(referenced, visiting)));
      out.push({ name: reference.name, schema: referenced.schema });
    }
    return out;
  }
}
