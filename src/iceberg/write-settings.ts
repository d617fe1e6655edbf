// How a writer's data files are cut and compressed: the target file size and the Parquet codec.
// One rule for both, the one rule of every write: what the writer asks for (the job file, when it
// says it) wins, else the table's property, else the property's default. What the writer asks
// for is also to be recorded on the table as its property, so that other engines' writes and
// compactions (Spark's rewrite_data_files reads write.target-file-size-bytes) make files of the
// same size and codec as floe's.
import {
  type ParquetCodec,
  propertyValue,
  type TableProperty,
  WRITE_PARQUET_COMPRESSION_CODEC,
  WRITE_TARGET_FILE_SIZE_BYTES,
} from "./spec/table-properties.ts";

export interface WriteSettings {
  readonly targetFileSizeBytes: number;
  readonly compression: ParquetCodec;
}

/** What a writer asks for: each setting, or undefined where it leaves the choice to the table. */
export type RequestedWriteSettings = { readonly [K in keyof WriteSettings]?: WriteSettings[K] | undefined };

export interface ResolvedWriteSettings {
  readonly settings: WriteSettings;
  /** The properties to set for the table to say what was asked for: empty when it says so already. */
  readonly changes: Record<string, string>;
}

/**
 * The settings of a write to a table with `properties`: each of `requested` that is set, else
 * the table's property, else its default. `table` names the table in the error of a property
 * floe refuses (a codec it does not write) that the request does not override.
 */
export function resolveWriteSettings(
  requested: RequestedWriteSettings,
  properties: Readonly<Record<string, string>>,
  table?: string,
): ResolvedWriteSettings {
  const changes: Record<string, string> = {};
  const resolve = <T>(property: TableProperty<T>, asked: T | undefined): T => {
    if (asked === undefined) return propertyValue(properties, property, table);
    if (properties[property.key] === undefined || recorded(properties, property) !== asked) {
      changes[property.key] = String(asked);
    }
    return asked;
  };
  const settings: WriteSettings = {
    targetFileSizeBytes: resolve(WRITE_TARGET_FILE_SIZE_BYTES, requested.targetFileSizeBytes),
    compression: resolve(WRITE_PARQUET_COMPRESSION_CODEC, requested.compression),
  };
  return { settings, changes };
}

/** The table's value of a property that is set; undefined for one floe refuses: what is asked replaces it. */
function recorded<T>(properties: Readonly<Record<string, string>>, property: TableProperty<T>): T | undefined {
  try {
    return propertyValue(properties, property);
  } catch {
    return undefined;
  }
}

/** The table properties that record `settings`: those of a table floe creates. */
export function writeSettingsProperties(settings: WriteSettings): Record<string, string> {
  return {
    [WRITE_PARQUET_COMPRESSION_CODEC.key]: settings.compression,
    [WRITE_TARGET_FILE_SIZE_BYTES.key]: String(settings.targetFileSizeBytes),
  };
}
