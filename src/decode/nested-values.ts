// JSON objects and arrays as Iceberg nested types (spec "Nested Types"):
//   object  struct: one optional field per member whose value shows a type, in the order first seen
//   array   list: an optional element whose type is the general type of the non-null elements
//           (the structs of a list's elements merge: [{a: 1}, {b: 2}] is list<struct<a, b>>)
//   object of a column declared map: map<string, V>, V the general type of the non-null member
//           values as for a list's elements, so that arbitrary keys (ids, tags) are entries,
//           not a struct field per key
// A member that is null, an empty object, or an array without a non-null element shows no type:
// it gets no field until a value shows one, as a top-level field seen only as null gets no
// column (a guess would refuse the first real value later). The structs and lists made here have
// ids 0 for what is new; the inference numbers them (fresh-ids.ts) once the whole record fits.
//
// A value fits a nested type when every member fits its field, recursively. A member the struct
// lacks evolves it (a new field, added later as an add-column with the struct as its parent);
// a member whose value does not fit its field's type (an object where a scalar was, a string in
// a long field of a column already in the table) refuses the record: NestedMismatch.
import { withFreshIds } from "../iceberg/spec/fresh-ids.ts";
import type { IcebergType, ListType, MapType, NestedField, StructType } from "../iceberg/spec/types.ts";
import type { JsonValue } from "./json-message.ts";

type Primitive = (kind: Exclude<PrimitiveKind, "huge">) => IcebergType;
type PrimitiveKind = "boolean" | "long" | "double" | "timestamptz" | "string" | "huge";

/** Ways of the primitive inference that nested values share with top-level columns. */
export interface LeafRules {
  kindOf(value: JsonValue): PrimitiveKind | "object" | "array";
  typeFor: Primitive;
  fits(type: IcebergType, value: JsonValue): boolean;
  /** The more general type within a column still open in its batch, else undefined. */
  generalized(type: IcebergType, kind: PrimitiveKind | "object" | "array"): IcebergType | undefined;
}

/** A nested member that does not fit: `path` is the dotted path below the column. */
export class NestedMismatch extends Error {
  readonly path: readonly string[];
  constructor(path: readonly string[], message: string) {
    super(message);
    this.path = path;
  }
}

export type NestedType = StructType | ListType | MapType;

export function isNested(type: IcebergType): type is NestedType {
  return typeof type === "object" && (type.kind === "struct" || type.kind === "list" || type.kind === "map");
}

/** Does the value go into a column of this nested type as it is? */
export function fitsNested(type: NestedType, value: JsonValue, rules: LeafRules): boolean {
  if (type.kind === "map") {
    // JSON object keys are strings: only a map with string keys holds them.
    if (!isObject(value) || type.key !== "string") return false;
    for (const name in value) {
      const member = value[name]!;
      if (member === null) {
        if (type.valueRequired) return false;
      } else if (!fitsAny(type.value, member, rules)) return false;
    }
    return true;
  }
  if (type.kind === "list") {
    if (!Array.isArray(value)) return false;
    for (const element of value) {
      if (element === null) {
        if (type.elementRequired) return false;
      } else if (!fitsAny(type.element, element, rules)) return false;
    }
    return true;
  }
  if (!isObject(value)) return false;
  for (const name in value) {
    const member = value[name]!;
    const field = type.fields.find((f) => f.name === name);
    if (member === null) {
      if (field?.required) return false;
      continue;
    }
    if (field === undefined || !fitsAny(field.type, member, rules)) return false;
  }
  for (const field of type.fields) {
    if (field.required && (!Object.hasOwn(value, field.name) || value[field.name] === null)) return false;
  }
  return true;
}

function fitsAny(type: IcebergType, value: JsonValue, rules: LeafRules): boolean {
  return isNested(type) ? fitsNested(type, value, rules) : rules.fits(type, value);
}

/** The type a new field gets from its first value, new ids 0; undefined when it shows none. */
export function shapeOf(value: JsonValue, rules: LeafRules, path: readonly string[] = []): IcebergType | undefined {
  const kind = rules.kindOf(value);
  if (kind === "huge") throw new NestedMismatch(path, "value type integer beyond the long range");
  if (kind !== "object" && kind !== "array") return rules.typeFor(kind);
  if (kind === "object") {
    const struct = evolved({ kind: "struct", fields: [] }, value, rules, true, path);
    return struct.kind === "struct" && struct.fields.length === 0 ? undefined : struct;
  }
  let element: IcebergType | undefined;
  for (const item of value as JsonValue[]) {
    if (item === null) continue;
    if (element === undefined) element = shapeOf(item, rules, path);
    else if (!fitsAny(element, item, rules)) element = evolvedAny(element, item, rules, true, path);
  }
  return element === undefined ? undefined : { kind: "list", elementId: 0, element, elementRequired: false };
}

/**
 * The map<string, V> a column declared map gets from its first object, new ids 0; undefined
 * while no member value shows a type. Throws NestedMismatch for a value that is no object.
 */
export function mapShapeOf(value: JsonValue, rules: LeafRules, path: readonly string[] = []): MapType | undefined {
  if (!isObject(value)) throw new NestedMismatch(path, `type map, value type ${rules.kindOf(value)}`);
  let element: IcebergType | undefined;
  for (const name in value) {
    const item = value[name]!;
    if (item === null) continue;
    if (element === undefined) element = shapeOf(item, rules, path);
    else if (!fitsAny(element, item, rules)) element = evolvedAny(element, item, rules, true, path);
  }
  return element === undefined
    ? undefined
    : { kind: "map", keyId: 0, key: "string", valueId: 0, value: element, valueRequired: false };
}

/**
 * The nested type widened to hold the value: new fields (id 0) for the members it lacks and, in
 * a column still `open` in its batch, more general leaf types. Throws NestedMismatch.
 */
export function evolved(
  type: NestedType,
  value: JsonValue,
  rules: LeafRules,
  open: boolean,
  path: readonly string[],
): NestedType {
  if (type.kind === "map") {
    if (!isObject(value) || type.key !== "string") throw mismatchAt(path, type, rules.kindOf(value));
    let element = type.value;
    for (const name in value) {
      const item = value[name]!;
      if (item === null) {
        if (type.valueRequired) throw new NestedMismatch(path, "a null value in a map of required values");
      } else if (!fitsAny(element, item, rules)) element = evolvedAny(element, item, rules, open, path);
    }
    return element === type.value ? type : { ...type, value: element };
  }
  if (type.kind === "list") {
    if (!Array.isArray(value)) throw mismatchAt(path, type, rules.kindOf(value));
    let element = type.element;
    for (const item of value) {
      if (item === null) {
        if (type.elementRequired) throw new NestedMismatch(path, "a null element in a list of required elements");
      } else if (!fitsAny(element, item, rules)) element = evolvedAny(element, item, rules, open, path);
    }
    return element === type.element ? type : { ...type, element };
  }
  if (!isObject(value)) throw mismatchAt(path, type, rules.kindOf(value));
  let fields: NestedField[] | undefined;
  for (const name in value) {
    const member = value[name]!;
    if (member === null) continue;
    const current = fields ?? type.fields;
    const index = current.findIndex((f) => f.name === name);
    const field = current[index];
    const at = [...path, name];
    if (field === undefined) {
      const lower = name.toLowerCase();
      const twin = current.find((f) => f.name.toLowerCase() === lower);
      if (twin !== undefined) {
        throw new NestedMismatch(at, `field ${JSON.stringify(twin.name)} differs only in case`);
      }
      const shape = shapeOf(member, rules, at);
      if (shape === undefined) continue;
      fields = [...current, { id: 0, name, required: false, type: shape }];
    } else if (!fitsAny(field.type, member, rules)) {
      fields = [...current];
      fields[index] = { ...field, type: evolvedAny(field.type, member, rules, open, at) };
    }
  }
  return fields === undefined ? type : { kind: "struct", fields };
}

function evolvedAny(
  type: IcebergType,
  value: JsonValue,
  rules: LeafRules,
  open: boolean,
  path: readonly string[],
): IcebergType {
  if (isNested(type)) return evolved(type, value, rules, open, path);
  const kind = rules.kindOf(value);
  const general = open ? rules.generalized(type, kind) : undefined;
  if (general === undefined || !rules.fits(general, value)) throw mismatchAt(path, type, kind);
  return general;
}

function mismatchAt(path: readonly string[], type: IcebergType, kind: string): NestedMismatch {
  const t = typeof type === "object" ? type.kind : type;
  return new NestedMismatch(path, `type ${t}, value type ${kind === "huge" ? "integer beyond the long range" : kind}`);
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A field new inside an existing struct column, with the names of the structs above it. */
export interface NestedAddition {
  readonly parent: readonly string[];
  readonly field: NestedField;
}

/**
 * Numbers the new fields (id 0) of an evolved type after `lastId`, each new field before its
 * children, and lists them with their parents in that order (the order the commit adds them).
 */
export function numberNewFields(
  type: IcebergType,
  parent: readonly string[],
  lastId: number,
  additions: NestedAddition[],
): { type: IcebergType; lastId: number } {
  if (typeof type !== "object") return { type, lastId };
  if (type.kind === "list") {
    const inner = numberNewFields(type.element, parent, lastId, additions);
    return { type: { ...type, element: inner.type }, lastId: inner.lastId };
  }
  if (type.kind === "map") {
    const inner = numberNewFields(type.value, parent, lastId, additions);
    return { type: { ...type, value: inner.type }, lastId: inner.lastId };
  }
  if (type.kind !== "struct") return { type, lastId };
  let id = lastId;
  const fields = type.fields.map((field) => {
    if (field.id !== 0) {
      const inner = numberNewFields(field.type, [...parent, field.name], id, additions);
      id = inner.lastId;
      return { ...field, type: inner.type };
    }
    const own = ++id;
    const fresh = withFreshIds(field.type, own);
    id = fresh.lastId;
    const numbered = { ...field, id: own, type: fresh.type };
    additions.push({ parent, field: numbered });
    return numbered;
  });
  return { type: { kind: "struct", fields }, lastId: id };
}
