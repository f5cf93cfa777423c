/**
 * One launch, start to end, the same for `zerowiz launch NAME|FILE`, `zerowiz launch --last` and the
 * wizard's Launch action: prepare (validate, find accelerate, check the scripts) -> print the findings ->
 * write the config files and print what was written -> open the run record (and its watchdog) -> run it
 * in the log pane or in stream mode, with the stop signals -> print the summary -> the exit code.
 *
 * Output goes through the terminal module (src/terminal.ts): a terminal or pipe that goes away never
 * crashes the launch, and the run goes on to its recorded end.
 */
import { drainOutput, endAfterHangup, terminalHungUp, writeErr, writeOut } from '../terminal.js';
import type { Setup } from '../setup.js';
import { UsageError } from '../errors.js';
import { binPath } from './entry.js';
import { gracePeriods, handOffAtExit } from './group.js';
import { displayDir, RecordError } from './record.js';
import {
  LaunchStops,
  formatFindings,
  openSession,
  prepareLaunch,
  summaryLines,
  writeLaunchConfigs,
  type LaunchOptions,
  type LaunchSession,
  type LaunchSource,
  type LogPaneOptions,
  type PreparedLaunch,
  type RunKind,
  type StartOptions,
} from './session.js';
import { StreamPrinter, type TextSink } from './stream.js';
import { Watchdog } from './watchdog.js';
import type { WriteResult } from '../write.js';

/** Lines the pane model keeps in stream mode (only for the failure tail). */
const STREAM_TAIL_RING_LINES = 200;

/** Everything a launch needs from its caller. */
export interface LaunchRequest extends LaunchOptions {
  setup: Setup;
  /** Mounts the log pane over the started session (components/launch/run.ts); absent: stream mode. */
  pane?: (opts: LogPaneOptions) => Promise<number>;
  /** Where stream mode's lines and the dry run go (default: stdout). */
  out?: TextSink;
  /** Where zerowiz's own messages go (default: stderr). */
  err?: TextSink;
  /** The kind of run (default: the steps as local process groups). */
  kind?: RunKind;
  /** Extra per-step data sources, attached while the run goes. */
  sources?: LaunchSource[];
}

/**
 * Runs a launch to its end; resolves with the exit code (0 done, 1 a step failed, 130 stopped). Bad input
 * (an invalid setup, accelerate or a training script missing, a record that cannot be created) throws
 * UsageError for the CLI's one line and hint (exit 2); nothing has run then.
 */
export async function launch(req: LaunchRequest): Promise<number> {
  const out: TextSink = req.out ?? { write: writeOut };
  const err: TextSink = req.err ?? { write: writeErr };
  const say = (line: string) => err.write(`zerowiz: ${line}\n`);
  const prepared = prepareLaunch(req.setup, req);
  for (const l of formatFindings(prepared.findings)) say(l);

  if (req.dryRun) {
    for (const p of prepared.problems) say(`note: ${p} (a real launch would stop here)`);
    const { setup } = prepared;
    const configs = prepared.commands.some((c) => c.usesConfig)
      ? [setup.files.accelerateConfig, setup.files.dsConfig]
      : [];
    out.write(
      `# ${setup.name}: ${prepared.commands.length} step(s), run in order, each only if the previous one exited 0\n`,
    );
    if (configs.length > 0) out.write(`# a real launch first writes ${configs.join(' and ')}\n`);
    for (const c of prepared.commands) out.write(`${c.text}\n`);
    return 0;
  }

  // From here on a signal (or the terminal going away) is a stop request, never the end of zerowiz: during
  // the writes and the record it is kept for later, so no file is left half made.
  const stops = new LaunchStops();
  // The watchdog starts while the config files are written (their file work runs in libuv's thread pool
  // meanwhile): it must exist before the record and the first step (see ./watchdog.ts).
  const writing = writeLaunchConfigs(prepared);
  const guard = Watchdog.start({ grace: gracePeriods(prepared.env), bin: binPath() });
  if (guard) handOffAtExit(() => guard.watching);
  let session: LaunchSession | null = null;
  let code: number;
  try {
    const writes = await writing;
    for (const w of writes) {
      if (w.status !== 'unchanged') say(`wrote ${w.path}${w.backup ? ` (previous content kept in ${w.backup})` : ''}`);
    }
    if (stops.requested) {
      say('stopped before the run started: no step ran, and there is no run record');
      code = 130;
    } else {
      session = open(prepared, writes, {
        ringLines: req.pane ? undefined : STREAM_TAIL_RING_LINES,
        kind: req.kind,
        guard,
      });
      code = await runSession(session, req, stops, out, say);
    }
  } finally {
    stops.close();
    // Nothing is left to watch, unless a run is still going (an exception mid-run: the watchdog stops it).
    const stillRunning = session !== null && (session as LaunchSession).pipeline.result === null;
    if (!stillRunning) guard?.finished();
  }
  // The run is over and recorded. With the terminal gone, Node's own exit would abort on it (see
  // endAfterHangup): zerowiz ends here, by the hangup's signal.
  if (terminalHungUp()) endAfterHangup(code);
  return code;
}

/** openSession, with a record that cannot be created turned into the CLI's one line and hint. */
function open(prepared: PreparedLaunch, writes: WriteResult[], opts: StartOptions): LaunchSession {
  try {
    return openSession(prepared, writes, opts);
  } catch (e) {
    if (!(e instanceof RecordError)) throw e;
    throw new UsageError(
      e.message,
      'free some space there (or make it writable), or launch from another directory: records go to .zerowiz/runs/ under the current one',
    );
  }
}

/** A session run in the pane or in stream mode, its summary and last line; resolves with the exit code. */
async function runSession(
  session: LaunchSession,
  req: LaunchRequest,
  stops: LaunchStops,
  out: TextSink,
  say: (line: string) => void,
): Promise<number> {
  stops.attach(session);
  const detach = (req.sources ?? []).map((s) => s.attach(session));
  let code: number;
  try {
    if (req.pane) {
      // The lines said so far go before the pane's screen, and its frames before the summary.
      await drainOutput();
      code = await req.pane({ session });
      await drainOutput();
      for (const l of summaryLines(session, { tail: true })) say(l);
    } else {
      code = await runStream(session, out);
    }
  } finally {
    for (const d of detach) d?.();
  }
  const o = session.pipeline.result;
  if (code !== 0 && o) {
    const where = displayDir(session.record.dir, session.prepared.cwd);
    say(o.outcome === 'interrupted' ? `stopped; logs in ${where}` : `the run failed; logs in ${where}`);
  }
  return code;
}

/** Runs a session in stream mode; resolves with the exit code. */
export async function runStream(session: LaunchSession, out: TextSink): Promise<number> {
  const { commands } = session.prepared;
  const printer = new StreamPrinter(
    out,
    session.model.steps.map((s) => s.name),
  );
  printer.note(
    `run ${session.record.json.id}: ${commands.length} step(s); record in ${displayDir(session.record.dir, session.prepared.cwd)}`,
  );
  session.pipeline.subscribe({
    stepStart: (i) => {
      printer.stepStart(i);
      printer.note(`step ${i + 1}/${commands.length} ${commands[i]!.step}: ${commands[i]!.text}`);
    },
    line: (i, t) => printer.line(i, t),
    progress: (i, p) => printer.progress(i, p),
    stepEnd: (i, r) => printer.stepEnd(i, r),
    logError: (i, why) => printer.logError(i, why),
    stopping: () => printer.stopping(),
  });
  const outcome = await session.run();
  for (const l of summaryLines(session, { tail: false, stepLine: false })) printer.note(l);
  printer.flush();
  return outcome.exitCode;
}
