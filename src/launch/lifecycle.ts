/**
 * One launch, start to end, the same for `zerowiz launch NAME|FILE`, `zerowiz launch --last`, the wizard's
 * Launch action, `zerowiz launch --slurm` and `zerowiz attach` (another RunKind: src/slurm/kind.ts):
 * prepare (validate, find accelerate, check the scripts) -> print the findings -> open the run (the config
 * files, the record and its watchdog; a Slurm job's submission) -> follow it in the log pane or in stream
 * mode, with the stop signals -> print the summary -> the exit code.
 *
 * Output goes through the terminal module (src/terminal.ts): a terminal or pipe that goes away never
 * crashes the launch, and the run goes on to its recorded end.
 */
import { stdin } from 'node:process';
import { askLine, drainOutput, endAfterHangup, terminalHungUp, writeErr, writeOut } from '../terminal.js';
import { capYoungGeneration } from '../heap.js';
import type { Setup } from '../config/setup.js';
import { inReportOrder, launchConfigFiles, writeLaunchConfigFiles } from '../write.js';
import { binPath } from './entry.js';
import { gracePeriods, handOffAtExit } from './group.js';
import { formatLossPair } from './logparse.js';
import { formatGiB } from './peaks.js';
import { displayDir } from './record.js';
import {
  LaunchStops,
  LOCAL_RUN,
  createLocalRecord,
  formatFindings,
  prepareLaunch,
  startSession,
  summaryLines,
  type LaunchOptions,
  type LaunchSession,
  type LaunchSource,
  type LogPaneOptions,
  type OpenContext,
  type OpenedRun,
  type PreparedLaunch,
  type RunKind,
} from './session.js';
import { StreamPrinter, type TextSink } from './stream.js';
import { Watchdog } from './watchdog.js';

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
  /** False: the pane stays open after a successful or stopped run until q (default true). */
  closeOnEnd?: boolean;
}

/**
 * Runs a launch to its end; resolves with the exit code (0 done, 1 a step failed, 130 stopped; 0 too when a
 * run that outlives zerowiz was left running). Bad input (an invalid setup, accelerate or a training script
 * missing, a record that cannot be created) throws UsageError for the CLI's one line and hint (exit 2);
 * nothing has run then.
 */
export async function launch(req: LaunchRequest): Promise<number> {
  const kind = req.kind ?? LOCAL_RUN;
  const out: TextSink = req.out ?? { write: writeOut };
  const err: TextSink = req.err ?? { write: writeErr };
  const say = (line: string) => err.write(`zerowiz: ${line}\n`);
  const { prepared, lines } = kind.prepare
    ? kind.prepare(req.setup, req)
    : (() => {
        const p = prepareLaunch(req.setup, req);
        return { prepared: p, lines: formatFindings(p.findings) };
      })();
  for (const l of lines) say(l);

  if (req.dryRun) {
    if (kind.dryRun) await kind.dryRun(prepared, out, say);
    else printDryRun(prepared, out, say);
    return 0;
  }

  // From here on a signal (or the terminal going away) is a stop request, never the end of zerowiz: during
  // the writes and the record it is kept for later, so no file is left half made.
  const stops = new LaunchStops();
  // A flood of output must not grow the young generation to its maximum (src/heap.ts).
  const uncapYoung = capYoungGeneration();
  const ctx: { -readonly [K in keyof OpenContext]: OpenContext[K] } = {
    say,
    stopRequested: () => stops.requested,
    guard: null,
  };
  // A local run's config files are written (in libuv's thread pool) while the watchdog starts: it must exist
  // before the record and the first step (see ./watchdog.ts). open() reads ctx.guard after its first await.
  const opening = (kind.open ?? openLocal)(prepared, ctx);
  const guard = kind.runsHere ? Watchdog.start({ grace: gracePeriods(prepared.env), bin: binPath() }) : null;
  ctx.guard = guard;
  if (guard) handOffAtExit(() => guard.watching);
  let session: LaunchSession | null = null;
  let code: number;
  try {
    const opened = await opening;
    if (!opened) {
      say('stopped before the run started: no step ran, and there is no run record');
      code = 130;
    } else {
      session = startSession(opened.prepared ?? prepared, opened, kind, {
        ringLines: req.pane ? undefined : STREAM_TAIL_RING_LINES,
        guard,
      });
      code = await follow(session, req, stops, out, say);
    }
  } finally {
    uncapYoung();
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

/** A local run opens with its config files and then its record (null when a stop came meanwhile). */
async function openLocal(prepared: PreparedLaunch, ctx: OpenContext): Promise<OpenedRun | null> {
  const writes = await writeLaunchConfigFiles(prepared.setup, prepared.cwd);
  for (const w of writes) {
    if (w.status !== 'unchanged')
      ctx.say(`wrote ${w.path}${w.backup ? ` (previous content kept in ${w.backup})` : ''}`);
  }
  if (ctx.stopRequested()) return null;
  return { record: createLocalRecord(prepared, ctx.guard), writes };
}

/**
 * Follows a started session to its end in the pane or in stream mode, with the stop signals, then says the
 * summary and the kind's last lines; resolves with the exit code.
 */
async function follow(
  session: LaunchSession,
  req: LaunchRequest,
  stops: LaunchStops,
  out: TextSink,
  say: (line: string) => void,
): Promise<number> {
  stops.attach(session);
  const detach = (req.sources ?? []).map((s) => s.attach(session));
  const left = () => session.detachable?.detached === true;
  let code: number;
  try {
    if (req.pane) {
      // The lines said so far go before the pane's screen, and its frames before the summary.
      await drainOutput();
      code = await req.pane({
        session,
        detach: session.detachable ? () => session.detachable!.detach() : undefined,
        stopPrompt: session.detachable?.panePrompt,
        closeOnEnd: req.closeOnEnd,
      });
      await drainOutput();
      if (!left()) for (const l of summaryLines(session, { tail: true })) say(l);
    } else {
      code = await runStream(session, out, stops);
    }
  } finally {
    for (const d of detach) d?.();
  }
  for (const l of session.kind.endLines?.(session) ?? defaultEndLines(session, code)) say(l);
  return left() ? 0 : code;
}

/** For a failure or a stop: where the logs are. */
function defaultEndLines(session: LaunchSession, code: number): string[] {
  const o = session.pipeline.result;
  if (code === 0 || !o) return [];
  const where = displayDir(session.record.dir, session.prepared.cwd);
  return [o.outcome === 'interrupted' ? `stopped; logs in ${where}` : `the run failed; logs in ${where}`];
}

/** What stream mode adds to a progress line: the loss, and the most memory any GPU uses now. */
export function progressExtra(session: LaunchSession, i: number): string {
  const parts: string[] = [];
  const m = session.watch.steps[i]?.metrics;
  if (m && m.lastLoss !== null) {
    parts.push(`loss ${formatLossPair(m.lastLoss, m.minLoss)}`);
  }
  const t = session.telemetry;
  if (t && (t.state === 'running' || t.state === 'starting')) {
    let top: { used: number; total: number | null } | null = null;
    for (const g of t.latest.values()) {
      if (g.usedBytes !== null && (top === null || g.usedBytes > top.used))
        top = { used: g.usedBytes, total: g.totalBytes };
    }
    if (top) parts.push(`GPU max ${formatGiB(top.used)}${top.total ? ` of ${formatGiB(top.total)}` : ''}`);
  }
  return parts.join(' · ');
}

/**
 * Runs a session in stream mode; resolves with the exit code. A run that outlives zerowiz is asked about
 * on Ctrl+C when stdin is a terminal (y stops it, d leaves it, Enter keeps following).
 */
export async function runStream(session: LaunchSession, out: TextSink, stops?: LaunchStops): Promise<number> {
  const { kind } = session;
  const n = session.prepared.commands.length;
  const printer = new StreamPrinter(
    out,
    session.model.steps.map((s) => s.name),
    { extra: (i) => progressExtra(session, i) },
  );
  printer.note(
    kind.streamIntro?.(session) ??
      `run ${session.record.json.id}: ${n} step(s); record in ${displayDir(session.record.dir, session.prepared.cwd)}`,
  );
  let toldTelemetry = false;
  const tellTelemetry = () => {
    const t = session.telemetry;
    if (toldTelemetry || !t || (t.state !== 'unavailable' && t.state !== 'lost')) return;
    toldTelemetry = true;
    printer.note(`no GPU telemetry: ${t.reason}`);
  };
  const offAlert = session.watch.onAlert((a) =>
    printer.note(`ALERT in ${session.model.steps[a.step]?.name ?? a.step + 1}: ${a.title}; fix: ${a.fix}`),
  );
  const off = session.pipeline.subscribe({
    stepStart: (i) => {
      printer.stepStart(i);
      const c = session.prepared.commands[i];
      printer.note(kind.stepIntro?.(session, i) ?? `step ${i + 1}/${n} ${c?.step}: ${c?.text}`);
    },
    line: (i, t) => printer.line(i, t),
    lines: (i, t) => printer.lines(i, t),
    progress: (i, p) => {
      tellTelemetry();
      printer.progress(i, p);
    },
    stepEnd: (i, r) => {
      tellTelemetry();
      printer.stepEnd(i, r);
    },
    logError: (i, why) => printer.logError(i, why),
    stopping: () =>
      printer.note(
        kind.stoppingNote?.(session) ?? "stopping: SIGINT to the step's process group (Ctrl+C again to kill at once)",
      ),
    status: (st) => {
      if (st.note !== '') printer.note(st.note);
    },
  });
  if (stops && session.detachable && stdin.isTTY === true) {
    stops.asker = (question, answer) => {
      printer.flush();
      const q = askLine(`\nzerowiz: ${question} `);
      void q.answer.then((line) => {
        if (line === null) return;
        if (answer(line) === 'follow') printer.note('still following');
      });
      return q.withdraw;
    };
  }
  try {
    const outcome = await session.run();
    if (session.detachable?.detached !== true) {
      for (const l of summaryLines(session, { tail: false, stepLine: false })) printer.note(l);
    }
    return outcome.exitCode;
  } finally {
    if (stops) stops.asker = null;
    off();
    offAlert();
    printer.flush();
  }
}
