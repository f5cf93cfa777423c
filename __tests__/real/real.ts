/**
 * Helpers of the real accelerate tier: the venv's Python (set by scripts/real-tier.mjs), the DeepSpeed
 * stand-in on PYTHONPATH, one harness process for many configs, real `accelerate launch` runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isPlainObject } from '../../src/config/emit.js';
import type { Setup } from '../../src/config/setup.js';
import { setupInDir } from '../../src/config/files.js';
import { writeConfigFiles } from '../../src/config/write-files.js';
import { ROOT } from '../helpers/paths.js';

/** The venv's python; the tier sets it (`npm run test:real`), and a direct run without it fails loudly. */
export const PYTHON = (() => {
  const p = process.env.ZEROWIZ_REAL_PYTHON;
  if (!p) throw new Error('ZEROWIZ_REAL_PYTHON is not set: run the real tier with `npm run test:real`');
  return p;
})();
export const VENV_BIN = dirname(PYTHON);
export const STANDIN = join(ROOT, '__tests__', 'fixtures', 'deepspeed-standin');
export const HARNESS = join(ROOT, '__tests__', 'real', 'harness.py');
export const PROBE = join(ROOT, '__tests__', 'real', 'probe.py');
/** The DataLoader batch size the probe uses (train_micro_batch_size_per_gpu "auto"). */
export const PROBE_MICRO = 4;
/** The probe model's config.hidden_size. */
export const PROBE_HIDDEN = 16;

/** The environment of every real run: the stand-in importable, no CI quirks, no user accelerate config. */
export function realEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'zw-real-home-'));
  return {
    ...process.env,
    PYTHONPATH: STANDIN,
    HF_HOME: join(home, 'hf'),
    HOME: home,
    PYTHONDONTWRITEBYTECODE: '1',
    OMP_NUM_THREADS: '1',
    TOKENIZERS_PARALLELISM: 'false',
    ...extra,
  };
}

/** A fresh temp dir. */
export function tempDir(prefix = 'zw-real-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes a setup's two files into `dir` as `zerowiz generate --out dir` does; returns the re-pointed setup. */
export async function writeSetup(setup: Setup, dir: string): Promise<Setup> {
  mkdirSync(dir, { recursive: true });
  const placed = setupInDir(setup, dir);
  await writeConfigFiles(placed);
  return placed;
}

/** One case for harness.py. */
export interface HarnessCase {
  id: string;
  /** The --config_file; null: none (accelerate reads its default config file). */
  yaml: string | null;
  launch_args?: string[];
  prepare?: boolean;
  record: string;
  probe_env?: Record<string, string>;
  /** The environment `accelerate launch` runs in (ACCELERATE_* variables a user exported). */
  env?: Record<string, string>;
}

/** What harness.py reports for a case. */
export interface HarnessResult {
  id: string;
  loaded?: Record<string, unknown>;
  load_error?: string;
  launch_error?: string;
  prepare_error?: string;
  prepare_trace?: string;
  launcher?: string;
  cmd?: string[] | null;
  launch?: Record<string, unknown>;
  torchrun?: Record<string, unknown>;
  torchrun_config?: Record<string, unknown>;
  env?: Record<string, string>;
  record?: DsRecord;
  probe?: ProbeReport;
}

/** What the DeepSpeed stand-in records at deepspeed.initialize. */
export interface DsRecord {
  config: Record<string, unknown>;
  optimizer: string | null;
  /** What the optimizer was built with (adamw_mode and fp32_optimizer_states for DeepSpeedCPUAdam, lr, weight_decay). */
  optimizer_args?: Record<string, unknown> | null;
  model: string;
  world_size: number;
  zero_init_entered: boolean;
}

/** What probe.py reports about the Accelerator after prepare(). */
export interface ProbeReport {
  distributed_type: string;
  num_processes: number;
  process_index: number;
  mixed_precision: string;
  gradient_accumulation_steps: number;
  zero3_init_flag: boolean | null;
  zero3_for_transformers: boolean | null;
  losses_finite: boolean;
  steps: number;
}

/**
 * Runs every case through ONE Python process (accelerate's loader, launch builder and prepare()). `env` is added
 * to that process's environment (e.g. HF_HOME: accelerate fixes its default config file's path at import).
 */
export function runHarness(cases: HarnessCase[], env: Record<string, string> = {}): Map<string, HarnessResult> {
  const dir = tempDir('zw-harness-');
  const inFile = join(dir, 'cases.json');
  const outFile = join(dir, 'results.json');
  writeFileSync(inFile, JSON.stringify(cases));
  const r = spawnSync(PYTHON, [HARNESS, inFile, outFile], {
    cwd: dir,
    env: realEnv(env),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`harness.py exited ${r.status}:\n${r.stderr.slice(-4000)}`);
  const results = JSON.parse(readFileSync(outFile, 'utf8')) as HarnessResult[];
  return new Map(results.map((x) => [x.id, x]));
}

/** The result of a real `accelerate launch`. */
export interface LaunchResult {
  code: number;
  output: string;
  records: DsRecord[];
  probes: ProbeReport[];
}

/** Runs the real `accelerate launch --config_file yaml [args] probe.py`, the stand-in recording into a dir. */
export function accelerateLaunch(yaml: string, args: string[], probeEnv: Record<string, string> = {}): LaunchResult {
  const rec = tempDir('zw-rec-');
  const r = spawnSync(join(VENV_BIN, 'accelerate'), ['launch', '--config_file', yaml, ...args, PROBE], {
    cwd: rec,
    env: realEnv({ ZEROWIZ_DS_RECORD: rec, ZEROWIZ_PROBE_OUT: rec, ...probeEnv }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const ranks = Number(args[args.indexOf('--num_processes') + 1] ?? 1);
  const read = <T>(name: string): T[] => {
    const out: T[] = [];
    for (let i = 0; i < ranks; i++) {
      try {
        out.push(JSON.parse(readFileSync(join(rec, `rank${i}${name}`), 'utf8')) as T);
      } catch {
        // a rank that wrote nothing: the test sees fewer records
      }
    }
    return out;
  };
  return {
    code: r.status ?? 128,
    output: `${r.stdout}\n${r.stderr}`,
    records: read<DsRecord>('.json'),
    probes: read<ProbeReport>('.probe.json'),
  };
}

/** A TCP port nothing listens on right now (for multi-node rank 0, whose port accelerate checks). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

/** A config as the stand-in writes it: non-finite numbers as "Infinity"/"-Infinity"/"NaN". */
export function asRecorded(v: unknown): unknown {
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  if (Array.isArray(v)) return v.map(asRecorded);
  if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asRecorded(x)]));
  return v;
}

/** Dotted paths of every "auto" left in a config. */
export function autosIn(v: unknown, path = ''): string[] {
  if (v === 'auto') return [path];
  if (isPlainObject(v)) return Object.entries(v).flatMap(([k, x]) => autosIn(x, path ? `${path}.${k}` : k));
  return [];
}

/** One step of a questionnaire: wait for `expect` (after the previous one), then type `keys`. */
export interface QuestionStep {
  expect: string;
  keys: string;
  /**
   * A menu: accelerate reads each key with tty.setraw(), which flushes whatever was typed before it, so the
   * keys are typed (in one write) only once the terminal is in raw mode, waiting for them.
   */
  menu?: boolean;
}

/** What a real `accelerate config` session left: its whole output (ANSI removed) and its exit code. */
export interface ConfigSession {
  transcript: string;
  code: number;
}

/** Whether the terminal at `pts` is in raw mode (a program reading keys one by one), as stty reports it. */
function rawMode(pts: string): boolean {
  const r = spawnSync('stty', ['-F', pts, '-a'], { encoding: 'utf8' });
  return r.status === 0 && /(^|\s)-icanon(\s|$)/.test(r.stdout);
}

const ANSI_RE = /\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]/g;

/**
 * Drives the real `accelerate config --config_file FILE` in a pseudo-terminal, as a person does: each step
 * waits until its prompt has appeared (after the previous one) and then types. A question accelerate asks
 * that the steps do not expect leaves the session waiting: the test then fails with the transcript.
 */
export async function driveAccelerateConfig(
  file: string,
  steps: QuestionStep[],
  timeoutMs = 120_000,
): Promise<ConfigSession> {
  const pty = (await import('node-pty')).default;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(realEnv({ TERM: 'xterm-256color', COLUMNS: '200' })))
    if (v !== undefined) env[k] = v;
  delete env.CI;
  const child = pty.spawn(join(VENV_BIN, 'accelerate'), ['config', '--config_file', file], {
    name: 'xterm-256color',
    cols: 200,
    rows: 50,
    cwd: dirname(file),
    env,
  });
  // node-pty's UnixTerminal knows its slave device (not in its typings).
  const pts = (child as unknown as { ptsName: string }).ptsName;
  let raw = '';
  child.onData((d) => {
    raw += d;
  });
  const exited = new Promise<number>((res) => child.onExit(({ exitCode }) => res(exitCode)));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const text = () => raw.replace(ANSI_RE, '');
  const deadline = Date.now() + timeoutMs;
  let pos = 0;
  for (const step of steps) {
    for (;;) {
      const at = text().indexOf(step.expect, pos);
      if (at >= 0 && (!step.menu || rawMode(pts))) {
        pos = at + step.expect.length;
        child.write(step.keys);
        break;
      }
      if (done || Date.now() > deadline) {
        child.kill();
        throw new Error(`accelerate config never asked "${step.expect}"; its transcript:\n${text().slice(-4000)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const code = await Promise.race([
    exited,
    new Promise<number>((res) =>
      setTimeout(
        () => {
          child.kill();
          res(124);
        },
        Math.max(1000, deadline - Date.now()),
      ),
    ),
  ]);
  return { transcript: text(), code };
}
