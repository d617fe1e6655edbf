// Jobs: every job with its schedule, last run and its status, next run and lag; Sync now (or
// Cancel while it runs) on the row and the other actions in its menu; importing a job file.
// Each action says what it did (a toast); Cancel asks first and shows "cancelling" until the
// run has stopped.
import type * as preact from "preact";
import { useState } from "preact/hooks";
import { api, call, type JobRow } from "../api";
import { EmptyRow, ErrorBox, fmtTime, go, RunStatus, Status, toast, useData } from "../components/ui";

export function JobsPage() {
  const list = useData(() => call(api.jobs.$get()), [], 2000);
  const [error, setError] = useState<unknown>(null);
  const [yaml, setYaml] = useState("");
  /** Jobs whose run was asked to stop and has not yet. */
  const [cancelling, setCancelling] = useState<Record<string, string>>({});
  const act = async (work: () => Promise<unknown>, done?: string) => {
    try {
      await work();
      setError(null);
      if (done) toast(done);
    } catch (err) {
      setError(err);
      toast(`Failed: ${(err as Error).message}`, "bad");
    }
    list.reload();
  };
  const cancel = (j: JobRow) => {
    if (!j.runningRun || !confirm(`Cancel the running sync of ${j.name}? It commits what it has read, then stops.`))
      return;
    const run = j.runningRun;
    setCancelling((c) => ({ ...c, [j.name]: run }));
    act(() => call(api.jobs[":name"].cancel.$post({ param: { name: j.name } })), `Cancelling the sync of ${j.name}…`);
  };
  const rows = list.data ?? [];
  return (
    <section>
      <div class="title-row">
        <h1>Jobs</h1>
        <button type="button" class="primary" onClick={() => go("#/jobs/new")}>
          New job
        </button>
      </div>
      <ErrorBox error={list.error ?? error} />
      {list.data?.length === 0 ? <GettingStarted /> : null}
      <div class="scroll">
        <table class="grid jobs" data-testid="jobs-table">
          <thead>
            <tr>
              <th>Name</th>
              <th class="wide-only">Source → destination</th>
              <th>Schedule</th>
              <th>Last run</th>
              <th class="wide-only">Next run</th>
              <th class="wide-only">Lag</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((j) => {
              const stopping = cancelling[j.name] !== undefined && cancelling[j.name] === j.runningRun;
              return (
                <tr key={j.name} data-testid={`job-${j.name}`}>
                  <td>
                    <a href={`#/jobs/${j.name}/history`}>
                      <strong>{j.name}</strong>
                    </a>
                  </td>
                  <td class="wide-only">
                    {j.source} → {j.destination}
                  </td>
                  <td>
                    <code>{j.schedule ?? "manual"}</code>
                    {j.paused ? <span class="tag warn">paused</span> : null}
                  </td>
                  <td data-testid="job-status">
                    {stopping ? (
                      <Status status="cancelling" />
                    ) : j.runningRun ? (
                      <Status status="running" />
                    ) : (
                      <RunStatus run={j.lastRun} />
                    )}
                    {j.lastRun && !j.runningRun ? <div class="muted small">{fmtTime(j.lastRun.startedAt)}</div> : null}
                  </td>
                  <td class="wide-only">{j.paused ? "—" : fmtTime(j.nextRun)}</td>
                  <td class="wide-only" title="messages behind, measured when the last run ended">
                    {j.lag ?? "—"}
                  </td>
                  <td class="actions">
                    {j.runningRun ? (
                      <button type="button" disabled={stopping} onClick={() => cancel(j)}>
                        {stopping ? "Cancelling…" : "Cancel"}
                      </button>
                    ) : (
                      <button
                        type="button"
                        class="primary"
                        onClick={() =>
                          act(
                            () => call(api.jobs[":name"].sync.$post({ param: { name: j.name } })),
                            `Sync of ${j.name} started`,
                          )
                        }
                      >
                        Sync now
                      </button>
                    )}
                    <details class="menu" data-testid="job-menu">
                      <summary aria-label={`more actions for ${j.name}`}>⋯</summary>
                      <div class="menu-items">
                        <a href={`#/jobs/${j.name}/edit`}>Edit</a>
                        <a href={`#/jobs/${j.name}/history`}>History</a>
                        <a href={`#/jobs/${j.name}/tables`}>Tables</a>
                        <a href={`#/jobs/${j.name}/plots`}>Plots</a>
                        <button
                          type="button"
                          onClick={() =>
                            act(
                              () =>
                                call(
                                  api.jobs[":name"][j.paused ? "resume" : "pause"].$post({ param: { name: j.name } }),
                                ),
                              `${j.paused ? "Resumed" : "Paused"} the schedule of ${j.name}`,
                            )
                          }
                        >
                          {j.paused ? "Resume schedule" : "Pause schedule"}
                        </button>
                        <a
                          href={api.jobs[":name"].export.$url({ param: { name: j.name } }).pathname}
                          download={`${j.name}.yaml`}
                        >
                          Export job file
                        </a>
                        <button
                          type="button"
                          class="danger"
                          onClick={() =>
                            confirm(`Delete job ${j.name}? Its tables stay.`) &&
                            act(
                              () => call(api.jobs[":name"].$delete({ param: { name: j.name } })),
                              `Deleted job ${j.name}`,
                            )
                          }
                        >
                          Delete
                        </button>
                      </div>
                    </details>
                  </td>
                </tr>
              );
            })}
            {list.data?.length === 0 ? (
              <EmptyRow columns={7}>
                No job yet: add a <a href="#/sources">source</a> and a <a href="#/destinations">destination</a>, then{" "}
                <a href="#/jobs/new">create a job</a>, or import a job file below.
              </EmptyRow>
            ) : null}
          </tbody>
        </table>
      </div>
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
                await call(api.jobs.import.$post({ json: { yaml } }));
                setYaml("");
              }, "Imported the job file")
            }
          >
            Import
          </button>
        </div>
      </details>
    </section>
  );
}

/** With no job yet: the three steps of a first pipeline, each ticked once done. */
function GettingStarted() {
  const sources = useData(() => call(api.sources.$get()), []);
  const destinations = useData(() => call(api.destinations.$get()), []);
  const tested = (list: { health?: { ok: boolean } | null }[] | undefined) => list?.some((r) => r.health?.ok) ?? false;
  const step = (done: boolean, body: preact.ComponentChildren) => (
    <li class={done ? "done" : ""}>
      <span aria-hidden="true">{done ? "✔" : "○"}</span> {body}
    </li>
  );
  return (
    <div class="card getting-started" data-testid="getting-started">
      <h2>Set up a pipeline</h2>
      <ol>
        {step(
          (sources.data?.length ?? 0) > 0,
          <>
            Add a <a href="#/sources">source</a> (a Kafka cluster) and press <em>Test these settings</em> before saving
            {tested(sources.data) ? " (tested ✔)" : ""}.
          </>,
        )}
        {step(
          (destinations.data?.length ?? 0) > 0,
          <>
            Add a <a href="#/destinations">destination</a> (an Iceberg catalog), tested the same way
            {tested(destinations.data) ? " (tested ✔)" : ""}.
          </>,
        )}
        {step(
          false,
          <>
            <a href="#/jobs/new">Create a job</a>: pick the source and destination, Discover the topics, tick the ones
            to sync; then Sync now.
          </>,
        )}
      </ol>
    </div>
  );
}
