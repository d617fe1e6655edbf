// Field ids for a nested type added to a schema (spec "Schemas": every field, list element and
// map key and value has an id unique in the table, taken after its last-column-id). Ids are
// given depth first, a struct's own fields before their children, as Java's TypeUtil does, so
// that a writer and a catalog that both number a new column agree on its ids.
import { type IcebergType, isPrimitive } from "./types.ts";

/** The type with fresh ids after `lastId` for everything nested in it, and the last id given. */
export function withFreshIds(type: IcebergType, lastId: number): { type: IcebergType; lastId: number } {
  if (isPrimitive(type)) return { type, lastId };
  switch (type.kind) {
    case "struct": {
      let id = lastId + type.fields.length;
      const fields = type.fields.map((f, i) => {
        const inner = withFreshIds(f.type, id);
        id = inner.lastId;
        return { ...f, id: lastId + 1 + i, type: inner.type };
      });
      return { type: { kind: "struct", fields }, lastId: id };
    }
    case "list": {
      const inner = withFreshIds(type.element, lastId + 1);
      return { type: { ...type, elementId: lastId + 1, element: inner.type }, lastId: inner.lastId };
    }
    case "map": {
      const key = withFreshIds(type.key, lastId + 2);
      const value = withFreshIds(type.value, key.lastId);
      return {
        type: { ...type, keyId: lastId + 1, valueId: lastId + 2, key: key.type, value: value.type },
        lastId: value.lastId,
      };
    }
  }
}
