/**
 * One launch, start to end, shared by `zerowiz launch`, `--last` and the wizard's Launch action:
 * pre-flight (validate, find accelerate, check scripts), write the config files, open the run record,
 * build the pipeline with its subscribers (pane model, record keeper), and the summary after it ends.
 */
import { UsageError } from '../errors.js';
import type { Setup } from '../setup.js';
import { formatFinding, validate, type Finding } from '../validate.js';
import { writeConfigFiles, type WriteResult } from '../write.js';
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
  stepLogPath,
  type RunRecord,
} from './record.js';
import { Pipeline, type PipelineOutcome, type StepSpec } from './runner.js';
import { formatDuration } from './stream.js';

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
 * What the pane, stream mode and the summary need of a pipeline: the local Pipeline, or a Slurm job
 * followed from its output files (src/slurm/follow.ts).
 */
export type PipelineLike = Pick<Pipeline, 'subscribe' | 'result' | 'stopping' | 'run' | 'stop' | 'killNow'>;

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

/** A started launch: its record, pipeline and pane model. */
export interface LaunchSession {
  prepared: PreparedLaunch;
  record: RunRecord;
  pipeline: PipelineLike;
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

/** Options of startLaunch. */
export interface StartOptions {
  /** Lines the pane model keeps per step (default PANE_RING_LINES). */
  ringLines?: number;
}

/** Writes the config files the steps use, opens the run record, and builds the pipeline (not yet running). */
export async function startLaunch(prepared: PreparedLaunch, opts: StartOptions = {}): Promise<LaunchSession> {
  const { setup, cwd, exe } = prepared;
  if (!exe)
    throw new UsageError(
      'accelerate is not on PATH',
      'activate the Python environment that has accelerate and deepspeed, or pass --accelerate PATH',
    );
  const writes = prepared.commands.some((c) => c.usesConfig) ? await writeConfigFiles(setup, cwd) : [];
  const record = createRunRecord({ cwd, setup, source: prepared.source, commands: prepared.commands, accelerate: exe });
  const specs: StepSpec[] = prepared.commands.map((c, i) => ({
    name: c.step,
    file: exe.path,
    args: c.argv,
    logPath: stepLogPath(record, i),
    cwd,
    env: prepared.env,
  }));
  const pipeline = new Pipeline(specs, gracePeriods(prepared.env));
  const model = new RunModel(
    prepared.commands.map((c, i) => ({ name: c.step, logPath: stepLogPath(record, i), command: c.text })),
    opts.ringLines,
  );
  pipeline.subscribe(model);
  pipeline.subscribe({
    stepStart: (i, info) => recordStepStart(record, i, info.startedAt),
    stepEnd: (i, r) => recordStepEnd(record, i, r),
    end: (o) => recordEnd(record, o),
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
 * While `fn` runs, SIGINT/SIGTERM/SIGHUP to zerowiz stop the run cleanly (a second SIGINT kills at
 * once) instead of killing zerowiz and orphaning the steps.
 */
export async function withStopSignals<T>(session: LaunchSession, fn: () => Promise<T>): Promise<T> {
  let count = 0;
  const handler = (sig: NodeJS.Signals) => {
    count++;
    if (count > 1 && sig === 'SIGINT') session.killNow();
    else void session.stop();
  };
  const sigs: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of sigs) process.on(s, handler);
  try {
    return await fn();
  } finally {
    for (const s of sigs) process.off(s, handler);
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
  out.push(`run record: ${dir}`);
  return out;
}
