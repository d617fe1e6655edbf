// A job's tables' health (files, average file size, deleted-row ratio, snapshots) and its last
// maintenance pass, with "Maintain now": a pass over the job's tables under the job's lock.
import { useState } from "preact/hooks";
import { api, call, type MaintenancePass } from "../api";
import { ErrorBox, fmtTime, useData } from "../components/ui";

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function TableHealth({ job, onMaintained }: { job: string; onMaintained: () => void }) {
  const health = useData(() => call(api.jobs[":name"].health.$get({ param: { name: job } })), [job]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<MaintenancePass | null>(null);
  const maintain = async () => {
    setBusy(true);
    setError(null);
    try {
      setDone(await call(api.jobs[":name"].maintain.$post({ param: { name: job } })));
      health.reload();
      onMaintained();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const last = health.data?.lastMaintenance;
  return (
    <div class="card" data-testid="table-health">
      <h2>Health</h2>
      <ErrorBox error={health.error ?? error} />
      <table class="grid compact">
        <thead>
          <tr>
            <th>table</th>
            <th>data files</th>
            <th>average file size</th>
            <th>deleted rows</th>
            <th>delete files</th>
            <th>snapshots</th>
            <th>manifests</th>
          </tr>
        </thead>
        <tbody>
          {(health.data?.tables ?? []).map((t) => (
            <tr key={t.table} data-testid={`health-${t.table}`}>
              <td>
                <code>{t.table}</code>
              </td>
              <td data-testid="health-data-files">{t.dataFiles}</td>
              <td>{size(t.averageFileBytes)}</td>
              <td>{(t.deletedRatio * 100).toFixed(1)}%</td>
              <td>{t.deleteFiles}</td>
              <td data-testid="health-snapshots">{t.snapshots}</td>
              <td>{t.manifests}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted" data-testid="last-maintenance">
        {last ? `Last maintenance: ${fmtTime(last.at)} (${last.outcome})` : "Not maintained yet."}
      </p>
      <div class="buttons">
        <button type="button" onClick={maintain} disabled={busy} data-testid="maintain-button">
          {busy ? "Maintaining…" : "Maintain now"}
        </button>
      </div>
      {done ? (
        <p class="muted" data-testid="maintain-result">
          {done.outcome}:{" "}
          {done.tables
            .map(
              (t) =>
                `${t.table}: ${t.compaction?.dataFiles ?? 0} files compacted, ${t.snapshots?.expired ?? 0} snapshots expired, ${t.orphans?.files ?? 0} orphans removed`,
            )
            .join("; ")}
        </p>
      ) : null}
    </div>
  );
}
