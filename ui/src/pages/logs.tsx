// A run's log: level colours, text search, errors only, download.
import { useState } from "preact/hooks";
import { api, call } from "../api";
import { ErrorBox, useData } from "../components/ui";
import { JobLinks } from "./history";

export function LogPage({ id }: { id: string }) {
  const [q, setQ] = useState("");
  const [errorsOnly, setErrorsOnly] = useState(false);
  const [debug, setDebug] = useState(false);
  const query = { ...(q ? { q } : {}), ...(errorsOnly ? { errors: "true" as const } : {}) };
  const logs = useData(
    () => call(api.runs[":id"].logs.$get({ param: { id }, query })),
    [id, query.q, query.errors],
    2000,
  );
  const run = useData(() => call(api.runs[":id"].$get({ param: { id } })), [id]);
  const lines = (logs.data ?? []).filter((l) => debug || l.level !== "debug");
  return (
    <section>
      <h1>
        Log of {run.data ? `${run.data.job}'s run` : "run"}{" "}
        <a href={`#/runs/${id}`}>
          <code class="run-id">{id}</code>
        </a>
      </h1>
      {run.data ? <JobLinks job={run.data.job} /> : null}
      <div class="row toolbar">
        <input
          type="search"
          name="q"
          placeholder="search the log"
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
        <label class="check">
          <input
            type="checkbox"
            name="errors"
            checked={errorsOnly}
            onChange={(e) => setErrorsOnly(e.currentTarget.checked)}
          />{" "}
          errors and warnings only
        </label>
        <label class="check">
          <input type="checkbox" name="debug" checked={debug} onChange={(e) => setDebug(e.currentTarget.checked)} />{" "}
          debug lines
        </label>
        <a class="button" href={api.runs[":id"]["log.txt"].$url({ param: { id } }).pathname} download>
          Download
        </a>
      </div>
      <ErrorBox error={logs.error} />
      <pre class="log" data-testid="log">
        {lines.map((l) => (
          <div key={l.seq} class={`level-${l.level}`}>
            <span class="at">{l.at.slice(11, 23)}</span> <span class="lvl">{l.level.toUpperCase().padEnd(5)}</span>{" "}
            {l.msg}
          </div>
        ))}
        {lines.length === 0 ? <div class="muted">no line</div> : null}
      </pre>
    </section>
  );
}
