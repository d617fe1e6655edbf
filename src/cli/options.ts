// Argument parsers shared by the commands.
import { InvalidArgumentError } from "commander";

/** For a repeatable option: --config a.yaml --config b.yaml. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function nonNegativeSeconds(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a number of seconds");
  return n;
}

export function positiveSeconds(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a positive number of seconds");
  return n;
}

export function positiveInteger(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}
