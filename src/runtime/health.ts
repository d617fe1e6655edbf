// Liveness and readiness of a floe process, for an orchestrator's probes (Kubernetes'
// livenessProbe and readinessProbe, a container's HEALTHCHECK). GET /healthz answers 200 while
// the process answers at all: a process that stops answering is hung and may be restarted.
// GET /readyz answers 200 only while the process does its work (its jobs' locks held, its
// scheduler running) and 503 while it starts or stops, so that a rollout waits for a replica
// that works and a stopping replica is not counted. Probes come without a credential: the answers
// say only "ok" or why not ready, never a job, host or setting.

export const LIVENESS_PATH = "/healthz";
export const READINESS_PATH = "/readyz";

export type Readiness = { ready: true } | { ready: false; reason: string };

export interface HealthAnswer {
  status: 200 | 503;
  body: { status: "ok" } | { status: "unavailable"; reason: string };
}

/** The answer of a probe at `path`, or undefined when `path` is not a probe's. */
export function healthAnswer(path: string, readiness: () => Readiness): HealthAnswer | undefined {
  if (path === LIVENESS_PATH) return { status: 200, body: { status: "ok" } };
  if (path !== READINESS_PATH) return undefined;
  const now = readiness();
  return now.ready
    ? { status: 200, body: { status: "ok" } }
    : { status: 503, body: { status: "unavailable", reason: now.reason } };
}
