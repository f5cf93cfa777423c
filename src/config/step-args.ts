/**
 * The arguments of a launch step as people read them: accelerate's own options, the training script, and the
 * script's flags with their values. Used by the steps editor, the step findings and the finish screen.
 */
import { trainingScript } from './argv.js';
import type { LaunchStep } from './setup.js';

/** One argument: `--flag value`, `--flag=value`, a bare `--flag`, or a positional word (the script). */
export interface StepArg {
  /** The flag (`--output_path`), or null for a positional word. */
  flag: string | null;
  /** Its value, or null for a bare flag. */
  value: string | null;
  /** Written as one word `--flag=value`. */
  joined: boolean;
  /** Before the script: an option of `accelerate launch` itself; the script; or an argument of the script. */
  role: 'launch' | 'script' | 'arg';
}

const PROBE = '\0probe';

/** The index of the training script in `args`, or -1 (a module, `--no_python`, or no script yet). */
export function scriptIndex(args: readonly string[]): number {
  const script = trainingScript(args);
  if (script === null) return -1;
  for (let i = 0; i < args.length; i++) {
    // Position i holds the script when accelerate expects a positional word there.
    if (args[i] === script && trainingScript([...args.slice(0, i), PROBE]) === PROBE) return i;
  }
  return -1;
}

/** True for a word that is a flag (`--x`, `-x`), not a value (`-1`, `data/x`). */
export function isFlag(word: string): boolean {
  return /^--?[A-Za-z]/.test(word);
}

/**
 * The arguments of a step as groups. `accelerate launch`'s own options (before the script) take a value
 * exactly when accelerate's parser says so; after the script, a flag takes the next word unless that word
 * is a flag too. `flattenArgs(groupArgs(a))` is always `a`.
 */
export function groupArgs(args: readonly string[]): StepArg[] {
  const at = scriptIndex(args);
  const out: StepArg[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const role: StepArg['role'] = at < 0 || i < at ? (at < 0 ? 'arg' : 'launch') : i === at ? 'script' : 'arg';
    if (role === 'script' || !isFlag(w)) {
      out.push({ flag: null, value: w, joined: false, role });
      continue;
    }
    const eq = w.indexOf('=');
    if (eq > 0) {
      out.push({ flag: w.slice(0, eq), value: w.slice(eq + 1), joined: true, role });
      continue;
    }
    const next = args[i + 1];
    const takesValue =
      role === 'launch'
        ? trainingScript([w, PROBE]) === null && next !== undefined && i + 1 < at
        : next !== undefined && !isFlag(next) && i + 1 !== at;
    if (takesValue) {
      out.push({ flag: w, value: next!, joined: false, role });
      i++;
    } else out.push({ flag: w, value: null, joined: false, role });
  }
  return out;
}

/** The words of argument groups. */
export function flattenArgs(groups: readonly StepArg[]): string[] {
  return groups.flatMap((g) => {
    if (g.flag === null) return g.value === null ? [] : [g.value];
    if (g.value === null) return [g.flag];
    return g.joined ? [`${g.flag}=${g.value}`] : [g.flag, g.value];
  });
}

/** The value of `flag` in a step's arguments (the first one), or undefined. Bare flags give null. */
export function argValue(args: readonly string[], flag: string): string | null | undefined {
  const g = groupArgs(args).find((x) => x.flag === flag);
  return g === undefined ? undefined : g.value;
}

/** How a step gets its accelerate config. */
export type StepConfig = { kind: 'setup' } | { kind: 'default' } | { kind: 'pinned'; path: string };

/** The config a step runs with: the setup's (`usesConfig`), its own `--config_file`, or accelerate's default. */
export function stepConfig(step: LaunchStep): StepConfig {
  if (step.usesConfig) return { kind: 'setup' };
  const g = groupArgs(step.args).find((x) => x.role === 'launch' && x.flag === '--config_file');
  return g?.value ? { kind: 'pinned', path: g.value } : { kind: 'default' };
}

/** The step run with the setup's config, accelerate's default, or pinned to `path`. */
export function withStepConfig(step: LaunchStep, config: StepConfig): LaunchStep {
  const groups = groupArgs(step.args).filter((x) => !(x.role === 'launch' && x.flag === '--config_file'));
  if (config.kind === 'pinned')
    groups.unshift({ flag: '--config_file', value: config.path, joined: false, role: 'launch' });
  return { ...step, usesConfig: config.kind === 'setup', args: flattenArgs(groups) };
}

/** True for a DiffSynth-Studio data-processing pass (`--task sft:data_process` and the like). */
export function isDataPass(args: readonly string[]): boolean {
  const task = argValue(args, '--task');
  return typeof task === 'string' && task.endsWith('data_process');
}
