/**
 * The parts of a launch, which ./lifecycle.ts puts in order for `zerowiz launch`, `--last`, the wizard's
 * Launch action, `launch --slurm` and `attach`: pre-flight (validate, find accelerate, check scripts), the
 * config files, the run record with its watchdog, the run with its subscribers (the watch, the pane model,
 * the record keeper), the stop signals and the summary after it ends.
 */
import { UsageError } from '../errors.js';
import { topology } from '../estimate/input.js';
import type { Setup } from '../config/setup.js';
import { onHangup, onTerminalSignals, type TerminalSignal } from '../terminal.js';
import { formatFinding, validate, type Finding } from '../config/validate.js';
import type { WriteResult } from '../write.js';
import type { AlertContext } from './alerts.js';
import { CSV_LOG_FLAG, planCsvLog } from './diffsynth.js';
import { launchEstimate, type LaunchEstimate } from './fit.js';
import { findFreePort } from './free-port.js';
import { gracePeriods, trackGroup, untrackGroup } from './group.js';
import { RunModel } from './model.js';
import { formatPeakVsEstimate } from './peaks.js';
import {
  missingScripts,
  prepareCommands,
  resolveAccelerate,
  type AccelerateExe,
  type MissingScript,
  type PreparedCommand,
} from './preflight.js';
import {
  createRunRecord,
  displayDir,
  RecordError,
  recordEnd,
  recordStepEnd,
  recordStepStart,
  releaseReserve,
  saveRunJson,
  stepLogPath,
  type RunRecord,
} from './record.js';
import { Pipeline, type PipelineOutcome, type RunControl, type StepSpec } from './runner.js';
import { formatDuration, type TextSink } from './stream.js';
import { GpuTelemetry, telemetryIntervalMs, visibleGpuIndices } from './telemetry.js';
import { RunWatch, type WatchStepConfig } from './watch.js';
import { HELPER_OF_ENV, RUN_DIR_ENV, type ProcessGuard, type Watchdog } from './watchdog.js';

/** Lines of the failed step shown after a failure. */
export const FAILURE_TAIL_LINES = 20;

/** Options of a launch. */
export interface LaunchOptions {
  /** What is launched, for the record: a preset name or file, `--last`, `wizard`. */
  source: string;
  /** `--accelerate PATH` (else ZEROWIZ_ACCELERATE, else PATH). */
  accelerate?: string;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** A setup checked and ready to run. */
export interface PreparedLaunch {
  setup: Setup;
  source: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** null only in a dry run without accelerate. */
  exe: AccelerateExe | null;
  commands: PreparedCommand[];
  /** Warnings (errors stop the launch). */
  findings: Finding[];
  /** Dry run only: what a real launch would have refused. */
  problems: string[];
}

/** Findings as lines for the terminal. */
export function formatFindings(findings: Finding[]): string[] {
  return findings.map(formatFinding);
}

/**
 * Checks a setup before running it. Throws UsageError (exit 2) for validation errors, a missing
 * accelerate or a missing training script; in a dry run only validation errors throw.
 */
export function prepareLaunch(setup: Setup, opts: LaunchOptions): PreparedLaunch {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  if (setup.steps.length === 0) {
    throw new UsageError(
      `'${setup.name}' has no launch steps`,
      'add steps to the preset (steps: [{name, uses_config, args}]), or use `zerowiz generate` to only write the files',
    );
  }
  const findings = validate(setup);
  const errors = findings.filter((f) => f.level === 'error');
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new UsageError(
      `'${setup.name}' is not valid: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`,
      first.fix,
    );
  }
  const { exe, problems } = checkRunnable(setup, { accelerate: opts.accelerate, env, cwd, dryRun: opts.dryRun });
  const commands = prepareCommands(
    setup,
    exe ?? { display: opts.accelerate ?? env.ZEROWIZ_ACCELERATE ?? 'accelerate' },
  );
  return {
    setup,
    source: opts.source,
    cwd,
    env,
    exe,
    commands,
    findings: findings.filter((f) => f.level === 'warning'),
    problems,
  };
}

/**
 * What running a setup needs besides its validity: accelerate, and each step's training script under
 * `cwd` (local runs and Slurm jobs alike). Throws UsageError for either missing; a dry run collects
 * them as problems instead.
 */
export function checkRunnable(
  setup: Setup,
  opts: { accelerate?: string; env: NodeJS.ProcessEnv; cwd: string; dryRun?: boolean },
): { exe: AccelerateExe | null; problems: string[] } {
  const { env, cwd } = opts;
  const problems: string[] = [];
  let exe: AccelerateExe | null = null;
  try {
    exe = resolveAccelerate(opts.accelerate, env, cwd);
  } catch (err) {
    if (!opts.dryRun) throw err;
    problems.push((err as Error).message);
  }
  const missing: MissingScript[] = missingScripts(setup, cwd);
  if (missing.length > 0) {
    const m = missing[0]!;
    if (!opts.dryRun) {
      throw new UsageError(
        `step '${m.step}': training script ${m.path} not found in ${cwd}`,
        'run zerowiz from the directory the step paths are relative to (e.g. your DiffSynth-Studio checkout), or fix the step in the preset',
      );
    }
    for (const x of missing) problems.push(`step '${x.step}': training script ${x.path} not found`);
  }
  return { exe, problems };
}

/**
 * A run that goes on without zerowiz (a Slurm job): zerowiz can leave it, and stops it only when asked and
 * confirmed. SIGINT, SIGTERM and SIGHUP leave it (in stream mode with a terminal on stdin, SIGINT asks).
 */
export interface Detachable {
  /** Stops following; the run goes on. */
  detach(): void;
  /** Whether it was left. */
  readonly detached: boolean;
  /** The pane's question on q: y stops it, d leaves it, any other key keeps watching. */
  panePrompt: string;
  /** Stream mode's question on Ctrl+C (answered with a line: y, d, or Enter to keep following). */
  streamQuestion: string;
}

/** A started launch: its record, its run, the pane model and what watches the run. */
export interface LaunchSession {
  prepared: PreparedLaunch;
  record: RunRecord;
  /** The run: local process groups (Pipeline) or another kind (see RunKind). */
  pipeline: RunControl;
  model: RunModel;
  /** Metrics, alerts and GPU peaks per step (the one place the run's output is read for them). */
  watch: RunWatch;
  /** The GPUs of this machine, watched while the run goes; null when the run's GPUs are elsewhere. */
  telemetry: GpuTelemetry | null;
  /** Why there is no GPU telemetry at all (the GPUs are on a Slurm job's nodes), else null. */
  noTelemetry: string | null;
  /** What zerowiz predicted for the setup's mode, or null (no model size, or nothing to estimate). */
  estimate: LaunchEstimate | null;
  /** A run that outlives zerowiz (a Slurm job), else null. */
  detachable: Detachable | null;
  kind: RunKind;
  /** What writing the config files did. */
  writes: WriteResult[];
  /**
   * Runs it (once): the telemetry, the run, the last loss.csv reads, the record's last save; resolves with
   * the run's outcome.
   */
  run(): Promise<PipelineOutcome>;
  /** Stops the run (SIGINT, grace, SIGTERM, grace, SIGKILL; a Slurm job: scancel). */
  stop(): Promise<void>;
  /** SIGKILL now. */
  killNow(): void;
}

/** What the CLI hands the log pane (components/launch/run.ts). */
export interface LogPaneOptions {
  session: LaunchSession;
  /**
   * A run that outlives the pane (a Slurm job): `d`, or `d` at the stop question, leaves the pane and
   * calls this; the run goes on. Without it the pane can only stop the run.
   */
  detach?: () => void;
  /** The stop question, when stopping is not the local SIGINT/SIGTERM/SIGKILL ladder (e.g. scancel). */
  stopPrompt?: string;
  /** False: the pane stays open after a successful or stopped run until q (default true). */
  closeOnEnd?: boolean;
}

/** A record opened for a run, and what was written first. */
export interface OpenedRun {
  record: RunRecord;
  writes: WriteResult[];
  /** The launch as it turned out (e.g. the commands of a submitted job); default: unchanged. */
  prepared?: PreparedLaunch;
}

/** What a kind of run can ask of the lifecycle while it opens. */
export interface OpenContext {
  /** zerowiz's own message line. */
  say(line: string): void;
  /** Whether a stop was requested meanwhile (then nothing more is started). */
  stopRequested(): boolean;
  /**
   * The watchdog of a run whose steps run here: started while open() does its first asynchronous work (the
   * config files), so read it only after open()'s first await. Null for other kinds.
   */
  readonly guard: Watchdog | null;
}

/**
 * A kind of run: how a setup becomes a run, and how that run is followed. The default (LOCAL_RUN) runs the
 * steps here as process groups; another kind (a Slurm job followed through its output files) reports the
 * same events, so the watch, the record, the pane, stream mode and the summary serve it unchanged. Every
 * hook but `create` is optional; absent, the local behaviour applies.
 */
export interface RunKind {
  /** Whether the steps run on this machine: the watchdog guards them and nvidia-smi watches the GPUs. */
  readonly runsHere: boolean;
  /** Why there is no GPU telemetry (for a kind whose steps run elsewhere). */
  readonly noTelemetry?: string;
  /** The run keeps its own record of step starts, ends and the outcome (a Slurm job's follower does). */
  readonly keepsRecord?: boolean;
  /** Checks the setup; returns the launch and the lines to say about it (default: prepareLaunch, its findings). */
  prepare?(setup: Setup, opts: LaunchOptions): { prepared: PreparedLaunch; lines: string[] };
  /** Prints what a real launch would do (default: the commands). */
  dryRun?(prepared: PreparedLaunch, out: TextSink, say: (line: string) => void): Promise<void>;
  /**
   * Opens the run's record (and writes what it needs first); null when a stop came first and nothing was
   * opened. Throws UsageError for what the user can fix. Default (local): the config files, then the record.
   */
  open?(prepared: PreparedLaunch, ctx: OpenContext): Promise<OpenedRun | null>;
  /** Builds the run (not started). `guard` (the watchdog) must hear about every local process group. */
  create(prepared: PreparedLaunch, record: RunRecord, guard: ProcessGuard | null): RunControl;
  /** For a run that outlives zerowiz: how to leave it (called after create). */
  detachable?(): Detachable;
  /** Stream mode's first line (default: `run ID: N step(s); record in DIR`). */
  streamIntro?(session: LaunchSession): string;
  /** Stream mode's line when step `i` starts (default: `step i/N NAME: COMMAND`). */
  stepIntro?(session: LaunchSession, i: number): string;
  /** Stream mode's line when a stop is requested. */
  stoppingNote?(session: LaunchSession): string;
  /** The last lines after the summary (default: for a failure or a stop, where the logs are). */
  endLines?(session: LaunchSession): string[];
}

/** The steps as process groups on this machine, in order. */
export const LOCAL_RUN: RunKind = {
  runsHere: true,
  create(prepared, record, guard) {
    const specs: StepSpec[] = prepared.commands.map((c, i) => ({
      name: c.step,
      file: prepared.exe!.path,
      args: c.argv,
      logPath: stepLogPath(record, i),
      cwd: prepared.cwd,
      env: { ...prepared.env, [RUN_DIR_ENV]: record.dir },
    }));
    return new Pipeline(specs, gracePeriods(prepared.env), { guard });
  },
};

/**
 * An extra source of per-step data (e.g. GPU telemetry, a metrics file): attached once the session exists,
 * before the run starts; it may subscribe to the run and feed the model. Its return value detaches it.
 */
export interface LaunchSource {
  attach(session: LaunchSession): (() => void) | undefined;
}

/** Options of startSession. */
export interface StartOptions {
  /** Lines the pane model keeps per step (default PANE_RING_LINES). */
  ringLines?: number;
  /** The watchdog, told about every process group (the steps' and the telemetry's). */
  guard?: Watchdog | null;
}

/**
 * Opens the run record of a local launch (telling the watchdog where it is). Throws UsageError when the
 * record cannot be created (the disk full, a read-only directory): nothing runs without a record.
 */
export function createLocalRecord(prepared: PreparedLaunch, guard: Watchdog | null): RunRecord {
  const { setup, cwd, exe } = prepared;
  if (!exe)
    throw new UsageError(
      'accelerate is not on PATH',
      'activate the Python environment that has accelerate and deepspeed, or pass --accelerate PATH',
    );
  try {
    return createRunRecord({
      cwd,
      setup,
      source: prepared.source,
      commands: prepared.commands,
      accelerate: exe,
      onDir: (dir) => guard?.recordDir(dir),
    });
  } catch (e) {
    if (!(e instanceof RecordError)) throw e;
    throw new UsageError(
      e.message,
      'free some space there (or make it writable), or launch from another directory: records go to .zerowiz/runs/ under the current one',
    );
  }
}

/**
 * The GPUs a local run uses: accelerate starts one process per GPU of the node, on the first of the GPUs
 * CUDA_VISIBLE_DEVICES lists (or of all of them, in nvidia-smi's order), so the bars leave out the GPUs
 * other jobs use.
 */
export function runGpus(prepared: PreparedLaunch): number[] {
  const n = topology(prepared.setup.answers).gpusPerNode;
  const visible = visibleGpuIndices(prepared.env);
  return visible ? visible.slice(0, n) : Array.from({ length: n }, (_, i) => i);
}

/**
 * How often run.json takes the running step's metrics and peaks, so a killed multi-day run keeps them
 * (override: ZEROWIZ_LIVE_SAVE_MS, at least 100).
 */
export const LIVE_SAVE_INTERVAL_MS = 60_000;

/** The live save interval in effect for an environment. */
export function liveSaveMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.ZEROWIZ_LIVE_SAVE_MS);
  return Number.isFinite(n) && n >= 100 ? n : LIVE_SAVE_INTERVAL_MS;
}

/** The loss.csv a step's watch follows, and what to say when a DiffSynth step logs no loss at all. */
function watchStepOf(prepared: PreparedLaunch, i: number): WatchStepConfig {
  const c = prepared.commands[i]!;
  const plan = planCsvLog(prepared.setup.steps[i]?.args ?? [], prepared.cwd);
  return {
    name: c.step,
    csvPath: plan.kind === 'enabled' ? plan.csvPath : null,
    noLossHint:
      plan.kind === 'offer'
        ? `DiffSynth prints no loss: ${CSV_LOG_FLAG} (zerowiz launch --csv-log) writes it to loss.csv`
        : plan.kind === 'unsupported'
          ? plan.reason
          : plan.kind === 'not-training'
            ? `none: ${plan.task} trains nothing`
            : null,
  };
}

/**
 * Builds the session over an opened record: the run (not started) with its subscribers, in this order: the
 * watch (metrics, alerts, GPU peaks; the one reader of the output for them), the pane model, and the record
 * keeper (step states, each step's `live` block, the estimate). Nothing runs yet.
 */
export function startSession(
  prepared: PreparedLaunch,
  opened: OpenedRun,
  kind: RunKind = LOCAL_RUN,
  opts: StartOptions = {},
): LaunchSession {
  const { record } = opened;
  const guard = opts.guard ?? null;
  const pipeline = kind.create(prepared, record, guard);
  const model = new RunModel(
    prepared.commands.map((c, i) => ({ name: c.step, logPath: stepLogPath(record, i), command: c.text })),
    opts.ringLines,
  );
  const estimate = launchEstimate(prepared.setup);
  record.json.estimate ??= estimate?.json ?? null;
  const telemetry = kind.runsHere
    ? new GpuTelemetry({
        env: { ...prepared.env, [HELPER_OF_ENV]: record.dir },
        gpus: runGpus(prepared),
        intervalMs: telemetryIntervalMs(prepared.env),
        track: {
          willSpawn: () => guard?.helperWillSpawn(),
          add: (pgid) => {
            trackGroup(pgid);
            guard?.helperSpawned(pgid);
          },
          remove: (pgid) => {
            untrackGroup(pgid);
            guard?.gone(pgid);
          },
        },
      })
    : null;
  const noTelemetry = kind.runsHere ? null : (kind.noTelemetry ?? "the run's GPUs are not on this machine");
  const alertContext: AlertContext = {
    precision: prepared.setup.answers?.mixed_precision ?? null,
    whatFits: estimate?.whatFits,
    hostWhatFits: estimate?.hostWhatFits,
    freePort: null,
  };
  const watch = new RunWatch({
    steps: prepared.commands.map((_, i) => watchStepOf(prepared, i)),
    alertContext,
    telemetry,
    noTelemetry: noTelemetry ?? undefined,
    onAlert: () => model.notice(),
  });
  pipeline.subscribe(watch);
  pipeline.subscribe(model);

  // A save that finds the disk full stops the logs, so that what space is left goes to the record.
  const save = () => saveRunJson(record, (why) => pipeline.stopLogging(why));
  // Each step's live block as last saved (a periodic save writes only when it changed).
  const savedLive: (string | null)[] = prepared.commands.map(() => null);
  const takeLive = (i: number): boolean => {
    const live = watch.stepJson(i);
    const step = record.json.steps[i];
    if (!live || !step) return false;
    const text = JSON.stringify(live);
    if (text === savedLive[i]) return false;
    savedLive[i] = text;
    step.live = live;
    return true;
  };
  const keeps = kind.keepsRecord === true;
  pipeline.subscribe({
    stepStart: (i, info) => {
      // A free port for the port-in-use alert's fix, found while the step starts; only where the step runs
      // (a port free here says nothing of a Slurm node's).
      if (kind.runsHere)
        findFreePort().then(
          (p) => {
            alertContext.freePort = p;
          },
          () => undefined,
        );
      if (keeps) return;
      recordStepStart(record, i, info.startedAt);
      save();
    },
    stepEnd: (i, r) => {
      takeLive(i);
      if (!keeps) recordStepEnd(record, i, r);
      save();
    },
    logError: (i, why) => {
      const at = new Date().toISOString();
      record.json.logError = `${why}, at step ${prepared.commands[i]?.step ?? i + 1} (${at}); the run went on`;
      save();
    },
    end: (o) => {
      if (keeps) return;
      recordEnd(record, o);
      // The reserve goes first: on a full disk it is the room the last save needs.
      releaseReserve(record.dir);
      save();
    },
  });
  let running: Promise<PipelineOutcome> | null = null;
  const run = async (): Promise<PipelineOutcome> => {
    telemetry?.start();
    // A run killed without a chance to save (kill -9, the OOM killer) keeps its peaks up to the last minute.
    const periodic = setInterval(() => {
      let changed = false;
      record.json.steps.forEach((s, i) => {
        if (s.status === 'running' && takeLive(i)) changed = true;
      });
      if (changed) save();
    }, liveSaveMs(prepared.env));
    periodic.unref();
    try {
      const o = await pipeline.run();
      // The last loss.csv rows, and nvidia-smi gone, before the record's last word.
      await watch.close();
      await telemetry?.stop();
      let changed = false;
      record.json.steps.forEach((s, i) => {
        if (s.status !== 'pending' && takeLive(i)) changed = true;
      });
      if (changed) save();
      if (pipeline.result) guard?.finished();
      return o;
    } finally {
      clearInterval(periodic);
    }
  };
  return {
    prepared,
    record,
    pipeline,
    model,
    watch,
    telemetry,
    noTelemetry,
    estimate,
    detachable: kind.detachable?.() ?? null,
    kind,
    writes: opened.writes,
    run: () => (running ??= run()),
    stop: () => pipeline.stop(),
    killNow: () => pipeline.killNow(),
  };
}

/** What LaunchStops did with the answer to its stop question: stopped the run, left it, or kept following it. */
export type StopAnswer = 'stop' | 'detach' | 'follow';

/**
 * SIGINT, SIGTERM and SIGHUP to zerowiz (and the terminal going away without a signal) as stop requests for a
 * launch, from before its session exists until it ends: the run is stopped cleanly (a second SIGINT kills
 * at once) instead of zerowiz dying and leaving the steps or a half-made record. A request that comes before
 * the session is attached is kept: the launch then starts nothing. A pipe closing on stream mode's output
 * is no request: the logs keep everything.
 *
 * A run that outlives zerowiz (a Slurm job, `session.detachable`) is left instead, never stopped by a signal:
 * only a confirmed stop cancels it. In stream mode with a terminal to ask on (`asker`), SIGINT asks first; a
 * second SIGINT at the question stops it, one after the stop was asked kills at once (killNow).
 */
export class LaunchStops {
  /** Whether a stop was requested. */
  requested = false;
  /**
   * Asks the user a question on the terminal and calls `answer` with the line typed (null when cut short),
   * which says what was done about it; returns the function that withdraws the question. Set by stream mode
   * when stdin is a terminal.
   */
  asker: ((question: string, answer: (line: string | null) => StopAnswer) => () => void) | null = null;
  private sigints = 0;
  private session: LaunchSession | null = null;
  private withdraw: (() => void) | null = null;
  private readonly offs: (() => void)[];

  constructor() {
    this.offs = [onTerminalSignals((sig) => this.request(sig)), onHangup(() => this.request('SIGHUP'))];
  }

  private request(sig: TerminalSignal): void {
    this.requested = true;
    if (sig === 'SIGINT') this.sigints++;
    const s = this.session;
    if (!s) return;
    const d = s.detachable;
    if (!d) {
      if (sig === 'SIGINT' && this.sigints > 1) s.killNow();
      else void s.stop();
      return;
    }
    if (sig !== 'SIGINT' || this.asker === null) {
      d.detach();
      return;
    }
    if (s.pipeline.stopping) {
      s.killNow();
      return;
    }
    if (this.withdraw) {
      // Ctrl+C again at the question: stop it.
      this.withdraw();
      this.withdraw = null;
      void s.stop();
      return;
    }
    this.withdraw = this.asker(d.streamQuestion, (line) => {
      this.withdraw = null;
      const a = (line ?? '').trim().toLowerCase();
      if (a === 'y' || a === 'yes') {
        void s.stop();
        return 'stop';
      }
      if (a === 'd') {
        d.detach();
        return 'detach';
      }
      return 'follow';
    });
  }

  /** From now on requests go to this session (one that came before takes effect at once). */
  attach(session: LaunchSession): void {
    this.session = session;
    if (!this.requested) return;
    if (session.detachable) session.detachable.detach();
    else void session.stop();
  }

  /** Signals go back to their defaults; a question still open is withdrawn. */
  close(): void {
    this.withdraw?.();
    this.withdraw = null;
    for (const off of this.offs.splice(0)) off();
  }
}

/** The lines to print after a run: the outcome, the failure's reason and fix, the GPU peaks, where things are. */
export function summaryLines(session: LaunchSession, opts: { tail: boolean; stepLine?: boolean }): string[] {
  const o = session.pipeline.result;
  const dir = displayDir(session.record.dir, session.prepared.cwd);
  if (!o) return [`run record: ${dir}`];
  const out: string[] = [];
  const { watch } = session;
  const took = (i: number) => {
    const r = o.results[i];
    return r ? formatDuration(r.endedAt - r.startedAt) : '-';
  };
  if (o.outcome === 'succeeded') {
    out.push(
      `all ${session.model.steps.length} steps done (${session.model.steps.map((s, i) => `${s.name} ${took(i)}`).join(', ')})`,
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
        : `failed after ${took(i)} (${r?.error ?? (r?.signal ? `signal ${r.signal}` : `exit ${r?.exitCode}`)})`;
    // Stream mode has already printed this line as the step ended.
    if (opts.stepLine !== false) out.push(`step ${st.name} ${why}`);
    const reason = o.outcome === 'failed' ? watch.alerts.reason(i) : null;
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
    if (session.record.json.logError) out.push(`logging stopped: ${session.record.json.logError}`);
  }
  if (session.record.saveError)
    out.push(`run.json could not be saved (${session.record.saveError}): it shows an earlier state of the run`);
  out.push(`run record: ${dir}`);
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
      prepared.commands[i]?.usesConfig ? (estimate?.json.gpuBytesPerGpu ?? null) : null,
    );
    if (line) out.push(`${s.name}: ${line}`);
  });
  if (out.length === 0 && telemetry.reason) out.push(`no GPU telemetry: ${telemetry.reason}`);
  else if (telemetry.state === 'lost' && telemetry.reason) out.push(`GPU telemetry: ${telemetry.reason}`);
  return out;
}
