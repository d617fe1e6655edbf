// The metrics of a job's group membership: one floe_cluster_member series per job, replaced at
// each rebalance (an old member id or generation never lingers), and the partition count.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ServiceMetrics } from "#src/runtime/metrics.ts";

test("the member id and generation of the latest join, and the partitions assigned", async () => {
  const metrics = new ServiceMetrics();
  metrics.setMembership("shop", "m-1", 3, 4);
  metrics.setMembership("other", "m-9", 1, 12);
  metrics.setMembership("shop", "m-2", 5, 6);
  const text = await metrics.registry.metrics();
  assert.match(text, /floe_cluster_member\{job="shop",member_id="m-2",generation="5"\} 1/);
  assert.doesNotMatch(text, /member_id="m-1"/, "the earlier generation's series is gone");
  assert.match(text, /floe_cluster_member\{job="other",member_id="m-9",generation="1"\} 1/);
  assert.match(text, /floe_cluster_assigned_partitions\{job="shop"\} 6/);
  assert.match(text, /floe_cluster_assigned_partitions\{job="other"\} 12/);
});
