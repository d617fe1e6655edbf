// Azure Storage locations as tables name them:
//   abfs[s]://<container>@<account>.dfs.core.windows.net/<path>   ADLS Gen2 (Hadoop ABFS driver)
//   wasb[s]://<container>@<account>.blob.core.windows.net/<path>  Blob (Hadoop WASB driver)
// Both name a blob of the account: floe reads and writes through the Blob API, which serves
// hierarchical-namespace (ADLS Gen2) accounts too, at https://<account>.blob.<suffix>. The
// location string itself is never rewritten.

export interface AzureLocation {
  readonly scheme: "abfs" | "abfss" | "wasb" | "wasbs";
  readonly container: string;
  /** The storage account's name: the first label of the host. */
  readonly account: string;
  /** The host as written: <account>.dfs.core.windows.net, <account>.blob.core.windows.net, ... */
  readonly host: string;
  /** The blob name: everything after the host and its slash. */
  readonly path: string;
  /** The Blob service URL of the account (https, the cloud's suffix kept: core.chinacloudapi.cn, ...). */
  readonly blobAccountUrl: string;
}

const PATTERN = /^(abfss?|wasbs?):\/\/([^@/]+)@([^/]+)\/(.+)$/i;

export function isAzureLocation(location: string): boolean {
  return /^(abfss?|wasbs?):\/\//i.test(location);
}

export function parseAzureLocation(location: string): AzureLocation {
  const match = PATTERN.exec(location);
  if (!match) {
    throw new TypeError(
      `${location} is not an Azure Storage location (abfss://<container>@<account>.dfs.core.windows.net/<path> or wasbs://<container>@<account>.blob.core.windows.net/<path>)`,
    );
  }
  const scheme = match[1]!.toLowerCase() as AzureLocation["scheme"];
  const host = match[3]!;
  const dot = host.indexOf(".");
  const account = dot === -1 ? host : host.slice(0, dot);
  // <account>.dfs.<suffix> and <account>.blob.<suffix> share the suffix of their cloud.
  const service = /^[^.]+\.(?:dfs|blob)\.(.+)$/i.exec(host);
  const suffix = service ? service[1]! : "core.windows.net";
  return {
    scheme,
    container: match[2]!,
    account,
    host,
    path: match[4]!,
    blobAccountUrl: `https://${account}.blob.${suffix}`,
  };
}
