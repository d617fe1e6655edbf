// A job's tables: schema, snapshots, data file and deletion vector counts, dead letters, and
// the first rows, read by floe itself.
import { useState } from "preact/hooks";
import { api, call, type JobTable, type Preview } from "../api";
import { ErrorBox, fmtTime, useData } from "../components/ui";
import { JobLinks } from "./history";
import { TableHealth } from "./table-health";

export function TablesPage({ job }: { job: string }) {
  const tables = useData(() => call(api.jobs[":name"].tables.$get({ param: { name: job } })), [job]);
  const stored = useData(() => call(api.jobs[":name"].$get({ param: { name: job } })), [job]);
  return (
    <section>
      <h1>Tables of {job}</h1>
      <JobLinks job={job} />
      <ErrorBox error={tables.error} />
      {tables.data?.length ? <TableHealth job={job} onMaintained={tables.reload} /> : null}
      {tables.data?.length === 0 ? <p class="muted">No table yet: the first sync creates them.</p> : null}
      {(tables.data ?? []).map((t) => (
        <TableCard key={t.table} job={job} table={t} catalog={stored.data?.destination} />
      ))}
    </section>
  );
}

function TableCard({ job, table, catalog }: { job: string; table: JobTable; catalog: string | undefined }) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    call(
      api.jobs[":name"].tables[":table"].preview.$get({
        param: { name: job, table: table.name },
        query: { limit: 20 },
      }),
    ).then(setPreview, setError);
  return (
    <div class="card" data-testid={`table-${table.name}`}>
      <h2>
        <code>{table.table}</code>
        {table.deadLetter ? <span class="tag warn">dead letters</span> : null}
      </h2>
      <p class="muted where" data-testid="where">
        {catalog ? (
          <>
            in destination <a href="#/destinations">{catalog}</a> ·{" "}
          </>
        ) : null}
        location <code>{table.location}</code>
      </p>
      <div class="stats">
        <div>
          <strong data-testid="records">{table.records}</strong> records
        </div>
        <div>
          <strong data-testid="data-files">{table.dataFiles}</strong> data files
        </div>
        <div>
          <strong data-testid="dvs">{table.deletionVectors}</strong> deletion vectors
        </div>
        <div>
          <strong>{table.snapshots.length}</strong> snapshots
        </div>
        {!table.deadLetter ? (
          <div>
            <strong data-testid="dead-letters">{table.deadLetters}</strong> dead letters
          </div>
        ) : null}
      </div>
      <details>
        <summary>Schema ({table.columns.length} columns)</summary>
        <table class="grid compact">
          <thead>
            <tr>
              <th>id</th>
              <th>column</th>
              <th>type</th>
              <th>required</th>
            </tr>
          </thead>
          <tbody>
            {table.columns.map((c) => (
              <tr key={c.id}>
                <td>{c.id}</td>
                <td>
                  <code>{c.name}</code>
                </td>
                <td>{c.type}</td>
                <td>{c.required ? "yes" : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <details>
        <summary>Snapshots</summary>
        <table class="grid compact">
          <thead>
            <tr>
              <th>at</th>
              <th>operation</th>
              <th>snapshot</th>
              <th>+data files</th>
              <th>+delete files</th>
              <th>+records</th>
              <th>data files</th>
              <th>delete files</th>
            </tr>
          </thead>
          <tbody>
            {[...table.snapshots].reverse().map((s) => (
              <tr key={s.snapshotId}>
                <td>{fmtTime(s.at)}</td>
                <td>{s.operation}</td>
                <td>
                  <code>{s.snapshotId}</code>
                </td>
                <td>{s.addedDataFiles}</td>
                <td>{s.addedDeleteFiles}</td>
                <td>{s.addedRecords}</td>
                <td>{s.totalDataFiles}</td>
                <td>{s.totalDeleteFiles}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <div class="buttons">
        <button type="button" onClick={load} data-testid="preview-button">
          Preview rows
        </button>
      </div>
      <ErrorBox error={error} />
      {preview ? (
        <div class="scroll">
          <p class="muted">
            {preview.liveRows} live rows; the first {preview.rows.length}, read by floe:
          </p>
          <table class="grid compact" data-testid="preview">
            <thead>
              <tr>
                {preview.columns.map((c: string) => (
                  <th key={c}>{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {preview.rows.map((row, i) => (
                <tr key={i}>
                  {preview.columns.map((c: string) => (
                    <td key={c}>
                      {row[c] === null || row[c] === undefined ? <span class="muted">null</span> : String(row[c])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}
