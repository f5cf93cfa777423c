/**
 * A launch as a Slurm job, in pure steps the CLI (and later the wizard) calls:
 *   planSlurmLaunch  the setup for the job's shape, what changed, findings, fit, storage warnings;
 *   slurmScript      the sbatch script for a record directory;
 *   checkCluster     sbatch on PATH and the partition known to sinfo;
 *   submitSlurm      the run record (configs for the shape, the script), `sbatch --parsable`, the job id.
 * Following the job is the launch lifecycle's (src/launch/lifecycle.ts) with the Slurm run kind (./kind.ts).
 */
import { presetFileFor, renderPresetFile } from '../setups/index.js';
import { binPath } from '../launch/index.js';
import { type CheckId, launchSkips, skipsAll } from '../checks/index.js';
import { join } from 'node:path';
import { UsageError } from '../text/index.js';
import type { AccelerateExe } from '../proc/index.js';
import { RUNS_DIR, runDirName, saveRunJson, stepLogName, type RunRecord } from '../records/index.js';
import { checkRunnable, invalidSetup, launchAgainPinned, stepLaunchFindings } from '../launch/index.js';
import { type LaunchSource, sourceText, toLaunchCommands, type Setup } from '../config/index.js';
import type { Finding } from '../config/index.js';
import { writeFileSafely, type WriteResult } from '../fs/index.js';
import { setupInDir, writeLaunchConfigFiles } from '../config/index.js';
import { listPartitions, requirePartition, storageWarnings, type Partition } from './preflight.js';
import {
  createSlurmRecord,
  discardRecord,
  JOB_OUTPUT_PATTERN,
  recordSubmitted,
  SCRIPT_FILE,
  UNKNOWN_SUBMISSION,
} from './record.js';
import {
  checkJobPaths,
  refuseBadSbatchArgs,
  passFlags,
  sbatchArgWarning,
  sbatchScript,
  type SbatchOptions,
  type Word,
} from './script.js';
import {
  formatChange,
  shapeOfSetup,
  slurmFindings,
  slurmSetup,
  type ShapeChange,
  type ShapeLauncher,
  type SlurmShape,
} from './shape.js';
import { CLUSTER_NAME_RE, requireSlurm, slurm, type SlurmAnswer, type SlurmContext } from './tools.js';
import { shellArgs, shellWord } from '../text/index.js';
import { redactArgv, redactSetup, secretEnv } from '../text/index.js';
import { PRIVATE_FILE_MODE } from '../fs/index.js';
import { printable } from '../text/index.js';

/** What the user asks of the job (flags of `launch --slurm`, or the wizard's answers). */
export interface SlurmRequest {
  /** Missing parts come from the setup (num_machines, num_processes / num_machines). */
  nodes?: number;
  gpusPerNode?: number;
  options: SbatchOptions;
}

/** A setup checked and shaped for a Slurm job, not yet submitted. */
export interface SlurmPlan {
  /** The setup as given (what `launch --last` resubmits). */
  setup: Setup;
  /** The setup as the job runs it (the Slurm shape), its files not yet placed. */
  slurm: Setup;
  shape: SlurmShape;
  options: SbatchOptions;
  changes: ShapeChange[];
  /** Warnings of the shaped setup (errors stop the plan). */
  findings: Finding[];
  /** The memory fit re-checked for the shape (warnings). */
  fit: Finding[];
  /** Files the compute nodes may not see. */
  storage: string[];
  /** null only in a dry run without accelerate. */
  exe: AccelerateExe | null;
  /** Dry run only: what a real submission would have refused. */
  problems: string[];
  source: LaunchSource;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The checks left out before each pass on the nodes (--skip-check, ZEROWIZ_SKIP_CHECKS). */
  skipChecks: CheckId[];
}

/** Options of planSlurmLaunch. */
export interface PlanOptions {
  source: LaunchSource;
  /** Who starts accelerate on every node (the reasons the shape's changes give; default: srun). */
  launcher?: ShapeLauncher;
  accelerate?: string;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  skipCheck?: string[];
  speedTest?: boolean;
  /** The command that asks this again with a step pinned (`zerowiz export ...`); default: the launch's. */
  again?: (pin: string) => string;
}

/** Slurm's time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (and `infinite`/`unlimited`). */
const TIME_RE = /^(?:\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+(?::\d{1,2}){0,2}|infinite|unlimited|UNLIMITED)$/;

/**
 * Checks the sbatch options; throws UsageError for a bad one (a `--sbatch-arg` zerowiz refuses in any
 * spelling: see checkSbatchArg). Returns the warnings for the ones it lets through (sbatchArgWarning).
 */
export function checkOptions(o: SbatchOptions): Finding[] {
  if (o.time !== undefined && !TIME_RE.test(o.time))
    throw new UsageError(
      `--time '${o.time}' is not a Slurm time`,
      'give HH:MM:SS (e.g. 02:00:00), D-HH:MM:SS (e.g. 1-12:00:00) or minutes',
    );
  for (const [flag, v] of [
    ['--partition', o.partition],
    ['--account', o.account],
    ['--qos', o.qos],
  ] as const) {
    if (v !== undefined && !/^[A-Za-z0-9._,:@+-]+$/.test(v))
      throw new UsageError(`${flag} '${v}' is not a Slurm name`, `give the ${flag.slice(2)} as sinfo/sacctmgr show it`);
  }
  refuseBadSbatchArgs(o.extra);
  return o.extra.flatMap((a) => {
    const w = sbatchArgWarning(a);
    return w
      ? [
          {
            level: 'warning' as const,
            rule: 'sbatch-arg',
            message: `--sbatch-arg ${w}`,
            fix: 'leave it out unless you mean it',
          },
        ]
      : [];
  });
}

/**
 * Checks a setup for a Slurm job and shapes it: nodes x GPUs per node decide the process count, the
 * launcher is accelerate's per-node one, the fit is re-checked. Throws UsageError for validation errors, a
 * missing accelerate or training script (in a dry run only validation errors throw).
 */
export function planSlurmLaunch(setup: Setup, req: SlurmRequest, opts: PlanOptions): SlurmPlan {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  if (setup.steps.length === 0)
    throw new UsageError(
      `'${setup.name}' has no launch steps`,
      'add steps to the preset (steps: [{name, uses_config, args}]), or use `zerowiz export` to only write the files',
    );
  const optionWarnings = checkOptions(req.options);
  // The job runs in `cwd` and writes its output under it (the run record): refused here, before anything
  // is written, when an #SBATCH line cannot carry that path.
  checkJobPaths(cwd, join(cwd, RUNS_DIR, 'x'));
  const own = shapeOfSetup(setup);
  const shape: SlurmShape = { nodes: req.nodes ?? own.nodes, gpusPerNode: req.gpusPerNode ?? own.gpusPerNode };
  const shaped = slurmSetup(setup, shape, opts.launcher);
  const { findings, fit } = slurmFindings(shaped.setup);
  const errors = findings.filter((f) => f.level === 'error');
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new UsageError(
      `'${setup.name}' is not valid for ${shape.nodes} node(s) x ${shape.gpusPerNode} GPU(s): ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`,
      first.fix,
    );
  }
  // The steps' own rules, as a local launch checks them (the launch entry's): on the shape the job runs.
  const stepErrors = stepLaunchFindings(shaped.setup, cwd, env).filter((f) => f.level === 'error');
  if (stepErrors.length > 0) throw invalidSetup(setup, stepErrors, opts.again ?? launchAgainPinned(opts.source));
  const { exe, problems } = checkRunnable(setup, { accelerate: opts.accelerate, env, cwd, dryRun: opts.dryRun });
  return {
    setup,
    slurm: shaped.setup,
    shape,
    options: req.options,
    changes: shaped.changes,
    findings: [...optionWarnings, ...findings.filter((f) => f.level === 'warning')],
    fit,
    storage: storageWarnings(setup, cwd, undefined, opts.launcher),
    exe,
    problems,
    source: opts.source,
    cwd,
    env,
    skipChecks: [...launchSkips(opts.skipCheck ?? [], opts.speedTest ?? true, env)],
  };
}

/** The job's name in squeue: `zerowiz-<setup name>`. */
export function jobName(setup: Setup): string {
  return `zerowiz-${setup.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)}`;
}

/** The setup as the job runs it, its configs placed in the record directory. */
export function placedSetup(plan: SlurmPlan, recordDir: string): Setup {
  return setupInDir(plan.slurm, recordDir);
}

/** The pass commands as shown (run.json, stream mode): what each node runs, its rank from Slurm. */
export function passCommandTexts(plan: SlurmPlan, recordDir: string): string[] {
  const placed = placedSetup(plan, recordDir);
  const flags = {
    nodes: { sh: '$SLURM_NNODES' },
    numProcesses: { sh: '$NUM_PROCESSES' },
    ip: { sh: '$MAIN_IP' },
    port: { sh: '$MAIN_PORT' },
  };
  const accel = plan.exe?.path ?? 'accelerate';
  return placed.steps.map((s) => {
    const words: Word[] = [
      accel,
      'launch',
      '--machine_rank',
      { sh: '$SLURM_NODEID' },
      ...passFlags(s, placed.files.accelerateConfig, flags),
      // A secret as its variable (../redact.ts), never its value.
      ...shellArgs(s.args).map((sh) => ({ sh })),
    ];
    return words.map((w) => (typeof w === 'string' ? shellWord(w) : w.sh)).join(' ');
  });
}

/** The lines telling what zerowiz changed for the job's shape. */
export function changeLines(plan: SlurmPlan): string[] {
  return plan.changes.map(formatChange);
}

/** The sbatch script of a plan, for a record directory (or, in a dry run, where the record would go). */
export function slurmScript(
  plan: SlurmPlan,
  recordDir: string,
  stepLogs: string[],
  opts: { checks?: boolean } = {},
): string {
  const placed = placedSetup(plan, recordDir);
  const bin = binPath();
  const checks =
    opts.checks && bin !== null && !skipsAll(new Set(plan.skipChecks))
      ? { node: process.execPath, bin, setupFile: join(recordDir, SETUP_FILE), skip: plan.skipChecks }
      : undefined;
  // The job's watch on its batch node: always with a launch (the report's series); the notification targets are
  // in this process's environment (launch --notify, a preset's, the user's), and sbatch hands them on.
  const watch = opts.checks && bin !== null ? { node: process.execPath, bin } : undefined;
  return sbatchScript({
    jobName: jobName(plan.setup),
    shape: plan.shape,
    options: plan.options,
    cwd: plan.cwd,
    accelerate: plan.exe?.path ?? 'accelerate',
    configFile: placed.files.accelerateConfig,
    steps: placed.steps,
    logDir: recordDir,
    jobOutput: JOB_OUTPUT_PATTERN,
    stepLogs,
    notes: [
      `Written by zerowiz for '${plan.setup.name}' (${sourceText(plan.source)}).`,
      ...changeLines(plan).map((l) => `zerowiz changed: ${l}`),
    ],
    checks,
    watch,
  });
}

/** The setup as the job runs it, in the record for the checks on the nodes (`zerowiz check FILE`). */
export const SETUP_FILE = 'setup.yaml';

/** Where a dry run says the record would go. */
export function dryRunRecordDir(plan: SlurmPlan): string {
  return join(plan.cwd, RUNS_DIR, runDirName(plan.setup.name));
}

/** The step log names a record uses (as createSlurmRecord names them). */
export function dryRunStepLogs(plan: SlurmPlan): string[] {
  return plan.slurm.steps.map((s, i) => stepLogName(i, s.name));
}

/** Checks that Slurm is here and the partition exists; returns the partitions. Throws UsageError. */
export async function checkCluster(plan: SlurmPlan, ctx: SlurmContext): Promise<Partition[]> {
  requireSlurm(ctx.env);
  const partitions = await listPartitions(ctx);
  if (plan.options.partition !== undefined) requirePartition(partitions, plan.options.partition);
  return partitions;
}

/** A submitted job. */
export interface Submitted {
  record: RunRecord;
  jobId: string;
  /** What sbatch said on stderr besides the job id (warnings), as it said it. */
  sbatchNotes: string[];
  writes: WriteResult[];
}

/**
 * Opens the run record, writes the configs for the shape and the sbatch script into it, and submits
 * with `sbatch --parsable`. When sbatch refuses, the record is removed (it held only what zerowiz made)
 * and UsageError carries sbatch's message as it is.
 */
export async function submitSlurm(plan: SlurmPlan, ctx: SlurmContext): Promise<Submitted> {
  if (!plan.exe)
    throw new UsageError(
      'accelerate is not on PATH',
      'activate the Python environment that has accelerate and deepspeed, or pass --accelerate PATH',
    );
  const exe = plan.exe;
  const pre = createSlurmRecord({
    cwd: plan.cwd,
    setup: plan.setup,
    slurmSetup: plan.slurm,
    source: sourceText(plan.source),
    accelerate: { path: exe.path, display: exe.display },
    shape: plan.shape,
    options: plan.options,
    changes: changeLines(plan),
    commandTexts: [],
  });
  let record = pre;
  try {
    const placed = placedSetup(plan, record.dir);
    const texts = passCommandTexts(plan, record.dir);
    const argvs = toLaunchCommands(placed).map((c) => c.argv);
    record.json.steps.forEach((s, i) => {
      s.command = texts[i] ?? '';
      s.argv = redactArgv(argvs[i] ?? s.argv);
    });
    // The job script passes each secret by name; sbatch hands the values to the job in its environment.
    const secrets = secretEnv(placed.steps.map((s) => s.args));
    // Files of the record: private to the user, as the record is (0600).
    const writes = await writeLaunchConfigFiles(placed, plan.cwd, PRIVATE_FILE_MODE);
    record.json.configFiles = writes.map((w) => ({ path: w.path, copy: w.path.slice(record.dir.length + 1) }));
    // The nodes' checks read it; a secret of a step is left out (the checks do not need it), and it is private.
    await writeFileSafely(
      join(record.dir, SETUP_FILE),
      renderPresetFile(presetFileFor(redactSetup(placed))),
      PRIVATE_FILE_MODE,
    );
    const script = slurmScript(
      plan,
      record.dir,
      record.json.steps.map((s) => s.log),
      { checks: true },
    );
    await writeFileSafely(join(record.dir, SCRIPT_FILE), script, PRIVATE_FILE_MODE);
    const r = await slurm('sbatch', ['--parsable', join(record.dir, SCRIPT_FILE)], {
      ...ctx,
      env: { ...ctx.env, ...secrets },
    });
    const answer = readSbatchAnswer(r);
    if (answer.kind === 'refused')
      throw new UsageError(
        `sbatch refused the job: ${answer.said}`,
        'fix what sbatch names (--partition, --nodes, --gpus-per-node, --time, --account, --qos, --sbatch-arg) and submit again; --dry-run prints the script',
      );
    if (answer.kind === 'unknown') {
      // The job may run: its record stays (the job writes its output there), marked as not known to zerowiz.
      recordUnknownSubmission(record, answer.said);
      throw new UsageError(
        `sbatch did not say which job it made (${answer.said}); the job may have been submitted, and its record is kept in ${record.dir}`,
        `look for it with \`squeue --me --name=${jobName(plan.setup)}\` (scancel it, or follow its output in that record) before you submit again`,
      );
    }
    recordSubmitted(record, answer.jobId, answer.cluster);
    const sbatchNotes = [
      ...answer.notes,
      ...r.stderr
        .split('\n')
        .map((l) => printable(l.trimEnd()))
        .filter((l) => l !== ''),
    ];
    return { record, jobId: answer.jobId, sbatchNotes, writes };
  } catch (err) {
    if (!record.json.slurm?.jobId && record.json.slurm?.state !== UNKNOWN_SUBMISSION) discardRecord(record);
    record = pre;
    throw err;
  }
}

/** The record state of a submission sbatch did not answer clearly (the job may exist). */

/** What sbatch's answer means: a job (with notes on what was odd), a refusal, or no telling. */
export type SbatchAnswer =
  | { kind: 'submitted'; jobId: string; cluster: string | null; notes: string[] }
  | { kind: 'refused'; said: string }
  | { kind: 'unknown'; said: string };

/**
 * Reads sbatch's answer. A job id on stdout means a job, whatever else happened (a wrapper that prints
 * `Submitted batch job N [on cluster C]` instead of `N[;C]`, an sbatch that hung or failed after it
 * submitted: zerowiz must never lose a job it made). No id: a non-zero exit is a refusal; an exit 0, a
 * timeout or a kill says nothing either way. A cluster that is no Slurm name is left out (noted).
 */
export function readSbatchAnswer(r: SlurmAnswer): SbatchAnswer {
  const parsable = /^\s*(\d+)(?:;([^\n]*))?\s*$/m.exec(r.stdout);
  const plain = /^\s*Submitted batch job (\d+)(?: on cluster (\S+))?\s*$/m.exec(r.stdout);
  const m = parsable ?? plain;
  const said = printable(
    [r.error ?? '', r.stderr.trim(), r.stdout.trim()]
      .filter((x) => x !== '')
      .join(' / ')
      .replace(/\s*\n\s*/g, ' ') || `exit ${r.code}, nothing said`,
  );
  if (!m) return r.code !== 0 && r.code !== null ? { kind: 'refused', said } : { kind: 'unknown', said };
  const notes: string[] = [];
  const raw = m[2]?.trim() ?? '';
  let cluster: string | null = null;
  if (raw !== '') {
    if (CLUSTER_NAME_RE.test(raw)) cluster = raw;
    else
      notes.push(
        `sbatch named the cluster '${printable(raw)}', which is no Slurm cluster name; zerowiz follows job ${m[1]} on the default cluster`,
      );
  }
  if (r.error)
    notes.push(`sbatch gave job id ${m[1]} but did not exit (${printable(r.error)}); the job is followed all the same`);
  else if (r.code !== 0)
    notes.push(`sbatch gave job id ${m[1]} but exited ${r.code}; the job is followed all the same`);
  return { kind: 'submitted', jobId: m[1]!, cluster, notes };
}

/** Marks a record whose submission sbatch left unclear: kept, not running as far as zerowiz knows. */
function recordUnknownSubmission(rec: RunRecord, said: string): void {
  const s = rec.json.slurm!;
  s.state = UNKNOWN_SUBMISSION;
  s.phase = 'unknown';
  s.reason = `sbatch did not say which job it made: ${said}`.slice(0, 500);
  rec.json.ended = 'failed';
  rec.json.endedAt = new Date().toISOString();
  rec.json.note = 'sbatch did not say whether it submitted the job: look for it with squeue';
  saveRunJson(rec);
}
