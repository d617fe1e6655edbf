// The page of a stored source or destination: the list with its secrets (only which are set),
// Test connection and its diagnosis, Edit and Delete, and the form that creates or edits one.
// The pages give their columns and form fields; the rest is this one component.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { del, get, post, put } from "./api";
import { EmptyRow, ErrorBox, useData } from "./ui";

export interface RecordPageProps<F> {
  kind: "source" | "destination";
  title: string;
  intro: string;
  columns: { header: string; cell: (record: any) => ComponentChildren }[];
  empty: F;
  toBody: (form: F) => unknown;
  fromRecord: (record: any) => F;
  fields: (form: F, set: (patch: Partial<F>) => void, editing: string | null) => ComponentChildren;
}

/** The hint of a write-only secret's field. */
export const secretHint = (editing: string | null) =>
  editing ? "empty: keep the stored one" : "stored encrypted, never shown again";

export function RecordPage<F>(props: RecordPageProps<F>) {
  const { kind } = props;
  const plural = `/api/${kind}s`;
  const list = useData(() => get<any[]>(plural), []);
  const [form, setForm] = useState<F>(props.empty);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tests, setTests] = useState<Record<string, any>>({});
  const set = (patch: Partial<F>) => setForm({ ...form, ...patch });
  const reset = () => {
    setForm(props.empty);
    setEditing(null);
  };

  const save = async (e: Event) => {
    e.preventDefault();
    try {
      if (editing) await put(`${plural}/${editing}`, props.toBody(form));
      else await post(plural, props.toBody(form));
      setError(null);
      reset();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const test = async (name: string) => {
    setTests((t) => ({ ...t, [name]: { pending: true } }));
    const result = await post(`${plural}/${name}/test`).catch((err) => ({
      ok: false,
      message: (err as Error).message,
    }));
    setTests((t) => ({ ...t, [name]: result }));
  };
  const remove = async (name: string) => {
    if (!confirm(`Delete ${kind} ${name}?`)) return;
    await del(`${plural}/${name}`).then(list.reload, setError);
  };
  const columns = props.columns.length + 4;

  return (
    <section>
      <h1>{props.title}</h1>
      <p class="muted">{props.intro}</p>
      <ErrorBox error={list.error} />
      <table class="grid" data-testid={`${kind}s-table`}>
        <thead>
          <tr>
            <th>Name</th>
            {props.columns.map((c) => (
              <th key={c.header}>{c.header}</th>
            ))}
            <th>Secrets</th>
            <th>Connection</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((r) => (
            <tr key={r.name} data-testid={`${kind}-${r.name}`}>
              <td>
                <strong>{r.name}</strong>
              </td>
              {props.columns.map((c) => (
                <td key={c.header}>{c.cell(r)}</td>
              ))}
              <td>
                {r.secrets_set.length ? (
                  r.secrets_set.map((p: string) => (
                    <span class="tag" key={p}>
                      {p.split(".").pop()} set
                    </span>
                  ))
                ) : (
                  <span class="muted">none</span>
                )}
              </td>
              <td class="diagnosis" data-testid="diagnosis">
                <Diagnosis result={tests[r.name]} />
              </td>
              <td class="actions">
                <button type="button" onClick={() => test(r.name)}>
                  Test connection
                </button>
                <button
                  type="button"
                  onClick={() => {
                    setEditing(r.name);
                    setForm(props.fromRecord(r));
                  }}
                >
                  Edit
                </button>
                <button type="button" class="danger" onClick={() => remove(r.name)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {list.data?.length === 0 ? <EmptyRow columns={columns}>No {kind} yet.</EmptyRow> : null}
        </tbody>
      </table>

      <form class="card" onSubmit={save} data-testid={`${kind}-form`}>
        <h2>{editing ? `Edit ${kind} ${editing}` : `New ${kind}`}</h2>
        {props.fields(form, set, editing)}
        <ErrorBox error={error} />
        <div class="buttons">
          <button type="submit" class="primary">
            {editing ? "Save" : `Create ${kind}`}
          </button>
          {editing ? (
            <button type="button" onClick={reset}>
              Cancel
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}

/** Test connection's answer: what was reached, or what failed, its kind and what to check. */
function Diagnosis({ result }: { result: any }) {
  if (!result) return null;
  if (result.pending) return <>testing…</>;
  return (
    <span class={result.ok ? "ok" : "bad"}>
      {result.ok ? "✔ " : "✘ "}
      {result.message}
      {result.kind ? ` (${result.kind})` : ""}
      {result.hint ? <span class="hint"> {result.hint}</span> : null}
    </span>
  );
}
