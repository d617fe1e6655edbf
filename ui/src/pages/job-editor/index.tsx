// New job / edit job: the job's fields (job-fields.tsx), then the streams step (streams-step.tsx):
// the source's topics, each ticked or not, with its mode, dedup keys and on_error. A new stream
// gets the job file's defaults as the server serves them (GET /api/choices); whether upsert is
// allowed is the server's answer for the engines (deletion vectors).
import { useState } from "preact/hooks";
import { api, type Choices, call, type DestinationShown, type JobShown } from "../../api";
import { useChoices } from "../../components/engines";
import { ErrorBox, FormErrors, go, toast, useData } from "../../components/ui";
import { newStream, type Stream, streamBody, streamOf } from "../../logic";
import { JobFields, type JobForm } from "./job-fields";
import { StreamsStep } from "./streams-step";
import { useEngineCheck, useSchedulePreview } from "./use-server-checks";

/** The editor once the job (when editing), the sources, the destinations and the choices are loaded: the selects then always hold the job's own values. */
export function JobEditor({ name }: { name?: string }) {
  const sources = useData(() => call(api.sources.$get()), []);
  const destinations = useData(() => call(api.destinations.$get()), []);
  const stored = useData(
    () => (name ? call(api.jobs[":name"].$get({ param: { name } })) : Promise.resolve(null)),
    [name],
  );
  const choices = useChoices();
  const error = sources.error ?? destinations.error ?? stored.error;
  if (error) return <ErrorBox error={error} />;
  if (!sources.data || !destinations.data || stored.data === undefined || !choices) {
    return <p class="muted">Loading…</p>;
  }
  return (
    <EditorForm
      {...(name ? { name } : {})}
      sources={sources.data.map((s) => s.name)}
      destinations={destinations.data}
      stored={stored.data}
      choices={choices}
    />
  );
}

function initialJob(stored: JobShown | null, sources: string[], destinations: DestinationShown[]): JobForm {
  if (stored) {
    const engines = stored["target_engines"];
    return {
      name: stored.name,
      source: stored.source,
      destination: stored.destination,
      schedule: stored.schedule ?? "",
      useEngines: Array.isArray(engines),
      engines: Array.isArray(engines) ? engines.map(String) : [],
    };
  }
  return {
    name: "",
    source: sources[0] ?? "",
    destination: destinations[0]?.name ?? "",
    schedule: "0 * * * *",
    useEngines: false,
    engines: [],
  };
}

function EditorForm(props: {
  name?: string;
  sources: string[];
  destinations: DestinationShown[];
  stored: JobShown | null;
  choices: Choices;
}) {
  const { name, stored, choices } = props;
  const defaults = choices.streamDefaults;
  const [job, setJob] = useState<JobForm>(() => initialJob(stored, props.sources, props.destinations));
  const [streams, setStreams] = useState<Record<string, Stream>>(() =>
    Object.fromEntries(Object.entries(stored?.streams ?? {}).map(([topic, v]) => [topic, streamOf(v, defaults)])),
  );
  // The job's own topic_pattern when it has one (kept as written); else the filter of Discover only.
  const storedPattern = typeof stored?.["topic_pattern"] === "string" ? stored["topic_pattern"] : null;
  const [pattern, setPattern] = useState(storedPattern ?? "");
  const [error, setError] = useState<unknown>(null);
  const [streamsIssue, setStreamsIssue] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const destination = props.destinations.find((d) => d.name === job.destination);
  const destinationEngines = destination?.iceberg["target_engines"];
  const engines = job.useEngines
    ? job.engines
    : Array.isArray(destinationEngines)
      ? destinationEngines.map(String)
      : [];
  const engineCheck = useEngineCheck(engines, setError);
  const preview = useSchedulePreview(job.schedule, setError);
  const streamOfTopic = (topic: string) => streams[topic] ?? newStream(defaults);
  const setStream = (topic: string, patch: Partial<Stream>) =>
    setStreams((s) => ({ ...s, [topic]: { ...(s[topic] ?? newStream(defaults)), ...patch } }));

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
      if (name) await call(api.jobs[":name"].$put({ param: { name }, json: body }));
      else await call(api.jobs.$post({ json: body }));
      toast(name ? `Saved job ${name}` : `Created job ${job.name}`);
      go("#/jobs");
    } catch (err) {
      setError(err);
    }
    setSaving(false);
  };

  return (
    <section>
      <h1>{name ? `Edit job ${name}` : "New job"}</h1>
      <FormErrors error={error}>
        <JobFields
          job={job}
          setJob={setJob}
          editing={!!name}
          sources={props.sources}
          destinations={props.destinations}
          engines={engines}
          preview={preview}
          engineCheck={engineCheck}
        />
        <StreamsStep
          job={job}
          storedPattern={storedPattern}
          pattern={pattern}
          setPattern={setPattern}
          streams={streams}
          streamOf={streamOfTopic}
          setStream={setStream}
          choices={choices}
          engineCheck={engineCheck}
          issue={streamsIssue}
        />
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
