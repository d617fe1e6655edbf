// The live progress of `floe sync` on a terminal: one line per topic (progress-model.ts),
// redrawn in place on stderr from the sync's events, at most every REDRAW_MS and once a second
// while nothing happens (the rate and time left move on). The last frame stays on the screen
// above the report. Used only when stderr is a terminal; a pipe, a file or --json get nothing.
import type { SyncEvent } from "../pipeline/events.ts";
import { progressLines, SyncProgress } from "./progress-model.ts";

const REDRAW_MS = 100;
const IDLE_REDRAW_MS = 1000;

/** The terminal stream the bars are drawn on: process.stderr, or a test's. */
export interface ProgressStream {
  write(text: string): unknown;
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

export interface ProgressDisplay {
  update(event: SyncEvent): void;
  /** Draws the last frame and stops redrawing. */
  done(): void;
}

/** Should a progress display be drawn on this stream: a terminal that is not TERM=dumb. */
export function wantsProgress(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && env.TERM !== "dumb";
}

export function progressDisplay(stream: ProgressStream, clock: () => number = Date.now): ProgressDisplay {
  const progress = new SyncProgress();
  let drawn = 0;
  let pending: NodeJS.Timeout | undefined;
  let lastDraw = 0;
  let stopped = false;

  const draw = () => {
    pending = undefined;
    if (!progress.planned) return;
    lastDraw = clock();
    const columns = Math.max(20, (stream.columns || 80) - 1);
    let lines = progressLines(progress.topics(lastDraw), columns);
    // A frame taller than the screen cannot be redrawn in place: show what fits and a summary.
    const room = Math.max(2, (stream.rows || 24) - 2);
    if (lines.length > room) {
      const hidden = lines.length - (room - 1);
      lines = [...lines.slice(0, room - 1), `… and ${hidden} more topic(s)`];
    }
    // Up to the frame's first line, then each line cleared and written again.
    const up = drawn > 0 ? `\x1b[${drawn}A` : "";
    stream.write(`${up}${lines.map((l) => `\r\x1b[2K${l}\n`).join("")}`);
    drawn = lines.length;
  };
  const schedule = () => {
    if (stopped || pending) return;
    const wait = Math.max(0, REDRAW_MS - (clock() - lastDraw));
    pending = setTimeout(draw, wait);
    pending.unref();
  };
  const idle = setInterval(() => {
    if (!stopped && clock() - lastDraw >= IDLE_REDRAW_MS) draw();
  }, IDLE_REDRAW_MS);
  idle.unref();

  return {
    update(event) {
      if (stopped) return;
      progress.apply(event);
      // The first frame at once: a short sync shows its bars at least once.
      if (event.type === "planned") draw();
      else schedule();
    },
    done() {
      if (stopped) return;
      stopped = true;
      clearInterval(idle);
      if (pending) clearTimeout(pending);
      draw();
    },
  };
}
