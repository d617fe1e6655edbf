// The UI's pure logic, kept apart from the components so that unit tests run it under Node:
// how an issue's path reads, what a run's badge says, the plots' time range and tick labels,
// and how a stream of the job editor becomes its job-file keys.
/** What a run's badge reads of a run (the API's RunSummary has these). */
export interface RunBadgeInput {
  status: string;
  cancelled: boolean;
  deadLetters: number;
}

/** A field's label from an issue's path, for an issue that no field of the form shows: `kafka.bootstrap_servers.0` reads "Bootstrap servers (entry 1)". */
export function humanPath(path: string): string {
  if (!path) return "";
  const parts = path.split(".");
  const entries = parts.filter((p) => /^\d+$/.test(p)).map((p) => Number(p) + 1);
  const named = parts.filter((p) => !/^\d+$/.test(p));
  const s = named.indexOf("streams");
  const stream = s >= 0 && named[s + 1] ? named[s + 1]! : undefined;
  const key = named.at(-1)!;
  const words = (key === stream ? "stream" : key.replace(/_/g, " ")).replace(/\b(uri|url|tls|sasl|ca)\b/g, (w) =>
    w.toUpperCase(),
  );
  const text = `${words.charAt(0).toUpperCase()}${words.slice(1)}${entries.length ? ` (entry ${entries.at(-1)})` : ""}`;
  return stream && key !== stream ? `Stream ${stream}: ${text}` : stream ? `Stream ${stream}` : text;
}

/** What a run's status badge says: a cancelled run is "cancelled", a run that dead-lettered messages is a warning, not a plain "complete". */
export function runStatus(run: RunBadgeInput): {
  label: string;
  tone: string;
  title?: string;
} {
  if (run.status === "running") return { label: "running", tone: "running" };
  if (run.cancelled)
    return { label: "cancelled", tone: "cancelled", title: "cancelled: it committed what it had read" };
  if ((run.status === "complete" || run.status === "partial") && run.deadLetters > 0)
    return {
      label: `${run.status}, ${run.deadLetters} dead letter${run.deadLetters === 1 ? "" : "s"}`,
      tone: "warn",
      title: "some messages did not fit their table: see the dead-letter tables on the Tables page",
    };
  return { label: run.status, tone: run.status };
}

/** The x range shown: at least an hour around the points, so that one point (or a few seconds of snapshots) never gets an axis of years or of milliseconds. */
export function timeRange(times: number[]): [number, number] {
  const min = Math.min(...times);
  const max = Math.max(...times);
  const span = max - min;
  const pad = Math.max(span * 0.05, (3600 - span) / 2, 60);
  return [min - pad, max + pad];
}

/** An x tick as the rest of the UI writes times: UTC, 24-hour; with the date when the range spans days. */
export function timeLabel(seconds: number, span: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  return span > 86_400 * 2 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/** A y tick: whole numbers, thousands as k and millions as M, so that the labels fit their axis. */
export function countLabel(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (a >= 1e4) return `${+(n / 1e3).toFixed(1)}k`;
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/** What a stream that leaves out on_error, format or key_format gets: the server's job-file defaults (GET /api/choices). */
export interface StreamDefaults {
  on_error: string;
  format: string;
  key_format: string;
}

export interface Stream {
  ticked: boolean;
  mode: "append" | "upsert";
  dedup: string[];
  onError: string;
  format: string;
  keyFormat: string;
  /** The stream as stored (every key, as the user wrote it): saved back with only what changed. */
  stored: Record<string, unknown> | null;
  /** The job file's defaults, which a stored stream that left a key out has. */
  defaults: StreamDefaults;
}

/** A topic not ticked yet: append, and the job file's defaults. */
export function newStream(defaults: StreamDefaults): Stream {
  return {
    ticked: false,
    mode: "append",
    dedup: [],
    onError: defaults.on_error,
    format: defaults.format,
    keyFormat: defaults.key_format,
    stored: null,
    defaults,
  };
}

export function streamOf(v: Record<string, unknown>, defaults: StreamDefaults): Stream {
  const text = (key: keyof StreamDefaults) => (typeof v[key] === "string" ? (v[key] as string) : defaults[key]);
  return {
    ticked: true,
    mode: v["mode"] === "upsert" ? "upsert" : "append",
    dedup: Array.isArray(v["dedup_keys"]) ? (v["dedup_keys"] as string[]) : [],
    onError: text("on_error"),
    format: text("format"),
    keyFormat: text("key_format"),
    stored: v,
    defaults,
  };
}

/**
 * The stream's job-file keys: the stored ones, each changed value written over it; a key the
 * stored stream left out (a default) stays out unless its value changed, so that saving an
 * unchanged job writes the same job file.
 */
export function streamBody(s: Stream): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(s.stored ?? {}) };
  const put = (key: keyof StreamDefaults, value: unknown) => {
    if (value === s.defaults[key] && !(key in out)) return;
    out[key] = value;
  };
  out["mode"] = s.mode;
  if (s.dedup.length) out["dedup_keys"] = s.dedup;
  else delete out["dedup_keys"];
  // A new stream names its on_error, the choice the form shows; a stored one keeps its own keys.
  if (s.stored === null) out["on_error"] = s.onError;
  else put("on_error", s.onError);
  put("format", s.format);
  put("key_format", s.keyFormat);
  return out;
}

/** A partition's live progress, as the run page gets it. */
export interface PartitionProgress {
  nextOffset: string;
  stopOffset: string;
  messages: number;
}

/**
 * A running run over every partition: messages read of those planned, the rate since it
 * started, and when it should end at that rate (undefined until it has a rate).
 */
export function overallProgress(
  progress: readonly PartitionProgress[],
  startedAtMs: number,
  nowMs: number,
): { read: number; planned: number; percent: number; perSecond: number; etaSeconds: number | undefined } {
  let read = 0;
  let planned = 0;
  for (const p of progress) {
    const next = Number(p.nextOffset);
    const start = next - p.messages;
    read += p.messages;
    planned += Math.max(0, Number(p.stopOffset) - start);
  }
  const elapsed = Math.max(0.001, (nowMs - startedAtMs) / 1000);
  const perSecond = read / elapsed;
  const left = Math.max(0, planned - read);
  return {
    read,
    planned,
    percent: planned > 0 ? Math.min(100, (read / planned) * 100) : 100,
    perSecond,
    etaSeconds: left === 0 ? 0 : perSecond > 0 ? left / perSecond : undefined,
  };
}

/** A duration to read at a glance: 42 s, 3 min 20 s, 2 h 5 min. */
export function fmtSeconds(s: number): string {
  const r = Math.round(s);
  if (r < 60) return `${r} s`;
  if (r < 3600) return `${Math.floor(r / 60)} min ${r % 60} s`;
  return `${Math.floor(r / 3600)} h ${Math.floor((r % 3600) / 60)} min`;
}
