// Small shared pieces of the pages: loading data, showing errors with their fields, formatting.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import type { ApiError } from "./api";

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

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as ApiError;
  return (
    <div class="error" role="alert" data-testid="error">
      <strong>{e.message ?? String(error)}</strong>
      {e.issues?.length ? (
        <ul>
          {e.issues.map((i) => (
            <li key={i.path}>
              <code>{i.path || "(body)"}</code>: {i.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Field(props: { label: string; hint?: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child the caller passes
    <label class="field">
      <span class="label">{props.label}</span>
      {props.children}
      {props.hint ? <span class="hint">{props.hint}</span> : null}
    </label>
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
    <Field label={props.label} {...(props.hint === undefined ? {} : { hint: props.hint })}>
      {props.secret ? <input type="password" autocomplete="new-password" {...common} /> : <input {...common} />}
    </Field>
  );
}

export function Status({ status }: { status: string | null | undefined }) {
  if (!status) return <span class="muted">never run</span>;
  return <span class={`status status-${status}`}>{status}</span>;
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

export function go(hash: string) {
  window.location.hash = hash;
}
