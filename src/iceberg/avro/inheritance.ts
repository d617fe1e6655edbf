// What a manifest's entries inherit from their manifest list entry (spec "Sequence Number
// Inheritance", "First Row ID Inheritance"):
// - a null snapshot_id is the manifest's added_snapshot_id;
// - null data and file sequence numbers of ADDED entries are the manifest's sequence_number
//   (and of every entry of a v1 manifest, whose sequence number is 0);
// - a data file with a null first_row_id that is not DELETED gets the manifest's first_row_id
//   plus the record counts of the files before it that also had none. A manifest without a
//   first_row_id (written before the table was upgraded to v3) assigns no row ids, and like
//   Java we then drop any stored ones.
import { EntryStatus, FileContent, type ManifestEntry, type ManifestFile } from "../spec/manifest.ts";

export function inheritFromManifestFile(
  entries: readonly ManifestEntry[],
  manifest: Pick<ManifestFile, "addedSnapshotId" | "sequenceNumber" | "firstRowId">,
): ManifestEntry[] {
  let nextRowId = manifest.firstRowId;
  return entries.map((entry) => {
    const inherited: ManifestEntry = { ...entry, snapshotId: entry.snapshotId ?? manifest.addedSnapshotId };
    if (entry.status === EntryStatus.ADDED || manifest.sequenceNumber === 0n) {
      inherited.sequenceNumber = entry.sequenceNumber ?? manifest.sequenceNumber;
      inherited.fileSequenceNumber = entry.fileSequenceNumber ?? manifest.sequenceNumber;
    }
    const file = entry.file;
    if (file.content === FileContent.DATA) {
      if (nextRowId === undefined) {
        const { firstRowId: _, ...withoutRowId } = file;
        inherited.file = withoutRowId;
      } else if (file.firstRowId === undefined && entry.status !== EntryStatus.DELETED) {
        inherited.file = { ...file, firstRowId: nextRowId };
        nextRowId += file.recordCount;
      }
    }
    return inherited;
  });
}
