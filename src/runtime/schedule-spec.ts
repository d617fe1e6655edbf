// The schedule presets the UI offers, and the next run times of a schedule as the job file's
// `schedule:` reads it (job/schedule.ts).
import { parseSchedule } from "../job/schedule.ts";

export const SCHEDULE_PRESETS: readonly { label: string; schedule: string }[] = [
  { label: "every minute", schedule: "* * * * *" },
  { label: "every hour", schedule: "0 * * * *" },
  { label: "every day", schedule: "0 0 * * *" },
  { label: "every week", schedule: "0 0 * * 1" },
  { label: "continuous", schedule: "continuous" },
];

/** The next `count` run times after `from`, or why the schedule is not one; a continuous schedule has none. */
export function previewSchedule(
  text: string,
  count: number,
  from = Date.now(),
): { error: string | null; next: Date[]; continuous: boolean } {
  let schedule: ReturnType<typeof parseSchedule>;
  try {
    schedule = parseSchedule(text);
  } catch (error) {
    return { error: (error as Error).message, next: [], continuous: false };
  }
  if (schedule.continuous) return { error: null, next: [], continuous: true };
  const next: Date[] = [];
  let at = from;
  for (let i = 0; i < count; i++) {
    at = schedule.next(at);
    next.push(new Date(at));
  }
  return { error: null, next, continuous: false };
}
