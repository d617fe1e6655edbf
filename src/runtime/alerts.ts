// Alerts of `floe run` to a webhook: a POST of Slack-compatible JSON (`{"text": ...}`, what a
// Slack incoming webhook takes, and Mattermost, Rocket.Chat, Teams' Slack-compatible endpoints
// and most receivers accept) on a failed run, on dead letters, and on the retention warning.
// The URL is a Secret (a Slack URL carries its token): it is never logged, and a failure to
// post names the host only. An alert that cannot be delivered is logged; it never fails a run.
import type { Secret } from "../job/secret.ts";
import type { RunRecord } from "../state/run-store.ts";

export type AlertKind = "run-failed" | "dead-letters" | "retention";

export interface Alert {
  kind: AlertKind;
  job: string;
  runId?: string;
  text: string;
}

/** The alerts a run that just ended gives. */
export function runAlerts(run: RunRecord): Alert[] {
  const alerts: Alert[] = [];
  if (run.outcome === "failed" && run.error) {
    alerts.push({
      kind: "run-failed",
      job: run.job,
      runId: run.runId,
      text: `floe: run ${run.runId} of job ${run.job} failed (${run.error.kind}${run.error.retryable ? ", retryable" : ""}): ${run.error.message}`,
    });
  }
  const withDeadLetters = run.tables.filter((t) => t.deadLetters > 0);
  if (withDeadLetters.length > 0) {
    alerts.push({
      kind: "dead-letters",
      job: run.job,
      runId: run.runId,
      text: `floe: run ${run.runId} of job ${run.job} wrote ${run.deadLetters} dead letters: ${withDeadLetters.map((t) => `${t.deadLetters} into ${t.table}__dlq`).join(", ")}`,
    });
  }
  return alerts;
}

/** The JSON body posted for an alert. */
export function slackPayload(alert: Alert): Record<string, unknown> {
  return {
    text: alert.text,
    // Receivers that are not Slack get the facts as fields too.
    floe: { kind: alert.kind, job: alert.job, ...(alert.runId ? { runId: alert.runId } : {}) },
  };
}

const TIMEOUT_MS = 10_000;

export class AlertError extends Error {
  override name = "AlertError";
}

/** Posts the alert; throws AlertError naming the receiver's host (never the URL) when it is not accepted. */
export async function postAlert(webhook: Secret, alert: Alert, timeoutMs = TIMEOUT_MS): Promise<void> {
  const url = new URL(webhook.reveal());
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(slackPayload(alert)),
      // Not followed: a redirect would take the alert to a host floe serve's outbound policy never checked.
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new AlertError(`the alert webhook at ${url.host} could not be reached: ${(error as Error).message}`);
  }
  await response.body?.cancel();
  if (!response.ok) throw new AlertError(`the alert webhook at ${url.host} answered ${response.status}`);
}
