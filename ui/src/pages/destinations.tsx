// Destinations: the Iceberg catalogs jobs write to (REST, the Unity preset, or the embedded
// warehouse), their credentials (write-only) and target engines.
import { useState } from "preact/hooks";
import { del, get, post, put } from "../api";
import { EngineChecks } from "../engines";
import { ErrorBox, Field, useData } from "../ui";

interface Form {
  name: string;
  type: "sql" | "rest" | "unity";
  warehouse: string;
  uri: string;
  restWarehouse: string;
  workspace: string;
  catalog: string;
  auth: "none" | "token" | "oauth2";
  token: string;
  clientId: string;
  clientSecret: string;
  engines: string[];
  compression: string;
}

const empty: Form = {
  name: "",
  type: "sql",
  warehouse: "./warehouse",
  uri: "",
  restWarehouse: "",
  workspace: "",
  catalog: "",
  auth: "none",
  token: "",
  clientId: "",
  clientSecret: "",
  engines: [],
  compression: "zstd",
};

function toBody(f: Form) {
  let catalog: Record<string, unknown>;
  const credential =
    f.auth === "token"
      ? f.token
        ? { token: f.token }
        : {}
      : f.auth === "oauth2"
        ? { client_id: f.clientId, ...(f.clientSecret ? { client_secret: f.clientSecret } : {}) }
        : {};
  if (f.type === "sql") catalog = { type: "sql", warehouse: f.warehouse };
  else if (f.type === "rest")
    catalog = { type: "rest", uri: f.uri, ...(f.restWarehouse ? { warehouse: f.restWarehouse } : {}), ...credential };
  else catalog = { type: "unity", workspace_url: f.workspace, catalog: f.catalog, ...credential };
  return { name: f.name, iceberg: { catalog, target_engines: f.engines, compression: f.compression } };
}

function fromRecord(r: any): Form {
  const c = r.iceberg?.catalog ?? { type: "sql" };
  const secrets: string[] = r.secrets_set ?? [];
  return {
    ...empty,
    name: r.name,
    type: c.type,
    warehouse: c.type === "sql" ? (c.warehouse ?? "./warehouse") : "./warehouse",
    uri: c.uri ?? "",
    restWarehouse: c.type === "rest" ? (c.warehouse ?? "") : "",
    workspace: c.workspace_url ?? "",
    catalog: c.catalog ?? "",
    auth: c.client_id ? "oauth2" : secrets.some((s) => s.endsWith("token")) ? "token" : "none",
    clientId: c.client_id ?? "",
    engines: r.iceberg?.target_engines ?? [],
    compression: r.iceberg?.compression ?? "zstd",
  };
}

export function DestinationsPage() {
  const list = useData(() => get<any[]>("/api/destinations"), []);
  const [form, setForm] = useState<Form>(empty);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tests, setTests] = useState<Record<string, any>>({});
  const set = (patch: Partial<Form>) => setForm({ ...form, ...patch });

  const save = async (e: Event) => {
    e.preventDefault();
    try {
      if (editing) await put(`/api/destinations/${editing}`, toBody(form));
      else await post("/api/destinations", toBody(form));
      setError(null);
      setForm(empty);
      setEditing(null);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const test = async (name: string) => {
    setTests((t) => ({ ...t, [name]: { pending: true } }));
    const result = await post(`/api/destinations/${name}/test`).catch((err) => ({
      ok: false,
      message: (err as Error).message,
    }));
    setTests((t) => ({ ...t, [name]: result }));
  };
  const remove = async (name: string) => {
    if (!confirm(`Delete destination ${name}?`)) return;
    await del(`/api/destinations/${name}`).then(list.reload, setError);
  };

  return (
    <section>
      <h1>Destinations</h1>
      <p class="muted">Iceberg catalogs. Test connection lists the catalog's namespaces with the stored credentials.</p>
      <ErrorBox error={list.error} />
      <table class="grid" data-testid="destinations-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Catalog</th>
            <th>Target engines</th>
            <th>Secrets</th>
            <th>Connection</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((d) => (
            <tr key={d.name} data-testid={`destination-${d.name}`}>
              <td>
                <strong>{d.name}</strong>
              </td>
              <td>
                {d.iceberg.catalog?.type ?? "sql"}{" "}
                <code>
                  {d.iceberg.catalog?.uri ??
                    d.iceberg.catalog?.workspace_url ??
                    d.iceberg.catalog?.warehouse ??
                    "./warehouse"}
                </code>
              </td>
              <td>{(d.iceberg.target_engines ?? []).join(", ") || <span class="muted">any</span>}</td>
              <td>
                {d.secrets_set.length ? (
                  d.secrets_set.map((p: string) => (
                    <span class="tag" key={p}>
                      {p.split(".").pop()} set
                    </span>
                  ))
                ) : (
                  <span class="muted">none</span>
                )}
              </td>
              <td class="diagnosis" data-testid="diagnosis">
                {tests[d.name]?.pending ? (
                  "testing…"
                ) : tests[d.name] ? (
                  <span class={tests[d.name].ok ? "ok" : "bad"}>
                    {tests[d.name].ok ? "✔ " : "✘ "}
                    {tests[d.name].message}
                    {tests[d.name].kind ? ` (${tests[d.name].kind})` : ""}
                  </span>
                ) : null}
              </td>
              <td class="actions">
                <button type="button" onClick={() => test(d.name)}>
                  Test connection
                </button>
                <button
                  type="button"
                  onClick={() => {
                    setEditing(d.name);
                    setForm(fromRecord(d));
                  }}
                >
                  Edit
                </button>
                <button type="button" class="danger" onClick={() => remove(d.name)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {list.data?.length === 0 ? (
            <tr>
              <td colSpan={6} class="muted">
                No destination yet.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>

      <form class="card" onSubmit={save} data-testid="destination-form">
        <h2>{editing ? `Edit destination ${editing}` : "New destination"}</h2>
        <div class="row">
          <Field label="Name">
            <input
              name="name"
              value={form.name}
              disabled={!!editing}
              onInput={(e) => set({ name: e.currentTarget.value })}
            />
          </Field>
          <Field label="Catalog">
            <select
              name="type"
              value={form.type}
              onChange={(e) => set({ type: e.currentTarget.value as Form["type"] })}
            >
              <option value="sql">embedded warehouse (SQLite catalog)</option>
              <option value="rest">Iceberg REST catalog</option>
              <option value="unity">Databricks Unity Catalog</option>
            </select>
          </Field>
          <Field label="Compression">
            <select
              name="compression"
              value={form.compression}
              onChange={(e) => set({ compression: e.currentTarget.value })}
            >
              {["zstd", "snappy", "gzip", "lz4", "uncompressed"].map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </Field>
        </div>
        {form.type === "sql" ? (
          <div class="row">
            <Field label="Warehouse" hint="a folder (relative to the state directory) or s3://, gs://, abfss://">
              <input
                name="warehouse"
                value={form.warehouse}
                onInput={(e) => set({ warehouse: e.currentTarget.value })}
              />
            </Field>
          </div>
        ) : (
          <div class="row">
            {form.type === "rest" ? (
              <>
                <Field label="Catalog URI">
                  <input
                    name="uri"
                    value={form.uri}
                    placeholder="https://catalog.example.com"
                    onInput={(e) => set({ uri: e.currentTarget.value })}
                  />
                </Field>
                <Field label="Warehouse" hint="optional">
                  <input
                    name="rest_warehouse"
                    value={form.restWarehouse}
                    onInput={(e) => set({ restWarehouse: e.currentTarget.value })}
                  />
                </Field>
              </>
            ) : (
              <>
                <Field label="Workspace URL">
                  <input
                    name="workspace_url"
                    value={form.workspace}
                    onInput={(e) => set({ workspace: e.currentTarget.value })}
                  />
                </Field>
                <Field label="Unity catalog">
                  <input name="catalog" value={form.catalog} onInput={(e) => set({ catalog: e.currentTarget.value })} />
                </Field>
              </>
            )}
            <Field label="Credential">
              <select
                name="auth"
                value={form.auth}
                onChange={(e) => set({ auth: e.currentTarget.value as Form["auth"] })}
              >
                {form.type === "rest" ? <option value="none">none</option> : null}
                <option value="token">token</option>
                <option value="oauth2">OAuth2 client credentials</option>
              </select>
            </Field>
            {form.auth === "token" ? (
              <Field
                label="Token"
                hint={editing ? "empty: keep the stored one" : "stored encrypted, never shown again"}
              >
                <input
                  name="token"
                  type="password"
                  autocomplete="new-password"
                  value={form.token}
                  onInput={(e) => set({ token: e.currentTarget.value })}
                />
              </Field>
            ) : null}
            {form.auth === "oauth2" ? (
              <>
                <Field label="Client id">
                  <input
                    name="client_id"
                    value={form.clientId}
                    onInput={(e) => set({ clientId: e.currentTarget.value })}
                  />
                </Field>
                <Field label="Client secret" hint={editing ? "empty: keep the stored one" : "stored encrypted"}>
                  <input
                    name="client_secret"
                    type="password"
                    autocomplete="new-password"
                    value={form.clientSecret}
                    onInput={(e) => set({ clientSecret: e.currentTarget.value })}
                  />
                </Field>
              </>
            ) : null}
          </div>
        )}
        <fieldset class="engines">
          <legend>Target engines (floe refuses what one of them cannot read)</legend>
          <EngineChecks selected={form.engines} onChange={(engines) => set({ engines })} />
        </fieldset>
        <ErrorBox error={error} />
        <div class="buttons">
          <button type="submit" class="primary">
            {editing ? "Save" : "Create destination"}
          </button>
          {editing ? (
            <button
              type="button"
              onClick={() => {
                setEditing(null);
                setForm(empty);
              }}
            >
              Cancel
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
