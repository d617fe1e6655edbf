// Sources: the Kafka clusters jobs read. Secrets are write-only: the form never shows them,
// and leaving a password empty on edit keeps the stored one.

import type { SourceShown } from "../api";
import { CredentialFields } from "../components/credential-fields";
import { NameField, RecordPage, secretHint } from "../components/record-page";
import { Field, TextField } from "../components/ui";

/** source.kafka as the API shows it (secrets left out): the keys this page reads. */
interface KafkaShown {
  bootstrap_servers: string[] | string;
  security?: { protocol?: string };
  sasl?: { mechanism?: string; username?: string };
  tls?: { ca?: string; cert?: string; key?: string; insecure_skip_verify?: boolean };
  schema_registry?: {
    url?: string;
    auth?: { basic?: { username?: string }; bearer?: object } | "none";
    tls?: { ca?: string };
  };
}
const kafkaOf = (r: SourceShown) => r.kafka as unknown as KafkaShown;

const PROTOCOLS = ["PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"];
const MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];

interface Form {
  name: string;
  servers: string;
  protocol: string;
  mechanism: string;
  username: string;
  password: string;
  ca: string;
  cert: string;
  key: string;
  insecure: boolean;
  registryUrl: string;
  registryAuth: "none" | "basic" | "bearer";
  registryUsername: string;
  registryPassword: string;
  registryToken: string;
  registryCa: string;
}

const empty: Form = {
  name: "",
  servers: "127.0.0.1:9092",
  protocol: "PLAINTEXT",
  mechanism: "PLAIN",
  username: "",
  password: "",
  ca: "",
  cert: "",
  key: "",
  insecure: false,
  registryUrl: "",
  registryAuth: "none",
  registryUsername: "",
  registryPassword: "",
  registryToken: "",
  registryCa: "",
};

/** source.kafka.schema_registry as the job file has it; a secret left empty keeps the stored one. */
function registryBody(f: Form) {
  const auth =
    f.registryAuth === "basic"
      ? { basic: { username: f.registryUsername, ...(f.registryPassword ? { password: f.registryPassword } : {}) } }
      : f.registryAuth === "bearer"
        ? { bearer: f.registryToken ? { token: f.registryToken } : {} }
        : "none";
  return { url: f.registryUrl.trim(), auth, ...(f.registryCa ? { tls: { ca: f.registryCa } } : {}) };
}

function toBody(f: Form) {
  const kafka: Record<string, unknown> = {
    bootstrap_servers: f.servers
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    security: { protocol: f.protocol },
  };
  if (f.protocol.startsWith("SASL")) {
    kafka["sasl"] = { mechanism: f.mechanism, username: f.username, ...(f.password ? { password: f.password } : {}) };
  }
  if (f.protocol.endsWith("SSL") && (f.ca || f.cert || f.key || f.insecure)) {
    kafka["tls"] = {
      ...(f.ca ? { ca: f.ca } : {}),
      ...(f.cert ? { cert: f.cert } : {}),
      ...(f.key ? { key: f.key } : {}),
      insecure_skip_verify: f.insecure,
    };
  }
  if (f.registryUrl.trim()) kafka["schema_registry"] = registryBody(f);
  return { name: f.name, kafka };
}

function fromRecord(r: SourceShown): Form {
  const k = kafkaOf(r);
  const registryAuth = typeof k.schema_registry?.auth === "object" ? k.schema_registry.auth : undefined;
  return {
    name: r.name,
    servers: (Array.isArray(k.bootstrap_servers) ? k.bootstrap_servers : [k.bootstrap_servers]).join(", "),
    protocol: k.security?.protocol ?? "PLAINTEXT",
    mechanism: k.sasl?.mechanism ?? "PLAIN",
    username: k.sasl?.username ?? "",
    password: "",
    ca: k.tls?.ca ?? "",
    cert: k.tls?.cert ?? "",
    key: k.tls?.key ?? "",
    insecure: k.tls?.insecure_skip_verify ?? false,
    registryUrl: k.schema_registry?.url ?? "",
    registryAuth: registryAuth?.basic ? "basic" : registryAuth?.bearer ? "bearer" : "none",
    registryUsername: registryAuth?.basic?.username ?? "",
    registryPassword: "",
    registryToken: "",
    registryCa: k.schema_registry?.tls?.ca ?? "",
  };
}

export function SourcesPage() {
  return (
    <RecordPage<Form, SourceShown>
      kind="source"
      title="Sources"
      intro="Kafka clusters. Test connection reaches the brokers as a sync would and says what is wrong."
      columns={[
        {
          header: "Bootstrap servers",
          cell: (s) => <code>{([] as string[]).concat(kafkaOf(s).bootstrap_servers).join(", ")}</code>,
        },
        {
          header: "Security",
          cell: (s) => {
            const k = kafkaOf(s);
            return `${k.security?.protocol ?? "PLAINTEXT"}${k.sasl ? ` · ${k.sasl.mechanism} as ${k.sasl.username}` : ""}${k.schema_registry ? ` · registry ${k.schema_registry.url}` : ""}`;
          },
        },
      ]}
      empty={empty}
      toBody={toBody}
      fromRecord={fromRecord}
      fields={(form, set, editing) => (
        <>
          <div class="row">
            <NameField form={form} set={set} editing={editing} />
            <TextField
              label="Bootstrap servers"
              hint="host:port, comma-separated"
              path="kafka.bootstrap_servers"
              name="bootstrap_servers"
              value={form.servers}
              onValue={(v) => set({ servers: v })}
            />
            <Field label="Security protocol" path="kafka.security">
              <select name="protocol" value={form.protocol} onChange={(e) => set({ protocol: e.currentTarget.value })}>
                {PROTOCOLS.map((p) => (
                  <option key={p}>{p}</option>
                ))}
              </select>
            </Field>
          </div>
          {form.protocol.startsWith("SASL") ? (
            <div class="row">
              <Field label="SASL mechanism" path="kafka.sasl.mechanism">
                <select
                  name="mechanism"
                  value={form.mechanism}
                  onChange={(e) => set({ mechanism: e.currentTarget.value })}
                >
                  {MECHANISMS.map((m) => (
                    <option key={m}>{m}</option>
                  ))}
                </select>
              </Field>
              <TextField
                label="Username"
                name="username"
                path="kafka.sasl.username"
                value={form.username}
                onValue={(v) => set({ username: v })}
              />
              <TextField
                label="Password"
                path="kafka.sasl.password"
                hint={secretHint(editing)}
                name="password"
                secret
                value={form.password}
                onValue={(v) => set({ password: v })}
              />
            </div>
          ) : null}
          {form.protocol.endsWith("SSL") ? (
            <div class="row">
              <TextField label="CA file (PEM)" name="ca" value={form.ca} onValue={(v) => set({ ca: v })} />
              <TextField label="Client certificate" name="cert" value={form.cert} onValue={(v) => set({ cert: v })} />
              <TextField label="Client key" name="key" value={form.key} onValue={(v) => set({ key: v })} />
              <label class="check">
                <input
                  type="checkbox"
                  checked={form.insecure}
                  onChange={(e) => set({ insecure: e.currentTarget.checked })}
                />{" "}
                skip verification (tests only)
              </label>
            </div>
          ) : null}
          <div class="row" data-testid="schema-registry">
            <TextField
              label="Schema registry"
              path="kafka.schema_registry.url"
              hint="for Avro and Protobuf streams; empty: none"
              name="registry_url"
              placeholder="https://registry:8081"
              value={form.registryUrl}
              onValue={(v) => set({ registryUrl: v })}
            />
            {form.registryUrl ? (
              <>
                <Field label="Registry auth">
                  <select
                    name="registry_auth"
                    value={form.registryAuth}
                    onChange={(e) => set({ registryAuth: e.currentTarget.value as Form["registryAuth"] })}
                  >
                    <option value="none">none</option>
                    <option value="basic">basic (Confluent Cloud: API key and secret)</option>
                    <option value="bearer">bearer token</option>
                  </select>
                </Field>
                {form.registryAuth === "basic" ? (
                  <CredentialFields
                    form={form}
                    set={set}
                    editing={editing}
                    id={["Registry username", "registry_username", "registryUsername"]}
                    secret={["Registry password", "registry_password", "registryPassword"]}
                  />
                ) : null}
                {form.registryAuth === "bearer" ? (
                  <TextField
                    label="Registry token"
                    hint={secretHint(editing)}
                    name="registry_token"
                    secret
                    value={form.registryToken}
                    onValue={(v) => set({ registryToken: v })}
                  />
                ) : null}
                <TextField
                  label="Registry CA (PEM)"
                  hint="https with a private CA; empty: the system's"
                  name="registry_ca"
                  value={form.registryCa}
                  onValue={(v) => set({ registryCa: v })}
                />
              </>
            ) : null}
          </div>
        </>
      )}
    />
  );
}
