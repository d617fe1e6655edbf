// The job file `floe init` writes: it loads with the job loader as the local defaults, with its
// settings in place, and the job name derived from a folder.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DEFAULT_BOOTSTRAP_SERVER,
  DEFAULT_TOPIC_PATTERN,
  jobNameFor,
  jobTemplate,
  nextSteps,
} from "#src/cli/init-template.ts";
import { parseJob } from "#src/job/load-job.ts";

test("the template loads as the local defaults: the broker, every topic, the embedded catalog beside the file", () => {
  const text = jobTemplate({
    name: "local",
    bootstrapServers: [DEFAULT_BOOTSTRAP_SERVER],
    topicPattern: DEFAULT_TOPIC_PATTERN,
  });
  const job = parseJob(text, "/srv/jobs/job.yaml", { env: {} });
  assert.equal(job.name, "local");
  assert.equal(job.namespace, "local_topics");
  assert.equal(job.consumerGroup, "floe_local");
  assert.deepEqual(job.source.bootstrapServers, ["127.0.0.1:9092"]);
  assert.equal(job.source.security.protocol, "PLAINTEXT");
  assert.equal(job.topicPattern, ".*");
  assert.equal(job.bindings.size, 0);
  assert.equal(job.defaultBinding.mode, "append");
  assert.equal(job.defaultBinding.onError, "dlq");
  assert.deepEqual(job.destination.catalog, { type: "sql", warehouse: "/srv/jobs/warehouse" });
  // Commented: each key it does not set is there to uncomment.
  for (const key of [
    "consumer_group",
    "max_threads",
    "sasl",
    "type: rest",
    "type: unity",
    "target_engines",
    "dedup_keys",
  ]) {
    assert.match(text, new RegExp(`#.*${key}`), key);
  }
});

test("the settings given are written so that YAML reads them back as given", () => {
  const pattern = String.raw`^(orders|customers)\.v[0-9]+$`;
  const text = jobTemplate({
    name: "shop",
    bootstrapServers: ["broker-1:9092", "broker-2:9092"],
    topicPattern: pattern,
  });
  const job = parseJob(text, "/x/job.yaml", { env: {} });
  assert.equal(job.topicPattern, pattern);
  assert.deepEqual(job.source.bootstrapServers, ["broker-1:9092", "broker-2:9092"]);
});

test("commented examples become valid settings when uncommented", () => {
  const text = jobTemplate({ name: "shop", bootstrapServers: [DEFAULT_BOOTSTRAP_SERVER], topicPattern: ".*" })
    .replace("# streams:", "streams:")
    .replace("#  customers:", "  customers:")
    .replace("#  orders:", "  orders:");
  const job = parseJob(text, "/x/job.yaml", { env: {} });
  assert.deepEqual([...job.bindings.keys()], ["customers", "orders"]);
  assert.equal(job.bindings.get("customers")!.mode, "upsert");
});

test("a job name from a folder name, and next steps that name the file", () => {
  assert.equal(jobNameFor("My-Job.2"), "my_job_2");
  assert.equal(jobNameFor("--"), "floe");
  assert.equal(jobNameFor("orders"), "orders");
  assert.match(nextSteps("job.yaml").join("\n"), /floe check --config job\.yaml/);
  assert.match(nextSteps("my dir/job.yaml").join("\n"), /floe sync --config 'my dir\/job\.yaml'/);
});
