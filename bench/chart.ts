// Charts of the benchmarks as PNG files, drawn by matplotlib (bench/chart.py) in a venv of the
// benchmarks' own (.local/bench-venv, made from PyPI on first use): the readers' venv is left
// alone, since a change to its requirements rebuilds it whole.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const venv = join(here, "..", ".local", "bench-venv");
const python = join(venv, "bin", "python");
const MATPLOTLIB = "matplotlib==3.10.7";

export interface ChartSpec {
  title: string;
  x: string;
  xKey?: string;
  /** Lines over x (default), or one bar per point labelled by its x-key. */
  kind?: "line" | "bar";
  series: { name: string; points: readonly object[] }[];
  panels: { key: string; label: string }[];
}

export async function drawChart(out: string, spec: ChartSpec): Promise<void> {
  if (!existsSync(python)) {
    run("python3", ["-m", "venv", venv]);
    run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", MATPLOTLIB]);
  }
  const child = spawnSync(python, [join(here, "chart.py")], {
    input: JSON.stringify({ ...spec, out }),
    encoding: "utf8",
  });
  if (child.status !== 0) throw new Error(`chart.py failed: ${child.stderr}`);
}

function run(command: string, args: string[]): void {
  const child = spawnSync(command, args, { stdio: "inherit" });
  if (child.status !== 0) throw new Error(`${command} ${args.join(" ")} failed with status ${child.status}`);
}
