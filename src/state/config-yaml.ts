// A stored job as a job file, and back: the export composes the job with its source and
// destination into the job file's data, each secret replaced by a ${VARIABLE} to set where the
// file runs; the import splits a job file into the three records the store keeps (its
// source.kafka without the job's reading settings, its destination.iceberg without the
// namespace, and the rest as the job), which the store then validates and writes together.
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { z } from "zod";
import { jobReadingShape } from "../job/job-schema.ts";
import { identifier } from "../job/schema-parts.ts";
import { type Doc, issuesError, StoreError } from "./config-records.ts";
import { mapSecrets, refuseSealed } from "./sealed-secrets.ts";

/** A composed job document (config-records.ts's compose) as job file text; secrets become ${...}. */
export function jobFileText(doc: Doc): string {
  const placeholders = mapSecrets(doc, (_value, path) => `\${${path.join("_").toUpperCase()}}`);
  return `# floe job file, exported from the UI; set the \${...} variables where it runs.\n${toYaml(placeholders)}`;
}

/** The records a job file's text makes, not yet validated; the source and destination take `names`, else the job's name. */
export interface ImportedRecords {
  readonly name: string;
  readonly source: Doc;
  readonly destination: Doc;
  readonly job: Doc;
}

/** Splits a job file's text into its source, destination and job records; problems are at `yaml...`. */
export function recordsOfJobFile(text: string, names: { source?: string; destination?: string } = {}): ImportedRecords {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new StoreError(400, [{ path: "yaml", message: (error as Error).message }]);
  }
  const file = z
    .looseObject({
      name: identifier,
      source: z.looseObject({ kafka: z.looseObject({}) }),
      destination: z.looseObject({ iceberg: z.looseObject({}) }).prefault({ iceberg: {} }),
    })
    .safeParse(data);
  if (!file.success) throw issuesError(file.error, ["yaml"]);
  refuseSealed(file.data, ["yaml"]);
  const { name, source, destination, ...rest } = file.data;
  const kafka = { ...source.kafka };
  const reading: Doc = {};
  for (const key of Object.keys(jobReadingShape)) {
    if (key in kafka) reading[key] = kafka[key];
    delete kafka[key];
  }
  const { namespace, ...iceberg } = destination.iceberg;
  const sourceName = names.source ?? name;
  const destinationName = names.destination ?? name;
  return {
    name,
    source: { name: sourceName, kafka },
    destination: { name: destinationName, iceberg },
    job: {
      name,
      source: sourceName,
      destination: destinationName,
      ...reading,
      ...(namespace === undefined ? {} : { namespace }),
      ...rest,
    },
  };
}
