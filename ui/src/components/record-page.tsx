// The page of a stored source or destination: the list with its secrets (only which are set),
// its stored health (the last Test connection, dated), Edit and Delete; and the form that
// creates or edits one, which can Test connection before saving. Errors of the form show at
// their fields; errors of the list (a delete refused) above the list.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, call, type DestinationShown, type Diagnosis as DiagnosisResult, type SourceShown } from "../api";
import { EmptyRow, ErrorBox, FormErrors, fmtAgo, fmtTime, TextField, toast, useData } from "./ui";

type Shown = SourceShown | DestinationShown;
type Tested = DiagnosisResult & { testedAt?: string };

export interface RecordPageProps<F, R extends Shown> {
  kind: "source" | "destination";
  title: string;
  intro: string;
  columns: { header: string; cell: (record: R) => ComponentChildren }[];
  empty: F;
  toBody: (form: F) => unknown;
  fromRecord: (record: R) => F;
  fields: (form: F, set: (patch: Partial<F>) => void, editing: string | null) => ComponentChildren;
}

/** A record's name: set when it is created, fixed after (the name is the record's key). */
export function NameField<F extends { name: string }>(props: {
  form: F;
  set: (patch: Partial<F>) => void;
  editing: string | null;
}) {
  return (
    <TextField
      label="Name"
      name="name"
      disabled={!!props.editing}
      value={props.form.name}
      onValue={(v) => props.set({ name: v } as Partial<F>)}
    />
  );
}

/** The hint of a write-only secret's field. */
export const secretHint = (editing: string | null) =>
  editing ? "empty: keep the stored one" : "stored encrypted, never shown again";

export function RecordPage<F, R extends Shown>(props: RecordPageProps<F, R>) {
  const { kind } = props;
  // The two resources have the same routes and the same request bodies (a record the server
  // validates); they differ only in what a record shows, and R is the one this page shows.
  const routes = (kind === "source" ? api.sources : api.destinations) as typeof api.sources;
  const list = useData(() => call(routes.$get()) as Promise<R[]>, []);
  const [form, setForm] = useState<F>(props.empty);
  const [editing, setEditing] = useState<string | null>(null);
  const [formError, setFormError] = useState<unknown>(null);
  const [listError, setListError] = useState<unknown>(null);
  const [testing, setTesting] = useState<Record<string, boolean>>({});
  const [formTest, setFormTest] = useState<Tested | "pending" | null>(null);
  const set = (patch: Partial<F>) => {
    setForm({ ...form, ...patch });
    setFormTest(null);
  };
  const reset = () => {
    setForm(props.empty);
    setEditing(null);
    setFormError(null);
    setFormTest(null);
  };

  const save = async (e: Event) => {
    e.preventDefault();
    try {
      if (editing) await call(routes[":name"].$put({ param: { name: editing }, json: props.toBody(form) }));
      else await call(routes.$post({ json: props.toBody(form) }));
      toast(editing ? `Saved ${kind} ${editing}` : `Created ${kind} ${(form as { name?: string }).name ?? ""}`);
      reset();
      list.reload();
    } catch (err) {
      setFormError(err);
    }
  };
  const test = async (name: string) => {
    setTesting((t) => ({ ...t, [name]: true }));
    await call(routes[":name"].test.$post({ param: { name } })).catch((err) => setListError(err));
    setTesting((t) => ({ ...t, [name]: false }));
    list.reload();
  };
  const testForm = async () => {
    setFormTest("pending");
    try {
      setFormTest(await call(routes.test.$post({ json: props.toBody(form) })));
      setFormError(null);
    } catch (err) {
      setFormTest(null);
      setFormError(err);
    }
  };
  const remove = async (name: string) => {
    if (!confirm(`Delete ${kind} ${name}?`)) return;
    try {
      await call(routes[":name"].$delete({ param: { name } }));
      setListError(null);
      toast(`Deleted ${kind} ${name}`);
    } catch (err) {
      setListError(err);
    }
    list.reload();
  };
  const columns = props.columns.length + 4;

  return (
    <section>
      <h1>{props.title}</h1>
      <p class="muted">{props.intro}</p>
      <ErrorBox error={list.error ?? listError} />
      <div class="scroll">
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
                    r.secrets_set.map((p) => (
                      <span class="tag" key={p}>
                        {p.split(".").pop()} set
                      </span>
                    ))
                  ) : (
                    <span class="muted">none</span>
                  )}
                </td>
                <td class="diagnosis" data-testid="diagnosis">
                  {testing[r.name] ? "testing…" : <Diagnosis result={r.health ?? null} />}
                </td>
                <td class="actions">
                  <button type="button" onClick={() => test(r.name)} disabled={testing[r.name]}>
                    Test connection
                  </button>
                  <button
                    type="button"
                    onClick={() => {
                      setEditing(r.name);
                      setForm(props.fromRecord(r));
                      setFormError(null);
                      setFormTest(null);
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
      </div>

      <form class="card" onSubmit={save} data-testid={`${kind}-form`} noValidate>
        <h2>{editing ? `Edit ${kind} ${editing}` : `New ${kind}`}</h2>
        <FormErrors error={formError}>
          {props.fields(form, set, editing)}
          <div class="form-test" data-testid="form-test">
            {formTest === "pending" ? "testing…" : formTest ? <Diagnosis result={formTest} /> : null}
          </div>
          <div class="buttons">
            <button type="button" onClick={testForm} disabled={formTest === "pending"} data-testid="test-form">
              Test these settings
            </button>
            <button type="submit" class="primary">
              {editing ? "Save" : `Create ${kind}`}
            </button>
            {editing ? (
              <button type="button" onClick={reset}>
                Cancel
              </button>
            ) : null}
          </div>
          {editing ? (
            <p class="hint muted">Test these settings uses only the secrets typed here, not the stored ones.</p>
          ) : null}
        </FormErrors>
      </form>
    </section>
  );
}

/** Test connection's answer: what was reached, or what failed, its kind and what to check; when it ran. */
function Diagnosis({ result }: { result: Tested | null }) {
  if (!result) return <span class="muted">not tested yet</span>;
  return (
    <span class={result.ok ? "ok" : "bad"}>
      {result.ok ? "✔ " : "✘ "}
      {result.message}
      {result.kind ? ` (${result.kind})` : ""}
      {result.hint ? <span class="hint"> {result.hint}</span> : null}
      {result.testedAt ? (
        <span class="muted tested-at" title={fmtTime(result.testedAt)} data-testid="tested-at">
          {" "}
          · tested {fmtTime(result.testedAt)} ({fmtAgo(result.testedAt)})
        </span>
      ) : null}
    </span>
  );
}
