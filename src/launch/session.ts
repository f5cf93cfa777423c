/**
 * The parts of a launch, which ./lifecycle.ts puts in order for `zerowiz launch`, `--last` and the
 * wizard's Launch action: pre-flight (validate, find accelerate, check scripts), the config files, the run
 * record with its watchdog, the run with its subscribers (pane model, record keeper), the stop signals and
 * the summary after it ends.
 */
import { isAbsolute, join } from 'node:path';
import { UsageError } from '../errors.js';
import type { Setup } from '../setup.js';
import { onHangup, onTerminalSignals, type TerminalSignal } from '../terminal.js';
import { formatFinding, validate, type Finding } from '../validate.js';
import { extraConfigFiles } from '../accelerate-config.js';
import { writeConfigFiles, writeFilesTogether, type WriteResult } from '../write.js';
import { gracePeriods } from './group.js';
import { RunModel } from './model.js';
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
  recordEnd,
  recordStepEnd,
  recordStepStart,
  releaseReserve,
  saveRunJson,
  stepLogPath,
  type RunRecord,
} from './record.js';
import { Pipeline, type PipelineOutcome, type RunControl, type StepSpec } from './runner.js';
import { formatDuration } from './stream.js';
import { RUN_DIR_ENV, type Watchdog, type ProcessGuard } from './watchdog.js';

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

/** A started launch: its record, its run and the pane model. */
export interface LaunchSession {
  prepared: PreparedLaunch;
  record: RunRecord;
  /** The run: local process groups (Pipeline) or another kind (see RunKind). */
  pipeline: RunControl;
  model: RunModel;
  /** What writing the config files did. */
  writes: WriteResult[];
  /** Runs the pipeline (once); resolves with its outcome. */
  run(): Promise<PipelineOutcome>;
  /** Stops the run (SIGINT, grace, SIGTERM, grace, SIGKILL). */
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

/**
 * A kind of run: how a prepared launch and its record become a run. The default runs the steps here as
 * process groups; another kind (a batch job followed through its output files) reports the same events,
 * so the record, the pane, stream mode and the summary serve it unchanged.
 */
export interface RunKind {
  /** Builds the run (not started). `guard` (the watchdog) must hear about every local process group. */
  create(prepared: PreparedLaunch, record: RunRecord, guard: ProcessGuard | null): RunControl;
}

/** The steps as process groups on this machine, in order. */
export const LOCAL_RUN: RunKind = {
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

/** Options of openSession. */
export interface StartOptions {
  /** Lines the pane model keeps per step (default PANE_RING_LINES). */
  ringLines?: number;
  /** The kind of run (default LOCAL_RUN). */
  kind?: RunKind;
  /** The watchdog, told where the record is and about every process group. */
  guard?: Watchdog | null;
}

/** Writes the config files the steps use (backups, atomic); [] when no step uses them. */
export async function writeLaunchConfigs(prepared: PreparedLaunch): Promise<WriteResult[]> {
  const { setup, cwd } = prepared;
  // The setup's YAML and JSON (and a pinned config without DeepSpeed) when a step uses them; else only
  // the pinned config, which a step without the setup's config may still name.
  if (prepared.commands.some((c) => c.usesConfig)) return writeConfigFiles(setup, cwd);
  const extra = extraConfigFiles(setup).map((f) => ({
    path: isAbsolute(f.path) ? f.path : join(cwd, f.path),
    text: f.text,
  }));
  return extra.length > 0 ? writeFilesTogether(extra) : [];
}

/**
 * Opens the run record (telling the watchdog where it is) and builds the run with its subscribers: the
 * pane model and the record keeper. Nothing runs yet. Throws RecordError when the record cannot be created.
 */
export function openSession(prepared: PreparedLaunch, writes: WriteResult[], opts: StartOptions = {}): LaunchSession {
  const { setup, cwd, exe } = prepared;
  if (!exe)
    throw new UsageError(
      'accelerate is not on PATH',
      'activate the Python environment that has accelerate and deepspeed, or pass --accelerate PATH',
    );
  const guard = opts.guard ?? null;
  const record = createRunRecord({
    cwd,
    setup,
    source: prepared.source,
    commands: prepared.commands,
    accelerate: exe,
    onDir: (dir) => guard?.recordDir(dir),
  });
  const pipeline = (opts.kind ?? LOCAL_RUN).create(prepared, record, guard);
  const model = new RunModel(
    prepared.commands.map((c, i) => ({ name: c.step, logPath: stepLogPath(record, i), command: c.text })),
    opts.ringLines,
  );
  pipeline.subscribe(model);
  // A save that finds the disk full stops the logs, so that what space is left goes to the record.
  const save = () => saveRunJson(record, (why) => pipeline.stopLogging(why));
  pipeline.subscribe({
    stepStart: (i, info) => {
      recordStepStart(record, i, info.startedAt);
      save();
    },
    stepEnd: (i, r) => {
      recordStepEnd(record, i, r);
      save();
    },
    logError: (i, why) => {
      const at = new Date().toISOString();
      record.json.logError = `${why}, at step ${prepared.commands[i]?.step ?? i + 1} (${at}); the run went on`;
      save();
    },
    end: (o) => {
      recordEnd(record, o);
      // The reserve goes first: on a full disk it is the room the last save needs.
      releaseReserve(record.dir);
      save();
      guard?.finished();
    },
  });
  let running: Promise<PipelineOutcome> | null = null;
  return {
    prepared,
    record,
    pipeline,
    model,
    writes,
    run: () => (running ??= pipeline.run()),
    stop: () => pipeline.stop(),
    killNow: () => pipeline.killNow(),
  };
}

/**
 * SIGINT, SIGTERM and SIGHUP to zerowiz (and the terminal going away without a signal) as stop requests for a
 * launch, from before its session exists until it ends: the run is stopped cleanly (a second SIGINT kills
 * at once) instead of zerowiz dying and leaving the steps or a half-made record. A request that comes before
 * the session is attached is kept: the launch then starts nothing. A pipe closing on stream mode's output
 * is no request: the logs keep everything.
 */
export class LaunchStops {
  /** Whether a stop was requested. */
  requested = false;
  private sigints = 0;
  private session: LaunchSession | null = null;
  private readonly offs: (() => void)[];

  constructor() {
    this.offs = [onTerminalSignals((sig) => this.request(sig)), onHangup(() => this.request('SIGHUP'))];
  }

  private request(sig: TerminalSignal): void {
    this.requested = true;
    if (sig === 'SIGINT') this.sigints++;
    const s = this.session;
    if (!s) return;
    if (sig === 'SIGINT' && this.sigints > 1) s.killNow();
    else void s.stop();
  }

  /** From now on requests stop this session (one that came before stops it at once). */
  attach(session: LaunchSession): void {
    this.session = session;
    if (this.requested) void session.stop();
  }

  /** Signals go back to their defaults. */
  close(): void {
    for (const off of this.offs.splice(0)) off();
  }
}

/** The lines to print after a run: the outcome, and for a failure the last lines and the log path. */
export function summaryLines(session: LaunchSession, opts: { tail: boolean; stepLine?: boolean }): string[] {
  const o = session.pipeline.result;
  const dir = displayDir(session.record.dir, session.prepared.cwd);
  if (!o) return [`run record: ${dir}`];
  const out: string[] = [];
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
    out.push(`full log: ${displayDir(st.logPath ?? '', session.prepared.cwd)}`);
  } else if (o.outcome === 'interrupted') {
    out.push('stopped before the next step started');
  }
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
