// A job's consumer group on its page: the members (client id, host, the job's partitions the group
// assigned each, their lag, what each gained and gave up at the last rebalance), the group's state
// and when it last rebalanced. floe serve's own runs never join the group; its members are `floe
// run` replicas of the job (its `cluster:` setting), so a group without members says so plainly.
import { api, call, type JobGroup } from "../api";
import { ErrorBox, fmtTime, useData } from "../components/ui";

type Partitions = JobGroup["members"][number]["partitions"];

/** orders[0,1,2] clicks[3]: partitions by topic. */
function partitionList(partitions: Partitions): string {
  const byTopic = new Map<string, number[]>();
  for (const p of partitions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
  return byTopic.size === 0 ? "none" : [...byTopic].map(([t, ps]) => `${t}[${ps.join(",")}]`).join(" ");
}

function movedText(moved: JobGroup["members"][number]["moved"]): string {
  if (!moved) return "—";
  const parts = [
    moved.gained.length > 0 ? `gained ${partitionList(moved.gained)}` : "",
    moved.gaveUp.length > 0 ? `gave up ${partitionList(moved.gaveUp)}` : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "kept its partitions";
}

export function GroupMembers({ job }: { job: string }) {
  // Measuring lag asks the brokers and the catalog: every 10 s, not at the history's pace.
  const group = useData(() => call(api.jobs[":name"].group.$get({ param: { name: job } })), [job], 10_000);
  const g = group.data;
  return (
    <div class="card" data-testid="group-members">
      <h2>Consumer group</h2>
      <ErrorBox error={group.error} />
      {g ? (
        <>
          <p data-testid="group-summary">
            <code>{g.group}</code>: {g.state}, {g.members.length} {g.members.length === 1 ? "member" : "members"},{" "}
            {g.lag} messages behind.{" "}
            <span data-testid="last-rebalance">
              {g.lastRebalance
                ? `Last rebalance: ${fmtTime(g.lastRebalance.at)} (generation ${g.lastRebalance.generation}).`
                : "Last rebalance: unknown (no floe member noted one)."}
            </span>
          </p>
          {g.protocol === "consumer" ? (
            <p class="muted" data-testid="members-not-listed">
              The group uses Kafka's consumer protocol (KIP-848), whose members are not listed here: they are not floe's
              replicas, which join with the classic protocol.
            </p>
          ) : g.members.length === 0 ? (
            <p class="muted" data-testid="no-members">
              The group has no members: no replica of this job is running. floe serve's own runs do not join it; floe
              run processes of this job with a cluster: setting do, and are listed here.
            </p>
          ) : (
            <div class="scroll">
              <table class="grid compact" data-testid="members-table">
                <thead>
                  <tr>
                    <th>client id</th>
                    <th>host</th>
                    <th>partitions</th>
                    <th>lag</th>
                    <th>at the last rebalance</th>
                  </tr>
                </thead>
                <tbody>
                  {g.members.map((m) => (
                    <tr key={m.memberId} data-testid="member-row" title={m.memberId}>
                      <td data-testid="member-client">
                        <code>{m.clientId}</code>
                      </td>
                      <td data-testid="member-host">{m.host}</td>
                      <td data-testid="member-partitions">{partitionList(m.partitions)}</td>
                      <td data-testid="member-lag">{m.lag}</td>
                      <td data-testid="member-moved">{movedText(m.moved)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      ) : group.error ? null : (
        <p class="muted">Asking the group…</p>
      )}
    </div>
  );
}
