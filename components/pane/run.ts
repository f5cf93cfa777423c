/**
 * Mounting the log pane: `runLogPane({ session, stopPrompt })` is what the viewer (src/launch/entry.ts view)
 * calls for `zerowiz launch`, `attach` and the wizard's Launch action, through UiLoaders.runLogPane.
 */
import { gracePeriods } from '../../src/proc/index.js';
import { stepTimeOf, type LogPaneOptions } from '../../src/launch/index.js';
import { Screen, onHangup } from '../../src/proc/index.js';
import { FrameStats } from '../../src/pane/index.js';
import { Pane } from './pane.js';

export type { PaneControls, PaneOptions } from './pane.js';

/**
 * Runs the pane over a session in the terminal's alternate screen, follows the run, and resolves with the
 * exit code (0 done or left running, 1 failed, 130 stopped) once the pane closes. The terminal module
 * restores the terminal on every path (main screen, cursor, autowrap, raw mode off). The pane is a window
 * onto the run: if the terminal hangs up (closed window, dropped SSH link) it stops drawing and leaves at
 * once, and the run goes on; after Ctrl+Z and `fg` (or `kill -STOP`/`-CONT`) it takes the terminal back.
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
    // The run left running (d, or the terminal gone): the pane closes; so does a run a signal to zerowiz
    // stopped (whoever sent it wants zerowiz to end, not to read the pane).
    void running.then((o) => {
      if (session.left) resolveExit(0);
      else if (session.stoppedBySignal) resolveExit(o.exitCode);
    });
    pane = new Pane({
      model: session.model,
      live: {
        watch: session.watch,
        telemetry: session.telemetry,
        noTelemetry: session.noTelemetry,
        estimateBytes: session.estimate?.json?.gpuBytesPerGpu ?? null,
        stepTime: (i) => stepTimeOf(session, i),
      },
      controls: {
        stop: () => void session.stop(),
        killNow: () => session.killNow(),
        detach: () => session.detach(),
      },
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
    screen.onContinue(() => pane?.resize());
    offHangup = onHangup(() => {
      // Nobody is left to watch: the run goes on (the viewer's signal handler has left it).
      pane?.dispose();
      session.detach();
      resolveExit(0);
    });
    pane.start();
    const code = await exit;
    // The pane closed on a run still going only by leaving it.
    if (!session.left && !session.control.result) session.detach();
    await running;
    return session.left ? 0 : code;
  } finally {
    offHangup();
    pane?.dispose();
    screen.restore();
  }
}
