// New job / edit job: name, source, destination, schedule (presets or cron, with the next
// three run times), target engines; then the streams: the source's topics with partitions and
// retained messages, each ticked or not, mode, dedup keys from the inferred columns, on_error.
// Whether upsert is allowed is the server's answer for the engines (deletion vectors).
import { useEffect, useState } from "preact/hooks";
import { get, post, put } from "../api";
import { EngineChecks, useChoices } from "../engines";
import { ErrorBox, Field, fmtTime, go, useData } from "../ui";

interface Stream {
  ticked: boolean;
  mode: "append" | "upsert";
  dedup: string[];
  onError: "dlq" | "fail" | "skip";
  format: "json" | "avro" | "protobuf";
  keyFormat: "bytes" | "avro" | "protobuf";
  /** The stream's other job-file keys (columns, ...), kept as they are on save. */
  rest: Record<string, unknown>;
}

const NEW_STREAM: Stream = {
  ticked: false,
  mode: "append",
  dedup: [],
  onError: "dlq",
  format: "json",
  keyFormat: "bytes",
  rest: {},
};

function streamOf(v: any): Stream {
  const { mode, dedup_keys, on_error, format, key_format, ...rest } = v;
  return {
    ticked: true,
    mode,
    dedup: dedup_keys ?? [],
    onError: on_error ?? "dlq",
    format: format ?? "json",
    keyFormat: key_format ?? "bytes",
    rest,
  };
}

export function JobEditor({ name }: { name?: string }) {
  const sources = useData(() => get<any[]>("/api/sources"), []);
  const destinations = useData(() => get<any[]>("/api/destinations"), []);
  const choices = useChoices();
  const [job, setJob] = useState({
    name: "",
    source: "",
    destination: "",
    schedule: "0 * * * *",
    useEngines: false,
    engines: [] as string[],
  });
  const [streams, setStreams] = useState<Record<string, Stream>>({});
  const [pattern, setPattern] = useState("");
  const [discovery, setDiscovery] = useState<any>(null);
  const [discovering, setDiscovering] = useState(false);
  const [preview, setPreview] = useState<any>(null);
  const [engineCheck, setEngineCheck] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    if (!name) return;
    get(`/api/jobs/${name}`).then((r) => {
      setJob({
        name: r.name,
        source: r.source,
        destination: r.destination,
        schedule: r.schedule ?? "",
        useEngines: Array.isArray(r.target_engines),
        engines: r.target_engines ?? [],
      });
      const s: Record<string, Stream> = {};
      for (const [topic, v] of Object.entries<any>(r.streams)) s[topic] = streamOf(v);
      setStreams(s);
      setPattern(
        Object.keys(r.streams)
          .map((t) => t.replace(/[.]/g, "\\."))
          .join("|"),
      );
    }, setError);
  }, [name]);
  useEffect(() => {
    if (!job.source && sources.data?.[0]) setJob((j) => ({ ...j, source: sources.data![0].name }));
  }, [sources.data]);
  useEffect(() => {
    if (!job.destination && destinations.data?.[0]) setJob((j) => ({ ...j, destination: destinations.data![0].name }));
  }, [destinations.data]);

  const destination = destinations.data?.find((d) => d.name === job.destination);
  const engines: string[] = job.useEngines ? job.engines : (destination?.iceberg?.target_engines ?? []);
  useEffect(() => {
    post("/api/engines/check", { target_engines: engines }).then(setEngineCheck, setError);
  }, [engines.join(",")]);
  useEffect(() => {
    if (!job.schedule) return setPreview(null);
    post("/api/schedule/preview", { schedule: job.schedule }).then(setPreview, setError);
  }, [job.schedule]);

  const discover = async () => {
    setDiscovering(true);
    try {
      const d = await post(`/api/sources/${job.source}/discover`, {
        ...(pattern ? { topic_pattern: pattern } : {}),
        ...(job.destination ? { destination: job.destination } : {}),
        ...(/^[A-Za-z0-9_]+$/.test(job.name) ? { job: job.name } : {}),
      });
      setDiscovery(d);
      setError(null);
    } catch (err) {
      setError(err);
    }
    setDiscovering(false);
  };
  const setStream = (topic: string, patch: Partial<Stream>) =>
    setStreams((s) => ({
      ...s,
      [topic]: { ...(s[topic] ?? NEW_STREAM), ...patch },
    }));

  const save = async () => {
    const body: Record<string, unknown> = {
      name: job.name,
      source: job.source,
      destination: job.destination,
      ...(job.schedule ? { schedule: job.schedule } : {}),
      ...(job.useEngines ? { target_engines: job.engines } : {}),
      streams: Object.fromEntries(
        Object.entries(streams)
          .filter(([, s]) => s.ticked)
          .map(([topic, s]) => [
            topic,
            {
              ...s.rest,
              mode: s.mode,
              ...(s.dedup.length ? { dedup_keys: s.dedup } : {}),
              on_error: s.onError,
              ...(s.format === "json" ? {} : { format: s.format }),
              ...(s.keyFormat === "bytes" ? {} : { key_format: s.keyFormat }),
            },
          ]),
      ),
    };
    try {
      if (name) await put(`/api/jobs/${name}`, { ...body, paused: false });
      else await post("/api/jobs", body);
      go("#/jobs");
    } catch (err) {
      setError(err);
    }
  };

  const topics: any[] =
    discovery?.topics ?? Object.keys(streams).map((topic) => ({ topic, partitions: [], retained: null, columns: [] }));
  const presets: { label: string; schedule: string }[] = preview?.presets ?? [];

  return (
    <section>
      <h1>{name ? `Edit job ${name}` : "New job"}</h1>
      <div class="card" data-testid="job-form">
        <div class="row">
          <Field label="Name" hint="letters, digits and _; names the namespace <name>_topics">
            <input
              name="job_name"
              value={job.name}
              disabled={!!name}
              onInput={(e) => setJob({ ...job, name: e.currentTarget.value })}
            />
          </Field>
          <Field label="Source">
            <select
              name="source"
              value={job.source}
              onChange={(e) => setJob({ ...job, source: e.currentTarget.value })}
            >
              {(sources.data ?? []).map((s) => (
                <option key={s.name}>{s.name}</option>
              ))}
            </select>
          </Field>
          <Field label="Destination">
            <select
              name="destination"
              value={job.destination}
              onChange={(e) => setJob({ ...job, destination: e.currentTarget.value })}
            >
              {(destinations.data ?? []).map((d) => (
                <option key={d.name}>{d.name}</option>
              ))}
            </select>
          </Field>
        </div>
        <div class="row">
          <Field label="Schedule" hint="five-field cron (UTC) or every 5m; empty: Sync now only">
            <input
              name="schedule"
              value={job.schedule}
              onInput={(e) => setJob({ ...job, schedule: e.currentTarget.value })}
            />
          </Field>
          <div class="presets">
            {presets.map((p) => (
              <button
                type="button"
                key={p.schedule}
                class={p.schedule === job.schedule ? "selected" : ""}
                onClick={() => setJob({ ...job, schedule: p.schedule })}
              >
                {p.label}
              </button>
            ))}
          </div>
          <div class="next-runs" data-testid="next-runs">
            {preview?.error ? (
              <span class="bad">{preview.error}</span>
            ) : preview?.next?.length ? (
              <>
                Next runs:{" "}
                {preview.next.map((t: string) => (
                  <div key={t}>{fmtTime(t)}</div>
                ))}
              </>
            ) : null}
          </div>
        </div>
        <fieldset class="engines">
          <legend>
            <label class="check">
              <input
                type="checkbox"
                name="override_engines"
                checked={job.useEngines}
                onChange={(e) => setJob({ ...job, useEngines: e.currentTarget.checked })}
              />{" "}
              Target engines of this job
            </label>
            {!job.useEngines ? <span class="muted"> (the destination's: {engines.join(", ") || "any"})</span> : null}
          </legend>
          {job.useEngines ? (
            <EngineChecks selected={job.engines} onChange={(engines) => setJob({ ...job, engines })} />
          ) : null}
          <p data-testid="delete-format">
            Delete format: <strong>{engineCheck?.deleteFormat ?? "…"}</strong>
          </p>
        </fieldset>
      </div>

      <div class="card" data-testid="streams-step">
        <h2>Streams</h2>
        <div class="row">
          <Field label="Topics matching" hint="a regular expression over the whole name; empty: all topics">
            <input name="topic_pattern" value={pattern} onInput={(e) => setPattern(e.currentTarget.value)} />
          </Field>
          <button type="button" onClick={discover} disabled={!job.source || discovering}>
            {discovering ? "Discovering…" : "Discover topics"}
          </button>
        </div>
        <table class="grid streams" data-testid="streams-table">
          <thead>
            <tr>
              <th />
              <th>Topic</th>
              <th>Partitions</th>
              <th>Retained</th>
              <th>Mode</th>
              <th>Value / key format</th>
              <th>Dedup keys (inferred columns, example)</th>
              <th>On error</th>
            </tr>
          </thead>
          <tbody>
            {topics.map((t) => {
              const s = streams[t.topic] ?? NEW_STREAM;
              const upsertOff = engineCheck && !engineCheck.upsertAllowed;
              return (
                <tr key={t.topic} data-testid={`stream-${t.topic}`} class={s.ticked ? "" : "unticked"}>
                  <td>
                    <input
                      type="checkbox"
                      name="tick"
                      checked={s.ticked}
                      onChange={(e) => setStream(t.topic, { ticked: e.currentTarget.checked })}
                    />
                  </td>
                  <td>
                    <code>{t.topic}</code>
                  </td>
                  <td>{t.partitions.length || "—"}</td>
                  <td>{t.retained ?? "—"}</td>
                  <td>
                    <select
                      name="mode"
                      value={s.mode}
                      onChange={(e) => setStream(t.topic, { mode: e.currentTarget.value as Stream["mode"] })}
                    >
                      <option value="append">append</option>
                      <option value="upsert" disabled={upsertOff}>
                        upsert
                      </option>
                    </select>
                    {upsertOff ? (
                      <div class="reason" data-testid="upsert-disabled">
                        upsert disabled: {engineCheck.reason}
                      </div>
                    ) : null}
                  </td>
                  <td>
                    <select
                      name="format"
                      value={s.format}
                      onChange={(e) => setStream(t.topic, { format: e.currentTarget.value as Stream["format"] })}
                    >
                      {(choices?.valueFormats ?? [s.format]).map((f) => (
                        <option key={f} value={f}>
                          {f}
                        </option>
                      ))}
                    </select>
                    <select
                      name="key_format"
                      value={s.keyFormat}
                      onChange={(e) => setStream(t.topic, { keyFormat: e.currentTarget.value as Stream["keyFormat"] })}
                    >
                      {(choices?.keyFormats ?? [s.keyFormat]).map((f) => (
                        <option key={f} value={f}>
                          key: {f}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td class="keys">
                    {t.columns.length === 0 && s.dedup.length ? s.dedup.join(", ") : null}
                    {t.columns.map((c: any) => (
                      <label
                        class="check key"
                        key={c.name}
                        title={`${c.type ?? "no type yet"}${c.nullable ? ", nullable" : ""}`}
                      >
                        <input
                          type="checkbox"
                          name={`key-${c.name}`}
                          checked={s.dedup.includes(c.name)}
                          onChange={(e) =>
                            setStream(t.topic, {
                              dedup: e.currentTarget.checked
                                ? [...s.dedup, c.name]
                                : s.dedup.filter((k) => k !== c.name),
                            })
                          }
                        />
                        <code>{c.name}</code> <span class="muted">{c.type}</span>{" "}
                        {c.example !== undefined ? <span class="example">{c.example}</span> : null}
                      </label>
                    ))}
                  </td>
                  <td>
                    <select
                      name="on_error"
                      value={s.onError}
                      onChange={(e) => setStream(t.topic, { onError: e.currentTarget.value as Stream["onError"] })}
                    >
                      <option value="dlq">dead-letter table</option>
                      <option value="fail">fail the sync</option>
                      <option value="skip">skip and count</option>
                    </select>
                  </td>
                </tr>
              );
            })}
            {topics.length === 0 ? (
              <tr>
                <td colSpan={8} class="muted">
                  Discover the source's topics to pick streams.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      <ErrorBox error={error} />
      <div class="buttons">
        <button type="button" class="primary" onClick={save} data-testid="save-job">
          {name ? "Save job" : "Create job"}
        </button>
        <button type="button" onClick={() => go("#/jobs")}>
          Cancel
        </button>
      </div>
    </section>
  );
}
