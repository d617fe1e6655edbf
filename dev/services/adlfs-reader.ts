// A Python for PyIceberg reads of Azure tables: a venv of its own with adlfs, layered over the
// shared readers venv (a .pth file puts that venv's site-packages on its path), so the readers'
// recipe stays as it is. Built beside any older one when its recipe changes.
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildBeside, localDir, root, runStep } from "./lib.ts";
import { readerEnv } from "./readers.ts";

const requirements = join(root, "dev", "services", "adlfs", "requirements.txt");

function sitePackages(venv: string): string {
  const lib = join(venv, "lib");
  const python = readdirSync(lib).find((d) => d.startsWith("python"));
  if (python === undefined) throw new Error(`${venv}: no lib/python*`);
  return join(lib, python, "site-packages");
}

/** The python of the adlfs venv, built first if needed (seconds, from PyPI). */
export async function adlfsPython(): Promise<string> {
  if (!existsSync(readerEnv.python)) {
    throw new Error(`no readers venv at ${readerEnv.python}; run: npm run services -- install readers`);
  }
  const dir = buildBeside([requirements], join(localDir, "adlfs-venv"), (staging) => {
    runStep("adlfs", "creating the adlfs venv", readerEnv.python, ["-m", "venv", "--without-pip", staging]);
    linkReadersVenv(staging);
    runStep("adlfs", "installing adlfs from PyPI", join(staging, "bin", "python"), [
      "-m",
      "pip",
      "install",
      "--disable-pip-version-check",
      "--quiet",
      "-r",
      requirements,
    ]);
  });
  // A venv built through a git worktree's .local symlink named the readers venv by that path,
  // which goes when the worktree does: name the real one again.
  const pth = join(sitePackages(dir), "floe-readers.pth");
  if (!existsSync(readFileSync(pth, "utf8").trim())) linkReadersVenv(dir);
  return join(dir, "bin", "python");
}

/** Puts the readers venv's site-packages, by its real path, on the path of the venv at `venv`. */
function linkReadersVenv(venv: string): void {
  writeFileSync(
    join(sitePackages(venv), "floe-readers.pth"),
    `${realpathSync(sitePackages(join(localDir, "venv")))}\n`,
  );
}
