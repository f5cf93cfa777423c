/**
 * Mounting the log pane. `runLogPane({ session })` is what `zerowiz launch` calls (through
 * UiLoaders.runLogPane); `launchSetup(setup)` is the wizard's Launch action: pre-flight, config files,
 * run record, pane, summary, in one call that resolves with the exit code.
 */
import type { Setup } from '../../src/setup.js';
import { gracePeriods } from '../../src/launch/group.js';
import {
  formatFindings,
  prepareLaunch,
  startLaunch,
  summaryLines,
  withStopSignals,
  type LogPaneOptions,
} from '../../src/launch/session.js';
import { FrameStats } from './frames.js';
import { Pane } from './pane.js';

export type { PaneControls, PaneOptions } from './pane.js';

const ENTER_ALT_SCREEN = '\x1b[?1049h';
const LEAVE_ALT_SCREEN = '\x1b[?1049l';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';
// Autowrap off while the pane is up: a row that is wider than the terminal thinks (a character whose
// width we guessed wrong) is clipped at the edge instead of pushing the rows below it down.
const AUTOWRAP_OFF = '\x1b[?7l';
const AUTOWRAP_ON = '\x1b[?7h';
const CLEAR_SCREEN = '\x1b[2J';

/**
 * Runs the pane over a started session in the terminal's alternate screen, runs the pipeline, and
 * resolves with the exit code (0 done, 1 failed, 130 stopped) once the pane closes. The terminal is
 * restored on every path (including an exception or process exit): main screen, cursor, autowrap, and
 * stdin out of raw mode. The pane draws itself (./pane.ts), so neither Ink nor React is loaded.
 */
export async function runLogPane(opts: LogPaneOptions): Promise<number> {
  const { session } = opts;
  const stdout = process.stdout;
  const stdin = process.stdin;
  const raw = stdin.isTTY === true && typeof stdin.setRawMode === 'function';
  let inAlt = true;
  const restore = () => {
    if (!inAlt) return;
    inAlt = false;
    if (raw) {
      try {
        stdin.setRawMode(false);
      } catch {
        // stdin already closed
      }
    }
    stdout.write(AUTOWRAP_ON + LEAVE_ALT_SCREEN + SHOW_CURSOR);
  };
  process.on('exit', restore);
  stdout.write(ENTER_ALT_SCREEN + HIDE_CURSOR + AUTOWRAP_OFF + CLEAR_SCREEN);
  let pane: Pane | null = null;
  const onData = (d: Buffer | string) => pane?.input(typeof d === 'string' ? d : d.toString('utf8'));
  const onResize = () => {
    stdout.write(CLEAR_SCREEN);
    pane?.resize();
  };
  try {
    let resolveExit!: (code: number) => void;
    const exit = new Promise<number>((r) => (resolveExit = r));
    const running = session.run();
    // A run that ends without an outcome has been left running (a detached Slurm job): close the pane.
    void running.then(() => {
      if (!session.pipeline.result) resolveExit(0);
    });
    pane = new Pane({
      model: session.model,
      controls: { stop: () => void session.stop(), killNow: () => session.killNow(), detach: opts.detach },
      stopPrompt: opts.stopPrompt,
      closeOnEnd: opts.closeOnEnd,
      onExit: (code: number) => resolveExit(code),
      title: `${session.record.json.name} (${session.record.json.id})`,
      grace: gracePeriods(session.prepared.env),
      size: () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 }),
      write: (data) => stdout.write(data),
      frames: new FrameStats(),
    });
    if (raw) stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.resume();
    stdout.on('resize', onResize);
    pane.start();
    const code = await exit;
    // The pane only closes early on a finished run, but make sure nothing is left running.
    if (!session.pipeline.result) await session.stop();
    await running;
    return code;
  } finally {
    pane?.dispose();
    stdout.off('resize', onResize);
    stdin.off('data', onData);
    stdin.pause();
    restore();
    process.off('exit', restore);
  }
}

/** Options of the wizard's Launch action. */
export interface LaunchSetupOptions {
  /** `--accelerate PATH` equivalent. */
  accelerate?: string;
  /** Recorded as the run's source (default `wizard`). */
  source?: string;
}

/**
 * The wizard's Launch action: checks the setup, writes its config files, opens a run record and runs the
 * steps in the pane. The wizard must unmount its own Ink app first (one Ink app per terminal). Throws
 * UsageError for what the user must fix (invalid setup, accelerate or a training script missing);
 * resolves with 0/1/130 after printing the summary to stderr.
 */
export async function launchSetup(setup: Setup, opts: LaunchSetupOptions = {}): Promise<number> {
  const prepared = prepareLaunch(setup, { source: opts.source ?? 'wizard', accelerate: opts.accelerate });
  for (const l of formatFindings(prepared.findings)) process.stderr.write(`zerowiz: ${l}\n`);
  const session = await startLaunch(prepared);
  const code = await withStopSignals(session, () => runLogPane({ session }));
  for (const l of summaryLines(session, { tail: true })) process.stderr.write(`zerowiz: ${l}\n`);
  return code;
}
