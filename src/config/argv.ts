/**
 * The grammar of a step's `accelerate launch` words: which word is the training script, what an earlier step
 * writes (paths it creates, such as a cache directory, are never called missing), which scripts are missing, and
 * the exact commands a launch runs.
 */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { toLaunchCommands, type Setup } from './setup.js';
import { shellJoin } from '../text/index.js';

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

/** A value `accelerate launch --mixed_precision` takes. */
export type LaunchPrecision = 'no' | 'fp16' | 'bf16' | 'fp8';
const LAUNCH_PRECISIONS: readonly string[] = ['no', 'fp16', 'bf16', 'fp8'];

/** The value `accelerate launch --mixed_precision` of the steps that use the config, if one passes it. */
export function launchMixedPrecision(setup: Setup): LaunchPrecision | null {
  for (const s of setup.steps) {
    if (!s.usesConfig) continue;
    const i = s.args.indexOf('--mixed_precision');
    const eq = s.args.find((x) => x.startsWith('--mixed_precision='));
    const v = i >= 0 ? s.args[i + 1] : eq?.slice('--mixed_precision='.length);
    if (v !== undefined && LAUNCH_PRECISIONS.includes(v.toLowerCase())) return v.toLowerCase() as LaunchPrecision;
  }
  return null;
}
