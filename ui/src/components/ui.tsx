// Small shared pieces of the pages: loading data, showing errors with their fields, formatting.
import { type ComponentChildren, cloneElement, createContext, isValidElement, toChildArray } from "preact";
import { useCallback, useContext, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, type Issue, type RunSummary } from "../api";
import { humanPath, runStatus } from "../logic";

export function useData<T>(load: () => Promise<T>, deps: unknown[], intervalMs = 0) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const reload = useCallback(() => {
    load().then(
      (d) => {
        setData(d);
        setError(undefined);
      },
      (e) => setError(e),
    );
  }, deps);
  useEffect(() => {
    reload();
    if (intervalMs > 0) {
      const t = setInterval(reload, intervalMs);
      return () => clearInterval(t);
    }
    return undefined;
  }, [reload, intervalMs]);
  return { data, error, reload };
}

/** A refused request's field issues, for the fields of one form to show beside themselves. */
export interface FormIssues {
  issues: Issue[];
  /** The issues a field of the form showed in this render. */
  claimed: Set<Issue>;
}

const IssuesContext = createContext<FormIssues | null>(null);

/** The issues of `error` (an ApiError), or none. */
export function issuesOf(error: unknown): Issue[] {
  return error instanceof ApiError ? error.issues : [];
}

/**
 * A form's errors: each field shows the issues of its path (aria-invalid, aria-describedby),
 * the first invalid field takes the focus, and what no field shows is listed at the top with
 * human labels. `error` is the last refusal (an ApiError) or a message.
 */
export function FormErrors(props: { error: unknown; children: ComponentChildren }) {
  const issues = issuesOf(props.error);
  const value: FormIssues = { issues, claimed: new Set() };
  const summary = useRef<HTMLDivElement>(null);
  const [unclaimed, setUnclaimed] = useState<Issue[]>([]);
  useLayoutEffect(() => {
    const rest = issues.filter((i) => !value.claimed.has(i));
    setUnclaimed(rest);
  }, [props.error]);
  useEffect(() => {
    if (!props.error) return;
    const root = summary.current?.parentElement;
    const invalid = root?.querySelector<HTMLElement>('[aria-invalid="true"]');
    if (invalid) invalid.focus();
    else summary.current?.querySelector<HTMLElement>(".error")?.focus();
  }, [props.error]);
  const error = props.error as { message?: string } | null;
  const marked = issues.length - unclaimed.length;
  return (
    <IssuesContext.Provider value={value}>
      <div ref={summary}>
        {props.error ? (
          <div class="error" role="alert" tabIndex={-1} data-testid="error">
            {issues.length === 0 ? (
              <strong>{error?.message ?? String(props.error)}</strong>
            ) : (
              <>
                {marked > 0 ? (
                  <strong>
                    {marked === 1 ? "1 field needs" : `${marked} fields need`} a change: see the field
                    {marked === 1 ? "" : "s"} marked below.
                  </strong>
                ) : null}
                {unclaimed.length ? (
                  <ul>
                    {unclaimed.map((i) => (
                      <li key={`${i.path}:${i.message}`}>
                        {i.path ? <strong>{humanPath(i.path)}: </strong> : null}
                        {i.message}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </>
            )}
          </div>
        ) : null}
      </div>
      {props.children}
    </IssuesContext.Provider>
  );
}

/** The issues for a field: those of its path (or below it), else those whose last named key is the field's name. */
function useFieldIssues(name: string | undefined, path: string | string[] | undefined): Issue[] {
  const ctx = useContext(IssuesContext);
  if (!ctx || (!name && !path)) return [];
  const paths = path === undefined ? [] : Array.isArray(path) ? path : [path];
  const mine = ctx.issues.filter((i) => {
    if (ctx.claimed.has(i)) return false;
    if (paths.length) return paths.some((p) => i.path === p || i.path.startsWith(`${p}.`));
    const last = i.path
      .split(".")
      .filter((p) => !/^\d+$/.test(p))
      .at(-1);
    return last === name;
  });
  for (const i of mine) ctx.claimed.add(i);
  return mine;
}

let nextId = 0;

/** An error shown at its field: the control gets aria-invalid and aria-describedby pointing at it. */
export function Field(props: {
  label: string;
  hint?: string;
  /** The control's name, to find its issues when no path is given. */
  name?: string;
  /** The issue paths the field shows (the job file's keys, dotted). */
  path?: string | string[];
  /** Issues of the form's own checks, before any request. */
  issues?: string[];
  children: ComponentChildren;
}) {
  const [id] = useState(() => `field-${++nextId}`);
  const issues = [...(props.issues ?? []), ...useFieldIssues(props.name, props.path).map((i) => i.message)];
  const invalid = issues.length > 0;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [invalid ? errorId : "", props.hint ? hintId : ""].filter(Boolean).join(" ") || undefined;
  const children = toChildArray(props.children).map((child, i) =>
    i === 0 && isValidElement(child)
      ? cloneElement(child, { "aria-invalid": invalid ? "true" : undefined, "aria-describedby": describedBy })
      : child,
  );
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child the caller passes
    <label class={invalid ? "field invalid" : "field"}>
      <span class="label">{props.label}</span>
      {children}
      {props.hint ? (
        <span class="hint" id={hintId}>
          {props.hint}
        </span>
      ) : null}
      {invalid ? (
        <span class="field-error" id={errorId} data-testid="field-error">
          {issues.join("; ")}
        </span>
      ) : null}
    </label>
  );
}

/** The error of a request that is not a form's: a message, or a refusal's issues with human labels. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const issues = issuesOf(error);
  return (
    <div class="error" role="alert" data-testid="error">
      {issues.length === 0 ? (
        <strong>{(error as Error).message ?? String(error)}</strong>
      ) : (
        <ul>
          {issues.map((i) => (
            <li key={`${i.path}:${i.message}`}>
              {i.path ? <strong>{humanPath(i.path)}: </strong> : null}
              {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The row of an empty list. */
export function EmptyRow(props: { columns: number; children: ComponentChildren }) {
  return (
    <tr>
      <td colSpan={props.columns} class="muted">
        {props.children}
      </td>
    </tr>
  );
}

/** A labelled text input bound to one value; a secret is a password field the browser does not fill. */
export function TextField(props: {
  label: string;
  hint?: string;
  name: string;
  path?: string | string[];
  value: string;
  onValue: (value: string) => void;
  placeholder?: string;
  disabled?: boolean;
  secret?: boolean;
}) {
  const common = {
    name: props.name,
    value: props.value,
    placeholder: props.placeholder,
    disabled: props.disabled,
    onInput: (e: { currentTarget: HTMLInputElement }) => props.onValue(e.currentTarget.value),
  };
  return (
    <Field
      label={props.label}
      name={props.name}
      {...(props.path === undefined ? {} : { path: props.path })}
      {...(props.hint === undefined ? {} : { hint: props.hint })}
    >
      {props.secret ? <input type="password" autocomplete="new-password" {...common} /> : <input {...common} />}
    </Field>
  );
}

export function Status({ status }: { status: string | null | undefined }) {
  if (!status) return <span class="muted">never run</span>;
  return <span class={`status status-${status}`}>{status}</span>;
}

export function RunStatus({
  run,
}: {
  run: Pick<RunSummary, "status" | "cancelled" | "deadLetters"> | null | undefined;
}) {
  if (!run) return <span class="muted">never run</span>;
  const { label, tone, title } = runStatus(run);
  return (
    <span class={`status status-${tone}`} title={title}>
      {label}
    </span>
  );
}

export const fmtTime = (iso: string | null | undefined) =>
  iso
    ? new Date(iso)
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, " UTC")
    : "—";

export const fmtDuration = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? "—" : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;

export const fmtBytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;

/** A time as the rest of the UI writes it: UTC, 24-hour, to the second. */
export const fmtClock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

export function go(hash: string) {
  window.location.hash = hash;
}

/** A short acknowledgement at the corner of the page (role status: screen readers read it). */
export function toast(message: string, tone: "ok" | "bad" = "ok") {
  window.dispatchEvent(new CustomEvent("floe-toast", { detail: { message, tone } }));
}

export function Toasts() {
  const [items, setItems] = useState<{ id: number; message: string; tone: string }[]>([]);
  useEffect(() => {
    let n = 0;
    const on = (e: Event) => {
      const { message, tone } = (e as CustomEvent<{ message: string; tone: string }>).detail;
      const id = ++n;
      setItems((list) => [...list, { id, message, tone }]);
      setTimeout(() => setItems((list) => list.filter((i) => i.id !== id)), 5000);
    };
    window.addEventListener("floe-toast", on);
    return () => window.removeEventListener("floe-toast", on);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite" data-testid="toasts">
      {items.map((i) => (
        <div key={i.id} class={`toast toast-${i.tone}`}>
          {i.message}
        </div>
      ))}
    </div>
  );
}

/** How long ago, to the minute: for stored connection health. */
export function fmtAgo(iso: string): string {
  const s = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}
