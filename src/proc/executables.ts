/**
 * Executables: a command found on PATH as `command -v` finds it, and the `accelerate` a launch runs
 * (`--accelerate PATH`, else ZEROWIZ_ACCELERATE, else PATH).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../text/index.js';

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
/** The same fix in the wizard's terms (it has no --accelerate field): the environment it starts in. */
const ACTIVATE_WIZARD_HINT =
  'quit, activate the Python environment that has accelerate and deepspeed (`conda activate ENV` or `source .venv/bin/activate`) and start zerowiz again, or start it with ZEROWIZ_ACCELERATE=/path/to/accelerate';

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
        ACTIVATE_WIZARD_HINT,
      );
    }
    const abs = isAbsolute(given) ? given : resolve(cwd, given);
    if (!isExecutableFile(abs)) {
      throw new UsageError(
        `accelerate not found at ${given} (from ${from === 'flag' ? '--accelerate' : 'ZEROWIZ_ACCELERATE'}), or not executable`,
        ACTIVATE_HINT,
        ACTIVATE_WIZARD_HINT,
      );
    }
    return { path: abs, display: given, from };
  }
  const found = whichSync('accelerate', env);
  if (!found) throw new UsageError('accelerate is not on PATH', ACTIVATE_HINT, ACTIVATE_WIZARD_HINT);
  return { path: found, display: 'accelerate', from: 'path' };
}
