/**
 * How often the log pane can afford to redraw. A frame of the pane (./pane.ts) is its rows built as
 * strings and the changed ones written: well under a millisecond, so frames for new output come every
 * LOG_FRAME_INTERVAL_MS. Under a flood of output the main thread is also the one reading the pipes, so
 * should frames ever get slow (a huge terminal, a starved machine) they are spaced to take about
 * FRAME_BUDGET of it. Key presses are not paced by this (they are drawn at once).
 */

/** Redraws for new output at most this often (also the floor of the adaptive interval). */
export const LOG_FRAME_INTERVAL_MS = 100;
/** ... and at least this often, however slow frames are. */
export const MAX_LOG_FRAME_INTERVAL_MS = 500;
/** Share of the main thread that redraws for new output may take. */
export const FRAME_BUDGET = 0.1;
/** Weight of the newest frame in the running average. */
const EMA_WEIGHT = 0.3;

/** A running average of how long a frame of the pane takes to build and write. */
export class FrameStats {
  /** Average render time in ms (0 until the first frame). */
  averageMs = 0;
  frames = 0;

  /** One call per drawn frame, with its time in ms. */
  record(renderMs: number): void {
    if (!Number.isFinite(renderMs) || renderMs < 0) return;
    this.averageMs = this.frames === 0 ? renderMs : this.averageMs + EMA_WEIGHT * (renderMs - this.averageMs);
    this.frames++;
  }

  /** The least time between two redraws for new output. */
  interval(): number {
    return Math.min(MAX_LOG_FRAME_INTERVAL_MS, Math.max(LOG_FRAME_INTERVAL_MS, this.averageMs / FRAME_BUDGET));
  }
}
