// The job form's answers from the server: what the target engines allow (delete format, upsert)
// and the next run times of the schedule, asked again whenever the engines or the schedule change.
import { useEffect, useState } from "preact/hooks";
import { api, call, type EngineCheck, type SchedulePreview } from "../../api";

export function useEngineCheck(engines: string[], onError: (error: unknown) => void): EngineCheck | null {
  const [check, setCheck] = useState<EngineCheck | null>(null);
  useEffect(() => {
    // The server refuses an unknown engine by name: the list is sent as the form has it.
    const target_engines = engines as Parameters<typeof api.engines.check.$post>[0]["json"]["target_engines"];
    call(api.engines.check.$post({ json: { target_engines } })).then(setCheck, onError);
  }, [engines.join(",")]);
  return check;
}

export function useSchedulePreview(schedule: string, onError: (error: unknown) => void): SchedulePreview | null {
  const [preview, setPreview] = useState<SchedulePreview | null>(null);
  useEffect(() => {
    if (!schedule) {
      setPreview(null);
      return;
    }
    call(api.schedule.preview.$post({ json: { schedule } })).then(setPreview, onError);
  }, [schedule]);
  return preview;
}
