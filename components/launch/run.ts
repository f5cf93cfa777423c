/**
 * Mounting the log pane: `runLogPane({ session })` is what the launch lifecycle (src/launch/lifecycle.ts)
 * calls for `zerowiz launch` and for the wizard's Launch action, through UiLoaders.runLogPane.
 */
import { gracePeriods } from '../../src/launch/group.js';
import type { LogPaneOptions } from '../../src/launch/session.js';
import { Screen, onHangup } from '../../src/terminal.js';
import { FrameStats } from './frames.js';
import { Pane } from './pane.js';

export type { PaneControls, PaneOptions } from './pane.js';

/**
 * Runs the pane over a started session in the terminal's alternate screen, runs the pipeline, and
 * resolves with the exit code (0 done, 1 failed, 130 stopped) once the pane closes. The terminal module
 * restores the terminal on every path (main screen, cursor, autowrap, raw mode off). If the terminal
 * hangs up (closed window, dropped SSH link), the pane stops drawing and closes as soon as the run has
 * ended (the lifecycle's SIGHUP handler stops it), whatever the outcome: nobody is left to press q.
 * The pane draws itself (./pane.ts), so neither Ink nor React is loaded.
 */
export async function runLogPane(opts: LogPaneOptions): Promise<number> {
  const { session } = opts;
  const screen = Screen.open({ altScreen: true, hideCursor: true, autowrapOff: true, clear: true, raw: true });
  let pane: Pane | null = null;
  let offHangup: () => void = () => undefined;
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
      live: {
        watch: session.watch,
        telemetry: session.telemetry,
        noTelemetry: session.noTelemetry,
        estimateBytes: session.estimate?.json.gpuBytesPerGpu ?? null,
      },
      controls: { stop: () => void session.stop(), killNow: () => session.killNow(), detach: opts.detach },
      stopPrompt: opts.stopPrompt,
      closeOnEnd: opts.closeOnEnd,
      onExit: (code: number) => resolveExit(code),
      title: `${session.record.json.name} (${session.record.json.id})`,
      grace: gracePeriods(session.prepared.env),
      size: () => screen.size(),
      write: (data) => screen.write(data),
      frames: new FrameStats(),
    });
    screen.onInput((d) => pane?.input(d));
    screen.onResize(() => {
      screen.clear();
      pane?.resize();
    });
    offHangup = onHangup(() => {
      pane?.dispose();
      void running.then((o) => resolveExit(o.exitCode));
    });
    pane.start();
    const code = await exit;
    // The pane only closes early on a finished run, but make sure nothing is left running.
    if (!session.pipeline.result) await session.stop();
    await running;
    return code;
  } finally {
    offHangup();
    pane?.dispose();
    screen.restore();
  }
}
