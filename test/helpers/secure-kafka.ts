// What the tests against the secure broker share: a job file over one of its listeners, and the
// ACLs a sync needs (Read and Describe on its topics, Read on its group), granted to a principal.
import { grantAcls } from "../../dev/kafka-secure.ts";
import { testRestCatalog } from "../../dev/readers.ts";

/** The ACLs a principal needs to sync `topics` with `group`: what a cluster admin grants such a tool. */
export function grantSyncAcls(principal: string, topics: readonly string[], group: string): Promise<void> {
  return grantAcls(principal, [
    ...topics.map((topic) => ({ topic, operations: ["Read", "Describe"] as ("Read" | "Describe")[] })),
    { group, operations: ["Read"] },
  ]);
}

/** A job over `topics` (upsert by id) into the test REST catalog, with the given `source.kafka` connection keys. */
export function secureJobYaml(name: string, connection: string, topics: readonly string[], extra = ""): string {
  return `
name: ${name}
source:
  kafka:
${connection}
    consumer_group: floe_${name}
    connect_timeout: 20s
    request_timeout: 20s
${extra}
destination:
  iceberg:
    catalog: {type: rest, uri: ${testRestCatalog.uri}}
streams:
${topics.map((t) => `  ${t}: {mode: upsert, dedup_keys: [id]}`).join("\n")}
`;
}
