// A job's schedule as written: a five-field cron expression (`*/5 * * * *`, times in UTC) or
// `every <n><m|h|d>` (every 5m, every 1h), and the presets the UI offers. The next run times
// come from croner.
import { Cron } from "croner";

export const SCHEDULE_PRESETS: readonly { label: string; schedule: string }[] = [
  { label: "every minute", schedule: "* * * * *" },
  { label: "every hour", schedule: "0 * * * *" },
  { label: "every day", schedule: "0 0 * * *" },
  { label: "every week", schedule: "0 0 * * 1" },
];

const EVERY = /^every\s+(\d+)\s*(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Why the schedule is not one floe runs; undefined when it is. */
export function checkSchedule(schedule: string): string | undefined {
  const every = EVERY.exec(schedule.trim());
  if (every) return Number(every[1]) >= 1 ? undefined : "every needs at least 1 (every 1m)";
  if (schedule.trim().split(/\s+/).length !== 5) {
    return `expected five cron fields (minute hour day month weekday) or "every 5m", got ${JSON.stringify(schedule)}`;
  }
  try {
    new Cron(schedule, { timezone: "UTC", paused: true });
    return undefined;
  } catch (error) {
    return `not a cron expression: ${(error as Error).message}`;
  }
}

/** The next `count` run times after `from`. */
export function nextRuns(schedule: string, count: number, from = new Date()): Date[] {
  const every = EVERY.exec(schedule.trim());
  if (every) {
    const step = Number(every[1]) * UNIT_MS[every[2] as keyof typeof UNIT_MS];
    const first = Math.floor(from.getTime() / step) * step + step;
    return Array.from({ length: count }, (_, i) => new Date(first + i * step));
  }
  return new Cron(schedule, { timezone: "UTC", paused: true }).nextRuns(count, from);
}
