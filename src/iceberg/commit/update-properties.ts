// Table properties (spec "Table Metadata": properties). A metadata-only commit: set and
// removal are re-applied on top of the refreshed table on retry, last writer wins per key.

import { IcebergError } from "../errors.ts";
import type { TableUpdate } from "../spec/table-update.ts";
import type { Table } from "../table.ts";
import { commitWithRetries } from "./retry.ts";

export function commitProperties(table: Table, updates: Record<string, string>, removals: string[]): Promise<void> {
  const overlap = removals.filter((key) => key in updates);
  if (overlap.length > 0) {
    throw new IcebergError("validation", `${table.name}: properties both set and removed: ${overlap.join(", ")}`);
  }
  return commitWithRetries(table, async (base) => {
    const changes: TableUpdate[] = [];
    if (Object.keys(updates).length > 0) changes.push({ action: "set-properties", updates });
    if (removals.length > 0) changes.push({ action: "remove-properties", removals });
    if (changes.length === 0) return undefined;
    return { requirements: [{ type: "assert-table-uuid", uuid: base.tableUuid }], updates: changes };
  });
}
