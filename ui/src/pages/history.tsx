// Job history: the job's consumer group (group-members.tsx), the runs with start, duration,
// status, messages and bytes; a run's commit report per table, and while it runs, its progress
// per partition.
import { useState } from "preact/hooks";
import { api, call } from "../api";
import { ErrorBox, fmtBytes, fmtDuration, fmtTime, RunStatus, Status, toast, useData } from "../components/ui";
import { fmtSeconds, overallProgress } from "../logic";
import { GroupMembers } from "./group-members";

export function HistoryPage({ job }: { job: string }) {
  const runs = useData(() => call(api.jobs[":name"].runs.$get({ param: { name: job } })), [job], 2000);
  return (
    <section>
      <h1>History of {job}</h1>
      <JobLinks job={job} />
      <GroupMembers job={job} />
      <ErrorBox error={runs.error} />
      <table class="grid" data-testid="runs-table">
        <thead>
          <tr>
            <th>Run</th>
            <th>Start</th>
            <th>Duration</th>
            <th>Status</th>
            <th class="narrow-hide">Trigger</th>
            <th>Messages</th>
            <th>Rows per stream</th>
            <th class="narrow-hide">Bytes</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {(runs.data ?? []).map((r) => (
            <tr key={r.id} data-testid="run-row">
              <td>
                <a href={`#/runs/${r.id}`}>
                  <code>{r.id.slice(0, 13)}…</code>
                </a>
              </td>
              <td>{fmtTime(r.startedAt)}</td>
              <td>{fmtDuration(r.durationMs)}</td>
              <td>
                <RunStatus run={r} />
              </td>
              <td class="narrow-hide">{r.trigger}</td>
              <td>{r.messages}</td>
              <td class="per-stream" data-testid="per-stream">
                {r.tables.length === 0 ? (
                  <span class="muted">—</span>
                ) : (
                  r.tables.map((t) => (
                    <div key={t.table} title={`${t.messages} messages read into ${t.table}`}>
                      <code>{t.table.split(".").pop()}</code> {t.records}
                      {t.deadLetters ? <span class="tag warn">{t.deadLetters} dead</span> : null}
                    </div>
                  ))
                )}
              </td>
              <td class="narrow-hide">{fmtBytes(r.bytes)}</td>
              <td class="bad">{r.error ?? ""}</td>
            </tr>
          ))}
          {runs.data?.length === 0 ? (
            <tr>
              <td colSpan={9} class="muted">
                No run yet: Sync now on the Jobs page.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </section>
  );
}

/** The whole run: read of planned, rate, and the time left at that rate. */
function Overall(props: { progress: Parameters<typeof overallProgress>[0]; startedAt: string }) {
  const o = overallProgress(props.progress, new Date(props.startedAt).getTime(), Date.now());
  return (
    <div class="progress overall" data-testid="overall-progress">
      <strong>All partitions</strong>
      <div class="bar">
        <div style={{ width: `${o.percent}%` }} />
      </div>
      <span>
        {o.read} of {o.planned} ({Math.floor(o.percent)}%) · {Math.round(o.perSecond)} msg/s · ETA{" "}
        {o.etaSeconds === undefined ? "—" : fmtSeconds(o.etaSeconds)}
      </span>
    </div>
  );
}

export function JobLinks({ job }: { job: string }) {
  return (
    <nav class="sub">
      <a href={`#/jobs/${job}/history`}>History</a> · <a href={`#/jobs/${job}/tables`}>Tables</a> ·{" "}
      <a href={`#/jobs/${job}/plots`}>Plots</a> · <a href={`#/jobs/${job}/edit`}>Edit</a>
    </nav>
  );
}

export function RunPage({ id }: { id: string }) {
  const run = useData(() => call(api.runs[":id"].$get({ param: { id } })), [id], 1000);
  const r = run.data;
  const [cancelling, setCancelling] = useState(false);
  const cancel = async (job: string) => {
    if (!confirm(`Cancel this sync of ${job}? It commits what it has read, then stops.`)) return;
    setCancelling(true);
    try {
      await call(api.jobs[":name"].cancel.$post({ param: { name: job } }));
      toast(`Cancelling the sync of ${job}…`);
    } catch (err) {
      setCancelling(false);
      toast(`Failed: ${(err as Error).message}`, "bad");
    }
  };
  return (
    <section>
      <h1>
        {r ? `Run of ${r.job}` : "Run"} <code class="run-id">{id}</code>
      </h1>
      <ErrorBox error={run.error} />
      {r ? (
        <>
          <JobLinks job={r.job} />
          <p>
            {cancelling && r.status === "running" ? <Status status="cancelling" /> : <RunStatus run={r} />} · started{" "}
            {fmtTime(r.startedAt)} · {fmtDuration(r.durationMs)} · {r.messages} messages · {fmtBytes(r.bytes)} ·{" "}
            <a href={`#/runs/${id}/log`} data-testid="open-log">
              log
            </a>
          </p>
          {r.status === "running" ? (
            <button type="button" disabled={cancelling} onClick={() => cancel(r.job)}>
              {cancelling ? "Cancelling…" : "Cancel this run"}
            </button>
          ) : null}
          {r.error ? <div class="error">{r.error}</div> : null}
          {r.status === "running" && r.progress.length ? (
            <div class="card" data-testid="live-progress">
              <h2>Progress</h2>
              <Overall progress={r.progress} startedAt={r.startedAt} />
              {r.progress.map((p) => {
                const stop = Number(p.stopOffset);
                const next = Number(p.nextOffset);
                const start = next - p.messages;
                const pct = stop > start ? Math.min(100, ((next - start) / (stop - start)) * 100) : 100;
                return (
                  <div class="progress" key={`${p.topic}:${p.partition}`}>
                    <span>
                      {p.topic} [{p.partition}]
                    </span>
                    <div class="bar">
                      <div style={{ width: `${pct}%` }} />
                    </div>
                    <span>
                      {p.messages} read, offset {p.nextOffset} of {p.stopOffset}
                    </span>
                  </div>
                );
              })}
            </div>
          ) : null}
          <h2>Commit report</h2>
          <table class="grid" data-testid="commit-report">
            <thead>
              <tr>
                <th>Table</th>
                <th>Mode</th>
                <th>Messages</th>
                <th>Data files</th>
                <th>DVs</th>
                <th>Records added</th>
                <th>Positions deleted</th>
                <th>Dead letters</th>
                <th>Snapshot</th>
              </tr>
            </thead>
            <tbody>
              {(r.report?.tables ?? []).map((t) => (
                <tr key={t.table} data-testid={`report-${t.table.split(".").pop()}`}>
                  <td>
                    <code>{t.table}</code>
                  </td>
                  <td>{t.mode}</td>
                  <td>{t.messagesRead}</td>
                  <td data-col="dataFiles">{t.dataFilesAdded}</td>
                  <td data-col="dvs">{t.deletionVectorsAdded}</td>
                  <td data-col="records">{t.recordsAdded}</td>
                  <td data-col="deleted">{t.positionsDeleted}</td>
                  <td data-col="deadLetters">{t.deadLetters}</td>
                  <td>
                    <code>{typeof t["snapshotId"] === "string" ? t["snapshotId"] : "—"}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
