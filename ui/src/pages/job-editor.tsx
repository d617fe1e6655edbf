// New job / edit job: name, source, destination, schedule (presets or cron, with the next
// three run times), target engines; then the streams: the source's topics with partitions and
// retained messages, each ticked or not, mode, dedup keys from the inferred columns, on_error.
// Whether upsert is allowed is the server's answer for the engines (deletion vectors).
import { useEffect, useState } from "preact/hooks";
import {
  type DestinationShown,
  type Discovery,
  type EngineCheck,
  get,
  type JobShown,
  post,
  put,
  type SchedulePreview,
} from "../api";
import { EngineChecks, useChoices } from "../engines";
import { NEW_STREAM, type Stream, streamBody, streamOf } from "../logic";
import { ErrorBox, Field, FormErrors, fmtTime, go, toast, useData } from "../ui";

type Column = Discovery["topics"][number]["columns"][number];

interface JobForm {
  name: string;
  source: string;
  destination: string;
  schedule: string;
  useEngines: boolean;
  engines: string[];
}

const keyList = (text: string) =>
  text
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);

/** The editor once the job (when editing), the sources and the destinations are loaded: the selects then always hold the job's own values. */
export function JobEditor({ name }: { name?: string }) {
  const sources = useData(() => get("/api/sources"), []);
  const destinations = useData(() => get("/api/destinations"), []);
  const stored = useData(() => (name ? get(`/api/jobs/${name}`) : Promise.resolve(null)), [name]);
  const error = sources.error ?? destinations.error ?? stored.error;
  if (error) return <ErrorBox error={error} />;
  if (!sources.data || !destinations.data || stored.data === undefined) return <p class="muted">Loading…</p>;
  return (
    <EditorForm
      {...(name ? { name } : {})}
      sources={sources.data.map((s) => s.name)}
      destinations={destinations.data}
      stored={stored.data}
    />
  );
}

function EditorForm(props: {
  name?: string;
  sources: string[];
  destinations: DestinationShown[];
  stored: JobShown | null;
}) {
  const { name, stored } = props;
  const choices = useChoices();
  const [job, setJob] = useState<JobForm>(() =>
    stored
      ? {
          name: stored.name,
          source: stored.source,
          destination: stored.destination,
          schedule: stored.schedule ?? "",
          useEngines: Array.isArray(stored["target_engines"]),
          engines: (stored["target_engines"] as string[] | undefined) ?? [],
        }
      : {
          name: "",
          source: props.sources[0] ?? "",
          destination: props.destinations[0]?.name ?? "",
          schedule: "0 * * * *",
          useEngines: false,
          engines: [],
        },
  );
  const [streams, setStreams] = useState<Record<string, Stream>>(() =>
    Object.fromEntries(Object.entries(stored?.streams ?? {}).map(([topic, v]) => [topic, streamOf(v)])),
  );
  // The job's own topic_pattern when it has one (kept as written); else the filter of Discover only.
  const storedPattern = typeof stored?.["topic_pattern"] === "string" ? (stored["topic_pattern"] as string) : null;
  const [pattern, setPattern] = useState(storedPattern ?? "");
  const [discovery, setDiscovery] = useState<Discovery | null>(null);
  const [discovering, setDiscovering] = useState(false);
  const [preview, setPreview] = useState<SchedulePreview | null>(null);
  const [engineCheck, setEngineCheck] = useState<EngineCheck | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [discoverError, setDiscoverError] = useState<unknown>(null);
  const [streamsIssue, setStreamsIssue] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const destination = props.destinations.find((d) => d.name === job.destination);
  const destinationEngines = ((destination?.iceberg as { target_engines?: string[] } | undefined)?.target_engines ??
    []) as string[];
  const engines: string[] = job.useEngines ? job.engines : destinationEngines;
  useEffect(() => {
    post("/api/engines/check", { target_engines: engines }).then(setEngineCheck, setError);
  }, [engines.join(",")]);
  useEffect(() => {
    if (!job.schedule) {
      setPreview(null);
      return;
    }
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
      setDiscoverError(null);
    } catch (err) {
      setDiscoverError(err);
    }
    setDiscovering(false);
  };
  const setStream = (topic: string, patch: Partial<Stream>) =>
    setStreams((s) => ({
      ...s,
      [topic]: { ...(s[topic] ?? NEW_STREAM), ...patch },
    }));

  const save = async () => {
    const ticked = Object.entries(streams).filter(([, s]) => s.ticked);
    if (ticked.length === 0 && storedPattern === null) {
      setStreamsIssue("tick at least one topic to sync (Discover topics lists them)");
      setError(null);
      document.querySelector<HTMLElement>('[data-testid="streams-table"]')?.focus();
      return;
    }
    setStreamsIssue(null);
    const { secrets_set: _secrets, health: _health, ...kept } = (stored ?? {}) as Record<string, unknown>;
    const body: Record<string, unknown> = {
      ...kept,
      name: job.name,
      source: job.source,
      destination: job.destination,
      streams: Object.fromEntries(ticked.map(([topic, s]) => [topic, streamBody(s)])),
    };
    if (job.schedule) body["schedule"] = job.schedule;
    else delete body["schedule"];
    if (job.useEngines) body["target_engines"] = job.engines;
    else delete body["target_engines"];
    if (storedPattern !== null) {
      if (pattern) body["topic_pattern"] = pattern;
      else delete body["topic_pattern"];
    }
    setSaving(true);
    try {
      if (name) await put(`/api/jobs/${name}`, body);
      else await post("/api/jobs", body);
      toast(name ? `Saved job ${name}` : `Created job ${job.name}`);
      go("#/jobs");
    } catch (err) {
      setError(err);
    }
    setSaving(false);
  };

  type Row = { topic: string; partitions: number | null; retained: number | null; columns: Column[] };
  const discovered = new Map((discovery?.topics ?? []).map((t) => [t.topic, t]));
  const topics: Row[] = [
    ...(discovery?.topics ?? []).map((t) => ({
      topic: t.topic,
      partitions: t.partitions.length,
      retained: t.retained,
      columns: t.columns,
    })),
    // The job's streams that Discover did not list (another pattern, or not run yet) stay editable.
    ...Object.keys(streams)
      .filter((topic) => !discovered.has(topic))
      .map((topic) => ({ topic, partitions: null, retained: null, columns: [] })),
  ];
  const presets = preview?.presets ?? [];
  const patternHint =
    storedPattern !== null
      ? "the job's topic_pattern: it also syncs every topic this matches (a regular expression over the whole name)"
      : "filters what Discover lists (a regular expression over the whole name); empty: all topics. The job syncs the topics you tick.";
  return (
    <section>
      <h1>{name ? `Edit job ${name}` : "New job"}</h1>
      <FormErrors error={error}>
        <div class="card" data-testid="job-form">
          <div class="row">
            <Field
              label="Name"
              name="job_name"
              path="name"
              hint="letters, digits and _; names the namespace <name>_topics"
            >
              <input
                name="job_name"
                value={job.name}
                disabled={!!name}
                onInput={(e) => setJob({ ...job, name: e.currentTarget.value })}
              />
            </Field>
            <Field label="Source" path="source">
              <select
                name="source"
                value={job.source}
                onChange={(e) => setJob({ ...job, source: e.currentTarget.value })}
              >
                {props.sources.map((s) => (
                  <option key={s} value={s} selected={s === job.source}>
                    {s}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Destination" path="destination">
              <select
                name="destination"
                value={job.destination}
                onChange={(e) => setJob({ ...job, destination: e.currentTarget.value })}
              >
                {props.destinations.map((d) => (
                  <option key={d.name} value={d.name} selected={d.name === job.destination}>
                    {d.name}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <div class="row">
            <Field label="Schedule" path="schedule" hint="five-field cron (UTC) or every 5m; empty: Sync now only">
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
                  {preview.next.map((t) => (
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
            <Field
              label={storedPattern !== null ? "Topic pattern" : "Topics matching"}
              name="topic_pattern"
              path={["topic_pattern", "source.kafka.topic_pattern"]}
              hint={patternHint}
            >
              <input
                name="topic_pattern"
                value={pattern}
                placeholder="all topics"
                onInput={(e) => setPattern(e.currentTarget.value)}
              />
            </Field>
            <button type="button" onClick={discover} disabled={!job.source || discovering}>
              {discovering ? "Discovering…" : "Discover topics"}
            </button>
          </div>
          <ErrorBox error={discoverError} />
          {discovery?.skipped.length ? (
            <p class="muted">Not listed: {discovery.skipped.map((s) => `${s.topic} (${s.reason})`).join("; ")}</p>
          ) : null}
          <div class="scroll">
            <table
              class={streamsIssue ? "grid streams invalid" : "grid streams"}
              data-testid="streams-table"
              tabIndex={-1}
              aria-invalid={streamsIssue ? "true" : undefined}
              aria-describedby={streamsIssue ? "streams-issue" : undefined}
            >
              <thead>
                <tr>
                  <th>Sync</th>
                  <th>Topic</th>
                  <th>Partitions</th>
                  <th>Retained</th>
                  <th>Mode</th>
                  <th>Value / key format</th>
                  <th>Dedup keys</th>
                  <th>On error</th>
                </tr>
              </thead>
              <tbody>
                {topics.map((t) => {
                  const s = streams[t.topic] ?? NEW_STREAM;
                  const upsertOff = engineCheck !== null && !engineCheck.upsertAllowed;
                  const extraKeys = s.dedup.filter((k) => !t.columns.some((c) => c.name === k));
                  return (
                    <tr key={t.topic} data-testid={`stream-${t.topic}`} class={s.ticked ? "" : "unticked"}>
                      <td>
                        <input
                          type="checkbox"
                          name="tick"
                          aria-label={`sync ${t.topic}`}
                          checked={s.ticked}
                          onChange={(e) => setStream(t.topic, { ticked: e.currentTarget.checked })}
                        />
                      </td>
                      <td>
                        <code>{t.topic}</code>
                      </td>
                      <td>{t.partitions ?? "—"}</td>
                      <td>{t.retained ?? "—"}</td>
                      <td>
                        <select
                          name="mode"
                          aria-label={`mode of ${t.topic}`}
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
                          aria-label={`value format of ${t.topic}`}
                          value={s.format}
                          onChange={(e) => setStream(t.topic, { format: e.currentTarget.value })}
                        >
                          {(choices?.valueFormats ?? [s.format]).map((f) => (
                            <option key={f} value={f} selected={f === s.format}>
                              {f}
                            </option>
                          ))}
                        </select>
                        <select
                          name="key_format"
                          aria-label={`key format of ${t.topic}`}
                          value={s.keyFormat}
                          onChange={(e) => setStream(t.topic, { keyFormat: e.currentTarget.value })}
                        >
                          {(choices?.keyFormats ?? [s.keyFormat]).map((f) => (
                            <option key={f} value={f} selected={f === s.keyFormat}>
                              key: {f}
                            </option>
                          ))}
                        </select>
                      </td>
                      <td class="keys">
                        {t.columns.map((c) => (
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
                        {t.columns.length === 0 && (s.mode === "upsert" || s.dedup.length > 0) ? (
                          <Field
                            label="Dedup keys"
                            path={`streams.${t.topic}.dedup_keys`}
                            hint="comma-separated fields; Discover lists the columns"
                          >
                            <input
                              name="dedup_keys"
                              aria-label={`dedup keys of ${t.topic}`}
                              value={s.dedup.join(", ")}
                              onChange={(e) => setStream(t.topic, { dedup: keyList(e.currentTarget.value) })}
                            />
                          </Field>
                        ) : extraKeys.length ? (
                          <span class="muted">also: {extraKeys.join(", ")}</span>
                        ) : null}
                      </td>
                      <td>
                        <select
                          name="on_error"
                          aria-label={`on error of ${t.topic}`}
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
          {streamsIssue ? (
            <p class="field-error" id="streams-issue" data-testid="streams-issue">
              {streamsIssue}
            </p>
          ) : null}
        </div>
        <div class="buttons">
          <button type="button" class="primary" onClick={save} data-testid="save-job" disabled={saving}>
            {saving ? "Saving…" : name ? "Save job" : "Create job"}
          </button>
          <button type="button" onClick={() => go("#/jobs")}>
            Cancel
          </button>
        </div>
      </FormErrors>
    </section>
  );
}
