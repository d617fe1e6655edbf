// One topic of the streams step: ticked or not, its partitions and retained messages, mode
// (upsert only where the target engines read deletion vectors), value and key format, dedup keys
// from the inferred columns, on_error.
import type { Choices, Discovery, EngineCheck } from "../../api";
import { Field } from "../../components/ui";
import type { Stream } from "../../logic";

export type Column = Discovery["topics"][number]["columns"][number];

/** A topic as the table lists it: discovered, or a stored stream Discover did not list. */
export interface TopicRow {
  topic: string;
  partitions: number | null;
  retained: number | null;
  columns: Column[];
}

const keyList = (text: string) =>
  text
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);

export function StreamRow(props: {
  row: TopicRow;
  stream: Stream;
  choices: Choices | undefined;
  engineCheck: EngineCheck | null;
  onChange: (patch: Partial<Stream>) => void;
}) {
  const { row: t, stream: s, choices, engineCheck, onChange } = props;
  const upsertOff = engineCheck !== null && !engineCheck.upsertAllowed;
  const extraKeys = s.dedup.filter((k) => !t.columns.some((c) => c.name === k));
  return (
    <tr data-testid={`stream-${t.topic}`} class={s.ticked ? "" : "unticked"}>
      <td>
        <input
          type="checkbox"
          name="tick"
          aria-label={`sync ${t.topic}`}
          checked={s.ticked}
          onChange={(e) => onChange({ ticked: e.currentTarget.checked })}
        />
      </td>
      <td>
        <code>{t.topic}</code>
      </td>
      <td>{t.partitions ?? "—"}</td>
      <td>{t.retained ?? "—"}</td>
      <td>
        <select
          name="mode"
          aria-label={`mode of ${t.topic}`}
          value={s.mode}
          onChange={(e) => onChange({ mode: e.currentTarget.value as Stream["mode"] })}
        >
          <option value="append">append</option>
          <option value="upsert" disabled={upsertOff}>
            upsert
          </option>
        </select>
        {upsertOff ? (
          <div class="reason" data-testid="upsert-disabled">
            upsert disabled: {engineCheck.reason}
          </div>
        ) : null}
      </td>
      <td>
        <select
          name="format"
          aria-label={`value format of ${t.topic}`}
          value={s.format}
          onChange={(e) => onChange({ format: e.currentTarget.value })}
        >
          {(choices?.valueFormats ?? [s.format]).map((f) => (
            <option key={f} value={f} selected={f === s.format}>
              {f}
            </option>
          ))}
        </select>
        <select
          name="key_format"
          aria-label={`key format of ${t.topic}`}
          value={s.keyFormat}
          onChange={(e) => onChange({ keyFormat: e.currentTarget.value })}
        >
          {(choices?.keyFormats ?? [s.keyFormat]).map((f) => (
            <option key={f} value={f} selected={f === s.keyFormat}>
              key: {f}
            </option>
          ))}
        </select>
      </td>
      <td class="keys">
        {t.columns.map((c) => (
          <label class="check key" key={c.name} title={`${c.type ?? "no type yet"}${c.nullable ? ", nullable" : ""}`}>
            <input
              type="checkbox"
              name={`key-${c.name}`}
              checked={s.dedup.includes(c.name)}
              onChange={(e) =>
                onChange({
                  dedup: e.currentTarget.checked ? [...s.dedup, c.name] : s.dedup.filter((k) => k !== c.name),
                })
              }
            />
            <code>{c.name}</code> <span class="muted">{c.type}</span>{" "}
            {c.example !== undefined ? <span class="example">{c.example}</span> : null}
          </label>
        ))}
        {t.columns.length === 0 && (s.mode === "upsert" || s.dedup.length > 0) ? (
          <Field
            label="Dedup keys"
            path={`streams.${t.topic}.dedup_keys`}
            hint="comma-separated fields; Discover lists the columns"
          >
            <input
              name="dedup_keys"
              aria-label={`dedup keys of ${t.topic}`}
              value={s.dedup.join(", ")}
              onChange={(e) => onChange({ dedup: keyList(e.currentTarget.value) })}
            />
          </Field>
        ) : extraKeys.length ? (
          <span class="muted">also: {extraKeys.join(", ")}</span>
        ) : null}
      </td>
      <td>
        <select
          name="on_error"
          aria-label={`on error of ${t.topic}`}
          value={s.onError}
          onChange={(e) => onChange({ onError: e.currentTarget.value })}
        >
          <option value="dlq">dead-letter table</option>
          <option value="fail">fail the sync</option>
          <option value="skip">skip and count</option>
        </select>
      </td>
    </tr>
  );
}
