// Installs what `npm run bench` runs besides floe, and only that (idempotent; the bench does it
// too): `node bench/compare/install.ts`. A first install fetches from Maven Central, about a
// minute or two; PySpark and the Iceberg Spark runtime come from `npm run services -- install readers`.
import { installConnect, installSparkKafka } from "../../dev/services/bench-systems.ts";

for (const [what, install] of [
  ["Kafka Connect worker and the Iceberg sink", installConnect],
  ["Spark's Kafka source", installSparkKafka],
] as const) {
  const t0 = performance.now();
  const installed = install();
  console.log(`${what}: ${JSON.stringify(installed)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
