// Destinations: the Iceberg catalogs jobs write to (REST, the Unity preset, or the embedded
// warehouse), their credentials (write-only) and target engines.
import { EngineChecks } from "../engines";
import { RecordPage, secretHint } from "../record-page";
import { Field } from "../ui";

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
  return (
    <RecordPage<Form>
      kind="destination"
      title="Destinations"
      intro="Iceberg catalogs. Test connection lists the catalog's namespaces with the stored credentials."
      columns={[
        {
          header: "Catalog",
          cell: (d) => (
            <>
              {d.iceberg.catalog?.type ?? "sql"}{" "}
              <code>
                {d.iceberg.catalog?.uri ??
                  d.iceberg.catalog?.workspace_url ??
                  d.iceberg.catalog?.warehouse ??
                  "./warehouse"}
              </code>
            </>
          ),
        },
        {
          header: "Target engines",
          cell: (d) => (d.iceberg.target_engines ?? []).join(", ") || <span class="muted">any</span>,
        },
      ]}
      empty={empty}
      toBody={toBody}
      fromRecord={fromRecord}
      fields={(form, set, editing) => (
        <>
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
                    <input
                      name="catalog"
                      value={form.catalog}
                      onInput={(e) => set({ catalog: e.currentTarget.value })}
                    />
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
                <Field label="Token" hint={secretHint(editing)}>
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
                  <Field label="Client secret" hint={secretHint(editing)}>
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
        </>
      )}
    />
  );
}
