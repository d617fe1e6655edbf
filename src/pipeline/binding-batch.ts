// The messages of one binding's topic read by a sync, decoded and sorted into what becomes rows of the
// topic's table, what becomes rows of its dead-letter table, and what is only counted.
// Schema inference sees every record here, while reading: a record whose values do not fit
// the table's columns is a bad message like one that is not JSON, routed by on_error before
// anything is written, and a message is a row or a dead letter as a whole, never half of each.

import { afterImageOf, type CdcEnvelope, type Change, readChange } from "../decode/cdc-envelope.ts";
import { isConfluentFramed, parseConfluentFrame } from "../decode/confluent-frame.ts";
import { type ColumnChange, DeclaredColumnError, SchemaInference, type TableSchema } from "../decode/infer-schema.ts";
import { jsonKeyFields } from "../decode/json-key.ts";
import {
  type BadMessageKind,
  type DecodedRecord,
  decodeJsonMessage,
  type JsonRecord,
  type JsonValue,
} from "../decode/json-message.ts";
import { RegistrySchema } from "../decode/registry-schema.ts";
import type { SchemaMismatchReason } from "../decode/schema-mismatch.ts";
import { kafkaKeyText } from "../decode/system-columns.ts";
import {
  type ChangeDecoder,
  NO_TEXT_COLUMNS,
  type SchemaDecoder,
  type TypedRecord,
  type TypedValue,
  UnsupportedSchemaError,
} from "../decode/typed-record.ts";
import type { Schema } from "../iceberg/spec/schema.ts";
import { type DedupKey, dedupKeyText, isInMessageKey, keyValueIn, setKeyValue } from "../job/dedup-key.ts";
import type { Binding } from "../job/job.ts";
import type { KafkaMessage } from "../kafka/read.ts";
import { ProduceTimes } from "./freshness.ts";
import type { RegistryDecoders } from "./registry-decoders.ts";

/** Why a registry-framed value is a bad message. */
export type FramedReason = "not-framed" | "schema-not-found" | "unsupported-schema" | "undecodable";

/** Why a message went to the dead-letter table: the decoder's reasons, the schema's and the sync's own. */
export type RejectReason = BadMessageKind | FramedReason | SchemaMismatchReason | "missing-dedup-key" | "bad-envelope";

/** What write-binding needs of a binding's columns: the schema to create or evolve the table to. */
export interface BindingShape {
  settle(): void;
  changes(): ColumnChange[];
  readonly schema: Schema;
}

export interface RejectedMessage {
  partition: number;
  offset: bigint;
  timestamp: bigint;
  key: string | null;
  /** Base64 of the value bytes, copied: the fetch buffer they came in is not kept. */
  value: string | null;
  reason: RejectReason;
  detail: string;
}

/**
 * A message that becomes a row (or, as a tombstone, deletes one). Struct of arrays, by message;
 * a BindingBatch holds the Kafka coordinates in typed arrays, longer than `count`, so that a
 * round's messages leave no number or bigint object per message on the heap for them.
 */
export interface RowMessages {
  count: number;
  partitions: ArrayLike<number>;
  offsets: ArrayLike<bigint>;
  /** Milliseconds since the epoch, as Kafka gives them. */
  timestamps: ArrayLike<bigint>;
  keys: (string | null)[];
  /** The decoded keys (key_format avro, protobuf or json_schema); empty without key_format. */
  keyRecords: (TypedRecord | null)[];
  /** Null for a tombstone. */
  records: (JsonRecord | TypedRecord | null)[];
  /** The records are TypedRecords (a registry format): their values are already their columns'. */
  typed: boolean;
  /** A change stream's: what each message does and where it stands at the source; undefined for other streams. */
  changes?: ChangeRows;
}

/** Per message of a change stream, beside RowMessages' arrays. */
export interface ChangeRows {
  /** A delete: the record holds the key of the row to delete, and no row is written. */
  deletes: boolean[];
  /** The source position (cdc-envelope.ts), which orders the changes of a key; null for a tombstone. */
  positions: (string | null)[];
  /** When the change happened at the source, in milliseconds; null when the envelope does not say. */
  sourceTimes: (number | null)[];
}

export interface BindingCounters {
  messages: number;
  bytes: number;
  rejected: Record<RejectReason, number>;
  /** Rejected messages dropped by on_error: skip. */
  skipped: number;
  /** Tombstones of an upsert binding keyed on payload fields: they name no row to delete. */
  tombstonesIgnored: number;
}

/** Room for this many rows' coordinates at first; it doubles as a round fills. */
const INITIAL_ROWS = 1024;

/** The dead-letter table already holds messages below these offsets (a replay skips them). */
export type DeadLetterWatermarks = ReadonlyMap<number, bigint>;

export class BindingBatch {
  readonly topic: string;
  readonly binding: Binding;
  readonly inference: BindingShape;
  readonly rows: RowMessages;
  readonly rejected: RejectedMessage[] = [];
  /** Each message's produce timestamp: the round's freshness once it is committed. */
  readonly produceTimes = new ProduceTimes();
  readonly counters: BindingCounters = {
    messages: 0,
    bytes: 0,
    rejected: {
      "invalid-utf8": 0,
      "not-json": 0,
      "not-object": 0,
      "confluent-framed-without-registry": 0,
      "not-framed": 0,
      "schema-not-found": 0,
      "unsupported-schema": 0,
      undecodable: 0,
      "too-deep": 0,
      "out-of-range": 0,
      "type-mismatch": 0,
      "null-in-required": 0,
      "reserved-name": 0,
      "case-collision": 0,
      "missing-dedup-key": 0,
      "bad-envelope": 0,
    },
    skipped: 0,
    tombstonesIgnored: 0,
  };
  readonly #deadLetterWatermarks: DeadLetterWatermarks;
  /** Tombstones delete only when the Kafka key is the dedup key: it is all a tombstone carries. */
  readonly #tombstonesDelete: boolean;
  /** Dedup keys that are payload columns. */
  readonly #payloadKeys: readonly string[];
  /** Fields of a decoded key that are dedup keys (`_kafka_key.<field>`). */
  readonly #keyFields: readonly string[];
  readonly #json: SchemaInference | undefined;
  readonly #registry: { schema: RegistrySchema; decoders: RegistryDecoders } | undefined;
  readonly #decoders: RegistryDecoders | undefined;
  readonly #keyFormat: "avro" | "protobuf" | "json_schema" | undefined;
  /** The change events' envelope, for a change stream. */
  readonly #envelope: CdcEnvelope | undefined;
  /** Where decodeJsonMessage finds the fields that become columns: the after image of a change stream. */
  readonly #imageOf: ((root: JsonRecord) => unknown) | undefined;
  /** key_columns: [key field, column] pairs. */
  readonly #keyColumns: readonly (readonly [string, string])[];
  /** The change being added, whose position and time #push records. */
  #change: Change | undefined;

  /** `decoders`: for an Avro or Protobuf binding, where the schemas of its values come from. */
  constructor(
    binding: Binding,
    table: TableSchema | undefined,
    deadLetterWatermarks: DeadLetterWatermarks,
    decoders?: RegistryDecoders,
  ) {
    this.topic = binding.topic;
    this.binding = binding;
    // JSON Schema-framed values are JSON: inferred like it, with the registry's types on top.
    const typed = binding.format === "avro" || binding.format === "protobuf";
    this.rows = {
      count: 0,
      partitions: this.#partitions,
      offsets: this.#offsets,
      timestamps: this.#timestamps,
      keys: [],
      keyRecords: [],
      records: [],
      typed,
    };
    const envelope = binding.envelope;
    this.#envelope = envelope;
    this.#imageOf = envelope === undefined ? undefined : (root) => afterImageOf(root, envelope);
    if (envelope !== undefined) this.rows.changes = { deletes: [], positions: [], sourceTimes: [] };
    this.#keyColumns = [...binding.keyColumns];
    if (typed) {
      if (decoders === undefined)
        throw new Error(`topic ${binding.topic}: a ${binding.format} stream needs the registry's decoders`);
      this.#registry = { schema: new RegistrySchema(table, binding.columns), decoders };
      this.inference = this.#registry.schema;
    } else {
      this.#json = bindingInference(binding, table);
      this.inference = this.#json;
    }
    this.#deadLetterWatermarks = deadLetterWatermarks;
    this.#decoders = decoders;
    if (binding.format === "json_schema" && decoders === undefined)
      throw new Error(`topic ${binding.topic}: a json_schema stream needs the registry's decoders`);
    const keyFormat = binding.keyFormat;
    this.#keyFormat = keyFormat === "bytes" ? undefined : keyFormat;
    if (this.#keyFormat !== undefined && decoders === undefined) {
      throw new Error(`topic ${binding.topic}: a key_format ${keyFormat} stream needs the registry's decoders`);
    }
    const keys: readonly DedupKey[] = binding.mode === "upsert" ? binding.dedupKeys : [];
    // A tombstone carries only its key: it deletes when the key alone identifies the row.
    this.#tombstonesDelete = keys.length > 0 && keys.every(isInMessageKey);
    this.#payloadKeys = keys.flatMap((k) => (k.kind === "column" && !isInMessageKey(k) ? [k.column] : []));
    this.#keyFields = binding.dedupKeys.flatMap((k) => (k.kind === "kafka-key-field" ? [k.field] : []));
  }

  /** Loads the schemas a batch's framed values (and keys) name, before its messages are added. */
  async prepare(messages: readonly KafkaMessage[]): Promise<void> {
    const decoders = this.#decoders;
    if (decoders === undefined) return;
    const valueFormat = this.#registry === undefined ? undefined : (this.binding.format as "avro" | "protobuf");
    const jsonSchema = this.binding.format === "json_schema";
    for (const message of messages) {
      const value = message.value;
      if (jsonSchema && value !== null && isConfluentFramed(value)) {
        const schemaId = new DataView(value.buffer, value.byteOffset, value.byteLength).getUint32(1);
        if (decoders.lookupJsonSchema(schemaId) === undefined) await decoders.loadJsonSchema(schemaId);
      }
      for (const [bytes, format] of [
        [message.value, valueFormat],
        [message.key, this.#keyFormat],
      ] as const) {
        if (format === undefined || bytes === null || !isConfluentFramed(bytes)) continue;
        const schemaId = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
        if (format === "json_schema") {
          if (decoders.lookupJsonSchema(schemaId) === undefined) await decoders.loadJsonSchema(schemaId);
        } else if (decoders.lookup(format, schemaId) === undefined) await decoders.load(format, schemaId);
      }
    }
  }

  add(message: KafkaMessage): void {
    this.counters.messages++;
    this.produceTimes.add(message.timestamp);
    this.counters.bytes += (message.key?.length ?? 0) + (message.value?.length ?? 0);
    this.#keyRecord = null;
    if (this.#keyFormat !== undefined && !this.#decodeKey(message, this.#keyFormat)) return;
    if (this.#registry !== undefined) {
      this.#addFramed(message, this.#registry);
      return;
    }
    let value = message.value;
    if (this.binding.format === "json_schema" && value !== null) {
      const payload = this.#jsonSchemaPayload(message, value);
      if (payload === undefined) return;
      value = payload;
    }
    const decoded = decodeJsonMessage(value, this.#imageOf);
    if (decoded.kind === "bad") {
      this.#reject(message, decoded.reason, decoded.detail);
    } else if (decoded.kind === "tombstone") {
      if (this.#envelope === undefined) this.#tombstone(message);
      else this.#changeTombstone(message);
    } else if (this.#envelope !== undefined) {
      this.#addChange(message, decoded, this.#envelope);
    } else {
      this.#fillKeyColumns(message, decoded.record);
      this.#addRecord(message, decoded);
    }
  }

  /** JSON Schema ids whose columns this batch's inference has declared: once per id is enough. */
  readonly #declaredSchemas = new Set<number>();

  /**
   * The JSON document of a JSON Schema-framed value (magic byte, schema id, then the JSON text:
   * no message indexes), its schema's columns declared; undefined when the message was rejected.
   */
  #jsonSchemaPayload(message: KafkaMessage, value: Uint8Array): Uint8Array | undefined {
    const framed = parseConfluentFrame(value, false);
    if ("problem" in framed) {
      this.#reject(message, "not-framed", `${framed.problem}; the stream's format is json_schema`);
      return undefined;
    }
    const { schemaId, payload } = framed.frame;
    const lookup = this.#decoders!.lookupJsonSchema(schemaId);
    if (lookup === undefined) {
      // prepare() loads every schema id of the batch before any message is added.
      throw new Error(
        `topic ${message.topic} partition ${message.partition} offset ${message.offset}: schema id ${schemaId} was not loaded before the batch was read`,
      );
    }
    if ("reason" in lookup) {
      this.#reject(message, lookup.reason, lookup.detail);
      return undefined;
    }
    if (!this.#declaredSchemas.has(schemaId)) {
      this.#json!.declareNew(lookup.columns);
      this.#declaredSchemas.add(schemaId);
    }
    // A frame around a NUL-led payload would read as framed again: it is no JSON either way.
    if (payload.length > 0 && payload[0] === 0) {
      this.#reject(message, "not-json", `schema id ${schemaId}: the framed payload is not JSON text`);
      return undefined;
    }
    return payload;
  }

  #addRecord(message: KafkaMessage, decoded: DecodedRecord): void {
    const missing = this.#payloadKeys.find((k) => !isKeyValue(keyValueIn(decoded.record, k)));
    if (missing !== undefined) {
      this.#reject(message, "missing-dedup-key", `dedup key ${missing} is missing, null or not a scalar`);
    } else if (this.#tombstonesDelete && message.key === null) {
      this.#reject(message, "missing-dedup-key", "the message has no key and the key is the dedup key");
    } else {
      const mismatch = this.#json!.observe(decoded);
      if (mismatch === undefined) this.#push(message, decoded.record);
      else this.#reject(message, mismatch.reason, mismatch.detail, false);
    }
  }

  /** A change event: its after image lands as a row, or its before image (or key) names the row to delete. */
  #addChange(message: KafkaMessage, decoded: DecodedRecord, envelope: CdcEnvelope): void {
    const change = readChange(decoded.record, envelope);
    if ("problem" in change) {
      this.#reject(message, "bad-envelope", change.problem);
      return;
    }
    this.#fillKeyColumns(message, change.image);
    this.#change = change;
    if (change.kind === "delete") this.#addDelete(message, change.image, envelope.before.join("."));
    else this.#addRecord(message, { kind: "record", record: change.image, wholeDecimals: decoded.wholeDecimals });
    this.#change = undefined;
  }

  /**
   * A delete of a change stream. Its image only names the row: no row is written, so only its
   * dedup key fields are observed, for their columns to exist and to hold them.
   */
  #addDelete(message: KafkaMessage, image: JsonRecord, before: string): void {
    const missing = this.#payloadKeys.find((k) => !isKeyValue(keyValueIn(image, k)));
    if (missing !== undefined) {
      this.#reject(
        message,
        "missing-dedup-key",
        `a delete names no row: dedup key ${missing} is in neither ${before} nor the key's columns (key_columns)`,
      );
      return;
    }
    if (this.#tombstonesDelete && message.key === null) {
      this.#reject(message, "missing-dedup-key", "the delete has no key and the key is the dedup key");
      return;
    }
    if (this.#payloadKeys.length > 0) {
      const keys: JsonRecord = {};
      for (const k of this.#payloadKeys) setKeyValue(keys, k, keyValueIn(image, k)!, !Object.hasOwn(image, k));
      const mismatch = this.#json!.observe({ kind: "record", record: keys, wholeDecimals: undefined });
      if (mismatch !== undefined) {
        this.#reject(message, mismatch.reason, mismatch.detail, false);
        return;
      }
      this.#push(message, keys, true);
    } else {
      this.#push(message, image, true);
    }
  }

  /**
   * A tombstone in a change stream follows the delete of its key (Debezium's, for log compaction):
   * the row is gone already, and deleting a key the table lacks deletes nothing. It deletes again
   * when its key names the row, for a compacted topic whose delete event is gone; else it is counted.
   */
  #changeTombstone(message: KafkaMessage): void {
    if (this.#tombstonesDelete) {
      if (message.key === null) this.counters.tombstonesIgnored++;
      else this.#push(message, null, true);
      return;
    }
    const keys: JsonRecord = {};
    this.#fillKeyColumns(message, keys);
    if (this.#payloadKeys.length === 0 || this.#payloadKeys.some((k) => !isKeyValue(keyValueIn(keys, k)))) {
      this.counters.tombstonesIgnored++;
      return;
    }
    const mismatch = this.#json!.observe({ kind: "record", record: keys, wholeDecimals: undefined });
    if (mismatch === undefined) this.#push(message, keys, true);
    else this.counters.tombstonesIgnored++;
  }

  /** key_columns: the key's fields fill the columns the value lacks (or holds as null). */
  #fillKeyColumns(message: KafkaMessage, record: JsonRecord): void {
    if (this.#keyColumns.length === 0) return;
    const key = this.#keyRecord ?? jsonKeyFields(message.key);
    if (key === undefined || key === null) return;
    for (const [field, column] of this.#keyColumns) {
      if (record[column] !== undefined && record[column] !== null) continue;
      const value = (key as JsonRecord)[field];
      if (value !== undefined && value !== null && typeof value !== "object") record[column] = value;
    }
  }

  /** The decoded key of the message being added; null without key_format or key. */
  #keyRecord: TypedRecord | null = null;

  /** Decodes a framed key (key_format); false when the message was rejected for its key. */
  #decodeKey(message: KafkaMessage, format: "avro" | "protobuf" | "json_schema"): boolean {
    const key = message.key;
    if (key === null) {
      if (this.#keyFields.length === 0) return true;
      this.#reject(
        message,
        "missing-dedup-key",
        `the message has no key, and ${keyFieldText(this.#keyFields[0]!)} is a dedup key`,
      );
      return false;
    }
    const framed = parseConfluentFrame(key, format === "protobuf");
    if ("problem" in framed) {
      this.#reject(
        message,
        "not-framed",
        `key: ${framed.problem.replace(/^value/, "the key")}; the stream's key_format is ${format}`,
      );
      return false;
    }
    const { schemaId, messageIndexes, payload } = framed.frame;
    if (format === "json_schema") return this.#decodeJsonSchemaKey(message, schemaId, payload);
    const lookup = this.#decoders!.lookup(format, schemaId);
    if (lookup === undefined) {
      // prepare() loads every schema id of the batch before any message is added.
      throw new Error(
        `topic ${message.topic} partition ${message.partition} offset ${message.offset}: schema id ${schemaId} was not loaded before the batch was read`,
      );
    }
    if ("reason" in lookup) {
      this.#reject(message, lookup.reason, `key: ${lookup.detail}`);
      return false;
    }
    const decoded = lookup.decoder.decode(payload, messageIndexes);
    if ("problem" in decoded) {
      this.#reject(message, "undecodable", `key: schema id ${schemaId}: ${decoded.problem}`);
      return false;
    }
    const missing = this.#keyFields.find((f) => !isTypedKeyValue(decoded.record[f]));
    if (missing !== undefined) {
      this.#reject(message, "missing-dedup-key", `dedup key ${keyFieldText(missing)} is missing, null or not a scalar`);
      return false;
    }
    this.#keyRecord = decoded.record;
    return true;
  }

  /**
   * A JSON Schema-framed key: its JSON object's fields, for dedup keys and key columns. Its
   * schema only has to be a JSON Schema the registry knows; only scalar fields are ever read.
   */
  #decodeJsonSchemaKey(message: KafkaMessage, schemaId: number, payload: Uint8Array): boolean {
    const lookup = this.#decoders!.lookupJsonSchema(schemaId);
    if (lookup === undefined) {
      // prepare() loads every schema id of the batch before any message is added.
      throw new Error(
        `topic ${message.topic} partition ${message.partition} offset ${message.offset}: schema id ${schemaId} was not loaded before the batch was read`,
      );
    }
    if ("reason" in lookup) {
      this.#reject(message, lookup.reason, `key: ${lookup.detail}`);
      return false;
    }
    const decoded = payload.length > 0 && payload[0] === 0 ? undefined : decodeJsonMessage(payload);
    if (decoded === undefined || decoded.kind !== "record") {
      const reason = decoded?.kind === "bad" ? decoded.reason : "not-json";
      const detail = decoded?.kind === "bad" ? decoded.detail : "the framed payload is not JSON text";
      this.#reject(message, reason, `key: schema id ${schemaId}: ${detail.replace(/^value/, "the key")}`);
      return false;
    }
    const record = decoded.record;
    const missing = this.#keyFields.find((f) => !isKeyValue(record[f]));
    if (missing !== undefined) {
      this.#reject(message, "missing-dedup-key", `dedup key ${keyFieldText(missing)} is missing, null or not a scalar`);
      return false;
    }
    this.#keyRecord = record as TypedRecord;
    return true;
  }

  /** An Avro or Protobuf value in the Confluent wire format; its schema was loaded by prepare(). */
  #addFramed(message: KafkaMessage, registry: { schema: RegistrySchema; decoders: RegistryDecoders }): void {
    const value = message.value;
    if (value === null) {
      if (this.#envelope === undefined) this.#tombstone(message);
      else this.#changeTombstone(message);
      return;
    }
    const format = this.binding.format as "avro" | "protobuf";
    const framed = parseConfluentFrame(value, format === "protobuf");
    if ("problem" in framed) {
      this.#reject(message, "not-framed", `${framed.problem}; the stream's format is ${format}`);
      return;
    }
    const { schemaId, messageIndexes, payload } = framed.frame;
    const lookup = registry.decoders.lookup(format, schemaId);
    if (lookup === undefined) {
      // prepare() loads every schema id of the batch before any message is added.
      throw new Error(
        `topic ${message.topic} partition ${message.partition} offset ${message.offset}: schema id ${schemaId} was not loaded before the batch was read`,
      );
    }
    if ("reason" in lookup) {
      this.#reject(message, lookup.reason, lookup.detail);
      return;
    }
    if (this.#envelope !== undefined) {
      this.#addFramedChange(message, registry, schemaId, lookup.decoder, payload, this.#envelope);
      return;
    }
    const variant = messageIndexes.join(",");
    const schemaColumns = lookup.decoder.columnsOf(messageIndexes);
    const text =
      schemaColumns === undefined ? NO_TEXT_COLUMNS : registry.schema.textColumns(schemaId, schemaColumns, variant);
    const decoded = lookup.decoder.decode(payload, messageIndexes, text);
    if ("problem" in decoded) {
      this.#reject(message, "undecodable", `schema id ${schemaId}: ${decoded.problem}`);
      return;
    }
    const typed = decoded.record;
    const missing = this.#payloadKeys.find((k) => !isTypedKeyValue(keyValueIn(typed, k)));
    if (missing !== undefined) {
      this.#reject(message, "missing-dedup-key", `dedup key ${missing} is missing, null or not a scalar`);
    } else if (this.#tombstonesDelete && message.key === null) {
      this.#reject(message, "missing-dedup-key", "the message has no key and the key is the dedup key");
    } else {
      // Throws SchemaEvolutionError for a schema the table cannot take: nothing of the batch is committed.
      registry.schema.observe(schemaId, decoded.columns, message, variant);
      this.#push(message, typed);
    }
  }

  /** Change decoders by schema id, or why the schema is no envelope. */
  readonly #changeDecoders = new Map<number, ChangeDecoder | string>();

  /** A change event framed with a registry schema (Debezium's Avro or Protobuf envelope). */
  #addFramedChange(
    message: KafkaMessage,
    registry: { schema: RegistrySchema; decoders: RegistryDecoders },
    schemaId: number,
    decoder: SchemaDecoder,
    payload: Uint8Array,
    envelope: CdcEnvelope,
  ): void {
    let changes = this.#changeDecoders.get(schemaId);
    if (changes === undefined) {
      try {
        if (decoder.changes === undefined) throw new UnsupportedSchemaError(`a ${this.binding.format} schema`);
        const plain = decoder.changes(envelope);
        const text = registry.schema.textColumns(schemaId, plain.columns, "change");
        changes = text.size === 0 ? plain : decoder.changes(envelope, text);
      } catch (error) {
        if (!(error instanceof UnsupportedSchemaError)) throw error;
        changes = `schema id ${schemaId}: ${error.message}; change events need Avro or Protobuf envelopes`;
      }
      this.#changeDecoders.set(schemaId, changes);
    }
    if (typeof changes === "string") {
      this.#reject(message, "unsupported-schema", changes);
      return;
    }
    const decoded = changes.decode(payload);
    if ("problem" in decoded) {
      if (decoded.envelope) this.#reject(message, "bad-envelope", decoded.problem);
      else this.#reject(message, "undecodable", `schema id ${schemaId}: ${decoded.problem}`);
      return;
    }
    const { record, change } = decoded;
    const missing = this.#payloadKeys.find((k) => !isTypedKeyValue(keyValueIn(record, k)));
    if (missing !== undefined) {
      const where = change.kind === "delete" ? `${envelope.before.join(".")} of a delete` : envelope.after.join(".");
      this.#reject(message, "missing-dedup-key", `dedup key ${missing} is missing, null or not a scalar in ${where}`);
      return;
    }
    if (this.#tombstonesDelete && message.key === null) {
      this.#reject(message, "missing-dedup-key", "the message has no key and the key is the dedup key");
      return;
    }
    registry.schema.observe(schemaId, changes.columns, message, "change");
    this.#change = change;
    this.#push(message, record, change.kind === "delete");
    this.#change = undefined;
  }

  #tombstone(message: KafkaMessage): void {
    // Append mode keeps every message, a tombstone too (a row with _op_type d).
    if (this.binding.mode === "upsert" && !this.#tombstonesDelete) this.counters.tombstonesIgnored++;
    else this.#push(message, null);
  }

  // The rows' Kafka coordinates, which `rows` shows (each array replaced as it grows).
  #partitions = new Int32Array(INITIAL_ROWS);
  #offsets = new BigInt64Array(INITIAL_ROWS);
  #timestamps = new BigInt64Array(INITIAL_ROWS);

  #push(message: KafkaMessage, record: JsonRecord | TypedRecord | null, isDelete = false): void {
    const rows = this.rows;
    const changes = rows.changes;
    if (changes !== undefined) {
      changes.deletes.push(isDelete);
      changes.positions.push(this.#change?.position ?? null);
      changes.sourceTimes.push(this.#change?.tsMillis ?? null);
    }
    const i = rows.count;
    if (i === this.#partitions.length) this.#grow();
    this.#partitions[i] = message.partition;
    this.#offsets[i] = message.offset;
    this.#timestamps[i] = message.timestamp;
    rows.keys.push(kafkaKeyText(message.key));
    if (this.#keyFormat !== undefined) rows.keyRecords.push(this.#keyRecord);
    rows.records.push(record);
    rows.count = i + 1;
  }

  /** Twice the room for the rows' coordinates. */
  #grow(): void {
    const capacity = this.#partitions.length * 2;
    const partitions = new Int32Array(capacity);
    partitions.set(this.#partitions);
    const offsets = new BigInt64Array(capacity);
    offsets.set(this.#offsets);
    const timestamps = new BigInt64Array(capacity);
    timestamps.set(this.#timestamps);
    this.#partitions = partitions;
    this.#offsets = offsets;
    this.#timestamps = timestamps;
    this.rows.partitions = partitions;
    this.rows.offsets = offsets;
    this.rows.timestamps = timestamps;
  }

  /** `reproducible`: a replay refuses the message again whatever else its batch holds. */
  #reject(message: KafkaMessage, reason: RejectReason, detail: string, reproducible = true): void {
    this.counters.rejected[reason]++;
    const onError = this.binding.onError;
    if (onError === "fail") {
      throw new BadMessageError(message.topic, message.partition, message.offset, reason, detail);
    }
    if (onError === "skip") {
      this.counters.skipped++;
      return;
    }
    // A replay (the dead-letter table committed, the topic's table not) skips the dead letters
    // it already holds. A value refused by its column is written again: the first attempt may
    // have had other commit batches, whose columns took it (a column new in a batch is double
    // when the batch has a decimal, long when not), and a second dead letter after a crash is
    // better than a message in neither table.
    const watermark = this.#deadLetterWatermarks.get(message.partition);
    if (reproducible && watermark !== undefined && message.offset < watermark) return;
    this.rejected.push({
      partition: message.partition,
      offset: message.offset,
      timestamp: message.timestamp,
      key: kafkaKeyText(message.key),
      value: message.value === null ? null : Buffer.from(message.value).toString("base64"),
      reason,
      detail,
    });
  }
}

/** The binding's schema inference over its table and its declared columns; a declaration the table contradicts names the topic and table. */
export function bindingInference(binding: Binding, table: TableSchema | undefined): SchemaInference {
  try {
    return new SchemaInference(table, binding.columns);
  } catch (error) {
    if (error instanceof DeclaredColumnError) {
      error.message = `topic ${binding.topic}, table ${binding.table}: ${error.message}`;
    }
    throw error;
  }
}

function keyFieldText(field: string): string {
  return dedupKeyText({ kind: "kafka-key-field", field });
}

function isTypedKeyValue(value: TypedValue | undefined): boolean {
  const type = typeof value;
  return type === "string" || type === "number" || type === "bigint" || type === "boolean";
}

function isKeyValue(value: JsonValue | undefined): boolean {
  const type = typeof value;
  return type === "string" || type === "number" || type === "bigint" || type === "boolean";
}

/** A bad message in a binding with on_error: fail. */
export class BadMessageError extends Error {
  constructor(topic: string, partition: number, offset: bigint, reason: RejectReason, detail: string) {
    super(`${topic} partition ${partition} offset ${offset}: ${reason}: ${detail} (on_error: fail)`);
    this.name = "BadMessageError";
  }
}
