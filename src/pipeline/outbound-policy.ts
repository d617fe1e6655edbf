// Where `floe serve` may connect for the records its UI users write: a UI user names hosts
// (brokers, a catalog, its token endpoint, a registry, object-store endpoints, a webhook), and
// the server connects from inside its own network. Link-local addresses (169.254.0.0/16,
// fe80::/10) and the cloud metadata services (169.254.169.254, fd00:ec2::254,
// metadata.google.internal, 100.100.100.200, ...) hand out the host's own credentials to any
// caller, so they are refused by default, by name and after DNS resolution (a name that
// resolves to one of them is refused too), before any connection is made. An operator may give
// an allow-list (`floe serve --allow-hosts`): then only the hosts it names are reached, and a
// host it names is reached even if the default refuses it.
//
// The check runs when a job is built for a connection (Test connection, discover, a run): a
// broker that advertises another host in its metadata is not checked here (documented).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Job } from "../job/job.ts";

export class OutboundRefusedError extends Error {
  override name = "OutboundRefusedError";
  readonly status = 403;
  readonly issues: readonly { path: string; message: string }[];

  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.issues = [{ path, message }];
  }
}

const METADATA_NAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.internal",
  "instance-data",
  "instance-data.ec2.internal",
]);

/** Addresses that are not link-local but serve a cloud's instance metadata or host agent. */
const METADATA_ADDRESSES = new Set([
  "100.100.100.200", // Alibaba Cloud
  "168.63.129.16", // Azure WireServer
  "192.0.0.192", // Oracle Cloud
  "fd00:ec2::254", // AWS IMDS over IPv6
]);

/** Why an address is refused by default; undefined when it may be reached. */
export function refusedAddress(address: string): string | undefined {
  let ip = address.toLowerCase().replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) ip = mapped[1]!;
  if (isIP(ip) === 4) {
    const [a, b] = ip.split(".").map(Number) as [number, number];
    if (a === 169 && b === 254) return "a link-local address (169.254.0.0/16, where cloud metadata services answer)";
    if (a === 0) return "an unspecified address (0.0.0.0/8)";
    if (METADATA_ADDRESSES.has(ip)) return "a cloud metadata address";
    return undefined;
  }
  if (isIP(ip) === 6) {
    const expanded = expandIpv6(ip);
    // An IPv4 address inside IPv6 (::ffff:0:0/96 mapped, which the socket reaches over IPv4, and
    // the NAT64 prefix 64:ff9b::/96) is the IPv4 address's: new URL() writes [::ffff:169.254.169.254]
    // as [::ffff:a9fe:a9fe], which no dotted pattern matches.
    const embedded =
      /^(?:0000:0000:0000:0000:0000:ffff|0064:ff9b:0000:0000:0000:0000):([0-9a-f]{4}):([0-9a-f]{4})$/.exec(expanded);
    if (embedded) {
      const [high, low] = [Number.parseInt(embedded[1]!, 16), Number.parseInt(embedded[2]!, 16)];
      return refusedAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
    }
    if (METADATA_ADDRESSES.has(ip) || expanded === expandIpv6("fd00:ec2::254")) return "a cloud metadata address";
    const first = Number.parseInt(expanded.slice(0, 4), 16);
    if ((first & 0xffc0) === 0xfe80) return "a link-local address (fe80::/10)";
    if (expanded === expandIpv6("::")) return "the unspecified address (::)";
  }
  return undefined;
}

function expandIpv6(ip: string): string {
  const [head, tail = ""] = ip.includes("::") ? ip.split("::") : [ip, undefined];
  const h = head === "" ? [] : head!.split(":");
  const t = tail === "" || tail === undefined ? [] : tail.split(":");
  const fill = ip.includes("::") ? Array(8 - h.length - t.length).fill("0") : [];
  return [...h, ...fill, ...t].map((g) => g.padStart(4, "0")).join(":");
}

export type Lookup = (host: string) => Promise<readonly string[]>;

const systemLookup: Lookup = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

export class OutboundPolicy {
  readonly #allow: readonly string[];
  readonly #lookup: Lookup;

  /** `allowHosts`: names, IP addresses or `*.domain`; empty: any host but the refused ones. */
  constructor(allowHosts: readonly string[] = [], resolve: Lookup = systemLookup) {
    this.#allow = allowHosts.map((h) => h.toLowerCase().replace(/^\[|\]$/g, ""));
    this.#lookup = resolve;
  }

  /** Refuses (OutboundRefusedError naming `path`) a host the policy does not let the server reach. */
  async checkHost(host: string, path: string): Promise<void> {
    const name = host
      .toLowerCase()
      .replace(/^\[|\]$/g, "")
      .replace(/\.$/, "");
    if (this.#allow.length > 0) {
      const allowed = this.#allow.some((a) => (a.startsWith("*.") ? name.endsWith(a.slice(1)) : a === name));
      if (!allowed) {
        throw new OutboundRefusedError(
          path,
          `${name} is not in the hosts this server may reach (floe serve --allow-hosts)`,
        );
      }
      return;
    }
    if (METADATA_NAMES.has(name)) {
      throw new OutboundRefusedError(path, `${name} is a cloud metadata service; floe serve does not connect to it`);
    }
    const direct = refusedAddress(name);
    if (direct !== undefined)
      throw new OutboundRefusedError(path, `${name} is ${direct}; floe serve does not connect to it`);
    if (isIP(name) !== 0) return;
    let addresses: readonly string[];
    try {
      addresses = await this.#lookup(name);
    } catch {
      // Unresolvable: the connection fails on its own, with the client's own words.
      return;
    }
    for (const address of addresses) {
      const why = refusedAddress(address);
      if (why !== undefined) {
        throw new OutboundRefusedError(
          path,
          `${name} resolves to ${address}, ${why}; floe serve does not connect to it`,
        );
      }
    }
  }

  /** Every host the job names, checked. */
  async checkJob(job: Job): Promise<void> {
    for (const { host, path } of jobEndpoints(job)) await this.checkHost(host, path);
  }
}

/** The hosts a job connects to, with the job file path that names each. */
export function jobEndpoints(job: Job): { host: string; path: string }[] {
  const out: { host: string; path: string }[] = [];
  const url = (value: string | undefined, path: string) => {
    if (value === undefined) return;
    try {
      out.push({ host: new URL(value).hostname, path });
    } catch {
      // Not a URL: the client refuses it with its own error.
    }
  };
  job.source.bootstrapServers.forEach((server, i) => {
    const host = /^(\[[^\]]+\]|[^:]+):\d+$/.exec(server)?.[1];
    if (host !== undefined) out.push({ host, path: `source.kafka.bootstrap_servers.${i}` });
  });
  url(job.source.schemaRegistry?.url, "source.kafka.schema_registry.url");
  const catalog = job.destination.catalog;
  if (catalog.type === "rest") {
    url(catalog.uri, "destination.iceberg.catalog.uri");
    const credential = catalog.credential;
    if (credential !== undefined && "oauth2ServerUri" in credential && credential.oauth2ServerUri !== undefined) {
      url(new URL(credential.oauth2ServerUri, catalog.uri).href, "destination.iceberg.catalog.oauth2_server_uri");
    }
  } else if (catalog.type === "unity") {
    url(catalog.workspaceUrl, "destination.iceberg.catalog.workspace_url");
  }
  const storage = job.destination.storage;
  url(storage?.s3?.endpoint, "destination.iceberg.storage.s3.endpoint");
  url(storage?.gcs?.endpoint, "destination.iceberg.storage.gcs.endpoint");
  url(storage?.azure?.endpoint, "destination.iceberg.storage.azure.endpoint");
  const webhook = job.alerts.webhook?.reveal();
  if (webhook !== undefined) url(webhook, "alerts.webhook");
  return out;
}
