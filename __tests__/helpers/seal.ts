/**
 * The seal between a test and the machine it runs on. A GPU box or a Slurm login node has `nvidia-smi`, the
 * site's `sbatch`, an `accelerate` in the user's venv, accelerate's default config and the user's own
 * ZEROWIZ_* settings; a test that reaches any of them passes on a laptop and fails (or submits a job) there.
 *
 * - PATH: every folder of the host's PATH that holds one of the host-only programs (hostile-host.ts
 *   HOST_ONLY_PROGRAMS) is replaced by a shadow folder holding a small `exec` wrapper for each of its other
 *   programs (a wrapper, not a link, so a venv's python still finds its venv); `/usr/bin` on a GPU box holds
 *   `nvidia-smi`, so a test's "bare" PATH comes from `sealedDirs`, never a literal `/usr/bin:/bin`. The
 *   global setup builds the shadows once per run (`buildSeal`) and hands them to the workers in two
 *   variables; `sealProcessEnv` (setup-env.ts, before each test file) applies them.
 * - HOME and the XDG folders: a fresh temp folder per test file (no `~/.cache/huggingface/accelerate`, no
 *   user presets), HF_HOME unset.
 * - Variables: every one a GPU box, a Slurm allocation, accelerate, DeepSpeed, DiffSynth, Python or zerowiz
 *   reads is removed (SEALED_VARIABLE_RES).
 */
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { HOST_ONLY_PROGRAMS } from './hostile-host.js';

/** The variable that carries the sealed PATH from the global setup to the workers. */
const SEALED_PATH_VAR = 'ZW_TEST_SEALED_PATH';
/** The variable that carries the shadow of each host folder (JSON: folder -> shadow, or "" for dropped). */
const SHADOWS_VAR = 'ZW_TEST_SHADOWS';

/**
 * Variables no test inherits from the host: zerowiz's own and its test switches, accelerate's, DeepSpeed's,
 * torch's and NCCL's, a Slurm allocation's, Hugging Face's and DiffSynth's, CUDA's, Python's and a venv's,
 * the XDG folders, and what changes output (colour, terminal size).
 */
export const SEALED_VARIABLE_RES: readonly RegExp[] = [
  /^ZEROWIZ_/,
  /^ZW_(?!TEST_)/,
  /^FAKE_/,
  /^ACCELERATE_/,
  /^DEEPSPEED_|^DS_/,
  /^TORCH|^PYTORCH_|^NCCL_|^CUDA_|^NVIDIA_|^OMP_NUM_THREADS$/,
  /^SLURM_|^SBATCH_|^SALLOC_|^SRUN_|^SQUEUE_|^SINFO_|^SCONTROL_/,
  /^HF_|^HUGGING_FACE_|^HUGGINGFACE_|^TRANSFORMERS_|^DIFFSYNTH_|^MODELSCOPE_/,
  /^PYTHON|^VIRTUAL_ENV|^CONDA_|^PIP_/,
  /^XDG_/,
  /^(MASTER_ADDR|MASTER_PORT|WORLD_SIZE|RANK|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|GROUP_RANK)$/,
  /^(NO_COLOR|FORCE_COLOR|COLUMNS|LINES|TMUX|STY)$/,
];

/**
 * The suite's own switches, set by whoever runs it on purpose (they rewrite generated docs and fixtures, or keep
 * a test cluster's folder): kept through the seal.
 */
export const SUITE_SWITCHES: readonly string[] = ['ZEROWIZ_WRITE_DOCS', 'ZEROWIZ_WRITE_FIXTURES', 'ZW_SLURM_KEEP'];

/** True for a program this folder holds (a file anyone may run). */
function isProgram(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function listing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A shadow of `dir` without the host-only programs, or null when it holds none of them (kept as it is). */
function shadowOf(dir: string, root: string, index: number): string | null {
  const names = listing(dir);
  const hostOnly = new Set<string>(HOST_ONLY_PROGRAMS);
  if (!names.some((n) => hostOnly.has(n))) return null;
  const shadow = join(root, String(index));
  mkdirSync(shadow, { mode: 0o755 });
  for (const n of names) {
    if (hostOnly.has(n) || n.includes("'") || !isProgram(join(dir, n))) continue;
    writeFileSync(join(shadow, n), `#!/bin/sh\nexec '${join(dir, n)}' "$@"\n`, { mode: 0o755 });
  }
  return shadow;
}

/**
 * Builds the shadows of every folder of `hostPath` (in a new temp folder) and puts the sealed PATH and the
 * folder map into `env` for the workers; returns the temp folder (the teardown removes it).
 */
export function buildSeal(hostPath: string, env: NodeJS.ProcessEnv = process.env): string {
  const root = mkdtempSync(join(tmpdir(), 'zw-sealed-path-'));
  chmodSync(root, 0o755);
  const shadows: Record<string, string> = {};
  const dirs = [...new Set([...hostPath.split(delimiter), '/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin'])];
  dirs.forEach((dir, i) => {
    if (dir === '') return;
    const shadow = shadowOf(dir, root, i);
    if (shadow !== null) shadows[dir] = listing(shadow).length > 0 ? shadow : '';
  });
  env[SHADOWS_VAR] = JSON.stringify(shadows);
  env[SEALED_PATH_VAR] = sealedDirs(hostPath.split(delimiter), shadows);
  return root;
}

function shadowMap(): Record<string, string> {
  const raw = process.env[SHADOWS_VAR];
  if (raw === undefined)
    throw new Error(
      `${SHADOWS_VAR} is not set: run the tests through vitest's config (its global setup seals the PATH)`,
    );
  return JSON.parse(raw) as Record<string, string>;
}

/**
 * A PATH of these folders as the seal lets a test see them: a folder holding a host-only program becomes its
 * shadow (or goes, when nothing else is in it). `sealedDirs(['/usr/bin', '/bin'])` is a bare machine's PATH.
 */
export function sealedDirs(dirs: readonly string[], shadows: Record<string, string> = shadowMap()): string {
  const out: string[] = [];
  for (const d of dirs) {
    const s = shadows[d] ?? d;
    if (s !== '' && d !== '' && !out.includes(s)) out.push(s);
  }
  return out.join(delimiter);
}

/** The sealed PATH of this run (the host's PATH without its host-only programs). */
export function sealedPath(): string {
  const p = process.env[SEALED_PATH_VAR];
  if (p === undefined) throw new Error(`${SEALED_PATH_VAR} is not set: run the tests through vitest's config`);
  return p;
}

/** Seals this process's environment (a test file's worker): see the module comment. */
export function sealProcessEnv(opts: { keep?: readonly string[] } = {}): void {
  const keep = new Set([...SUITE_SWITCHES, ...(opts.keep ?? [])]);
  const path = sealedPath();
  for (const k of Object.keys(process.env)) {
    if (!keep.has(k) && SEALED_VARIABLE_RES.some((re) => re.test(k))) delete process.env[k];
  }
  const home = mkdtempSync(join(tmpdir(), 'zw-test-home-'));
  process.env.HOME = home;
  process.env.XDG_CONFIG_HOME = join(home, '.config');
  process.env.XDG_CACHE_HOME = join(home, '.cache');
  process.env.XDG_DATA_HOME = join(home, '.local', 'share');
  process.env.XDG_STATE_HOME = join(home, '.local', 'state');
  process.env.PATH = path;
}

/** A bare machine's PATH (`/usr/bin:/bin`) as the seal shows it: on a GPU box `/usr/bin` holds nvidia-smi. */
export function barePath(): string {
  return sealedDirs(['/usr/bin', '/bin']);
}
