/**
 * The pipeline as part of the setup: step templates, the argument model the steps editor shows, and the
 * editor itself as a pure reducer (script, arguments added, removed, edited and reordered, the step's name,
 * which accelerate config it runs with). Editing a value that other steps share (the cache path the data
 * pass writes and the training pass reads, model ids, LoRA options) offers to change it everywhere: the
 * offer and its acceptance are state here, so the view only renders them.
 */
import { SAFE_NAME_RE, type LaunchStep, type Setup } from '../config/index.js';
import { stepsForSetup, templateScriptSteps } from '../setups/index.js';
import type { DiffSynthTemplate } from '../setups/index.js';
import {
  flattenArgs,
  groupArgs,
  isFlag,
  stepConfig,
  withStepConfig,
  type StepArg,
  type StepConfig,
} from '../config/index.js';

// ---------------------------------------------------------------------------------------------
// Templates

/** A template's id: a built-in one, or a DiffSynth-Studio example's (presets/templates.yaml). */
export type TemplateId = 'diffsynth-qwen-image-lora' | 'one-script' | 'empty' | (string & {});

/** A starting point for the steps. */
export interface StepTemplate {
  id: TemplateId;
  label: string;
  /** One line on what it runs. */
  description: string;
  /** The built-in preset whose steps this is (the seed recipe lives in exactly one place: its preset). */
  preset?: string;
  /** The steps, when they are not a preset's. */
  steps?: readonly LaunchStep[];
  /** A DiffSynth-Studio example script: its steps are read from its text as a pasted script is. */
  diffsynth?: DiffSynthTemplate;
}

/** The preset holding the seed's two-pass DiffSynth-Studio recipe. */
export const SEED_RECIPE_PRESET = 'qwen-image-lora-lowvram';

/** The built-in templates, in the order the wizard offers them (the DiffSynth examples go after the seed's). */
export const STEP_TEMPLATES: readonly StepTemplate[] = [
  {
    id: 'diffsynth-qwen-image-lora',
    label: 'DiffSynth-Studio Qwen-Image LoRA (two passes)',
    description:
      'data_process caches the text encoder and VAE outputs (no DeepSpeed), then train reads the cache and trains the DiT LoRA with this config',
    preset: SEED_RECIPE_PRESET,
  },
  {
    id: 'one-script',
    label: 'One training script',
    description: 'accelerate launch --config_file <this config> train.py: replace train.py with your script',
    steps: [{ name: 'train', usesConfig: true, args: ['train.py'] }],
  },
  {
    id: 'empty',
    label: 'No steps',
    description: 'write the config files only; zerowiz launch will have nothing to run',
    steps: [],
  },
];

/**
 * Every template the steps screen offers: the seed's, then DiffSynth-Studio's examples (those of the answers'
 * model first, in the file's order), then a script of your own and no steps.
 */
export function stepTemplates(examples: readonly DiffSynthTemplate[], modelId: string | null): StepTemplate[] {
  const ours = examples.filter((t) => t.model === modelId);
  const others = examples.filter((t) => t.model !== modelId);
  const fromExample = (t: DiffSynthTemplate): StepTemplate => ({
    id: t.id,
    label: `DiffSynth-Studio ${t.label}`,
    description: `DiffSynth-Studio's own example, ${t.source} (${t.tuning === 'lora' ? 'LoRA' : 'full'}, ${t.passes === 'one' ? 'one pass' : t.passes === 'split' ? 'the encoders cached in a pass of their own first' : t.passes})`,
    diffsynth: t,
  });
  return [STEP_TEMPLATES[0]!, ...[...ours, ...others].map(fromExample), ...STEP_TEMPLATES.slice(1)];
}

/**
 * The steps of a template; `presetSteps` reads a built-in preset's steps (presets.ts in the app); a DiffSynth
 * example's are read from its text and made for `setup` (its data pass pinned to the config without DeepSpeed).
 */
export function templateSteps(
  id: TemplateId,
  presetSteps: (preset: string) => readonly LaunchStep[],
  templates: readonly StepTemplate[] = STEP_TEMPLATES,
  setup?: Pick<Setup, 'files'>,
): LaunchStep[] {
  const t = templates.find((x) => x.id === id);
  if (!t) return [];
  if (t.diffsynth) {
    const steps = templateScriptSteps(t.diffsynth).steps;
    return setup ? stepsForSetup(steps, setup) : steps;
  }
  const steps = t.preset !== undefined ? presetSteps(t.preset) : (t.steps ?? []);
  return steps.map(copyStep);
}

function copyStep(s: LaunchStep): LaunchStep {
  return { name: s.name, usesConfig: s.usesConfig, args: [...s.args] };
}

// ---------------------------------------------------------------------------------------------
// Shared values: the offer to change a value in every step that uses it

/** Where one argument value sits. */
export interface ArgRef {
  step: number;
  /** The index of the group in `groupArgs(step.args)`. */
  group: number;
}

/** One change an offer would make. */
export interface LinkedChange extends ArgRef {
  /** The step's name and the flag (or `script`), for the view. */
  stepName: string;
  what: string;
  before: string;
  after: string;
}

/** An offer: the user changed `before` to `after` at `from`; these other places hold the same value. */
export interface LinkOffer {
  from: ArgRef;
  before: string;
  after: string;
  changes: LinkedChange[];
}

function pathLike(v: string): boolean {
  return v.includes('/') || v.startsWith('.') || v.startsWith('~');
}

/** Flags whose value is DiffSynth-Studio's `model_id:origin_pattern,...` list. */
const MODEL_ID_FLAGS = new Set(['--model_id_with_origin_paths']);

function modelIds(v: string): string[] | null {
  const parts = v.split(',').map((p) => p.split(':'));
  if (parts.length === 0 || parts.some((p) => p.length !== 2 || p[0] === '' || p[1] === '')) return null;
  return parts.map((p) => p[0]!);
}

/** `before` -> `after` when every entry of a model-id list swapped the same id for another, else null. */
function modelIdRename(before: string, after: string): [string, string] | null {
  const a = modelIds(before);
  const b = modelIds(after);
  if (!a || !b || a.length !== b.length) return null;
  const pairs = new Set(a.map((x, i) => `${x}\n${b[i]}`));
  if (pairs.size !== 1) return null;
  const [from, to] = [...pairs][0]!.split('\n') as [string, string];
  if (from === to) return null;
  const rest = (v: string) => v.split(',').map((p) => p.slice(p.indexOf(':')));
  return rest(before).join() === rest(after).join() ? [from, to] : null;
}

/**
 * The other places an edit of `before` to `after` at `from` should also change: in other steps the same
 * flag with the same value, or any path-like value equal to it (the data pass's --output_path is the
 * training pass's --dataset_base_path); in every step a path that starts with it (`data/x` ->
 * `data/x/metadata.csv`, `out/lora` -> `out/lora-splited-cache`); and, in DiffSynth-Studio's model lists,
 * the same model id renamed.
 */
export function linkedChanges(
  steps: readonly LaunchStep[],
  from: ArgRef,
  before: string,
  after: string,
): LinkedChange[] {
  if (before === after || before === '') return [];
  const fromGroup = groupArgs(steps[from.step]?.args ?? [])[from.group];
  if (!fromGroup) return [];
  const rename = fromGroup.flag !== null && MODEL_ID_FLAGS.has(fromGroup.flag) ? modelIdRename(before, after) : null;
  const out: LinkedChange[] = [];
  steps.forEach((step, si) => {
    groupArgs(step.args).forEach((g, gi) => {
      if (si === from.step && gi === from.group) return;
      if (g.value === null || g.role === 'launch') return;
      const v = g.value;
      let next: string | null = null;
      const sameKind = g.flag === fromGroup.flag && g.role === fromGroup.role;
      if (si !== from.step && v === before && (sameKind || (pathLike(before) && pathLike(v)))) next = after;
      else if (pathLike(before) && v.length > before.length && v.startsWith(before) && /[/_.-]/.test(v[before.length]!))
        next = after + v.slice(before.length);
      else if (rename && si !== from.step && g.flag !== null && MODEL_ID_FLAGS.has(g.flag)) {
        const ids = modelIds(v);
        if (ids?.includes(rename[0]))
          next = v
            .split(',')
            .map((p) => (p.split(':')[0] === rename[0] ? rename[1] + p.slice(p.indexOf(':')) : p))
            .join(',');
      }
      if (next !== null && next !== v)
        out.push({ step: si, group: gi, stepName: step.name, what: g.flag ?? 'script', before: v, after: next });
    });
  });
  return out;
}

function setGroupValue(steps: readonly LaunchStep[], ref: ArgRef, value: string): LaunchStep[] {
  return steps.map((s, i) => {
    if (i !== ref.step) return s;
    const groups = groupArgs(s.args);
    const g = groups[ref.group];
    if (!g) return s;
    groups[ref.group] = { ...g, value };
    return { ...s, args: flattenArgs(groups) };
  });
}

// ---------------------------------------------------------------------------------------------
// The editor

/** One row of a step in the editor. */
export type StepRow = { kind: 'name' } | { kind: 'config' } | { kind: 'arg'; group: number; arg: StepArg };

/** The rows of a step: its name, its config, then every argument group (launch options, script, arguments). */
export function stepRows(step: LaunchStep): StepRow[] {
  return [
    { kind: 'name' },
    { kind: 'config' },
    ...groupArgs(step.args).map((arg, group): StepRow => ({ kind: 'arg', group, arg })),
  ];
}

/** What is being typed. */
export interface StepEdit {
  /** The row's part being edited: the step's name, a flag, or a value (the script is a value). */
  part: 'name' | 'flag' | 'value';
  text: string;
  /**
   * A new argument: while its flag is typed it is not in the step yet and will be inserted as group
   * `insertAt` (the view draws the field there); then its value is asked (an empty Enter: a bare flag).
   */
  adding: boolean;
  insertAt?: number;
}

/** The steps editor. */
export interface StepsEditorState {
  steps: LaunchStep[];
  /** The step shown. */
  step: number;
  /** The row under the cursor in that step (see stepRows). */
  row: number;
  edit: StepEdit | null;
  offer: LinkOffer | null;
  /** The template list is shown instead of the steps. */
  picking: boolean;
  /** Why the last edit was refused, or what the last action did. */
  message: string | null;
}

/** What the steps view can ask for. */
export type StepsAction =
  | { type: 'pickTemplate' }
  | { type: 'template'; steps: LaunchStep[] }
  | { type: 'move'; delta: number }
  | { type: 'selectStep'; index: number }
  | { type: 'addStep' }
  | { type: 'removeStep' }
  | { type: 'moveStep'; delta: number }
  | { type: 'setConfig'; config: StepConfig }
  | { type: 'startEdit'; part?: 'flag' | 'value' }
  | { type: 'editText'; text: string }
  | { type: 'commitEdit' }
  | { type: 'cancelEdit' }
  | { type: 'addArg' }
  | { type: 'removeArg' }
  | { type: 'moveArg'; delta: number }
  | { type: 'acceptOffer' }
  | { type: 'declineOffer' }
  /** Say why an edit cannot be accepted (an unset $VAR), the edit kept open. */
  | { type: 'say'; text: string };

/** The editor over `steps`; the template list first when there are none. */
export function initialStepsEditor(steps: readonly LaunchStep[], pick = steps.length === 0): StepsEditorState {
  return { steps: steps.map(copyStep), step: 0, row: 0, edit: null, offer: null, picking: pick, message: null };
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, n));
}

function rowCount(s: StepsEditorState): number {
  const step = s.steps[s.step];
  return step ? stepRows(step).length : 0;
}

function freeName(steps: readonly LaunchStep[], base: string): string {
  const names = new Set(steps.map((x) => x.name));
  if (!names.has(base)) return base;
  for (let i = 2; ; i++) if (!names.has(`${base}_${i}`)) return `${base}_${i}`;
}

function replaceStep(s: StepsEditorState, step: LaunchStep): LaunchStep[] {
  return s.steps.map((x, i) => (i === s.step ? step : x));
}

function currentRow(s: StepsEditorState): StepRow | null {
  const step = s.steps[s.step];
  return step ? (stepRows(step)[s.row] ?? null) : null;
}

/**
 * The config a step's `c` key (or Enter on its config row) moves to: the setup's config -> pinned to the
 * setup's config without DeepSpeed (`pinned`, written with the setup) -> accelerate's default (no
 * --config_file) -> the setup's.
 */
export function nextStepConfig(step: LaunchStep, pinned: string): StepConfig {
  const c = stepConfig(step);
  if (c.kind === 'setup') return { kind: 'pinned', path: pinned };
  if (c.kind === 'pinned') return { kind: 'default' };
  return { kind: 'setup' };
}

/** The reducer. Refusals leave the steps as they were and say why in `message`. */
export function stepsReducer(s: StepsEditorState, a: StepsAction): StepsEditorState {
  // While an offer is open it is the only question: y or n.
  if (s.offer && a.type !== 'acceptOffer' && a.type !== 'declineOffer') return s;
  switch (a.type) {
    case 'pickTemplate':
      return { ...s, picking: true, edit: null, message: null };
    case 'say':
      return { ...s, message: a.text };
    case 'template':
      return { ...initialStepsEditor(a.steps, false) };
    case 'move':
      if (s.edit) return s;
      return { ...s, row: clamp(s.row + a.delta, 0, Math.max(0, rowCount(s) - 1)), message: null };
    case 'selectStep': {
      if (s.edit || s.steps.length === 0) return s;
      const step = ((a.index % s.steps.length) + s.steps.length) % s.steps.length;
      return { ...s, step, row: 0, message: null };
    }
    case 'addStep': {
      const step: LaunchStep = { name: freeName(s.steps, 'step'), usesConfig: true, args: ['train.py'] };
      const at = s.steps.length === 0 ? 0 : s.step + 1;
      const steps = [...s.steps.slice(0, at), step, ...s.steps.slice(at)];
      return { ...s, steps, step: at, row: 0, edit: { part: 'name', text: step.name, adding: false }, picking: false };
    }
    case 'removeStep': {
      if (s.steps.length === 0) return s;
      const gone = s.steps[s.step]!.name;
      const steps = s.steps.filter((_, i) => i !== s.step);
      return {
        ...s,
        steps,
        step: clamp(s.step, 0, Math.max(0, steps.length - 1)),
        row: 0,
        edit: null,
        message: `removed step ${gone}`,
      };
    }
    case 'moveStep': {
      const to = s.step + a.delta;
      if (to < 0 || to >= s.steps.length) return s;
      const steps = [...s.steps];
      [steps[s.step], steps[to]] = [steps[to]!, steps[s.step]!];
      return { ...s, steps, step: to };
    }
    case 'setConfig': {
      const step = s.steps[s.step];
      if (!step) return s;
      const next = withStepConfig(step, a.config);
      return { ...s, steps: replaceStep(s, next), row: Math.min(s.row, stepRows(next).length - 1) };
    }
    case 'startEdit': {
      const step = s.steps[s.step];
      const row = currentRow(s);
      if (!step || !row || s.edit) return s;
      if (row.kind === 'name') return { ...s, edit: { part: 'name', text: step.name, adding: false }, message: null };
      if (row.kind === 'config') return s;
      const part = a.part ?? (row.arg.value !== null ? 'value' : 'flag');
      if (part === 'flag' && row.arg.flag === null) return s;
      if (part === 'value' && row.arg.value === null) return s;
      const text = part === 'flag' ? row.arg.flag! : row.arg.value!;
      return { ...s, edit: { part, text, adding: false }, message: null };
    }
    case 'editText':
      return s.edit ? { ...s, edit: { ...s.edit, text: a.text } } : s;
    case 'cancelEdit': {
      if (!s.edit) return s;
      const row = currentRow(s);
      // Esc on a new argument's value takes the argument out again: the whole addition is cancelled.
      if (s.edit.adding && s.edit.part === 'value' && row?.kind === 'arg') {
        const step = s.steps[s.step]!;
        const groups = groupArgs(step.args).filter((_, i) => i !== row.group);
        return {
          ...s,
          steps: replaceStep(s, { ...step, args: flattenArgs(groups) }),
          row: Math.max(0, s.row - 1),
          edit: null,
        };
      }
      if (s.edit.adding) return { ...s, row: Math.max(0, s.row - 1), edit: null, message: null };
      return { ...s, edit: null, message: null };
    }
    case 'commitEdit':
      return commit(s);
    case 'addArg': {
      const step = s.steps[s.step];
      if (!step || s.edit) return s;
      const row = currentRow(s);
      // After the cursor's argument (or the script); from any other row, at the end. accelerate's own
      // options are not added here (the config row pins --config_file).
      const at = row?.kind === 'arg' && row.arg.role !== 'launch' ? row.group + 1 : groupArgs(step.args).length;
      return { ...s, row: 2 + at, edit: { part: 'flag', text: '--', adding: true, insertAt: at }, message: null };
    }
    case 'removeArg': {
      const step = s.steps[s.step];
      const row = currentRow(s);
      if (!step || row?.kind !== 'arg' || s.edit) return s;
      if (row.arg.role === 'script')
        return { ...s, message: 'the script cannot be removed; edit it, or remove the step' };
      const groups = groupArgs(step.args).filter((_, i) => i !== row.group);
      const next = { ...step, args: flattenArgs(groups) };
      return { ...s, steps: replaceStep(s, next), row: clamp(s.row, 0, stepRows(next).length - 1), message: null };
    }
    case 'moveArg': {
      const step = s.steps[s.step];
      const row = currentRow(s);
      if (!step || row?.kind !== 'arg' || s.edit) return s;
      const groups = groupArgs(step.args);
      const to = row.group + a.delta;
      const other = groups[to];
      // Arguments move among the script's arguments; the script and accelerate's options keep their place.
      if (other?.role !== 'arg' || row.arg.role !== 'arg') return s;
      [groups[row.group], groups[to]] = [other, row.arg];
      return { ...s, steps: replaceStep(s, { ...step, args: flattenArgs(groups) }), row: s.row + a.delta };
    }
    case 'acceptOffer': {
      if (!s.offer) return s;
      let steps = s.steps;
      for (const c of s.offer.changes) steps = setGroupValue(steps, c, c.after);
      const n = s.offer.changes.length;
      return { ...s, steps, offer: null, message: `changed in ${n + 1} place${n === 0 ? '' : 's'}` };
    }
    case 'declineOffer':
      return s.offer ? { ...s, offer: null, message: 'changed here only' } : s;
  }
}

function commit(s: StepsEditorState): StepsEditorState {
  const step = s.steps[s.step];
  const e = s.edit;
  if (!step || !e) return s;
  if (e.adding && e.part === 'flag') return commitNewFlag(s, step, e);
  const row = currentRow(s);
  if (!row) return s;
  if (e.part === 'name') {
    const name = e.text.trim();
    if (!SAFE_NAME_RE.test(name))
      return { ...s, message: 'a step name is letters, digits, . _ - (it names the log file)' };
    if (s.steps.some((x, i) => i !== s.step && x.name === name))
      return { ...s, message: `there is already a step named ${name}` };
    return { ...s, steps: replaceStep(s, { ...step, name }), edit: null, message: null };
  }
  if (row.kind !== 'arg') return { ...s, edit: null };
  const groups = groupArgs(step.args);
  const g = groups[row.group]!;
  if (e.part === 'flag') {
    const flag = e.text.trim();
    if (!isFlag(flag) || /\s/.test(flag))
      return { ...s, message: 'a flag is one word starting with -, e.g. --output_path' };
    groups[row.group] = { ...g, flag };
    return { ...s, steps: replaceStep(s, { ...step, args: flattenArgs(groups) }), edit: null, message: null };
  }
  // A value (or the script path).
  if (e.adding && e.text === '') return { ...s, edit: null, message: null };
  if (g.role === 'script' && e.text.trim() === '') return { ...s, message: 'the script path cannot be empty' };
  const before = g.value ?? '';
  const after = g.role === 'script' ? e.text.trim() : e.text;
  groups[row.group] = { ...g, value: after };
  const steps = replaceStep(s, { ...step, args: flattenArgs(groups) });
  const from = { step: s.step, group: row.group };
  const changes = e.adding ? [] : linkedChanges(steps, from, before, after);
  return {
    ...s,
    steps,
    edit: null,
    message: null,
    offer: changes.length > 0 ? { from, before, after, changes } : null,
  };
}

/** A new argument's first line: `--flag`, `--flag value` typed in one go, or a positional word. */
function commitNewFlag(s: StepsEditorState, step: LaunchStep, e: StepEdit): StepsEditorState {
  const text = e.text.trim();
  const space = text.search(/\s/);
  const first = space < 0 ? text : text.slice(0, space);
  const value = space < 0 ? null : text.slice(space).trim();
  if (first === '' || first === '--' || first === '-') return { ...s, message: 'type the flag, e.g. --output_path' };
  const groups = groupArgs(step.args);
  const at = Math.min(e.insertAt ?? groups.length, groups.length);
  const group: StepArg = isFlag(first)
    ? { flag: first, value, joined: false, role: 'arg' }
    : { flag: null, value: text, joined: false, role: 'arg' };
  groups.splice(at, 0, group);
  const next = { ...s, steps: replaceStep(s, { ...step, args: flattenArgs(groups) }), row: 2 + at, message: null };
  // A flag without a value typed: ask for it (an empty answer keeps it a bare flag).
  if (group.flag !== null && value === null) return { ...next, edit: { part: 'value', text: '', adding: true } };
  return { ...next, edit: null };
}
