/**
 * Run records: every run leaves `.zerowiz/runs/<YYYYmmdd-HHMMSS>-<name>/` under the directory it ran in,
 * holding copies of the config files used, `commands.sh` (reproduces the run), one full log per step
 * (`01-<step>.log`, raw output as the step wrote it) and `run.json` (kept current while the run goes).
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Setup } from '../setup.js';
import { timestamp } from '../write.js';
import { shellJoin, shellWord } from '../quote.js';
import type { PreparedCommand } from './preflight.js';
import type { SlurmRunJson } from '../slurm/record.js';
import type { PipelineOutcome, StepResult, StepStatus } from './runner.js';

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
}

/** The shape of run.json. */
export interface RunJson {
  version: number;
  id: string;
  name: string;
  /** What was launched: a preset name, a preset file, `--last`, or `wizard`. */
  source: string;
  cwd: string;
  accelerate: { path: string; display: string };
  startedAt: string;
  endedAt: string | null;
  /** How it ended; `running` while it runs (or if zerowiz was killed with SIGKILL). */
  ended: 'running' | 'succeeded' | 'failed' | 'interrupted';
  exitCode: number | null;
  /** Config files used: where they were, and their copy in this directory. */
  configFiles: { path: string; copy: string }[];
  steps: RunStepJson[];
  /** The whole setup, so `zerowiz launch --last` can run it again. */
  setup: Setup;
  /** A run submitted to Slurm (`launch --slurm`): the job, its options and its last known state. */
  slurm?: SlurmRunJson;
}

/** A record on disk. */
export interface RunRecord {
  dir: string;
  json: RunJson;
}

function safeName(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 80) || 'run'
  );
}

/** A step of run.json before it runs; its log is `01-<step>.log`. */
export function pendingStepJson(c: PreparedCommand, index: number): RunStepJson {
  return {
    name: c.step,
    argv: c.argv,
    usesConfig: c.usesConfig,
    command: c.text,
    log: `${String(index + 1).padStart(2, '0')}-${safeName(c.step)}.log`,
    status: 'pending',
    exitCode: null,
    signal: null,
    startedAt: null,
    endedAt: null,
    durationMs: null,
  };
}

/** Creates a new record directory with its config copies, commands.sh and an initial run.json. */
export function createRunRecord(opts: {
  cwd: string;
  setup: Setup;
  source: string;
  commands: PreparedCommand[];
  accelerate: { path: string; display: string };
  now?: Date;
}): RunRecord {
  const now = opts.now ?? new Date();
  const root = join(opts.cwd, RUNS_DIR);
  mkdirSync(root, { recursive: true });
  const base = `${timestamp(now)}-${safeName(opts.setup.name)}`;
  let id = base;
  let dir = join(root, id);
  for (let n = 2; ; n++) {
    try {
      mkdirSync(dir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      id = `${base}-${n}`;
      dir = join(root, id);
    }
  }
  const configFiles: RunJson['configFiles'] = [];
  if (opts.commands.some((c) => c.usesConfig)) {
    const used = new Set<string>();
    for (const p of [opts.setup.files.accelerateConfig, opts.setup.files.dsConfig]) {
      const abs = isAbsolute(p) ? p : join(opts.cwd, p);
      if (!existsSync(abs)) continue;
      let copy = basename(p);
      while (used.has(copy)) copy = `_${copy}`;
      used.add(copy);
      copyFileSync(abs, join(dir, copy));
      configFiles.push({ path: p, copy });
    }
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
    configFiles,
    steps,
    setup: opts.setup,
  };
  writeFileSync(join(dir, 'commands.sh'), commandsScript(json), { mode: 0o755 });
  chmodSync(join(dir, 'commands.sh'), 0o755);
  const rec = { dir, json };
  saveRunJson(rec);
  return rec;
}

/** commands.sh: puts the config files used back in place, then runs the steps in order, stopping at a failure. */
export function commandsScript(json: RunJson): string {
  const lines = [
    '#!/bin/sh',
    `# zerowiz run ${json.id} (${json.name}), started ${json.startedAt}.`,
    '# Reproduces the run: restores the config files it used, then runs the steps in order;',
    '# `set -e` stops at the first failing step, as zerowiz does.',
    'set -e',
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
    lines.push('', `# step ${i + 1}: ${s.name}`, shellJoin([json.accelerate.display, ...s.argv]));
  });
  return `${lines.join('\n')}\n`;
}

/** The absolute path of a step's log. */
export function stepLogPath(rec: RunRecord, index: number): string {
  return join(rec.dir, rec.json.steps[index]!.log);
}

/** Writes run.json atomically (temp file + rename). */
export function saveRunJson(rec: RunRecord): void {
  const path = join(rec.dir, 'run.json');
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(rec.json, null, 2)}\n`);
  renameSync(tmp, path);
}

/** Records a step's start. */
export function recordStepStart(rec: RunRecord, index: number, startedAt: number): void {
  const s = rec.json.steps[index];
  if (!s) return;
  s.status = 'running';
  s.startedAt = new Date(startedAt).toISOString();
  saveRunJson(rec);
}

/** Records a step's end. */
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
  saveRunJson(rec);
}

/** Records how the run ended. */
export function recordEnd(rec: RunRecord, o: PipelineOutcome, endedAt = Date.now()): void {
  rec.json.ended = o.outcome;
  rec.json.exitCode = o.exitCode;
  rec.json.endedAt = new Date(endedAt).toISOString();
  saveRunJson(rec);
}

/** Every readable record under `cwd`, newest first. Unreadable ones are skipped. */
export function listRunRecords(cwd = process.cwd()): RunRecord[] {
  const root = join(cwd, RUNS_DIR);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: RunRecord[] = [];
  for (const n of names) {
    const dir = join(root, n);
    try {
      const json = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunJson;
      if (typeof json.startedAt !== 'string' || !Array.isArray(json.steps)) continue;
      out.push({ dir, json });
    } catch {}
  }
  out.sort((a, b) =>
    a.json.startedAt < b.json.startedAt ? 1 : a.json.startedAt > b.json.startedAt ? -1 : b.dir.localeCompare(a.dir),
  );
  return out;
}

/** A record's directory as shown to the user (relative to cwd when inside it). */
export function displayDir(dir: string, cwd = process.cwd()): string {
  const rel = relative(cwd, resolve(dir));
  return rel.startsWith('..') ? dir : rel;
}
