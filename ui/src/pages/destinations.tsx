// Destinations: the Iceberg catalogs jobs write to (REST, the Unity preset, or the embedded
// warehouse), their credentials (write-only) and target engines.

import type { DestinationShown } from "../api";
import { CredentialFields } from "../components/credential-fields";
import { EngineChecks } from "../components/engines";
import { NameField, RecordPage, secretHint } from "../components/record-page";
import { Field, TextField } from "../components/ui";

/** destination.iceberg as the API shows it (secrets left out): the keys this page reads. */
interface IcebergShown {
  catalog?: {
    type: Form["type"];
    uri?: string;
    warehouse?: string;
    workspace_url?: string;
    catalog?: string;
    client_id?: string;
  };
  target_engines?: string[];
  compression?: string;
}
const icebergOf = (r: DestinationShown) => r.iceberg as IcebergShown;

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

function fromRecord(r: DestinationShown): Form {
  const iceberg = icebergOf(r);
  const c = iceberg.catalog ?? { type: "sql" };
  const secrets = r.secrets_set;
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
    engines: iceberg.target_engines ?? [],
    compression: iceberg.compression ?? "zstd",
  };
}

export function DestinationsPage() {
  return (
    <RecordPage<Form, DestinationShown>
      kind="destination"
      title="Destinations"
      intro="Iceberg catalogs. Test connection lists the catalog's namespaces with the stored credentials."
      columns={[
        {
          header: "Catalog",
          cell: (d) => {
            const c = icebergOf(d).catalog;
            return (
              <>
                {c?.type ?? "sql"} <code>{c?.uri ?? c?.workspace_url ?? c?.warehouse ?? "./warehouse"}</code>
              </>
            );
          },
        },
        {
          header: "Target engines",
          cell: (d) => (icebergOf(d).target_engines ?? []).join(", ") || <span class="muted">any</span>,
        },
      ]}
      empty={empty}
      toBody={toBody}
      fromRecord={fromRecord}
      fields={(form, set, editing) => (
        <>
          <div class="row">
            <NameField form={form} set={set} editing={editing} />
            <Field label="Catalog" path="iceberg.catalog.type">
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
              <TextField
                label="Warehouse"
                hint="a folder (relative to the state directory) or s3://, gs://, abfss://"
                name="warehouse"
                value={form.warehouse}
                onValue={(v) => set({ warehouse: v })}
              />
            </div>
          ) : (
            <div class="row">
              {form.type === "rest" ? (
                <>
                  <TextField
                    label="Catalog URI"
                    name="uri"
                    placeholder="https://catalog.example.com"
                    value={form.uri}
                    onValue={(v) => set({ uri: v })}
                  />
                  <TextField
                    label="Warehouse"
                    hint="optional"
                    name="rest_warehouse"
                    path="iceberg.catalog.warehouse"
                    value={form.restWarehouse}
                    onValue={(v) => set({ restWarehouse: v })}
                  />
                </>
              ) : (
                <>
                  <TextField
                    label="Workspace URL"
                    name="workspace_url"
                    value={form.workspace}
                    onValue={(v) => set({ workspace: v })}
                  />
                  <TextField
                    label="Unity catalog"
                    name="catalog"
                    value={form.catalog}
                    onValue={(v) => set({ catalog: v })}
                  />
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
                <TextField
                  label="Token"
                  hint={secretHint(editing)}
                  name="token"
                  secret
                  value={form.token}
                  onValue={(v) => set({ token: v })}
                />
              ) : null}
              {form.auth === "oauth2" ? (
                <CredentialFields
                  form={form}
                  set={set}
                  editing={editing}
                  id={["Client id", "client_id", "clientId"]}
                  secret={["Client secret", "client_secret", "clientSecret"]}
                />
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
