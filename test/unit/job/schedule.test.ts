// Job schedules: "every <n><unit>" on multiples of the interval since the epoch, and cron
// expressions of five fields or six (seconds first); the job file refuses anything else by path.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { parseSchedule, ScheduleError } from "#src/job/schedule.ts";

const at = (iso: string) => Date.parse(iso);

test("every <n><unit>: the next multiple of the interval, strictly after", () => {
  const five = parseSchedule("every 5m");
  assert.equal(five.next(at("2026-01-01T10:02:13Z")), at("2026-01-01T10:05:00Z"));
  assert.equal(five.next(at("2026-01-01T10:05:00Z")), at("2026-01-01T10:10:00Z"));
  assert.equal(parseSchedule("every 2s").next(at("2026-01-01T10:00:01.500Z")), at("2026-01-01T10:00:02Z"));
  assert.equal(parseSchedule("every 1h").next(at("2026-01-01T10:59:59Z")), at("2026-01-01T11:00:00Z"));
  assert.equal(parseSchedule("every 1d").next(at("2026-01-01T10:00:00Z")), at("2026-01-02T00:00:00Z"));
  assert.equal(parseSchedule("every 30 s").next(at("2026-01-01T10:00:31Z")), at("2026-01-01T10:01:00Z"));
});

test("cron: five fields to the minute, six with seconds first, strictly after", () => {
  const hourly = parseSchedule("0 * * * *");
  const t = at("2026-01-01T10:30:00Z");
  const next = hourly.next(t);
  assert.ok(
    next > t && next - t <= 3_600_000 && new Date(next).getMinutes() === 0 && new Date(next).getSeconds() === 0,
  );
  assert.equal(hourly.next(next), next + 3_600_000);
  const everyTwoSeconds = parseSchedule("*/2 * * * * *");
  assert.equal(everyTwoSeconds.next(at("2026-01-01T10:00:01.200Z")), at("2026-01-01T10:00:02Z"));
  assert.equal(everyTwoSeconds.next(at("2026-01-01T10:00:02Z")), at("2026-01-01T10:00:04Z"));
  assert.equal(parseSchedule("* * * * *").next(at("2026-01-01T10:00:00Z")), at("2026-01-01T10:01:00Z"));
});

test("what is not a schedule is refused, saying why", () => {
  assert.throws(() => parseSchedule("every 5"), ScheduleError);
  assert.throws(() => parseSchedule("every 5w"), /expected "every <n><unit>" with unit s, m, h or d/);
  assert.throws(() => parseSchedule("every 0s"), /at least 1s/);
  assert.throws(() => parseSchedule("* * * *"), /five fields .* or six .*, got 4 fields/);
  assert.throws(() => parseSchedule("* * * * * * 2030"), /got 7 fields/);
  assert.throws(() => parseSchedule("61 * * * *"), /"61 \* \* \* \*": Invalid value for minute: 61/);
  assert.throws(() => parseSchedule("hourly"), /got 1 field$/);
});

const job = (extra: string) => `
name: j
source: {kafka: {bootstrap_servers: [127.0.0.1:9092], topic_pattern: ^t$}}
${extra}
`;

test("the job file: schedule, alerts.webhook (a secret) and history_days", () => {
  const parsed = parseJob(
    job(`schedule: every 2s\nalerts: {webhook: "https://hooks.example.com/services/T0/B0/abc"}\nhistory_days: 7`),
    "/jobs/j.yaml",
  );
  assert.equal(parsed.schedule?.text, "every 2s");
  assert.equal(parsed.alerts.webhook?.reveal(), "https://hooks.example.com/services/T0/B0/abc");
  assert.equal(JSON.stringify(parsed.alerts), '{"webhook":"***"}');
  assert.equal(parsed.historyDays, 7);
  const defaults = parseJob(job(""), "/jobs/j.yaml");
  assert.equal(defaults.schedule, undefined);
  assert.equal(defaults.alerts.webhook, undefined);
  assert.equal(defaults.historyDays, 30);
  assert.throws(
    () => parseJob(job("schedule: every 5w\nalerts: {webhook: ftp://x}\nhistory_days: 0"), "/jobs/j.yaml"),
    (error: Error) =>
      /j\.yaml:4:\d+: schedule: "every 5w": expected/.test(error.message) &&
      /alerts\.webhook: expected an http:\/\/ or https:\/\/ URL/.test(error.message) &&
      /history_days: /.test(error.message),
  );
});
