/**
 * A viewer of a run: the pane, stream mode and the summary after them, for every kind and every way in
 * (`zerowiz launch`, `--last`, the wizard's Launch, `launch --slurm`, `attach`). It follows the run's files
 * through its kind's follower (./follower.ts), never its processes: a viewer that is stopped, slow, paused,
 * killed or whose terminal hangs changes nothing for the run.
 *
 * Signals to the viewer: SIGHUP (the terminal closed) leaves the run running; SIGTERM stops a local run (as
 * batch use expects) and leaves a Slurm job; SIGINT in stream mode on a terminal asks (y stops, d leaves,
 * Enter keeps following; Ctrl+C again stops), without a terminal it does what SIGTERM does; a second SIGTERM
 * joins the stop under way (only a second Ctrl+C, or `zerowiz stop --now`, kills at once). The pane reads
 * its keys raw: q asks, d leaves.
 */
import { stdin } from 'node:process';
import { askLine, onHangup, onTerminalSignals, type TerminalSignal } from '../proc/index.js';
import { launchEstimate, type LaunchEstimate } from '../rules/index.js';
import { sourcePreset } from '../config/index.js';
import type { KindFollow, OpenedRun, PreparedLaunch, RunKind } from './kind.js';
import { compareStep, formatLossPair, stepLongText, stepShortText } from '../observe/index.js';
import { isDiffSynthStep } from '../config/index.js';
import { RunModel } from '../pane/index.js';
import { formatPeakVsEstimate } from '../observe/index.js';
import { displayDir, stepLogPath, type RunRecord } from '../records/index.js';
import { RecordKeeper } from './record-keeper.js';
import type { PipelineOutcome } from '../observe/index.js';
import { formatDuration, formatGiB } from '../text/index.js';
import { StreamPrinter, type TextSink } from './stream.js';
import type { TelemetryView } from '../observe/index.js';
import type { RunWatch } from '../observe/index.js';
import { alertContextOf, watchOfRun } from './run-watch.js';
import type { WriteResult } from '../fs/index.js';
import { existsSync } from 'node:fs';
import { reportPathOf, writeRunReport } from '../report/index.js';

/** Lines of the failed step shown after a failure. */
export const FAILURE_TAIL_LINES = 20;

/** A run as a viewer holds it: what the pane, stream mode and the summary read. */
export interface LaunchSession {
  prepared: PreparedLaunch;
  /** The run's record as last read (a local run's) or kept (a Slurm job's). */
  readonly record: RunRecord;
  /** The follower: the run as its files tell it. */
  control: KindFollow['control'];
  model: RunModel;
  /** Metrics, alerts and GPU peaks per step. */
  watch: RunWatch;
  /** The run's GPUs as last seen, or null when they are elsewhere. */
  telemetry: TelemetryView | null;
  /** Why there is no GPU telemetry at all (a Slurm job's GPUs are on its nodes), else null. */
  noTelemetry: string | null;
  /** What zerowiz predicted for the setup's mode, or null. */
  estimate: LaunchEstimate | null;
  kind: RunKind;
  /** What writing the config files did. */
  writes: WriteResult[];
  /** Follows the run to its end (once): resolves with the outcome (a left run: exit code 0, no result). */
  run(): Promise<PipelineOutcome>;
  /** Asks the run's owner to stop it; resolves when its end has been read. */
  stop(): Promise<void>;
  /** Asks the owner to end it now. */
  killNow(): void;
  /** Leaves the run running. */
  detach(): void;
  /** Whether this viewer left the run. */
  readonly left: boolean;
  /** Set when a signal to this viewer (SIGINT, SIGTERM) asked for the stop: the pane closes at the run's end. */
  stoppedBySignal: boolean;
}

/** What the CLI hands the log pane (components/pane/run.ts). */
export interface LogPaneOptions {
  session: LaunchSession;
  /** The stop question (y stops, d leaves, any other key keeps watching). */
  stopPrompt: string;
  /** True: a run that succeeded closes the pane (default: it stays open until q, so its end can be read). */
  closeOnEnd?: boolean;
}

/** Options of a viewer session. */
export interface ViewOptions {
  /** Lines the pane model keeps per step (default PANE_RING_LINES). */
  ringLines?: number;
}

/**
 * Builds the viewer's session over an opened run: the kind's follower with its subscribers, in this order:
 * the watch (metrics, GPU peaks, and the alerts: the supervisor's for a local run), the pane model, and, for
 * a kind whose viewer keeps the record (a Slurm job), the record keeper. Nothing is read yet.
 */
export function openView(
  prepared: PreparedLaunch,
  opened: OpenedRun,
  kind: RunKind,
  opts: ViewOptions = {},
): LaunchSession {
  let watch: RunWatch | null = null;
  const follow = kind.follow(opened, prepared, { onAlert: (a) => watch?.addAlert(a) });
  const { control } = follow;
  const record0 = opened.record;
  const model = new RunModel(
    prepared.commands.map((c, i) => ({ name: c.step, logPath: stepLogPath(record0, i), command: c.text })),
    opts.ringLines,
  );
  // The estimate the launch made travels in the record; the setup is estimated again only after an OOM.
  const estimate = launchEstimate(
    prepared.setup,
    undefined,
    sourcePreset(prepared.source),
    prepared.cwd,
    record0.json.estimate ?? prepared.estimate,
    prepared.env,
  );
  const noTelemetry = kind.runsHere ? null : (kind.noTelemetry ?? "the run's GPUs are not on this machine");
  watch = watchOfRun(prepared, alertContextOf(prepared.setup, estimate), {
    telemetry: follow.telemetry,
    noTelemetry: noTelemetry ?? undefined,
    alerts: follow.alertsGiven ? 'given' : 'compute',
    onAlert: () => model.notice(),
  });
  const w = watch;
  control.subscribe(w);
  control.subscribe(model);
  let keeper: RecordKeeper | null = null;
  if (follow.keepsRecord) {
    record0.json.estimate ??= estimate?.json ?? null;
    keeper = new RecordKeeper({
      record: record0,
      watch: w,
      run: control,
      stepsRecordedElsewhere: true,
      env: prepared.env,
    });
    control.subscribe(keeper);
  }
  let running: Promise<PipelineOutcome> | null = null;
  const run = async (): Promise<PipelineOutcome> => {
    keeper?.start();
    try {
      const o = await control.run();
      // The last loss.csv rows before anyone reads the step's last loss.
      await w.close();
      keeper?.takeAllLive();
      // A run whose record this viewer keeps (a Slurm job) gets its report here; a local run's supervisor wrote it.
      if (keeper && !control.detached) writeReportQuietly(record0.dir);
      if (existsSync(reportPathOf(record0.dir)) && model.headline === null)
        model.setHeadline({ text: `report: ${displayDir(reportPathOf(record0.dir), prepared.cwd)}`, tone: 'ok' });
      return o;
    } finally {
      keeper?.close();
    }
  };
  return {
    prepared,
    get record() {
      return follow.record();
    },
    control,
    model,
    watch: w,
    telemetry: follow.telemetry,
    noTelemetry,
    estimate,
    kind,
    writes: opened.writes,
    run: () => (running ??= run()),
    stop: () => control.stop(),
    killNow: () => control.killNow(),
    detach: () => control.detach(),
    get left() {
      return control.detached;
    },
    stoppedBySignal: false,
  };
}

/** What LaunchStops did with the answer to its stop question: stopped the run, left it, or kept following it. */
export type StopAnswer = 'stop' | 'detach' | 'follow';

/**
 * SIGINT, SIGTERM and SIGHUP to a viewer (and its terminal going away without a signal), from before its
 * session exists until it ends. A request that comes before the session is attached is kept: the launch then
 * starts nothing (or, once the run started, applies it at once).
 *
 * SIGHUP and a terminal that went away leave the run (it goes on). SIGTERM stops a run whose kind says signals
 * stop it (a local run) and leaves one that outlives zerowiz by nature (a Slurm job). SIGINT asks when stream
 * mode has a terminal to ask on (`asker`); else it does what SIGTERM does, and a second SIGINT while a local
 * run stops kills at once. A pipe closing on stream mode's output is no request: the logs keep everything.
 */
export class LaunchStops {
  /** Whether anything was requested (then nothing more is started). */
  requested = false;
  /**
   * Asks the user a question on the terminal and calls `answer` with the line typed (null when cut short),
   * which says what was done about it; returns the function that withdraws the question. Set by stream mode
   * when stdin is a terminal.
   */
  asker: ((question: string, answer: (line: string | null) => StopAnswer) => () => void) | null = null;
  private sigints = 0;
  private session: LaunchSession | null = null;
  private pending: TerminalSignal[] = [];
  private withdraw: (() => void) | null = null;
  private readonly offs: (() => void)[];

  constructor() {
    this.offs = [onTerminalSignals((sig) => this.request(sig)), onHangup(() => this.request('SIGHUP'))];
  }

  private request(sig: TerminalSignal): void {
    this.requested = true;
    const s = this.session;
    if (!s) {
      this.pending.push(sig);
      return;
    }
    if (sig === 'SIGINT') this.sigints++;
    if (sig === 'SIGHUP') {
      this.withdraw?.();
      this.withdraw = null;
      s.detach();
      return;
    }
    const stops = s.kind.signalsStop;
    if (sig === 'SIGINT' && this.asker !== null) {
      if (s.control.stopping) {
        if (stops) s.killNow();
        else void s.stop();
        return;
      }
      if (this.withdraw) {
        // Ctrl+C again at the question: stop it.
        this.withdraw();
        this.withdraw = null;
        void s.stop();
        return;
      }
      this.withdraw = this.asker(s.kind.streamQuestion(s.record.json), (line) => {
        this.withdraw = null;
        const a = (line ?? '').trim().toLowerCase();
        if (a === 'y' || a === 'yes') {
          void s.stop();
          return 'stop';
        }
        if (a === 'd') {
          s.detach();
          return 'detach';
        }
        return 'follow';
      });
      return;
    }
    if (!stops) {
      s.detach();
      return;
    }
    s.stoppedBySignal = true;
    // A second Ctrl+C kills at once (the pane and stream mode say so); a second SIGTERM joins the stop.
    if (sig === 'SIGINT' && this.sigints > 1) s.killNow();
    else void s.stop();
  }

  /** From now on requests go to this session (those that came before take effect now, in order). */
  attach(session: LaunchSession): void {
    this.session = session;
    for (const sig of this.pending.splice(0)) this.request(sig);
  }

  /** Signals go back to their defaults; a question still open is withdrawn. */
  close(): void {
    this.withdraw?.();
    this.withdraw = null;
    for (const off of this.offs.splice(0)) off();
  }
}

/** What stream mode adds to a progress line: the loss, and the most memory any GPU uses now. */
/**
 * Pass `i`'s measured step against the predicted one (src/observe/step-time.ts), short and long, or null before its
 * first steady iterations, for a pass that does not train with the config, or without a prediction.
 */
export function stepTimeOf(session: LaunchSession, i: number): { short: string; long: string } | null {
  const predicted = session.estimate?.json?.step ?? null;
  const p = session.model.steps[i]?.progress ?? null;
  if (!predicted || !p || !session.prepared.commands[i]?.usesConfig) return null;
  const args = session.prepared.setup.steps[i]?.args ?? [];
  const c = compareStep(predicted, p, isDiffSynthStep(args) ? 'micro' : 'optimizer');
  return c ? { short: stepShortText(c, predicted), long: stepLongText(c, predicted) } : null;
}

export function progressExtra(session: LaunchSession, i: number): string {
  const parts: string[] = [];
  const m = session.watch.steps[i]?.metrics;
  if (m && m.lastLoss !== null) parts.push(`loss ${formatLossPair(m.lastLoss, m.minLoss)}`);
  const t = session.telemetry;
  if (t && (t.state === 'running' || t.state === 'starting')) {
    let top: { used: number; total: number | null } | null = null;
    for (const g of t.latest.values()) {
      if (g.usedBytes !== null && (top === null || g.usedBytes > top.used))
        top = { used: g.usedBytes, total: g.totalBytes };
    }
    if (top) parts.push(`GPU max ${formatGiB(top.used)}${top.total ? ` of ${formatGiB(top.total)}` : ''}`);
  }
  const st = stepTimeOf(session, i);
  if (st) parts.push(st.long);
  return parts.join(' · ');
}

/**
 * Follows a session in stream mode to its end; resolves with the exit code. On a terminal, Ctrl+C asks
 * (LaunchStops.asker).
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
    kind.streamIntro?.(session.record, session.prepared.cwd) ??
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
  const off = session.control.subscribe({
    stepStart: (i) => {
      printer.stepStart(i);
      const c = session.prepared.commands[i];
      printer.note(
        kind.stepIntro?.(session.record, i, session.prepared.commands) ?? `step ${i + 1}/${n} ${c?.step}: ${c?.text}`,
      );
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
        kind.stoppingNote?.(session.record) ??
          "stopping: SIGINT to the step's process group (Ctrl+C again to kill at once)",
      ),
    status: (st) => {
      if (st.note !== '') printer.note(st.note);
    },
  });
  if (stops && stdin.isTTY === true) {
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
    if (!session.left) {
      for (const l of summaryLines(session, { tail: false, stepLine: false })) printer.note(l);
    }
    return outcome.exitCode;
  } finally {
    if (stops) stops.asker = null;
    off();
    offAlert();
    // zerowiz's own lines reach the output, after a stalled reader's backlog.
    await printer.settle();
  }
}

/** Writes a run's report, or leaves the reason in the record (a report is never worth a failed viewer). */
function writeReportQuietly(dir: string): void {
  try {
    writeRunReport(dir);
  } catch {}
}

/** The lines to print after a run: the outcome, the failure's reason and fix, the GPU peaks, where things are. */
export function summaryLines(session: LaunchSession, opts: { tail: boolean; stepLine?: boolean }): string[] {
  const o = session.control.result;
  const rec = session.record;
  const dir = displayDir(rec.dir, session.prepared.cwd);
  if (!o) return [`run record: ${dir}`];
  const out: string[] = [];
  const { watch } = session;
  const took = (i: number) => {
    const r = o.results[i];
    return r ? formatDuration(r.endedAt - r.startedAt) : '-';
  };
  if (o.outcome === 'succeeded') {
    out.push(
      `${session.model.steps.length === 1 ? '1 step' : `all ${session.model.steps.length} steps`} done (${session.model.steps.map((s, i) => `${s.name} ${took(i)}`).join(', ')})`,
    );
  } else if (o.failedStep !== null) {
    const i = o.failedStep;
    const st = session.model.steps[i]!;
    const r = o.results[i];
    if (opts.tail && o.outcome === 'failed') {
      const tail = st.lines.tail(FAILURE_TAIL_LINES);
      if (tail.length > 0) out.push(`last lines of ${st.name}:`, ...tail.map((l) => `  ${l}`));
    }
    const why =
      o.outcome === 'interrupted'
        ? `stopped after ${took(i)}${r?.stopSignal && r.stopSignal !== 'none' ? ` (ended by ${r.stopSignal})` : ''}`
        : r?.refused
          ? `did not start: ${r.error}`
          : `failed after ${took(i)} (${r?.error ?? (r?.signal ? `signal ${r.signal}` : `exit ${r?.exitCode}`)})`;
    // Stream mode has already printed this line as the step ended.
    if (opts.stepLine !== false) out.push(`step ${st.name} ${why}`);
    // A refused pass's reason is the check's, said above with its fix.
    const reason = o.outcome === 'failed' && !r?.refused ? watch.alerts.reason(i) : null;
    if (reason) out.push(`  reason: ${reason.title}`, `  fix: ${reason.fix}`);
    out.push(`full log: ${displayDir(st.logPath ?? '', session.prepared.cwd)}`);
  } else if (o.outcome === 'interrupted') {
    out.push('stopped before the next step started');
  }
  // Alerts that were not the reason of the failure (a NaN loss in a run that went on, ...), once each.
  const reasonAlert = o.failedStep !== null && o.outcome === 'failed' ? watch.alerts.reason(o.failedStep) : null;
  for (const a of watch.alerts.alerts) {
    if (a === reasonAlert) continue;
    out.push(`alert in ${session.model.steps[a.step]?.name ?? a.step + 1}: ${a.title}; fix: ${a.fix}`);
  }
  out.push(...peakLines(session));
  // Stream mode printed these as they happened.
  if (opts.stepLine !== false) {
    o.results.forEach((r, i) => {
      if (r?.warning) out.push(`step ${session.model.steps[i]?.name ?? i + 1}: ${r.warning}`);
    });
    if (rec.json.logError) out.push(`logging stopped: ${rec.json.logError}`);
  }
  if (rec.json.note) out.push(`note: ${rec.json.note}`);
  if (rec.saveError) out.push(`run.json could not be saved (${rec.saveError}): it shows an earlier state of the run`);
  out.push(`run record: ${dir}`);
  const report = reportPathOf(rec.dir);
  if (existsSync(report)) out.push(`report: ${displayDir(report, session.prepared.cwd)} (open it in a browser)`);
  return out;
}

/**
 * The GPU memory lines of the summary: per step that ran, its peak against the estimate (only for steps
 * that train with the config: a data pass is not what the estimate describes), or why there is no telemetry.
 */
export function peakLines(session: LaunchSession): string[] {
  const { telemetry, estimate, prepared, model } = session;
  const out: string[] = [];
  if (!telemetry) {
    if (session.noTelemetry) out.push(`no GPU telemetry: ${session.noTelemetry}`);
    return out;
  }
  model.steps.forEach((s, i) => {
    if (s.status === 'pending') return;
    const line = formatPeakVsEstimate(
      telemetry.peaksOf(i),
      prepared.commands[i]?.usesConfig ? (estimate?.json?.gpuBytesPerGpu ?? null) : null,
    );
    if (line) out.push(`${s.name}: ${line}`);
  });
  if (out.length === 0 && telemetry.reason) out.push(`no GPU telemetry: ${telemetry.reason}`);
  else if (telemetry.state === 'lost' && telemetry.reason) out.push(`GPU telemetry: ${telemetry.reason}`);
  return out;
}
