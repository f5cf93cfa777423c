/**
 * The launch log pane: a step list (status, elapsed), the selected step's log (follow, scroll, search
 * with highlights, wrap), a tqdm progress bar, the step's metrics (loss last · min · source and a
 * sparkline), its newest alert, the GPUs' memory against the estimate, and key hints.
 *
 * Drawn without Ink: under a flood of output an Ink frame of this screen cost 20-40 ms of the main
 * thread (React, yoga, then a styled cell for every character of the screen), which is also the thread
 * that drains the step's pipes, so the child waited on every frame. Here a frame is the rows as strings
 * (./view.ts), and only the rows that differ from what the terminal shows are written. Keys go through
 * the keymap and the pure reducer in ./state.ts.
 */
import type { RunModel } from '../../src/pane/index.js';
import { SIGINT_GRACE_MS, SIGTERM_GRACE_MS } from '../../src/proc/index.js';
import { LOG_FRAME_INTERVAL_MS, type FrameStats } from '../../src/pane/index.js';
import { parseKeys } from '../../src/pane/index.js';
import type { KeyPress } from '../../src/text/index.js';
import { paneCommand, paneStack } from '../../src/pane/index.js';
import {
  initialPaneState,
  paneReducer,
  type PaneAction,
  type PaneCommand,
  type PaneState,
} from '../../src/pane/index.js';
import { alertListLength, paneLayout, paneLines, type PaneLayout, type PaneLive } from '../../src/pane/index.js';

/** How often the pane looks at the model's version (a redraw happens only when one is due). */
export const FRAME_TICK_MS = 50;
/** Redraw at least this often while a step runs, so elapsed times tick. */
export const CLOCK_TICK_MS = 1_000;

// Synchronized output (terminals that know it show the frame at once, the rest ignore it).
const BEGIN_SYNC = '\x1b[?2026h';
const END_SYNC = '\x1b[?2026l';

/** What the pane can ask of the run. */
export interface PaneControls {
  stop(): void;
  killNow(): void;
  /** Leave the pane, the run goes on (a Slurm job); absent when the run cannot outlive the pane. */
  detach?: () => void;
}

/** Options of the pane. */
export interface PaneOptions {
  model: RunModel;
  /** The run's watch, GPUs and estimate (the metrics, alert and GPU rows); absent: the log alone. */
  live?: PaneLive | null;
  controls: PaneControls;
  /** Called once with the exit code when the pane is done (after the run ended). */
  onExit(code: number): void;
  title: string;
  /** Grace periods shown in the stop prompt. */
  grace?: { sigintMs: number; sigtermMs: number };
  /** The stop question instead of the grace periods' (e.g. a Slurm job's scancel). */
  stopPrompt?: string;
  /** True: a run that succeeded closes the pane (default: it stays open until q, so its end can be read). */
  closeOnEnd?: boolean;
  /** The terminal's size, read at every frame. */
  size(): { columns: number; rows: number };
  /** Writes to the terminal (the pane only ever writes whole frames). */
  write(data: string): void;
  /** Frame times: redraws for new output are spaced to what frames cost. */
  frames?: FrameStats;
  now?: () => number;
}

/** The pane's controller: view state, keys, frame pacing, and the rows the terminal shows. */
export class Pane {
  /** The reducer state (keys that arrive before the next frame see each other). */
  state: PaneState = initialPaneState();
  /** Frames written (tests wait on it). */
  framesDrawn = 0;
  private shown: string[] = [];
  private drawnVersion = Number.NaN;
  private lastDraw = 0;
  private lastClock = 0;
  private exited = false;
  /** Whether the stop was asked for in this pane (then the pane closes when the run has ended). */
  private stopAsked = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private offMilestone: (() => void) | null = null;
  private drawQueued = false;
  private readonly now: () => number;

  constructor(private readonly opts: PaneOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Draws the first frame and starts the frame ticks. */
  start(): void {
    this.draw();
    // Capped frame rate: look at the model's version every FRAME_TICK_MS and redraw when it changed and a
    // frame is due (every LOG_FRAME_INTERVAL_MS, more apart if frames were slow); milestones draw at once.
    this.timer = setInterval(() => this.tick(), FRAME_TICK_MS);
    this.offMilestone = this.opts.model.onMilestone(() => this.queueDraw());
  }

  /** Stops the ticks (the terminal is left as it is). */
  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.offMilestone?.();
    this.offMilestone = null;
  }

  /** Changes whenever anything shown changed: the model, the watch (a loss.csv row), the GPUs. */
  private version(): number {
    const { model, live } = this.opts;
    return model.version + (live ? live.watch.version + (live.telemetry?.version ?? 0) : 0);
  }

  /** One frame tick: redraws if output arrived and a frame is due, or the clock should move. */
  tick(): void {
    const now = this.now();
    const { model, frames } = this.opts;
    const running = model.steps.some((s) => s.status === 'running');
    const due = now - this.lastDraw >= (frames ? frames.interval() : LOG_FRAME_INTERVAL_MS);
    if ((this.version() !== this.drawnVersion && due) || (running && now - this.lastClock >= CLOCK_TICK_MS))
      this.draw();
  }

  /** Input read from the terminal: each key in it is handled, then one frame shows the result. */
  input(data: string): void {
    for (const [input, key] of parseKeys(data)) this.key(input, key);
    this.draw();
  }

  /** The terminal changed size: everything is drawn again. */
  resize(): void {
    this.shown = [];
    this.draw();
  }

  private queueDraw(): void {
    if (this.drawQueued) return;
    this.drawQueued = true;
    setImmediate(() => {
      this.drawQueued = false;
      this.draw();
    });
  }

  private dispatch(a: PaneAction): void {
    this.state = paneReducer(this.state, a);
  }

  private layout(): PaneLayout {
    return paneLayout(this.opts.model, this.state, this.opts.size(), this.opts.live);
  }

  /** Builds the frame and writes the rows that changed. */
  draw(): void {
    const t0 = performance.now();
    const { model } = this.opts;
    this.dispatch({ type: 'autoStep', index: model.activeStep });
    const now = this.now();
    this.drawnVersion = this.version();
    this.lastDraw = now;
    this.lastClock = now;
    const lines = paneLines(model, this.state, this.layout(), {
      title: this.opts.title,
      now,
      grace: this.opts.grace ?? { sigintMs: SIGINT_GRACE_MS, sigtermMs: SIGTERM_GRACE_MS },
      stopPrompt: this.opts.stopPrompt,
      canDetach: this.opts.controls.detach !== undefined,
      live: this.opts.live,
    });
    let out = '';
    const n = Math.max(lines.length, this.shown.length);
    for (let r = 0; r < n; r++) {
      const line = lines[r] ?? '';
      if (this.shown[r] === line && r < this.shown.length) continue;
      // Clear the row first, then write it: the row never shows a mix of two frames' text.
      out += `\x1b[${r + 1};1H\x1b[2K${line}`;
    }
    this.shown = lines;
    if (out !== '') this.opts.write(BEGIN_SYNC + out + END_SYNC);
    this.framesDrawn++;
    this.opts.frames?.record(performance.now() - t0);
    const outcome = model.outcome;
    // A run stopped from this pane closes it (the user has decided); one that ended by itself stays open until
    // q, so its end can be read (closeOnEnd: a finished run closes the pane too).
    const close =
      outcome !== null &&
      (outcome.outcome === 'interrupted'
        ? this.stopAsked
        : outcome.outcome === 'succeeded' && this.opts.closeOnEnd === true);
    if (close && !this.exited) {
      this.exited = true;
      this.opts.onExit(outcome!.exitCode);
    }
  }

  /** Leaves the pane; the run goes on without it (exit 0). */
  private detach(): void {
    if (this.exited) return;
    this.exited = true;
    this.opts.controls.detach?.();
    this.opts.onExit(0);
  }

  /** One key press (Ink's useInput shape): what it means on the stack the state focuses (./keytable.ts). */
  key(input: string, key: KeyPress): void {
    const { model, controls } = this.opts;
    const state = this.state;
    const layout = this.layout();
    const { view, logHeight } = layout;
    const dispatch = (a: PaneAction) => this.dispatch(a);
    const stack = paneStack({
      searchMode: state.search.mode,
      confirmStop: state.confirmStop,
      alertsOpen: state.alertsOpen && Boolean(this.opts.live),
    });
    const hit = paneCommand(stack, input, key);
    if (!hit) return;
    const { surface, command } = hit;
    switch (command) {
      case 'searchCancel':
        dispatch({ type: 'searchCancel' });
        return;
      case 'searchCommit':
        dispatch({ type: 'searchCommit', view });
        return;
      case 'searchErase':
        dispatch({ type: 'searchBackspace' });
        return;
      case 'searchType':
        dispatch({ type: 'searchInput', text: input });
        return;
      case 'swallow':
        return;
    }
    if (surface === 'confirmStop') {
      // The stop question: y stops, d leaves the run going (where it can outlive the pane), any key but those keeps watching.
      dispatch({ type: 'confirmStop', on: false });
      if (command === 'stopYes') {
        this.stopAsked = true;
        controls.stop();
      } else if (command === 'stopLeave' && controls.detach) this.detach();
      return;
    }
    if (surface === 'alerts' && this.opts.live) {
      // The alert list has the scroll keys; Esc or a closes it; the rest are the log's.
      const rows = alertListLength(this.opts.live, model, layout.logCols);
      const scroll = (delta: number) => dispatch({ type: 'scrollAlerts', delta, rows, height: logHeight });
      if (command === 'closeAlerts') dispatch({ type: 'toggleAlerts' });
      else if (command === 'up') scroll(-1);
      else if (command === 'down') scroll(1);
      else if (command === 'pageUp') scroll(-(logHeight - 1));
      else if (command === 'pageDown') scroll(logHeight - 1);
      else if (command === 'top') scroll(-rows);
      else if (command === 'bottom') scroll(rows);
      else this.command(command, input, key, layout);
      return;
    }
    this.command(command, input, key, layout);
  }

  /** A named command outside search input and the alert list. */
  private command(command: PaneCommand | null, input: string, key: KeyPress, layout: PaneLayout): void {
    const { model, controls } = this.opts;
    const { view, logHeight, selected } = layout;
    const ended = model.outcome !== null;
    const dispatch = (a: PaneAction) => this.dispatch(a);
    switch (command) {
      case 'quit':
        if (ended) {
          if (!this.exited) {
            this.exited = true;
            this.opts.onExit(model.outcome!.exitCode);
          }
        } else if (model.stoppingRequested) {
          if (key.ctrl && input === 'c') {
            this.stopAsked = true;
            controls.killNow();
          }
        } else dispatch({ type: 'confirmStop', on: true });
        return;
      case 'detach':
        if (controls.detach && !ended) this.detach();
        return;
      case 'up':
        dispatch({ type: 'scroll', delta: -1, view });
        return;
      case 'down':
        dispatch({ type: 'scroll', delta: 1, view });
        return;
      case 'pageUp':
        dispatch({ type: 'scroll', delta: -(logHeight - 1), view });
        return;
      case 'pageDown':
        dispatch({ type: 'scroll', delta: logHeight - 1, view });
        return;
      case 'top':
        dispatch({ type: 'top', view });
        return;
      case 'bottom':
        dispatch({ type: 'bottom' });
        return;
      case 'follow':
        dispatch({ type: 'toggleFollow', view });
        return;
      case 'wrap':
        dispatch({ type: 'toggleWrap' });
        return;
      case 'nextStep':
        dispatch({ type: 'selectStep', index: (selected + 1) % model.steps.length });
        return;
      case 'prevStep':
        dispatch({ type: 'selectStep', index: (selected - 1 + model.steps.length) % model.steps.length });
        return;
      case 'searchStart':
        dispatch({ type: 'searchStart' });
        return;
      case 'searchNext':
        dispatch({ type: 'searchMove', dir: 1, view });
        return;
      case 'searchPrev':
        dispatch({ type: 'searchMove', dir: -1, view });
        return;
      case 'spark':
        dispatch({ type: 'toggleSpark' });
        return;
      case 'alerts':
        if (this.opts.live) dispatch({ type: 'toggleAlerts' });
        return;
      default:
        return;
    }
  }
}
