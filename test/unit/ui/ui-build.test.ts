// The built UI in ui/dist is committed (so that `npm ci` alone makes `floe serve` work): it
// must be exactly what the sources build to. Rebuilds into a temporary folder and compares.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";

const root = join(import.meta.dirname, "..", "..", "..");

function files(dir: string): Map<string, Buffer> {
  return new Map(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => {
        const path = join(e.parentPath, e.name);
        return [relative(dir, path), readFileSync(path)];
      }),
  );
}

test("ui/dist is what the UI's sources build to (run npm run build:ui and commit ui/dist)", {
  timeout: 180_000,
}, () => {
  const out = mkdtempSync(join(tmpdir(), "floe-ui-build-"));
  try {
    const result = spawnSync(
      process.execPath,
      [join(root, "node_modules", "vite", "bin", "vite.js"), "build", "--config", join(root, "ui", "vite.config.ts")],
      { cwd: root, env: { ...process.env, FLOE_UI_OUT_DIR: out }, encoding: "utf8" },
    );
    assert.equal(result.status, 0, `vite build failed:\n${result.stderr}`);
    const built = files(out);
    const committed = files(join(root, "ui", "dist"));
    assert.deepEqual([...committed.keys()].sort(), [...built.keys()].sort(), "the file names differ: rebuild the UI");
    for (const [name, bytes] of built) assert.ok(committed.get(name)!.equals(bytes), `${name} differs: rebuild the UI`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
