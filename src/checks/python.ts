/**
 * The `python` check: the interpreter that runs `accelerate` (its entry point's shebang) answers, and imports
 * torch, accelerate and, when a pass runs DeepSpeed, deepspeed. Pure: it judges what probe.ts measured.
 */
import { shellJoin } from '../text/index.js';
import type { CheckPlan } from './plan.js';
import type { Interpreter, ProbePackage, ProbeRun } from './probe.js';
import { type CheckResult, failed, passed } from './types.js';

/** How the Python environment was found, for the judge. */
export type PythonFound =
  /** accelerate could not be found: why (resolveAccelerate's message). */
  | { kind: 'no-accelerate'; reason: string }
  /** accelerate was found; its interpreter, or why not; and the probe's run in it (null: not run). */
  | { kind: 'found'; accelerate: string; interpreter: Interpreter; run: ProbeRun | null };

/** Seconds to one decimal, for import times. */
function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function pkgText(name: string, p: ProbePackage | null): string {
  if (!p) return `${name}: not asked`;
  if (p.importable) return `${name} ${p.version ?? '(no version)'} (import ${seconds(p.ms)})`;
  return `${name}: ${p.version ? `${p.version} installed but ` : ''}not importable (${p.error ?? 'unknown error'})`;
}

/** The command that installs `pkgs` into `python`'s environment. */
export function pipInstall(python: string, pkgs: string[]): string {
  return shellJoin([python, '-m', 'pip', 'install', ...pkgs]);
}

const ENV_FIX =
  'activate the Python environment that has accelerate (`source .venv/bin/activate`, `conda activate ENV`) or pass --accelerate PATH; to make one: python3 -m venv .venv && .venv/bin/pip install torch accelerate deepspeed';

/** Judges the Python environment. */
export function judgePython(plan: CheckPlan, found: PythonFound): CheckResult {
  const id = 'python';
  const wants = plan.deepspeed ? 'torch, accelerate and deepspeed' : 'torch and accelerate';
  const need = `${wants} importable by the Python that runs accelerate${plan.deepspeed ? ' (a pass runs DeepSpeed)' : ''}`;
  if (found.kind === 'no-accelerate') return failed(id, found.reason, need, ENV_FIX);
  if (!found.interpreter.ok) return failed(id, found.interpreter.reason, need, ENV_FIX);
  const python = found.interpreter.python;
  const run = found.run;
  if (!run) return failed(id, `${python}: not asked`, need, ENV_FIX);
  if (!run.ok)
    return failed(id, `the Python of ${found.interpreter.how} does not answer: ${run.reason}`, need, ENV_FIX);
  const r = run.result;
  const pk = r.packages;
  const parts = [pkgText('torch', pk.torch), pkgText('accelerate', pk.accelerate)];
  if (plan.deepspeed) parts.push(pkgText('deepspeed', pk.deepspeed));
  const kept =
    run.cachedAt !== undefined
      ? ` (the answer of ${new Date(run.cachedAt).toISOString().slice(0, 19).replace('T', ' ')} UTC: nothing installed since; --fresh asks again)`
      : '';
  const measured = `Python ${r.python.version} at ${r.python.executable}, from ${found.interpreter.how}: ${parts.join('; ')}${kept}`;
  const missing: string[] = [];
  const broken: string[] = [];
  for (const [name, p] of [
    ['torch', pk.torch],
    ['accelerate', pk.accelerate],
    ...(plan.deepspeed ? [['deepspeed', pk.deepspeed] as const] : []),
  ] as const) {
    if (p?.importable) continue;
    if (!p || (/ModuleNotFoundError: No module named '?[a-z_]+'?$/.test(p.error ?? '') && p.version === null))
      missing.push(name);
    else broken.push(name);
  }
  if (missing.length > 0) return failed(id, measured, need, pipInstall(r.python.executable, missing));
  if (broken.length > 0)
    return failed(
      id,
      measured,
      need,
      `${pipInstall(r.python.executable, ['--force-reinstall', ...broken])} (its import fails: the error above says why)`,
    );
  return passed(id, measured, need);
}
