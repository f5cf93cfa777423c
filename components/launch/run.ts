/**
 * Mounting the log pane. `runLogPane({ session })` is what `zerowiz launch` calls (through
 * UiLoaders.runLogPane); `launchSetup(setup)` is the wizard's Launch action: pre-flight, config files,
 * run record, pane, summary, in one call that resolves with the exit code.
 */
import type { Setup } from '../../src/setup.js';
import { gracePeriods } from '../../src/launch/group.js';
import { formatFindings, prepareLaunch, startLaunch, summaryLines, withStopSignals, type LogPaneOptions } from '../../src/launch/session.js';
import { FrameStats } from './frames.js';

export type { LogPaneProps, PaneControls } from './LogPane.js';

const ENTER_ALT_SCREEN = '\x1b[?1049h';
const LEAVE_ALT_SCREEN = '\x1b[?1049l';
const SHOW_CURSOR = '\x1b[?25h';

/**
 * Mounts the pane over a started session in the terminal's alternate screen, runs the pipeline, and
 * resolves with the exit code (0 done, 1 failed, 130 stopped) once the pane closes. The terminal is
 * restored on every path (including an exception or process exit). The first step starts before Ink,
 * React and the pane are loaded (a few hundred ms of compiling): its start-up overlaps theirs, and what
 * it prints meanwhile is in the model and the log file when the pane comes up.
 */
export async function runLogPane(opts: LogPaneOptions): Promise<number> {
  const { session } = opts;
  const stdout = process.stdout;
  let inAlt = true;
  const restore = () => {
    if (!inAlt) return;
    inAlt = false;
    stdout.write(LEAVE_ALT_SCREEN + SHOW_CURSOR);
  };
  process.on('exit', restore);
  stdout.write(ENTER_ALT_SCREEN);
  try {
    let resolveExit!: (code: number) => void;
    const exit = new Promise<number>((r) => (resolveExit = r));
    const running = session.run();
    const [{ default: React }, { render }, { LogPane }] = await Promise.all([import('react'), import('ink'), import('./LogPane.js')]);
    const frames = new FrameStats();
    const app = render(
      React.createElement(LogPane, {
        model: session.model,
        controls: { stop: () => void session.stop(), killNow: () => session.killNow() },
        onExit: (code: number) => resolveExit(code),
        title: `${session.record.json.name} (${session.record.json.id})`,
        grace: gracePeriods(session.prepared.env),
        frames,
      }),
      { exitOnCtrlC: false, patchConsole: false, maxFps: 30, onRender: ({ renderTime }) => frames.record(renderTime) },
    );
    const code = await exit;
    // The pane only closes early on a finished run, but make sure nothing is left running.
    if (!session.pipeline.result) await session.stop();
    await running;
    app.unmount();
    await app.waitUntilExit().catch(() => undefined);
    return code;
  } finally {
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

