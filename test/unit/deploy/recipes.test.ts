// The deployment recipes of deploy/ agree with floe and with each other: the image's user,
// volume, ports and entrypoint; the Kubernetes probes ask the paths floe answers, on the port
// the container's arguments listen on, as the image's user; every Secret a pod reads is created
// in its manifest's instructions; and every job file the recipes carry loads as floe would load
// it. The image itself is built and run by deploy/check-image.sh.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { parseJob } from "#src/job/load-job.ts";
import { LIVENESS_PATH, READINESS_PATH } from "#src/runtime/health.ts";

const deploy = join(import.meta.dirname, "..", "..", "..", "deploy");
const read = (path: string) => readFileSync(join(deploy, path), "utf8");

// biome-ignore lint/suspicious/noExplicitAny: the manifests are read as YAML of any shape, and the test asserts what it reads
type Yaml = Record<string, any>;

/** The Containerfile's instructions of its last stage (the image), by keyword. */
function imageInstructions(): Map<string, string[]> {
  const text = read("Containerfile").replace(/\\\n/g, " ");
  const stages = text.split(/^FROM /m);
  const last = stages.at(-1)!;
  const found = new Map<string, string[]>();
  for (const line of last.split("\n")) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (match) found.set(match[1]!, [...(found.get(match[1]!) ?? []), match[2]!]);
  }
  return found;
}

const image = imageInstructions();
const [imageUser, imageGroup] = image.get("USER")![0]!.split(":").map(Number);

/** The port of a `--listen host:port` or `--metrics host:port` argument. */
function portOf(args: readonly string[], flag: string): number | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : Number(args[i + 1]!.split(":").at(-1));
}

test("the image runs floe as a fixed unprivileged user, with its state in a volume and its ports exposed", () => {
  assert.ok(imageUser! >= 1000 && imageGroup! >= 1000, "USER is numeric and unprivileged");
  assert.deepEqual(image.get("ENTRYPOINT"), ['["floe"]']);
  assert.deepEqual(image.get("VOLUME"), ["/var/lib/floe"]);
  assert.deepEqual(image.get("EXPOSE"), ["8000 9464"]);
  const cmd = JSON.parse(image.get("CMD")![0]!) as string[];
  assert.equal(cmd[0], "serve");
  assert.equal(portOf(cmd, "--listen"), 8000);
});

const manifests = readdirSync(join(deploy, "kubernetes")).filter((f) => f.endsWith(".yaml"));

test("there are Kubernetes manifests to check", () => assert.ok(manifests.length > 0));

for (const manifest of manifests.map((f) => `kubernetes/${f}`)) {
  test(`${manifest}: probes, ports, user, secrets and job files agree with floe`, () => {
    const text = read(manifest);
    const documents = parseAllDocuments(text).map((d) => d.toJS() as Yaml);
    const workloads = documents.filter((d) => d.kind === "StatefulSet" || d.kind === "Deployment");
    assert.ok(workloads.length > 0);
    for (const workload of workloads) {
      const pod = workload.spec.template.spec;
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(pod.securityContext.runAsUser, imageUser, "the image's uid");
      assert.equal(pod.securityContext.runAsGroup, imageGroup, "the image's gid");
      for (const container of pod.containers as Yaml[]) {
        const args = container.args as string[];
        const listens = portOf(args, args[0] === "serve" ? "--listen" : "--metrics");
        assert.ok(listens !== undefined, `${container.name} listens for its probes`);
        const ports = new Map((container.ports as Yaml[]).map((p) => [p.name, p.containerPort]));
        assert.equal(container.livenessProbe.httpGet.path, LIVENESS_PATH);
        assert.equal(container.readinessProbe.httpGet.path, READINESS_PATH);
        for (const probe of [container.livenessProbe, container.readinessProbe]) {
          assert.equal(ports.get(probe.httpGet.port), listens, "the probe asks the port floe listens on");
        }
        // A read-only root: what floe writes goes to the state volume or /tmp.
        assert.equal(container.securityContext.readOnlyRootFilesystem, true);
        const mounts = new Set((container.volumeMounts as Yaml[]).map((m) => m.mountPath));
        assert.ok(mounts.has("/var/lib/floe") && mounts.has("/tmp"));
        const stateDir = args[args.indexOf("--state-dir") + 1]!;
        assert.ok(stateDir.startsWith("/var/lib/floe"), "the state directory is on the volume");
        for (const from of container.envFrom ?? []) {
          const secret = from.secretRef?.name;
          if (secret === undefined) continue;
          assert.match(
            text,
            new RegExp(`kubectl create secret generic ${secret} `),
            `the header creates Secret ${secret}`,
          );
        }
      }
    }
    for (const config of documents.filter((d) => d.kind === "ConfigMap")) {
      for (const [name, body] of Object.entries(config.data as Record<string, string>)) {
        const job = parseJob(body, `${manifest}: ConfigMap ${config.metadata.name} ${name}`, {
          env: { KAFKA_PASSWORD: "from the Secret" },
        });
        assert.ok(job.name);
      }
    }
  });
}

test("compose.yaml: floe serve's health check asks the readiness probe on the port it listens on; job.yaml loads", () => {
  const compose = parseYaml(read("compose/compose.yaml")) as Yaml;
  const floe = compose.services.floe as Yaml;
  assert.equal(floe.build.dockerfile, "deploy/Containerfile");
  assert.equal(portOf(floe.command, "--listen"), 8000);
  assert.ok((floe.ports as string[]).some((p) => p.endsWith(":8000")));
  assert.match(floe.healthcheck.test.join(" "), new RegExp(`127\\.0\\.0\\.1:8000${READINESS_PATH}`));
  assert.ok((floe.volumes as string[]).includes("floe-state:/var/lib/floe"));
  // The job reaches the broker and the catalog by the names and ports compose gives them.
  const job = parseJob(read("compose/job.yaml"), "deploy/compose/job.yaml");
  const kafka = compose.services.kafka.environment as Record<string, string>;
  assert.deepEqual(job.source.bootstrapServers, [kafka["KAFKA_ADVERTISED_LISTENERS"]!.replace("PLAINTEXT://", "")]);
  const catalog = job.destination.catalog as { type: string; uri: string; warehouse: string };
  assert.equal(catalog.type, "rest");
  assert.ok(compose.services["iceberg-rest"].ports.some((p: string) => p.endsWith(`:${new URL(catalog.uri).port}`)));
  assert.equal(new URL(catalog.uri).hostname, "iceberg-rest");
  assert.equal(catalog.warehouse, compose.services["iceberg-rest"].environment.CATALOG_WAREHOUSE);
});
