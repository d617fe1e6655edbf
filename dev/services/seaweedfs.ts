// SeaweedFS, an independently written Iceberg REST catalog that serves v3 tables and vends
// credentials itself: one `weed mini` process holds its master, volume server, filer, S3 API
// (with STS and the S3 Tables API) and the Iceberg REST catalog, every listener on 127.0.0.1.
// Data in .local/seaweedfs/data.
//
// It is built from the Go module proxy at a pinned commit (4.53). `go install` refuses the
// `replace` directive of SeaweedFS's go.mod, so a small wrapper module that requires it and
// repeats the directive is built with `go build` (about 6 minutes on two cores); the binary is
// kept under .local/seaweedfs/, named by the version.
//
// The IAM config gives one admin identity (the catalog's OAuth2 client id and secret are its S3
// keys), STS with a fixed signing key, and the role the catalog assumes to vend table-scoped
// keys (-s3.iceberg.credentialRole): loadTable and createTable answer with STS keys in both
// `config` and `storage-credentials`. Tables live in table buckets, which only the S3 Tables API
// creates (CreateTableBucket, signed for the s3tables service).
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SignatureV4 } from "@smithy/signature-v4";
import {
  buildInPlace,
  daemonService,
  localDir,
  requireCommand,
  runStep,
  type Service,
  ServiceError,
  spawnDaemon,
} from "./lib.ts";
import { Sha256 } from "./minio-sts.ts";

const name = "seaweedfs";
/** SeaweedFS 4.53: the module has no semver tags, so the commit's pseudo-version. */
export const SEAWEEDFS_VERSION = "v0.0.0-20261109003541-7506e5f91cd6";
const home = join(localDir, "seaweedfs");
const binDir = join(home, `bin-${SEAWEEDFS_VERSION}`);
const binary = join(binDir, "weed");
const buildDir = join(home, "build");
const dataDir = join(home, "data");
const iamConfig = join(home, "iam.json");

const env = (key: string, fallback: number) => Number(process.env[key] ?? fallback);
/** Every port of the mini cluster; each gRPC port is its HTTP port + 10000, SeaweedFS's rule. */
const ports = {
  s3: env("FLOE_TEST_SEAWEEDFS_S3_PORT", 8343),
  iceberg: env("FLOE_TEST_SEAWEEDFS_ICEBERG_PORT", 8183),
  master: env("FLOE_TEST_SEAWEEDFS_MASTER_PORT", 9433),
  volume: env("FLOE_TEST_SEAWEEDFS_VOLUME_PORT", 9434),
  filer: env("FLOE_TEST_SEAWEEDFS_FILER_PORT", 8898),
  admin: env("FLOE_TEST_SEAWEEDFS_ADMIN_PORT", 23656),
};
const GRPC_OFFSET = 10_000;

export const seaweedfs = {
  s3Endpoint: `http://127.0.0.1:${ports.s3}`,
  catalogUri: `http://127.0.0.1:${ports.iceberg}`,
  region: "us-east-1",
  accessKeyId: "floe-seaweedfs-admin",
  secretAccessKey: "floe-seaweedfs-admin-secret",
  /** The role the catalog assumes to vend credentials. */
  credentialRole: "arn:aws:iam::role/FloeIcebergVending",
  /** A table bucket the tests create their namespaces in (S3 Tables names: 3-63 of a-z, 0-9, -). */
  tableBucket: "floe-tables",
};

const signingKey = Buffer.from("floe-seaweedfs-sts-signing-key-for-tests-only").toString("base64");

/** The IAM config: the admin identity, STS, and the vending role with full S3 access (the session policy narrows it). */
function writeIamConfig(): void {
  const fullAccess = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: ["s3:*"], Resource: ["*"] }] };
  const config = {
    identities: [
      {
        name: "floe-admin",
        credentials: [{ accessKey: seaweedfs.accessKeyId, secretKey: seaweedfs.secretAccessKey }],
        actions: ["Admin", "Read", "Write", "List", "Tagging"],
      },
    ],
    sts: { tokenDuration: "1h", maxSessionLength: "12h", issuer: "floe-seaweedfs-sts", signingKey },
    policy: { defaultEffect: "Deny", storeType: "memory" },
    policies: [{ name: "FloeS3FullAccess", document: fullAccess }],
    roles: [
      {
        roleName: "FloeIcebergVending",
        roleArn: seaweedfs.credentialRole,
        attachedPolicies: ["FloeS3FullAccess"],
        // The catalog assumes the role for its caller as the provider "iceberg-catalog", which
        // SeaweedFS checks as a federated principal allowed sts:AssumeRoleWithCredentials.
        trustPolicy: {
          Version: "2012-10-17",
          Statement: [
            { Effect: "Allow", Principal: "*", Action: ["sts:AssumeRole"] },
            {
              Effect: "Allow",
              Principal: { Federated: "iceberg-catalog" },
              Action: ["sts:AssumeRoleWithCredentials"],
            },
          ],
        },
      },
    ],
  };
  mkdirSync(home, { recursive: true });
  writeFileSync(iamConfig, `${JSON.stringify(config, null, 2)}\n`);
}

/** Builds the pinned SeaweedFS from a wrapper module into a staging directory renamed into place. */
function installBinary(): void {
  if (existsSync(binary)) return;
  requireCommand(name, "go", ["version"]);
  mkdirSync(buildDir, { recursive: true });
  // The wrapper requires SeaweedFS and repeats the one replace directive its build needs.
  writeFileSync(
    join(buildDir, "go.mod"),
    `module floe.local/seaweedfs-build

go 1.26

require github.com/seaweedfs/seaweedfs ${SEAWEEDFS_VERSION}

replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0
`,
  );
  writeFileSync(
    join(buildDir, "tools.go"),
    '//go:build tools\n\npackage tools\n\nimport _ "github.com/seaweedfs/seaweedfs/weed"\n',
  );
  buildInPlace(binDir, (staging) => {
    const goEnv = { GOFLAGS: "-mod=mod" };
    runStep(name, "resolving SeaweedFS's dependencies (go mod tidy)", "go", ["mod", "tidy"], buildDir, goEnv);
    runStep(
      name,
      `building github.com/seaweedfs/seaweedfs@${SEAWEEDFS_VERSION} with the Go module proxy (about 6 minutes)`,
      "go",
      ["build", "-o", join(staging, "weed"), "github.com/seaweedfs/seaweedfs/weed"],
      buildDir,
      goEnv,
    );
  });
}

async function catalogAnswers(): Promise<boolean> {
  try {
    const response = await fetch(`${seaweedfs.catalogUri}/v1/config`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** A request to the S3 Tables API, SigV4-signed for the s3tables service with the admin keys. */
async function s3Tables(method: string, path: string, body: unknown): Promise<Response> {
  const url = new URL(path, seaweedfs.s3Endpoint);
  const text = body === undefined ? undefined : JSON.stringify(body);
  const signer = new SignatureV4({
    service: "s3tables",
    region: seaweedfs.region,
    credentials: { accessKeyId: seaweedfs.accessKeyId, secretAccessKey: seaweedfs.secretAccessKey },
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    headers: { host: url.host, "content-type": "application/x-amz-json-1.1" },
    ...(text === undefined ? {} : { body: text }),
  });
  return fetch(url, {
    method,
    headers: signed.headers as Record<string, string>,
    ...(text === undefined ? {} : { body: text }),
    signal: AbortSignal.timeout(10_000),
  });
}

/** Creates a table bucket through the S3 Tables API; one that exists already is fine. */
export async function createTableBucket(bucket: string): Promise<void> {
  const response = await s3Tables("PUT", "/buckets", { name: bucket });
  const text = await response.text();
  if (response.ok || /Conflict|AlreadyExists/i.test(text)) return;
  throw new ServiceError(name, `CreateTableBucket ${bucket}: HTTP ${response.status} ${text}`);
}

/** The S3 API takes our admin keys: the S3 Tables API answers a signed ListTableBuckets. */
async function healthy(): Promise<boolean> {
  if (!(await catalogAnswers())) return false;
  try {
    const response = await s3Tables("GET", "/buckets", undefined);
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** Every listener of the mini cluster, each gRPC one included. */
const allPorts = [
  ...Object.values(ports),
  ...[ports.s3, ports.master, ports.volume, ports.filer, ports.admin].map((p) => p + GRPC_OFFSET),
];

export const seaweedfsService: Service = daemonService({
  name,
  endpoint: `catalog ${seaweedfs.catalogUri}, S3 ${seaweedfs.s3Endpoint}`,
  waitingFor: `${seaweedfs.catalogUri} and the S3 Tables API to answer`,
  ports: allPorts,
  portSetting: "FLOE_TEST_SEAWEEDFS_*_PORT",
  healthy,
  install: installBinary,
  binary,
  launch() {
    writeIamConfig();
    mkdirSync(dataDir, { recursive: true });
    return spawnDaemon(
      name,
      binary,
      [
        "mini",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        `-dir=${dataDir}`,
        `-master.port=${ports.master}`,
        `-master.port.grpc=${ports.master + GRPC_OFFSET}`,
        // Nothing leaves the machine.
        "-master.telemetry=false",
        `-volume.port=${ports.volume}`,
        `-volume.port.grpc=${ports.volume + GRPC_OFFSET}`,
        `-filer.port=${ports.filer}`,
        `-filer.port.grpc=${ports.filer + GRPC_OFFSET}`,
        `-s3.port=${ports.s3}`,
        `-s3.port.grpc=${ports.s3 + GRPC_OFFSET}`,
        `-s3.port.iceberg=${ports.iceberg}`,
        "-s3.port.lance=0",
        `-s3.config=${iamConfig}`,
        `-s3.iam.config=${iamConfig}`,
        `-s3.iceberg.credentialRole=${seaweedfs.credentialRole}`,
        `-s3.externalUrl=${seaweedfs.s3Endpoint}`,
        `-admin.port=${ports.admin}`,
        `-admin.port.grpc=${ports.admin + GRPC_OFFSET}`,
        "-admin.port.legacy=0",
        "-admin.ui=false",
        "-webdav=false",
      ],
      { cwd: home },
    );
  },
  ready: () => createTableBucket(seaweedfs.tableBucket),
  detail: `data ${dataDir}`,
  timeoutMs: 120_000,
});
