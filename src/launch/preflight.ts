/**
 * Checks before a run: where `accelerate` is, whether each step's training script exists (paths an
 * earlier step creates, such as a cache directory, are never rejected), and the exact commands.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { toLaunchCommands, type Setup } from '../config/setup.js';
import { shellJoin } from '../quote.js';

/** The accelerate executable: its path, and how commands show it. */
export interface AccelerateExe {
  path: string;
  /** `accelerate` when found on PATH, else the path as given. */
  display: string;
  /** Where it came from. */
  from: 'flag' | 'env' | 'path';
}

const ACTIVATE_HINT =
  'activate the Python environment that has accelerate and deepspeed (e.g. `conda activate ENV` or `source .venv/bin/activate`), or pass --accelerate PATH';

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds a command on PATH, like `command -v`. */
export function whichSync(cmd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const p = join(dir, cmd);
    if (isExecutableFile(p)) return p;
  }
  return null;
}

/**
 * Resolves `accelerate`: `--accelerate PATH`, else ZEROWIZ_ACCELERATE, else PATH. Throws UsageError
 * (exit 2) with the hint to activate the right Python environment when it is missing.
 */
export function resolveAccelerate(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): AccelerateExe {
  const given = flag ?? (env.ZEROWIZ_ACCELERATE ? env.ZEROWIZ_ACCELERATE : undefined);
  const from: AccelerateExe['from'] = flag !== undefined ? 'flag' : 'env';
  if (given !== undefined) {
    if (!given.includes('/')) {
      const found = whichSync(given, env);
      if (found) return { path: found, display: given, from };
      throw new UsageError(
        `'${given}' (from ${from === 'flag' ? '--accelerate' : 'ZEROWIZ_ACCELERATE'}) is not on PATH`,
        ACTIVATE_HINT,
      );
    }
    const abs = isAbsolute(given) ? given : resolve(cwd, given);
    if (!isExecutableFile(abs)) {
      throw new UsageError(
        `accelerate not found at ${given} (from ${from === 'flag' ? '--accelerate' : 'ZEROWIZ_ACCELERATE'}), or not executable`,
        ACTIVATE_HINT,
      );
    }
    return { path: abs, display: given, from };
  }
  const found = whichSync('accelerate', env);
  if (!found) throw new UsageError('accelerate is not on PATH', ACTIVATE_HINT);
  return { path: found, display: 'accelerate', from: 'path' };
}

// `accelerate launch` options that take no value (everything else starting with -- takes one).
const LAUNCH_BOOL_FLAGS = new Set([
  '--cpu',
  '--multi_gpu',
  '--tpu',
  '--ipex',
  '--use_deepspeed',
  '--use_fsdp',
  '--use_megatron_lm',
  '--use_xpu',
  '--debug',
  '-q',
  '--quiet',
  '--same_network',
  '--no_python',
  '--tpu_use_cluster',
  '--tpu_use_sudo',
  '--downcast_bf16',
  '--enable_cpu_affinity',
  '--dynamo_use_fullgraph',
  '--dynamo_use_dynamic',
  '--dynamo_use_regional_compilation',
]);

/**
 * The training script of a step's args (the first positional argument of `accelerate launch`), or null
 * when the step runs a module (`-m`) or a non-Python command (`--no_python`).
 */
export function trainingScript(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-m' || a === '--module' || a === '--no_python') return null;
    if (a === '--') return args[i + 1] ?? null;
    if (a.startsWith('-')) {
      if (a.includes('=') || LAUNCH_BOOL_FLAGS.has(a)) continue;
      i++; // its value
      continue;
    }
    return a;
  }
  return null;
}

// Values of these options name outputs of a step; a later step may read them before they exist.
const OUTPUT_OPT_RE = /output|cache|save|dir$/i;

/** Paths that steps before `index` write (values of --output_path and the like), resolved against `cwd`. */
export function earlierOutputs(setup: Setup, index: number, cwd: string): string[] {
  const out: string[] = [];
  for (const step of setup.steps.slice(0, index)) {
    step.args.forEach((a, i) => {
      const eq = a.indexOf('=');
      if (a.startsWith('--') && eq > 0 && OUTPUT_OPT_RE.test(a.slice(2, eq))) out.push(a.slice(eq + 1));
      else if (a.startsWith('--') && OUTPUT_OPT_RE.test(a.slice(2)) && step.args[i + 1] !== undefined)
        out.push(step.args[i + 1]!);
    });
  }
  return out.map((p) => resolve(cwd, p));
}

/** One missing file found before the run. */
export interface MissingScript {
  step: string;
  path: string;
}

/** Steps whose training script does not exist (relative to `cwd`) and is not made by an earlier step. */
export function missingScripts(setup: Setup, cwd = process.cwd()): MissingScript[] {
  const missing: MissingScript[] = [];
  setup.steps.forEach((step, i) => {
    const script = trainingScript(step.args);
    if (script === null) return;
    const abs = isAbsolute(script) ? script : resolve(cwd, script);
    let exists = false;
    try {
      exists = statSync(abs).isFile();
    } catch {
      exists = false;
    }
    if (exists) return;
    const made = earlierOutputs(setup, i, cwd).some((o) => abs === o || abs.startsWith(o.endsWith('/') ? o : `${o}/`));
    if (!made) missing.push({ step: step.name, path: script });
  });
  return missing;
}

/** A command ready to run and to show. */
export interface PreparedCommand {
  step: string;
  /** argv after the executable. */
  argv: string[];
  usesConfig: boolean;
  /** The command line, shell-quoted, as it can be pasted. */
  text: string;
}

/** The commands of a setup with this accelerate. */
export function prepareCommands(setup: Setup, exe: { display: string }): PreparedCommand[] {
  return toLaunchCommands(setup).map((c) => ({
    step: c.step,
    argv: c.argv,
    usesConfig: c.usesConfig,
    text: shellJoin([exe.display, ...c.argv]),
  }));
}
