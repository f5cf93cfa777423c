/** The setup: every answer, the files to write, and the launch steps. Emitters are pure functions of it. */
import type { Answers, QuestionId } from './questions.js';
import { shellJoin } from '../text/index.js';

/**
 * A name zerowiz turns into a file name (a preset, a step's log): letters, digits, `.`, `_`, `-`, starting with
 * a letter or digit. One rule for the preset file schema, preset names and the steps editor.
 */
export const SAFE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** One `accelerate launch` step of a pipeline. */
export interface LaunchStep {
  /** Short name shown in the log pane and used as the log file name, e.g. `data_process`. */
  name: string;
  /** Arguments after `accelerate launch` (and after `--config_file PATH` when `usesConfig`). */
  args: string[];
  /** Whether zerowiz passes `--config_file <the generated accelerate YAML>` to this step. */
  usesConfig: boolean;
}

/** Where the two config files go. Relative paths are relative to the directory zerowiz runs in. */
export interface SetupFiles {
  accelerateConfig: string;
  dsConfig: string;
}

/** A whole setup. */
export interface Setup {
  name: string;
  answers: Answers;
  files: SetupFiles;
  steps: LaunchStep[];
  /** Keys of an imported YAML/JSON that zerowiz does not model: kept and written back as they were. */
  extra?: { yaml?: Record<string, unknown>; json?: Record<string, unknown> };
}

/** One command to run: the argv after the `accelerate` executable. */
export interface LaunchCommand {
  step: string;
  argv: string[];
  usesConfig: boolean;
}

export const DEFAULT_FILES: SetupFiles = { accelerateConfig: 'accelerate_config.yaml', dsConfig: 'ds_config.json' };
/** The name of a setup made without a preset (the wizard's new setup, answers as flags): its records are named after it. */
export const UNNAMED_SETUP = 'my-setup';

/** The `accelerate launch` argv of every step, in order. */
export function toLaunchCommands(setup: Setup): LaunchCommand[] {
  return setup.steps.map((s) => ({
    step: s.name,
    usesConfig: s.usesConfig,
    argv: s.usesConfig ? ['launch', '--config_file', setup.files.accelerateConfig, ...s.args] : ['launch', ...s.args],
  }));
}

/** The value the YAML writes as deepspeed_config_file: the answer if given, else the JSON's path. */
export function dsConfigReference(setup: Setup): string {
  return setup.answers.ds_config_path !== '' ? setup.answers.ds_config_path : setup.files.dsConfig;
}

/** The `accelerate launch` lines of a setup, pasteable; an example line when it has no steps. */
export function launchLines(setup: Setup): string[] {
  const cmds = toLaunchCommands(setup);
  if (cmds.length === 0)
    return [shellJoin(['accelerate', 'launch', '--config_file', setup.files.accelerateConfig, 'train.py'])];
  return cmds.map((c) => shellJoin(['accelerate', ...c.argv]));
}

/**
 * Kept keys that an answer takes over once it is given (the wizard's answer, a flag after --from): an
 * imported `zero_optimization.stage` 0 (no zerowiz mode) stays only until a ZeRO mode is chosen.
 */
const KEPT_UNTIL_ANSWERED: Partial<Record<QuestionId, readonly string[]>> = { mode: ['zero_optimization.stage'] };

/** The setup's kept keys less those that the answers `ids` now decide. */
export function dropKeptFor(extra: Setup['extra'], ids: readonly QuestionId[]): Setup['extra'] {
  const paths = ids.flatMap((id) => KEPT_UNTIL_ANSWERED[id] ?? []);
  if (!extra?.json || paths.length === 0) return extra;
  const json = structuredClone(extra.json);
  for (const path of paths) {
    const parts = path.split('.');
    let cur: unknown = json;
    for (const p of parts.slice(0, -1))
      cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
    if (cur && typeof cur === 'object') delete (cur as Record<string, unknown>)[parts[parts.length - 1]!];
  }
  return { ...extra, json };
}

/** What to say when a preset with no steps is saved (the wizard and `zerowiz preset save` alike). */
export function noStepsNote(setup: Pick<Setup, 'steps'>, name: string): string | null {
  if (setup.steps.length > 0) return null;
  return `preset ${name} has no steps: \`zerowiz launch ${name}\` will have nothing to run (add steps in the wizard's steps screen, or a steps: list in the preset file)`;
}
