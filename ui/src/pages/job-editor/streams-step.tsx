// The streams step: the topic pattern, Discover topics (the source's topics with partitions,
// retained messages and inferred columns), and a row per topic to tick and set up.
import { useState } from "preact/hooks";
import { api, type Choices, call, type Discovery, type EngineCheck } from "../../api";
import { ErrorBox, Field } from "../../components/ui";
import type { Stream } from "../../logic";
import { StreamRow, type TopicRow } from "./stream-row";

export function StreamsStep(props: {
  job: { name: string; source: string; destination: string };
  /** The job's own topic_pattern when it has one; null: the pattern only filters Discover. */
  storedPattern: string | null;
  pattern: string;
  setPattern: (pattern: string) => void;
  streams: Record<string, Stream>;
  streamOf: (topic: string) => Stream;
  setStream: (topic: string, patch: Partial<Stream>) => void;
  choices: Choices | undefined;
  engineCheck: EngineCheck | null;
  issue: string | null;
}) {
  const { job, storedPattern, pattern, issue } = props;
  const [discovery, setDiscovery] = useState<Discovery | null>(null);
  const [discovering, setDiscovering] = useState(false);
  const [discoverError, setDiscoverError] = useState<unknown>(null);
  const discover = async () => {
    setDiscovering(true);
    try {
      const json = {
        ...(pattern ? { topic_pattern: pattern } : {}),
        ...(job.destination ? { destination: job.destination } : {}),
        ...(/^[A-Za-z0-9_]+$/.test(job.name) ? { job: job.name } : {}),
      };
      setDiscovery(await call(api.sources[":name"].discover.$post({ param: { name: job.source }, json })));
      setDiscoverError(null);
    } catch (err) {
      setDiscoverError(err);
    }
    setDiscovering(false);
  };
  const discovered = new Map((discovery?.topics ?? []).map((t) => [t.topic, t]));
  const topics: TopicRow[] = [
    ...(discovery?.topics ?? []).map((t) => ({
      topic: t.topic,
      partitions: t.partitions.length,
      retained: t.retained,
      columns: t.columns,
    })),
    // The job's streams that Discover did not list (another pattern, or not run yet) stay editable.
    ...Object.keys(props.streams)
      .filter((topic) => !discovered.has(topic))
      .map((topic) => ({ topic, partitions: null, retained: null, columns: [] })),
  ];
  const patternHint =
    storedPattern !== null
      ? "the job's topic_pattern: it also syncs every topic this matches (a regular expression over the whole name)"
      : "filters what Discover lists (a regular expression over the whole name); empty: all topics. The job syncs the topics you tick.";
  return (
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
            onInput={(e) => props.setPattern(e.currentTarget.value)}
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
          class={issue ? "grid streams invalid" : "grid streams"}
          data-testid="streams-table"
          tabIndex={-1}
          aria-invalid={issue ? "true" : undefined}
          aria-describedby={issue ? "streams-issue" : undefined}
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
            {topics.map((t) => (
              <StreamRow
                key={t.topic}
                row={t}
                stream={props.streamOf(t.topic)}
                choices={props.choices}
                engineCheck={props.engineCheck}
                onChange={(patch) => props.setStream(t.topic, patch)}
              />
            ))}
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
      {issue ? (
        <p class="field-error" id="streams-issue" data-testid="streams-issue">
          {issue}
        </p>
      ) : null}
    </div>
  );
}
