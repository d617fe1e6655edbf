// The job's own fields: name, source, destination, schedule (presets or cron, with the next
// three run times) and target engines, with the delete format they resolve to.
import type { DestinationShown, EngineCheck, SchedulePreview } from "../../api";
import { EngineChecks } from "../../components/engines";
import { Field, fmtTime } from "../../components/ui";

export interface JobForm {
  name: string;
  source: string;
  destination: string;
  schedule: string;
  useEngines: boolean;
  engines: string[];
}

export function JobFields(props: {
  job: JobForm;
  setJob: (job: JobForm) => void;
  editing: boolean;
  sources: string[];
  destinations: DestinationShown[];
  engines: string[];
  preview: SchedulePreview | null;
  engineCheck: EngineCheck | null;
}) {
  const { job, setJob, preview, engineCheck } = props;
  return (
    <div class="card" data-testid="job-form">
      <div class="row">
        <Field label="Name" name="job_name" path="name" hint="letters, digits and _; names the namespace <name>_topics">
          <input
            name="job_name"
            value={job.name}
            disabled={props.editing}
            onInput={(e) => setJob({ ...job, name: e.currentTarget.value })}
          />
        </Field>
        <Field label="Source" path="source">
          <select name="source" value={job.source} onChange={(e) => setJob({ ...job, source: e.currentTarget.value })}>
            {props.sources.map((s) => (
              <option key={s} value={s} selected={s === job.source}>
                {s}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Destination" path="destination">
          <select
            name="destination"
            value={job.destination}
            onChange={(e) => setJob({ ...job, destination: e.currentTarget.value })}
          >
            {props.destinations.map((d) => (
              <option key={d.name} value={d.name} selected={d.name === job.destination}>
                {d.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <div class="row">
        <Field
          label="Schedule"
          path="schedule"
          hint="five-field cron (UTC), every 5m, or continuous; empty: Sync now only"
        >
          <input
            name="schedule"
            value={job.schedule}
            onInput={(e) => setJob({ ...job, schedule: e.currentTarget.value })}
          />
        </Field>
        <div class="presets">
          {(preview?.presets ?? []).map((p) => (
            <button
              type="button"
              key={p.schedule}
              class={p.schedule === job.schedule ? "selected" : ""}
              onClick={() => setJob({ ...job, schedule: p.schedule })}
            >
              {p.label}
            </button>
          ))}
        </div>
        <div class="next-runs" data-testid="next-runs">
          {preview?.error ? (
            <span class="bad">{preview.error}</span>
          ) : preview?.continuous ? (
            <span>
              Runs continuously: reads messages as they come and commits every 10 s (the job's commit.interval)
            </span>
          ) : preview?.next?.length ? (
            <>
              Next runs:{" "}
              {preview.next.map((t) => (
                <div key={t}>{fmtTime(t)}</div>
              ))}
            </>
          ) : null}
        </div>
      </div>
      <fieldset class="engines">
        <legend>
          <label class="check">
            <input
              type="checkbox"
              name="override_engines"
              checked={job.useEngines}
              onChange={(e) => setJob({ ...job, useEngines: e.currentTarget.checked })}
            />{" "}
            Target engines of this job
          </label>
          {!job.useEngines ? (
            <span class="muted"> (the destination's: {props.engines.join(", ") || "any"})</span>
          ) : null}
        </legend>
        {job.useEngines ? (
          <EngineChecks selected={job.engines} onChange={(engines) => setJob({ ...job, engines })} />
        ) : null}
        <p data-testid="delete-format">
          Delete format: <strong>{engineCheck?.deleteFormat ?? "…"}</strong>
        </p>
      </fieldset>
    </div>
  );
}
