// Jobs: every job with its schedule, last run and its status, next run and lag, and the
// actions on it; importing a job file.
import { useState } from "preact/hooks";
import { del, get, post } from "../api";
import { EmptyRow, ErrorBox, fmtTime, go, Status, useData } from "../ui";

export function JobsPage() {
  const list = useData(() => get<any[]>("/api/jobs"), [], 2000);
  const [error, setError] = useState<unknown>(null);
  const [yaml, setYaml] = useState("");
  const act = async (work: () => Promise<unknown>) => {
    try {
      await work();
      setError(null);
    } catch (err) {
      setError(err);
    }
    list.reload();
  };
  return (
    <section>
      <div class="title-row">
        <h1>Jobs</h1>
        <button type="button" class="primary" onClick={() => go("#/jobs/new")}>
          New job
        </button>
      </div>
      <ErrorBox error={list.error ?? error} />
      <table class="grid" data-testid="jobs-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Source</th>
            <th>Destination</th>
            <th>Schedule</th>
            <th>Last run</th>
            <th>Status</th>
            <th>Next run</th>
            <th>Lag</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((j) => (
            <tr key={j.name} data-testid={`job-${j.name}`}>
              <td>
                <a href={`#/jobs/${j.name}/history`}>
                  <strong>{j.name}</strong>
                </a>
              </td>
              <td>{j.source}</td>
              <td>{j.destination}</td>
              <td>
                <code>{j.schedule ?? "manual"}</code>
                {j.paused ? <span class="tag warn">paused</span> : null}
              </td>
              <td>{fmtTime(j.lastRun?.startedAt)}</td>
              <td data-testid="job-status">
                {j.runningRun ? <Status status="running" /> : <Status status={j.lastRun?.status} />}
              </td>
              <td>{j.paused ? "—" : fmtTime(j.nextRun)}</td>
              <td title="messages to read at the last run's start">{j.lag ?? "—"}</td>
              <td class="actions">
                <button type="button" class="primary" onClick={() => act(() => post(`/api/jobs/${j.name}/sync`))}>
                  Sync now
                </button>
                {j.paused ? (
                  <button type="button" onClick={() => act(() => post(`/api/jobs/${j.name}/resume`))}>
                    Resume
                  </button>
                ) : (
                  <button type="button" onClick={() => act(() => post(`/api/jobs/${j.name}/pause`))}>
                    Pause
                  </button>
                )}
                <button
                  type="button"
                  disabled={!j.runningRun}
                  onClick={() => act(() => post(`/api/jobs/${j.name}/cancel`))}
                >
                  Cancel
                </button>
                <button type="button" onClick={() => go(`#/jobs/${j.name}/edit`)}>
                  Edit
                </button>
                <a class="button" href={`#/jobs/${j.name}/tables`}>
                  Tables
                </a>
                <a class="button" href={`#/jobs/${j.name}/plots`}>
                  Plots
                </a>
                <a class="button" href={`/api/jobs/${j.name}/export`} download={`${j.name}.yaml`}>
                  Export
                </a>
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    confirm(`Delete job ${j.name}? Its tables stay.`) && act(() => del(`/api/jobs/${j.name}`))
                  }
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {list.data?.length === 0 ? (
            <EmptyRow columns={9}>No job yet: create one, or import a job file below.</EmptyRow>
          ) : null}
        </tbody>
      </table>
      <details class="card">
        <summary>Import a job file</summary>
        <p class="muted">Its source and destination are created beside the job, named after it.</p>
        <textarea
          rows={10}
          value={yaml}
          placeholder="name: my_job&#10;source:&#10;  kafka: ..."
          onInput={(e) => setYaml(e.currentTarget.value)}
        />
        <div class="buttons">
          <button
            type="button"
            onClick={() =>
              act(async () => {
                await post("/api/jobs/import", { yaml });
                setYaml("");
              })
            }
          >
            Import
          </button>
        </div>
      </details>
    </section>
  );
}
