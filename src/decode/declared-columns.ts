// Column types a job file declares per stream (`columns: {amount: double}`). A declared type
// wins over inference: the column is created with it (when the table is, in the order of the
// job file), its type never generalizes, and a value that does not fit it is a bad message.
// Declarable are the types inference itself creates, which floe converts JSON values into, and
// `json`: a string column holding any value as its JSON text, as objects and arrays were before
// they became structs and lists; and `map`: a JSON object as map<string, V> rather than a
// struct (nested-values.ts), for objects keyed by data (ids, tags, locales) whose keys would
// otherwise each add a struct field. A map column is made by its first object, since its
// value type comes from the values. For an Avro or Protobuf stream only `json` is declarable:
// the schema types every other column.

export const DECLARABLE_TYPES = ["boolean", "long", "double", "string", "timestamptz", "json", "map"] as const;

export type DeclarableType = (typeof DECLARABLE_TYPES)[number];

/** Field name -> declared type, in the order of the job file. */
export type DeclaredColumns = ReadonlyMap<string, DeclarableType>;

export const NO_DECLARED_COLUMNS: DeclaredColumns = new Map();
