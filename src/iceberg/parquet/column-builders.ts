// Append-only column builders: one per Iceberg field, each filling the typed arrays that become
// its Arrow buffers without a copy (makeData over the filled prefix). Values are appended in
// Iceberg's internal representation (spec "Primitive Types"): days for date, microseconds (or
// nanoseconds for _ns) since the epoch for timestamps, microseconds from midnight for time,
// the unscaled integer for decimal. Arrays grow by doubling; the validity bitmap is allocated
// at the first null (a column without nulls has none) with every bit preset to 1, so a valid
// append never touches it. Strings are stored as UTF-8 bytes plus Int32 offsets.
//
// Nested columns (struct, list, map) take JS objects, arrays and Maps through appendValue: a
// slower generic path. A null struct still gives each child a slot (null, or a zero value for
// a required child), as Arrow's layout requires.
import * as arrow from "apache-arrow";
import { IcebergError } from "../errors.ts";
import { childFields, isInt64, type NestedField } from "../spec/types.ts";

/** Rows a column has room for before it first grows, unless the batch says how many to expect. */
const DEFAULT_CAPACITY = 1024;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const TWO_POW_32 = 4294967296;
/** Offsets are Int32: one column of one batch holds at most 2 GiB of strings or bytes. */
const MAX_BYTES = 0x7fffffff;

/** A value the column cannot hold: the caller must convert or route it before it is appended. */
export class ColumnTypeError extends IcebergError {
  constructor(field: NestedField, message: string) {
    super("validation", `field ${field.name} (id ${field.id}): ${message}`);
    this.name = "ColumnTypeError";
  }
}

abstract class ColumnBuilder {
  readonly field: NestedField;
  readonly arrowField: arrow.Field;
  length = 0;
  nullCount = 0;
  protected capacity: number;
  #validity: Uint8Array | undefined;

  /** `capacity`: rows to make room for up front (a multiple of 8 is kept for the bitmaps). */
  constructor(field: NestedField, arrowField: arrow.Field, capacity = DEFAULT_CAPACITY) {
    this.field = field;
    this.arrowField = arrowField;
    this.capacity = Math.max(8, Math.ceil(capacity / 8) * 8);
  }

  /** Appends a value given as a decoded JS value; null and undefined append a null. */
  abstract appendValue(value: unknown): void;

  appendNull(): void {
    if (this.field.required) throw new ColumnTypeError(this.field, "required field cannot be null");
    if (this.length === this.capacity) this.grow();
    if (this.#validity === undefined) this.#validity = new Uint8Array(this.capacity >> 3).fill(0xff);
    const i = this.length;
    this.#validity[i >> 3]! &= ~(1 << (i & 7));
    this.nullCount++;
    this.skip();
  }

  /** The slot of a row whose parent struct is null: null, or a zero value when required. */
  appendPlaceholder(): void {
    if (!this.field.required) {
      this.appendNull();
      return;
    }
    if (this.length === this.capacity) this.grow();
    this.skip();
  }

  /** Drops the values from `length` on: how a row that failed halfway is taken back. */
  truncate(length: number): void {
    if (length > this.length) throw new RangeError(`cannot truncate ${this.length} values to ${length}`);
    const validity = this.#validity;
    if (validity !== undefined) {
      for (let i = length; i < this.length; i++) {
        const mask = 1 << (i & 7);
        if ((validity[i >> 3]! & mask) === 0) {
          validity[i >> 3]! |= mask;
          this.nullCount--;
        }
      }
    }
    this.dropValues(length);
    this.length = length;
  }

  abstract toData(): arrow.Data;

  /** Drops the values from `length` on, leaving zeroed slots where appends expect them. */
  protected dropValues(_length: number): void {}

  /** Advances past one slot whose value bytes are left as they are (zero). */
  protected abstract skip(): void;

  /** Reallocates the value arrays for a new capacity, keeping the first `length` values. */
  protected abstract resize(capacity: number): void;

  protected grow(): void {
    const capacity = this.capacity * 2;
    this.resize(capacity);
    if (this.#validity !== undefined) {
      const validity = new Uint8Array(capacity >> 3).fill(0xff);
      validity.set(this.#validity);
      this.#validity = validity;
    }
    this.capacity = capacity;
  }

  protected nullBitmap(): Uint8Array | undefined {
    return this.nullCount === 0 ? undefined : this.#validity!.subarray(0, (this.length + 7) >> 3);
  }

  protected typeError(value: unknown): ColumnTypeError {
    const shown = typeof value === "bigint" ? `${value}n` : typeof value === "string" ? JSON.stringify(value) : value;
    return new ColumnTypeError(this.field, `${String(shown)} (${typeof value}) is not a valid value`);
  }
}

export class BooleanColumn extends ColumnBuilder {
  readonly kind = "boolean";
  #bits = new Uint8Array(this.capacity >> 3);

  append(value: boolean): void {
    if (this.length === this.capacity) this.grow();
    if (value) this.#bits[this.length >> 3]! |= 1 << (this.length & 7);
    this.length++;
  }

  appendValue(value: unknown): void {
    if (value == null) this.appendNull();
    else if (typeof value === "boolean") this.append(value);
    else throw this.typeError(value);
  }

  toData(): arrow.Data {
    const { length, nullCount } = this;
    const data = this.#bits.subarray(0, (length + 7) >> 3);
    return arrow.makeData({ type: this.arrowField.type, length, nullCount, nullBitmap: this.nullBitmap(), data });
  }

  protected skip(): void {
    this.length++;
  }

  protected override dropValues(length: number): void {
    for (let i = length; i < this.length; i++) this.#bits[i >> 3]! &= ~(1 << (i & 7));
  }

  protected resize(capacity: number): void {
    this.#bits = grown(this.#bits, capacity >> 3);
  }
}

/**
 * A column whose values fill one typed array, `stride` elements a row (all but boolean,
 * string, binary and the nested types). A null keeps its slot, zero.
 */
abstract class FlatColumn<T extends Grown> extends ColumnBuilder {
  protected values: T;
  readonly #stride: number;

  constructor(
    field: NestedField,
    arrowField: arrow.Field,
    capacity: number | undefined,
    allocate: (length: number) => T,
    stride = 1,
  ) {
    super(field, arrowField, capacity);
    this.#stride = stride;
    this.values = allocate(this.capacity * stride);
  }

  toData(): arrow.Data {
    const { length, nullCount } = this;
    const data = this.values.subarray(0, length * this.#stride);
    return arrow.makeData({ type: this.arrowField.type, length, nullCount, nullBitmap: this.nullBitmap(), data });
  }

  protected skip(): void {
    this.length++;
  }

  protected resize(capacity: number): void {
    this.values = grown(this.values, capacity * this.#stride);
  }
}

/** int and date: 32-bit signed integers. */
export class IntColumn extends FlatColumn<Int32Array> {
  readonly kind = "int";

  constructor(field: NestedField, arrowField: arrow.Field, capacity?: number) {
    super(field, arrowField, capacity, (length) => new Int32Array(length));
  }

  append(value: number): void {
    if ((value | 0) !== value) throw this.typeError(value);
    if (this.length === this.capacity) this.grow();
    this.values[this.length++] = value;
  }

  appendValue(value: unknown): void {
    if (value == null) this.appendNull();
    else if (typeof value === "number") this.append(value);
    else throw this.typeError(value);
  }
}

/** long, time and the timestamps: 64-bit signed integers. */
export class LongColumn extends FlatColumn<BigInt64Array> {
  readonly kind = "long";
  /** The same bytes as 32-bit halves, little-endian: numbers are stored without a BigInt. */
  #words = new Int32Array(this.values.buffer);

  constructor(field: NestedField, arrowField: arrow.Field, capacity?: number) {
    super(field, arrowField, capacity, (length) => new BigInt64Array(length));
  }

  append(value: bigint): void {
    if (value < INT64_MIN || value > INT64_MAX) throw this.typeError(value);
    if (this.length === this.capacity) this.grow();
    this.values[this.length++] = value;
  }

  /** The fast path for JSON numbers: any safe integer, stored without allocating a BigInt. */
  appendNumber(value: number): void {
    if (!Number.isSafeInteger(value)) throw this.typeError(value);
    if (this.length === this.capacity) this.grow();
    const high = Math.floor(value / TWO_POW_32);
    const i = this.length++ << 1;
    this.#words[i] = value - high * TWO_POW_32;
    this.#words[i + 1] = high;
  }

  appendValue(value: unknown): void {
    if (value == null) this.appendNull();
    else if (typeof value === "number") this.appendNumber(value);
    else if (typeof value === "bigint") this.append(value);
    else throw this.typeError(value);
  }

  protected override resize(capacity: number): void {
    super.resize(capacity);
    this.#words = new Int32Array(this.values.buffer);
  }
}

/** float (Float32Array) and double (Float64Array). */
export class FloatingColumn extends FlatColumn<Float32Array | Float64Array> {
  readonly kind = "floating";

  constructor(field: NestedField, arrowField: arrow.Field, capacity?: number) {
    const float = field.type === "float";
    super(field, arrowField, capacity, (length) => (float ? new Float32Array(length) : new Float64Array(length)));
  }

  append(value: number): void {
    if (this.length === this.capacity) this.grow();
    this.values[this.length++] = value;
  }

  appendValue(value: unknown): void {
    if (value == null) this.appendNull();
    else if (typeof value === "number") this.append(value);
    else throw this.typeError(value);
  }
}

/** string (UTF-8) and binary: bytes plus Int32 offsets. */
export class BytesColumn extends ColumnBuilder {
  readonly kind = "bytes";
  #offsets = new Int32Array(this.capacity + 1);
  #bytes = new Uint8Array(this.capacity * 16);
  #byteLength = 0;

  /** Appends a string as UTF-8; ASCII is copied by a plain loop, the rest by TextEncoder. */
  append(value: string): void {
    if (this.length === this.capacity) this.grow();
    const n = value.length;
    // at most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units)
    this.#reserveBytes(3 * n);
    const bytes = this.#bytes;
    let at = this.#byteLength;
    let i = 0;
    for (; i < n; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x80) break;
      bytes[at++] = c;
    }
    if (i < n) at += utf8.encodeInto(value.substring(i), bytes.subarray(at)).written;
    this.#byteLength = at;
    this.#offsets[++this.length] = at;
  }

  /** Appends raw bytes: a binary value, or a string already encoded as UTF-8. */
  appendBytes(value: Uint8Array): void {
    if (this.length === this.capacity) this.grow();
    this.#reserveBytes(value.length);
    this.#bytes.set(value, this.#byteLength);
    this.#byteLength += value.length;
    this.#offsets[++this.length] = this.#byteLength;
  }

  appendValue(value: unknown): void {
    if (value == null) this.appendNull();
    else if (typeof value === "string" && this.field.type === "string") this.append(value);
    else if (value instanceof Uint8Array) this.appendBytes(value);
    else throw this.typeError(value);
  }

  toData(): arrow.Data {
    const { length, nullCount } = this;
    return arrow.makeData({
      type: this.arrowField.type,
      length,
      nullCount,
      nullBitmap: this.nullBitmap(),
      valueOffsets: this.#offsets.subarray(0, length + 1),
      data: this.#bytes.subarray(0, this.#byteLength),
    });
  }

  protected skip(): void {
    this.#offsets[this.length + 1] = this.#byteLength;
    this.length++;
  }

  protected override dropValues(length: number): void {
    this.#byteLength = this.#offsets[length]!;
  }

  protected resize(capacity: number): void {
    this.#offsets = grown(this.#offsets, capacity + 1);
  }

  #reserveBytes(extra: number): void {
    const needed = this.#byteLength + extra;
    if (needed <= this.#bytes.length) return;
    if (needed > MAX_BYTES) {
      throw new IcebergError(
        "unsupported",
        `field ${this.field.name} (id ${this.field.id}): over 2 GiB of values in one batch`,
      );
    }
    this.#bytes = grown(this.#bytes, Math.min(MAX_BYTES, Math.max(needed, this.#bytes.length * 2)));
  }
}

/** fixed(L) and uuid: L bytes per value. A uuid also takes its text form. */
export class FixedColumn extends FlatColumn<Uint8Array> {
  readonly kind = "fixed";
  readonly width: number;

  constructor(field: NestedField, arrowField: arrow.Field, capacity?: number) {
    const width = (arrowField.type as arrow.FixedSizeBinary).byteWidth;
    super(field, arrowField, capacity, (length) => new Uint8Array(length), width);
    this.width = width;
  }

  appendBytes(value: Uint8Array): void {
    if (value.length !== this.width) throw this.typeError(`${value.length} bytes`);
    if (this.length === this.capacity) this.grow();
    this.values.set(value, this.length++ * this.width);
  }

  /** A UUID in its text form (8-4-4-4-12 hex digits, or 32 without dashes), stored big-endian. */
  appendUuid(text: string): void {
    if (this.field.type !== "uuid" || !(text.length === 36 ? hasUuidDashes(text) : text.length === 32)) {
      throw this.typeError(text);
    }
    if (this.length === this.capacity) this.grow();
    const at = this.length * 16;
    for (let i = 0, digit = 0; i < text.length; i++) {
      if (text.length === 36 && (i === 8 || i === 13 || i === 18 || i === 23)) continue;
      const nibble = hexValue(text.charCodeAt(i));
      if (nibble < 0) {
        this.values.fill(0, at, at + 16);
        throw this.typeError(text);
      }
      this.values[at + (digit >> 1)]! |= digit & 1 ? nibble : nibble << 4;
      digit++;
    }
    this.length++;
  }

  appendValue(value: unknown): void {
    if (value == null) this.appendNull();
    else if (value instanceof Uint8Array) this.appendBytes(value);
    else if (typeof value === "string") this.appendUuid(value);
    else throw this.typeError(value);
  }

  protected override dropValues(length: number): void {
    this.values.fill(0, length * this.width, this.length * this.width);
  }
}

/** decimal(P, S): the unscaled value as a 128-bit two's-complement integer, little-endian. */
export class DecimalColumn extends FlatColumn<BigUint64Array> {
  readonly kind = "decimal";
  readonly #limit: bigint;

  constructor(field: NestedField, arrowField: arrow.Field, capacity?: number) {
    super(field, arrowField, capacity, (length) => new BigUint64Array(length), 2);
    this.#limit = 10n ** BigInt((arrowField.type as arrow.Decimal).precision);
  }

  /** The unscaled value: 12.34 in decimal(5, 2) is 1234n. */
  append(unscaled: bigint): void {
    if (unscaled >= this.#limit || unscaled <= -this.#limit) throw this.typeError(unscaled);
    if (this.length === this.capacity) this.grow();
    const i = this.length++ << 1;
    this.values[i] = BigInt.asUintN(64, unscaled);
    this.values[i + 1] = BigInt.asUintN(64, unscaled >> 64n);
  }

  appendValue(value: unknown): void {
    if (value == null) this.appendNull();
    else if (typeof value === "bigint") this.append(value);
    else if (typeof value === "number" && Number.isSafeInteger(value)) this.append(BigInt(value));
    else throw this.typeError(value);
  }
}

export class StructColumn extends ColumnBuilder {
  readonly kind = "struct";
  readonly children: readonly AnyColumn[];

  constructor(field: NestedField, arrowField: arrow.Field, capacity?: number) {
    super(field, arrowField, capacity);
    const arrowChildren = (arrowField.type as arrow.Struct).children;
    // one slot per row in every field
    this.children = childFields(field.type).map((child, i) => createColumn(child, arrowChildren[i]!, capacity));
  }

  /** A struct value as an object keyed by field name; missing fields are null. */
  appendValue(value: unknown): void {
    if (value == null) {
      this.appendNull();
      return;
    }
    if (typeof value !== "object" || Array.isArray(value) || value instanceof Uint8Array) throw this.typeError(value);
    if (this.length === this.capacity) this.grow();
    const record = value as Record<string, unknown>;
    for (const child of this.children) child.appendValue(record[child.field.name]);
    this.length++;
  }

  toData(): arrow.Data {
    const { length, nullCount } = this;
    const children = this.children.map((child) => child.toData());
    return arrow.makeData({ type: this.arrowField.type, length, nullCount, nullBitmap: this.nullBitmap(), children });
  }

  protected skip(): void {
    for (const child of this.children) child.appendPlaceholder();
    this.length++;
  }

  protected override dropValues(length: number): void {
    for (const child of this.children) child.truncate(length);
  }

  protected resize(): void {
    // children grow on their own
  }
}

/** list<element> (an array) and map<key, value> (a Map, or an object for string keys). */
export class RepeatedColumn extends ColumnBuilder {
  readonly kind = "repeated";
  readonly children: readonly AnyColumn[];
  #offsets = new Int32Array(this.capacity + 1);

  constructor(field: NestedField, arrowField: arrow.Field, capacity?: number) {
    super(field, arrowField, capacity);
    const isMap = typeof field.type === "object" && field.type.kind === "map";
    const itemField = arrowField.type.children[0]!;
    const arrowChildren = isMap ? (itemField.type as arrow.Struct).children : [itemField];
    this.children = childFields(field.type).map((child, i) => createColumn(child, arrowChildren[i]!));
  }

  appendValue(value: unknown): void {
    if (value == null) {
      this.appendNull();
      return;
    }
    if (this.length === this.capacity) this.grow();
    const [first, second] = this.children;
    let count = 0;
    if (second === undefined) {
      if (!Array.isArray(value)) throw this.typeError(value);
      for (const element of value) first!.appendValue(element);
      count = value.length;
    } else {
      const entries = value instanceof Map ? value.entries() : isPlainObject(value) ? Object.entries(value) : undefined;
      if (entries === undefined) throw this.typeError(value);
      for (const [key, item] of entries) {
        first!.appendValue(key);
        second.appendValue(item);
        count++;
      }
    }
    const end = this.#offsets[this.length]! + count;
    this.#offsets[++this.length] = end;
  }

  toData(): arrow.Data {
    const { length, nullCount } = this;
    const valueOffsets = this.#offsets.subarray(0, length + 1);
    const nullBitmap = this.nullBitmap();
    const items = this.children.map((child) => child.toData());
    const child =
      items.length === 1
        ? items[0]!
        : arrow.makeData({
            type: this.arrowField.type.children[0]!.type as arrow.Struct,
            length: items[0]!.length,
            children: items,
          });
    return arrow.makeData({ type: this.arrowField.type, length, nullCount, nullBitmap, valueOffsets, child });
  }

  protected skip(): void {
    this.#offsets[this.length + 1] = this.#offsets[this.length]!;
    this.length++;
  }

  protected override dropValues(length: number): void {
    for (const child of this.children) child.truncate(this.#offsets[length]!);
  }

  protected resize(capacity: number): void {
    this.#offsets = grown(this.#offsets, capacity + 1);
  }
}

export type AnyColumn =
  | BooleanColumn
  | IntColumn
  | LongColumn
  | FloatingColumn
  | BytesColumn
  | FixedColumn
  | DecimalColumn
  | StructColumn
  | RepeatedColumn;

/** The builder for a field, given its Arrow field (arrowField in arrow-schema.ts) and expected rows. */
export function createColumn(field: NestedField, arrowField: arrow.Field, capacity?: number): AnyColumn {
  const type = field.type;
  if (typeof type === "object") {
    switch (type.kind) {
      case "decimal":
        return new DecimalColumn(field, arrowField, capacity);
      case "fixed":
        return new FixedColumn(field, arrowField, capacity);
      case "struct":
        return new StructColumn(field, arrowField, capacity);
      case "list":
      case "map":
        return new RepeatedColumn(field, arrowField, capacity);
    }
  }
  if (isInt64(type)) return new LongColumn(field, arrowField, capacity);
  switch (type) {
    case "boolean":
      return new BooleanColumn(field, arrowField, capacity);
    case "int":
    case "date":
      return new IntColumn(field, arrowField, capacity);
    case "float":
    case "double":
      return new FloatingColumn(field, arrowField, capacity);
    case "string":
    case "binary":
      return new BytesColumn(field, arrowField, capacity);
    case "uuid":
      return new FixedColumn(field, arrowField, capacity);
  }
}

const utf8 = new TextEncoder();

type Grown = Uint8Array | Int32Array | Float32Array | Float64Array | BigInt64Array | BigUint64Array;

/**
 * The array with room for `length` elements, its bytes moved by ArrayBuffer.transfer (a
 * realloc, often in place) and the new bytes zeroed. The old array is detached.
 */
function grown<T extends Grown>(array: T, length: number): T {
  const Type = array.constructor as { new (buffer: ArrayBuffer): T; BYTES_PER_ELEMENT: number };
  return new Type((array.buffer as ArrayBuffer).transfer(length * Type.BYTES_PER_ELEMENT));
}

function hasUuidDashes(text: string): boolean {
  return text[8] === "-" && text[13] === "-" && text[18] === "-" && text[23] === "-";
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x57;
  return -1;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
