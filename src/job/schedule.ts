// A job's `schedule:`: when `floe run` starts its runs. Three forms:
//
//   continuous        no ticks: a run keeps reading as messages come and commits by the job's
//                     commit: limits (commit.interval first at low traffic), and the next run
//                     starts as soon as one ends
//   every <n><unit>   a fixed interval, unit s, m, h or d ("every 5m", "every 2s"); runs fall on
//                     multiples of the interval since the Unix epoch (every 5m at :00, :05, ...),
//                     so two processes and a restart agree on the ticks
//   a cron expression five fields (minute hour day-of-month month day-of-week, "*/15 * * * *"),
//                     or six with seconds first ("*/2 * * * * *"), in the machine's time zone
//
// The cron fields are croner's (the de-facto syntax: ranges, steps, lists, names, L, #).
import { Cron } from "croner";

export interface Schedule {
  /** As written in the job file. */
  readonly text: string;
  /** A continuous job: its runs follow one another, each reading until it is stopped or its time is up. */
  readonly continuous: boolean;
  /** The first tick strictly after `after` (ms since the epoch), in ms since the epoch. */
  next(after: number): number;
}

const EVERY = /^every\s+(\d+)\s*(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The next run of a continuous job starts as soon as the last one ended. */
export const CONTINUOUS: Schedule = { text: "continuous", continuous: true, next: (after) => after };

export class ScheduleError extends Error {
  override name = "ScheduleError";
}

/** Parses a schedule, or throws ScheduleError saying what is wrong with it. */
export function parseSchedule(text: string): Schedule {
  const trimmed = text.trim();
  if (trimmed === "continuous") return CONTINUOUS;
  const every = EVERY.exec(trimmed);
  if (every) {
    const interval = Number(every[1]) * UNIT_MS[every[2] as keyof typeof UNIT_MS];
    if (interval < 1000) throw new ScheduleError(`"${text}": the interval must be at least 1s`);
    return { text, continuous: false, next: (after) => (Math.floor(after / interval) + 1) * interval };
  }
  if (trimmed.startsWith("every")) {
    throw new ScheduleError(`"${text}": expected "every <n><unit>" with unit s, m, h or d, e.g. "every 5m"`);
  }
  const fields = trimmed.split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw new ScheduleError(
      `"${text}": expected "continuous", "every <n><unit>" or a cron expression of five fields (minute hour day month weekday) or six (seconds first), got ${fields} field${fields === 1 ? "" : "s"}`,
    );
  }
  let cron: Cron;
  try {
    cron = new Cron(trimmed, { paused: true });
  } catch (error) {
    throw new ScheduleError(`"${text}": ${(error as Error).message.replace(/^CronPattern: /, "")}`);
  }
  return {
    text,
    continuous: false,
    next(after) {
      const next = cron.nextRun(new Date(after));
      if (next === null) throw new ScheduleError(`"${text}" has no run after ${new Date(after).toISOString()}`);
      return next.getTime();
    },
  };
}
