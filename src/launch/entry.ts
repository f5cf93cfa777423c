/**
 * THE launch entry: every way into a run goes through it: `zerowiz launch NAME|FILE`, `--last`, `--slurm`,
 * the wizard's Launch and Submit to Slurm (which plan first, inside the wizard, so a refused launch goes back
 * to the finish screen with the answers kept), and `zerowiz export` (which plans, then writes what a launch
 * would, without starting it).
 *
 * prepare (validate the setup, its steps against accelerate's default config, accelerate, the training
 * scripts; the kind's own checks) -> say the findings -> write every config file any command of the launch
 * names (one transaction) -> hand the run to its kind (a local supervisor, a Slurm job), which records it ->
 * follow it in the pane or in stream mode (./viewer.ts) -> the summary -> the exit code.
 *
 * Errors stop every entry the same way: one line and the fix (UsageError, exit 2), before anything runs.
 */
import type { Setup } from '../config/index.js';
import { envNumbersProblem } from '../text/index.js';
import { capYoungGeneration } from '../proc/index.js';
import { drainOutput, endAfterHangup, stdoutBacklog, terminalHungUp, writeErr, writeOut } from '../proc/index.js';
import { compileSetup, inReportOrder, launchConfigFiles } from '../config/index.js';
import type { LaunchOptions, OpenContext, OpenedRun, PreparedLaunch, RunKind } from './kind.js';
import { localKind } from './local.js';
import { estimateLines, formatFindings, prepareLaunch } from './prepare.js';
import { type FirstPassCheck, checkFirstPass, cliRefusal, dryRunCheckLines, failLines } from './precheck.js';
import type { TextSink } from './stream.js';
import { LaunchStops, type LaunchSession, type LogPaneOptions, openView, runStream, summaryLines } from './viewer.js';

export type { LaunchOptions, PreparedLaunch } from './kind.js';
export { checkFirstPass, wizardRefusal } from './precheck.js';
export {
  checkRunnable,
  formatFindings,
  invalidSetup,
  launchFindings,
  prepareLaunch,
  stepLaunchFindings,
} from './prepare.js';

/** Lines the pane model keeps in stream mode (only for the failure tail). */
const STREAM_TAIL_RING_LINES = 200;

/** A launch as its entry asks for it. */
export interface LaunchRequest extends LaunchOptions {
  setup: Setup;
  /** Mounts the log pane over the started session (components/pane/run.ts); absent: stream mode. */
  pane?: (opts: LogPaneOptions) => Promise<number>;
  /** Where stream mode's lines and the dry run go (default: stdout). */
  out?: TextSink;
  /** Where zerowiz's own messages go (default: stderr). */
  err?: TextSink;
  /** The kind of run (default: the local supervisor). */
  kind?: RunKind;
  /** True: a run that succeeded closes the pane (default: it stays open until q, so its end can be read). */
  closeOnEnd?: boolean;
  /** What was already said about the setup (the wizard planned it before leaving): not said again. */
  quiet?: boolean;
  /**
   * This launch, planned before (the command line plans before its offers, the wizard before it leaves): used as
   * it is when the setup is still the one planned, so nothing is checked, emitted or estimated twice; planned again
   * when an offer changed the setup. The request's source and topology warnings stand.
   */
  planned?: PlannedLaunch;
}

/** A launch checked for its kind, not started: what `launch`, the wizard and `export` share. */
export interface PlannedLaunch {
  prepared: PreparedLaunch;
  kind: RunKind;
  /** What to say before it starts (the warnings, what the kind changed). */
  lines: string[];
}

/** Checks a launch for its kind without starting anything; throws UsageError with the fix. */
export function planLaunch(req: LaunchRequest): PlannedLaunch {
  // The run's settings from the environment (grace periods, intervals): refused now, not in its supervisor.
  const badSetting = envNumbersProblem(req.env ?? process.env);
  if (badSetting) throw badSetting;
  const kind = req.kind ?? localKind();
  if (kind.prepare) {
    const { prepared, lines } = kind.prepare(req.setup, req);
    return { prepared, kind, lines };
  }
  const prepared = prepareLaunch(req.setup, req);
  return { prepared, kind, lines: [...formatFindings(prepared.findings), ...estimateLines(prepared)] };
}

/** The request's plan: the one made before when the setup is still the one it planned, else planned now. */
function planOnce(req: LaunchRequest): PlannedLaunch {
  const p = req.planned;
  if (!p || compileSetup(p.prepared.setup) !== compileSetup(req.setup)) return planLaunch(req);
  const prepared = { ...p.prepared, source: req.source, topologyWarnings: req.topologyWarnings ?? [] };
  return { ...p, prepared };
}

/**
 * The first pass's checks, which a stop (Ctrl+C, SIGTERM) ends: the probe and every child of a check are ended
 * with them (a Python that never answers would otherwise hold the launch until the probe's timeout), and the
 * launch ends with 130 before anything is written.
 */
async function firstPassStoppable(prepared: PlannedLaunch['prepared']): Promise<FirstPassCheck | 'stopped'> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const first = await checkFirstPass(prepared, abort.signal);
    return abort.signal.aborted ? 'stopped' : first;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/**
 * Runs a launch to its end; resolves with the exit code (0 done, or left running; 1 a step failed; 130
 * stopped). Bad input (an invalid setup, accelerate or a training script missing, a record that cannot be
 * created) throws UsageError for the CLI's one line and hint (exit 2); nothing has run then.
 */
export async function launch(req: LaunchRequest): Promise<number> {
  const out: TextSink = req.out ?? { write: writeOut, backlog: stdoutBacklog };
  const err: TextSink = req.err ?? { write: writeErr };
  const say = (line: string) => err.write(`zerowiz: ${line}\n`);
  const planned = planOnce(req);
  const { kind, lines } = planned;
  if (!req.quiet) for (const l of lines) say(l);
  // On this machine, the first pass's checks run now: a machine that cannot run it is said before anything
  // is written or started (the pane never opens on a refused pass).
  const first = kind.runsHere ? await firstPassStoppable(planned.prepared) : null;
  if (first === 'stopped') {
    say(
      'stopped before the run started (during the checks of its first pass): no step ran, and there is no run record',
    );
    return 130;
  }
  const prepared = first ? { ...planned.prepared, firstPassLines: first.gate.logLines } : planned.prepared;

  if (req.dryRun) {
    if (kind.dryRun) await kind.dryRun(prepared, out, say);
    else printDryRun(prepared, out, say);
    if (kind.runsHere) for (const l of dryRunCheckLines(prepared, first)) say(l);
    return 0;
  }
  if (first && first.failed.length > 0) {
    for (const l of failLines(first.failed)) say(l);
    throw cliRefusal(prepared, first.failed);
  }

  // From here on a signal (or the terminal going away) is a request to the run, never the end of zerowiz:
  // during the writes it is kept, so no file is left half made, and nothing starts after it.
  const stops = new LaunchStops();
  const uncapYoung = capYoungGeneration();
  const ctx: OpenContext = { say, stopRequested: () => stops.requested };
  let session: LaunchSession | null = null;
  let code: number;
  try {
    const opened = await kind.open(prepared, ctx);
    if (!opened) {
      say('stopped before the run started: no step ran, and there is no run record');
      return 130;
    }
    session = openView(opened.prepared ?? prepared, opened, kind, {
      ringLines: req.pane ? undefined : STREAM_TAIL_RING_LINES,
    });
    code = await view(session, req, stops, out, say);
  } finally {
    uncapYoung();
    stops.close();
  }
  // With the terminal gone, Node's own exit would abort on it (see endAfterHangup): zerowiz ends here.
  if (terminalHungUp()) endAfterHangup(code);
  return code;
}

/** The dry run of local steps: what a real launch would write and run. */
function printDryRun(prepared: PreparedLaunch, out: TextSink, say: (line: string) => void): void {
  for (const p of prepared.problems) say(`note: ${p} (a real launch would stop here)`);
  const { setup } = prepared;
  const configs = inReportOrder(launchConfigFiles(setup, prepared.cwd)).map((f) => f.named);
  out.write(
    `# ${setup.name}: ${prepared.commands.length} step(s), run in order, each only if the previous one exited 0\n`,
  );
  if (configs.length > 0) {
    const last = configs.pop()!;
    out.write(`# a real launch first writes ${configs.length > 0 ? `${configs.join(', ')} and ${last}` : last}\n`);
  }
  for (const c of prepared.commands) out.write(`${c.text}\n`);
}

/**
 * Follows an existing run (`zerowiz attach`) in the pane or in stream mode, as `launch` follows the run it
 * started; resolves with the exit code `launch` would have given (0, 1, 130; 0 when left running).
 */
export async function followRun(
  opened: OpenedRun,
  prepared: PreparedLaunch,
  kind: RunKind,
  req: Pick<LaunchRequest, 'pane' | 'closeOnEnd' | 'out' | 'err'>,
): Promise<number> {
  const out: TextSink = req.out ?? { write: writeOut, backlog: stdoutBacklog };
  const err: TextSink = req.err ?? { write: writeErr };
  const say = (line: string) => err.write(`zerowiz: ${line}\n`);
  const stops = new LaunchStops();
  const uncapYoung = capYoungGeneration();
  let code: number;
  try {
    const session = openView(prepared, opened, kind, { ringLines: req.pane ? undefined : STREAM_TAIL_RING_LINES });
    code = await view(session, req, stops, out, say);
  } finally {
    uncapYoung();
    stops.close();
  }
  if (terminalHungUp()) endAfterHangup(code);
  return code;
}

/**
 * Follows a run in the pane or in stream mode, with the stop signals, then says the summary and the kind's
 * last lines; resolves with the exit code (0 when the viewer left the run running).
 */
export async function view(
  session: LaunchSession,
  req: Pick<LaunchRequest, 'pane' | 'closeOnEnd'>,
  stops: LaunchStops,
  out: TextSink,
  say: (line: string) => void,
): Promise<number> {
  stops.attach(session);
  let code: number;
  if (req.pane) {
    // The lines said so far go before the pane's screen, and its frames before the summary.
    await drainOutput();
    code = await req.pane({
      session,
      stopPrompt: session.kind.panePrompt(session.record.json),
      closeOnEnd: req.closeOnEnd,
    });
    await drainOutput();
    if (!session.left) for (const l of summaryLines(session, { tail: true })) say(l);
  } else {
    code = await runStream(session, out, stops);
  }
  for (const l of session.kind.endLines(session.record, session.prepared.cwd, {
    left: session.left,
    code,
    control: session.control,
  }))
    say(l);
  return session.left ? 0 : code;
}
