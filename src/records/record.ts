/**
 * Run records: every run leaves `.zerowiz/runs/<YYYYmmdd-HHMMSS>-<name>/` under the directory it ran in,
 * holding copies of the config files used, `commands.sh` (reproduces the run), one full log per step
 * (`01-<step>.log`, raw output as the step wrote it) and `run.json` (kept current while the run goes).
 *
 * Saving run.json never throws: a failed save (a full disk) is remembered and retried at the next one, and
 * leaves no temporary file. So that the record can still reach its final state on a full disk, a small
 * reserve file is kept beside it while the run goes and given back to the disk when a save finds no space.
 * Records are read back through a schema (a kind's own block through the kind's check): a damaged one is named
 * and skipped, never a crash.
 */
import { existsSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { QUESTIONS, parseAnswers, question, withDefaults, type QuestionId } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { timestamp } from '../text/index.js';
import { inReportOrder, launchConfigFiles } from '../config/index.js';
import { shellJoin, shellWord } from '../text/index.js';
import type { PreparedCommand } from '../config/index.js';
import { describeWriteError, UsageError } from '../text/index.js';
import type { SupervisorId } from '../proc/index.js';
import { liveStepSchema, runEstimateSchema, type LiveStepJson, type RunEstimateJson } from '../observe/index.js';
import type { PipelineOutcome, StepResult, StepStatus } from '../observe/index.js';
import {
  RUN_JSON_MAX_BYTES,
  ensureRunsRoot,
  makeRunDir,
  readRecordJson,
  runDirProblem,
  writeRecordFile,
} from './record-files.js';
import { printable } from '../text/index.js';
import { redactRunJson, secretGuards } from '../text/index.js';
import { UntrustedPathError, lstatOrNull } from '../fs/index.js';

/** Where records live, relative to the directory zerowiz runs in. */
export const RUNS_DIR = join('.zerowiz', 'runs');
/** The run.json format version. */
export const RUN_JSON_VERSION = 1;

/** One step in run.json. */
export interface RunStepJson {
  name: string;
  /** argv after the accelerate executable. */
  argv: string[];
  usesConfig: boolean;
  /** The command, shell-quoted. */
  command: string;
  /** The log file, relative to the record directory. */
  log: string;
  status: StepStatus;
  exitCode: number | null;
  signal: string | null;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  /** For a stopped step: the signal that ended it (SIGINT, SIGTERM or SIGKILL). */
  stopSignal?: string;
  error?: string;
  /** Something the user should know about how the step ended (e.g. a process outside it held its output). */
  warning?: string;
  /** The checks before the step refused it: it never started. */
  refused?: boolean;
  /** What the run emitted in this step: metrics, GPU peaks, alerts (saved at its end and every minute). */
  live?: LiveStepJson;
  /** The step's process: the leader of its process group (its pid is the group's id), once it started. */
  pid?: number;
  /**
   * The leader's start time in clock ticks since boot (/proc/PID/stat), or null where /proc cannot say: with
   * the pid, the step's identity, so a pid reused after the step is never taken for it (or signalled).
   */
  pidStart?: number | null;
}

/**
 * What a kind of run adds to run.json, by key (a Slurm run's `slurm`): each kind declares its key by module
 * augmentation (src/slurm/schema.ts), so the record module knows no kind; a kind checks its own block when
 * it reads one.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation (one interface per kind).
export interface RunJsonKinds {}

/**
 * What other parts of zerowiz add to run.json, by key (the checkpoint guard's `checkpoints`, `topology`,
 * `topologyWarnings`: src/checkpoints/record-blocks.ts), declared by module augmentation and checked by their
 * owner when a record is read, as a kind's block is.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation (one interface per block).
export interface RunJsonBlocks {}

/** The shape of run.json. */
export interface RunJson extends RunJsonKinds, RunJsonBlocks {
  version: number;
  id: string;
  name: string;
  /** What was launched: a preset name, a preset file, `--last`, or `wizard`. */
  source: string;
  cwd: string;
  accelerate: { path: string; display: string };
  startedAt: string;
  endedAt: string | null;
  /** How it ended; `running` while it runs (a killed zerowiz's watchdog ends it as `interrupted`). */
  ended: 'running' | 'succeeded' | 'failed' | 'interrupted';
  exitCode: number | null;
  /** Why the step logs stopped (a write error such as a full disk); the run itself went on. */
  logError?: string;
  /** Set when zerowiz did not end the run itself (its watchdog did, after zerowiz was killed). */
  note?: string;
  /** Config files used: where they were, and their copy in this directory. */
  configFiles: { path: string; copy: string }[];
  steps: RunStepJson[];
  /** The whole setup, so `zerowiz launch --last` can run it again. */
  setup: Setup;
  /** A local run's supervisor: who owns the run while it goes (absent in records of other kinds). */
  supervisor?: SupervisorId;
  /** What zerowiz estimated for the setup's mode (the peak per GPU), or null when it could not. */
  estimate?: RunEstimateJson;
  /** The checks the command line left out (--skip-check ids, --no-speed-test): `launch --last` keeps them. */
  skippedChecks?: { ids: string[]; speedTest: boolean };
}

/** A record on disk. */
export interface RunRecord {
  dir: string;
  json: RunJson;
  /** Why the last save failed (null when run.json on disk is current). */
  saveError?: string | null;
}

function safeName(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 80) || 'run'
  );
}

/**
 * THE name of a run's directory under RUNS_DIR: `<YYYYmmdd-HHMMSS>-<name>` (the name made safe for a path); a
 * second run in the same second gets `-2` (makeRunDir).
 */
export function runDirName(setupName: string, now = new Date()): string {
  return `${timestamp(now)}-${safeName(setupName)}`;
}

/** THE name of a step's log in its record: `01-data_process.log`. */
export function stepLogName(index: number, stepName: string): string {
  return `${String(index + 1).padStart(2, '0')}-${safeName(stepName)}.log`;
}

/** A step of run.json before it runs; its log is `01-<step>.log`. */
export function pendingStepJson(c: PreparedCommand, index: number): RunStepJson {
  return {
    name: c.step,
    argv: c.argv,
    usesConfig: c.usesConfig,
    command: c.text,
    log: stepLogName(index, c.step),
    status: 'pending',
    exitCode: null,
    signal: null,
    startedAt: null,
    endedAt: null,
    durationMs: null,
  };
}

/** Bytes kept in reserve beside run.json while a run goes, for its last saves on a full disk. */
export const RECORD_RESERVE_BYTES = 64 * 1024;
/** The reserve's name in the record directory (removed when the run ends). */
export const RESERVE_NAME = '.space-reserve';

/**
 * Creates a new record directory with an initial run.json, its config copies, commands.sh and the space
 * reserve. `onDir` hears the directory as soon as it exists, before anything is written in it (the
 * watchdog is told, so that it can finish or remove the record if zerowiz dies). If the record cannot be
 * written (a full disk, a read-only directory), what was created is removed and a
 * RecordError says why: nothing is started without a record.
 */
export function createRunRecord(opts: {
  cwd: string;
  setup: Setup;
  source: string;
  commands: PreparedCommand[];
  accelerate: { path: string; display: string };
  now?: Date;
  onDir?: (dir: string) => void;
}): RunRecord {
  const now = opts.now ?? new Date();
  // `.zerowiz` and `.zerowiz/runs` must be the user's own private folders (another user's, or a link, is
  // refused with its owner named: UntrustedPathError); the run directory is new, 0700 and pinned.
  let root: string;
  try {
    root = ensureRunsRoot(opts.cwd, RUNS_DIR);
  } catch (err) {
    if (err instanceof UntrustedPathError) throw err;
    throw new RecordError(join(opts.cwd, RUNS_DIR), err);
  }
  let made: { id: string; dir: string };
  try {
    made = makeRunDir(root, runDirName(opts.setup.name, now));
  } catch (err) {
    if (err instanceof UntrustedPathError) throw err;
    throw new RecordError(root, err);
  }
  const { id, dir } = made;
  try {
    opts.onDir?.(dir);
    return fillRecord(dir, id, now, opts);
  } catch (err) {
    // Our own fresh directory: nothing of the user's is in it.
    rmSync(dir, { recursive: true, force: true });
    throw new RecordError(dir, err);
  }
}

/** The record could not be created; `message` names the directory and the system's reason. */
export class RecordError extends Error {
  constructor(
    readonly dir: string,
    cause: unknown,
  ) {
    super(`cannot create the run record in ${dir}: ${describeWriteError(cause)}`);
    this.name = 'RecordError';
  }
}

function fillRecord(dir: string, id: string, now: Date, opts: Parameters<typeof createRunRecord>[0]): RunRecord {
  const configFiles: (RunJson['configFiles'][number] & { abs: string })[] = [];
  // The files the run used (launchConfigFiles: what the launch wrote), as the setup names them, so that
  // commands.sh puts every one of them back.
  const used = new Set<string>();
  for (const f of inReportOrder(launchConfigFiles(opts.setup, opts.cwd))) {
    if (!existsSync(f.path)) continue;
    let copy = basename(f.named);
    while (used.has(copy)) copy = `_${copy}`;
    used.add(copy);
    configFiles.push({ path: f.named, copy, abs: f.path });
  }
  const steps: RunStepJson[] = opts.commands.map(pendingStepJson);
  const json: RunJson = {
    version: RUN_JSON_VERSION,
    id,
    name: opts.setup.name,
    source: opts.source,
    cwd: opts.cwd,
    accelerate: { path: opts.accelerate.path, display: opts.accelerate.display },
    startedAt: now.toISOString(),
    endedAt: null,
    ended: 'running',
    exitCode: null,
    configFiles: configFiles.map(({ path, copy }) => ({ path, copy })),
    steps,
    setup: opts.setup,
  };
  const rec: RunRecord = { dir, json, saveError: null };
  // run.json first, so that a record directory lacks it only during this one write; every file is
  // written whole or not at all.
  writeAtomic(join(dir, 'run.json'), runJsonText(json));
  for (const f of configFiles) writeAtomic(join(dir, f.copy), readFileSync(f.abs));
  writeAtomic(join(dir, 'commands.sh'), commandsScript(json), 0o755);
  writeAtomic(join(dir, RESERVE_NAME), Buffer.alloc(RECORD_RESERVE_BYTES));
  return rec;
}

/**
 * commands.sh: puts the config files used back in place, then runs the steps in order, stopping at a
 * failure. A secret of a step is passed by its variable, never its value (../redact.ts): the script stops
 * first, naming the variable, when one is not set.
 */
export function commandsScript(json: RunJson): string {
  const lines = [
    '#!/bin/sh',
    `# zerowiz run ${json.id} (${printable(json.name)}), started ${json.startedAt}.`,
    '# Reproduces the run: restores the config files it used, then runs the steps in order;',
    '# `set -e` stops at the first failing step, as zerowiz does.',
    'set -e',
    ...secretGuards(json.steps.map((s) => s.argv)),
    'RUN_DIR=$(cd "$(dirname "$0")" && pwd)',
    `cd ${shellWord(json.cwd)}`,
  ];
  const made = new Set<string>();
  for (const f of json.configFiles) {
    const dir = dirname(f.path);
    if (dir !== '.' && !made.has(dir)) lines.push(`mkdir -p ${shellWord(dir)}`);
    made.add(dir);
    lines.push(`cp "$RUN_DIR/"${shellWord(f.copy)} ${shellWord(f.path)}`);
  }
  json.steps.forEach((s, i) => {
    lines.push('', `# step ${i + 1}: ${printable(s.name)}`, shellJoin([json.accelerate.display, ...s.argv]));
  });
  return `${lines.join('\n')}\n`;
}

/** The absolute path of a step's log. */
export function stepLogPath(rec: RunRecord, index: number): string {
  return join(rec.dir, rec.json.steps[index]!.log);
}

function runJsonText(json: RunJson): string {
  return `${JSON.stringify(redactRunJson(json), null, 2)}\n`;
}

/** Temporary files of atomic writes: `<name>.tmp-<pid>-<hex>` (record-files.ts). */
export const TMP_SUFFIX = '.tmp-';

/**
 * Writes a file of the record atomically and privately (record-files.ts writeRecordFile: a new temp file
 * `<name>.tmp-<pid>-<hex>` never following a link, renamed over; 0600, or 0700 for a script, whatever the
 * umask); on failure the temp file is removed and the error thrown.
 */
function writeAtomic(path: string, data: string | Buffer, mode?: number): void {
  writeRecordFile(path, data, mode);
}

/** Whether an error means the disk (or the quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Gives the record's reserve back to the disk; false if there was none left. */
export function releaseReserve(dir: string): boolean {
  try {
    unlinkSync(join(dir, RESERVE_NAME));
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes run.json atomically (temp file + rename). Never throws: on a full disk the reserve is released and
 * the save tried again; a save that still fails leaves no temporary file, sets `rec.saveError` and returns
 * false (the next save tries again). `onDiskFull` hears that the disk is full (the logging then stops).
 */
export function saveRunJson(rec: RunRecord, onDiskFull?: (why: string) => void): boolean {
  const path = join(rec.dir, 'run.json');
  const text = runJsonText(rec.json);
  const attempt = (): unknown => {
    try {
      writeAtomic(path, text);
      return null;
    } catch (err) {
      return err;
    }
  };
  let err = attempt();
  if (err !== null && isDiskFull(err)) {
    onDiskFull?.(describeWriteError(err));
    if (releaseReserve(rec.dir)) err = attempt();
  }
  rec.saveError = err === null ? null : describeWriteError(err);
  return err === null;
}

/** Records a step's start, with its process when it has one (the caller saves). */
export function recordStepStart(
  rec: RunRecord,
  index: number,
  startedAt: number,
  proc: { pid: number | null; pidStart?: number | null } = { pid: null },
): void {
  const s = rec.json.steps[index];
  if (!s) return;
  s.status = 'running';
  s.startedAt = new Date(startedAt).toISOString();
  if (proc.pid !== null) {
    s.pid = proc.pid;
    s.pidStart = proc.pidStart ?? null;
  }
}

/** Records a step's end (the caller saves). */
export function recordStepEnd(rec: RunRecord, index: number, r: StepResult): void {
  const s = rec.json.steps[index];
  if (!s) return;
  s.status = r.status;
  s.exitCode = r.exitCode;
  s.signal = r.signal;
  s.startedAt ??= new Date(r.startedAt).toISOString();
  s.endedAt = new Date(r.endedAt).toISOString();
  s.durationMs = r.endedAt - r.startedAt;
  if (r.stopSignal) s.stopSignal = r.stopSignal;
  if (r.error) s.error = r.error;
  if (r.warning) s.warning = r.warning;
  if (r.refused) s.refused = true;
}

/** Records how the run ended (the caller saves, then drops the reserve). */
export function recordEnd(rec: RunRecord, o: PipelineOutcome, endedAt = Date.now()): void {
  rec.json.ended = o.outcome;
  rec.json.exitCode = o.exitCode;
  rec.json.endedAt = new Date(endedAt).toISOString();
}

const stepJsonSchema = z.object({
  name: z.string(),
  argv: z.array(z.string()),
  usesConfig: z.boolean(),
  command: z.string(),
  log: z.string(),
  status: z.enum(['pending', 'running', 'done', 'failed', 'stopped']),
  exitCode: z.nullable(z.number()),
  signal: z.nullable(z.string()),
  startedAt: z.nullable(z.string()),
  endedAt: z.nullable(z.string()),
  durationMs: z.nullable(z.number()),
  stopSignal: z.optional(z.string()),
  error: z.optional(z.string()),
  warning: z.optional(z.string()),
  refused: z.optional(z.boolean()),
  live: z.optional(liveStepSchema),
  pid: z.optional(z.int().check(z.positive())),
  pidStart: z.optional(z.nullable(z.int().check(z.nonnegative()))),
});
/**
 * run.json as read back (the setup is checked on its own, by readRecordSetup, when it is rerun). Loose: keys
 * this version does not know (a newer zerowiz's) are kept, so a record read and saved again loses nothing.
 */
const runJsonSchema = z.looseObject({
  version: z.literal(RUN_JSON_VERSION),
  id: z.string(),
  name: z.string(),
  source: z.string(),
  cwd: z.string(),
  accelerate: z.object({ path: z.string(), display: z.string() }),
  startedAt: z.string(),
  endedAt: z.nullable(z.string()),
  ended: z.enum(['running', 'succeeded', 'failed', 'interrupted']),
  exitCode: z.nullable(z.number()),
  logError: z.optional(z.string()),
  note: z.optional(z.string()),
  configFiles: z.array(z.object({ path: z.string(), copy: z.string() })),
  steps: z.array(stepJsonSchema),
  setup: z.unknown(),
  supervisor: z.optional(
    z.object({
      pid: z.int().check(z.positive()),
      startTime: z.nullable(z.number()),
      host: z.string(),
      watchdog: z.optional(
        z.nullable(z.object({ pid: z.int().check(z.positive()), startTime: z.nullable(z.number()) })),
      ),
    }),
  ),
  estimate: z.optional(runEstimateSchema),
});

/** A record that could not be read: its run.json and what is wrong with it. */
export interface DamagedRecord {
  path: string;
  problem: string;
}

/**
 * Checks a record's kind-specific block (the registry of kinds passes one: src/launch/kind.ts
 * kindBlockProblem); returns the problem (`slurm.shape.nodes: ...`) or null.
 */
export type RecordCheck = (json: RunJson) => string | null;

/**
 * Reads one record's run.json through the one reader of record files (record-files.ts readRecordJson: a
 * regular file of the user's own in a folder of the user's own, no link, at most RUN_JSON_MAX_BYTES, bounded
 * nesting, the schema), then the kind's block through `check`. A damaged record is named, never read further.
 */
export function readRunRecord(dir: string, check?: RecordCheck): { record: RunRecord } | { damaged: DamagedRecord } {
  const path = join(dir, 'run.json');
  const dirProblem = runDirProblem(dir);
  if (dirProblem !== null) return { damaged: { path: dir, problem: `the folder ${dirProblem}` } };
  const r = readRecordJson(path, runJsonSchema, RUN_JSON_MAX_BYTES);
  if ('problem' in r) return { damaged: { path, problem: r.missing ? 'run.json is not there' : r.problem } };
  const json = r.value as RunJson;
  const problem = check?.(json) ?? null;
  if (problem !== null) return { damaged: { path, problem } };
  return { record: { dir, json } };
}

/** Every record under `cwd`, newest first, and the damaged ones (skipped, named). */
export function listRunRecords(
  cwd = process.cwd(),
  check?: RecordCheck,
): { records: RunRecord[]; damaged: DamagedRecord[] } {
  const root = join(cwd, RUNS_DIR);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return { records: [], damaged: [] };
  }
  const records: RunRecord[] = [];
  const damaged: DamagedRecord[] = [];
  for (const n of names.sort().reverse()) {
    if (n.startsWith('.')) continue;
    const r = readRunRecord(join(root, n), check);
    if ('record' in r) records.push(r.record);
    else damaged.push(r.damaged);
  }
  records.sort((a, b) =>
    a.json.startedAt < b.json.startedAt ? 1 : a.json.startedAt > b.json.startedAt ? -1 : b.dir.localeCompare(a.dir),
  );
  return { records, damaged };
}

const setupSchema = z.object({
  name: z.string(),
  answers: z.record(z.string(), z.unknown()),
  files: z.object({ accelerateConfig: z.string().check(z.minLength(1)), dsConfig: z.string().check(z.minLength(1)) }),
  steps: z.array(
    z.object({ name: z.string().check(z.minLength(1)), args: z.array(z.string()), usesConfig: z.boolean() }),
  ),
  extra: z.optional(
    z.object({
      yaml: z.optional(z.record(z.string(), z.unknown())),
      json: z.optional(z.record(z.string(), z.unknown())),
    }),
  ),
});

/**
 * A setup stored as JSON (a record's, a supervisor's plan), checked as strictly as a preset: each answer goes
 * through its question's parser. Throws an Error whose message is `setup.<key>: <problem>` for a damaged one.
 */
export function parseStoredSetup(value: unknown): Setup {
  const parsed = z.safeParse(setupSchema, value);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new Error(`setup${i?.path.length ? `.${i.path.map(String).join('.')}` : ''}: ${i?.message ?? 'missing'}`);
  }
  const raw = parsed.data.answers;
  const known = new Set<string>(QUESTIONS.map((q) => q.id));
  const unknownKey = Object.keys(raw).find((k) => !known.has(k));
  if (unknownKey) throw new Error(`setup.answers.${unknownKey}: not a question zerowiz knows`);
  let answers: Setup['answers'];
  try {
    // The record keeps typed answers; each is read back through its question's own text (a byte count is
    // `80GiB`, never the bare number, which the GPU-memory question reads as GiB).
    const text = Object.fromEntries(
      Object.entries(raw).map(([id, v]) => [
        id,
        typeof v === 'number' ? question(id as QuestionId).format(v as never) : v,
      ]),
    );
    answers = withDefaults(parseAnswers(text));
  } catch (err) {
    const key = (err as { key?: string }).key;
    throw new Error(`setup.answers${key ? `.${key}` : ''}: ${(err as Error).message}`);
  }
  const { extra, ...rest } = parsed.data;
  return { ...rest, answers, ...(extra ? { extra } : {}) };
}

/** The setup a record ran, for `launch --last` (see parseStoredSetup); throws for a damaged one. */
export function readRecordSetup(rec: RunRecord): Setup {
  return parseStoredSetup(rec.json.setup);
}

/**
 * The setup a record ran, for what a viewer shows beside it (the estimate, the fixes); a setup that can no
 * longer be read (a damaged record) gives the defaults, and following still works.
 */
export function setupOfRecord(rec: RunRecord): Setup {
  try {
    return readRecordSetup(rec);
  } catch {
    return {
      name: rec.json.name,
      answers: withDefaults(parseAnswers({})),
      files: { accelerateConfig: 'accelerate_config.yaml', dsConfig: 'ds_config.json' },
      steps: [],
    };
  }
}

/** A record's directory as shown to the user (relative to cwd when inside it). */
export function displayDir(dir: string, cwd = process.cwd()): string {
  const rel = relative(cwd, resolve(dir));
  return rel.startsWith('..') ? dir : rel;
}

/**
 * The record a `RUN` argument that is a path names (absolute, or relative to `cwd`): the run directory itself,
 * wherever it is; null when the argument is no path to a folder. Throws UsageError for a folder that holds no
 * record, or a damaged one.
 */
function recordAtPath(ref: string, cwd: string, check?: RecordCheck): RunRecord | null {
  if (!ref.includes('/') && ref !== '.' && ref !== '..') return null;
  const dir = resolve(cwd, ref);
  const st = lstatOrNull(dir);
  if (!st?.isDirectory()) return null;
  const r = readRunRecord(dir, check);
  if ('record' in r) return r.record;
  if (r.damaged.problem === 'run.json is not there')
    throw new UsageError(
      `no run record in ${ref}`,
      'give a run directory (.zerowiz/runs/ID) or a run id of `zerowiz runs`',
    );
  throw new UsageError(
    `the run record ${displayDir(r.damaged.path, cwd)} cannot be read: ${r.damaged.problem}`,
    'see `zerowiz runs`',
  );
}

/**
 * The record a `RUN` argument names: a record id (or a unique part of one), a record directory, or another name
 * its kind gives it (a Slurm job id); without one, the newest run. Throws UsageError naming the choices.
 */
export function findRunRecord(
  ref: string | undefined,
  cwd = process.cwd(),
  check?: RecordCheck,
  /** Other names of a record (its kind's: a Slurm job id). */
  aliases: (json: RunJson) => string[] = () => [],
): RunRecord {
  const all = listRunRecords(cwd, check).records;
  const hint = 'see `zerowiz runs` for the run ids (or give the Slurm job id)';
  if (ref === undefined) {
    const newest = all[0];
    if (!newest) throw new UsageError('no run recorded in this directory', 'start one with `zerowiz launch NAME`');
    return newest;
  }
  const norm = ref.replace(/\/+$/, '');
  const byPath = recordAtPath(norm, cwd, check);
  if (byPath) return byPath;
  const exact = all.find(
    (r) => r.json.id === norm || r.dir === norm || displayDir(r.dir, cwd) === norm || aliases(r.json).includes(norm),
  );
  if (exact) return exact;
  const partial = all.filter((r) => r.json.id.includes(norm));
  if (partial.length === 1) return partial[0]!;
  if (partial.length > 1)
    throw new UsageError(`'${ref}' matches ${partial.length} runs (${partial.map((r) => r.json.id).join(', ')})`, hint);
  throw new UsageError(`no run '${ref}' in ${displayDir(join(cwd, '.zerowiz', 'runs'), cwd)}`, hint);
}
