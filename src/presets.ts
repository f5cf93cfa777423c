/**
 * Presets: YAML files holding the answers (question ids), a model, the files to write and the launch
 * steps. Built-ins live in presets/ (data only); the user's in $XDG_CONFIG_HOME/zerowiz/presets.
 * A broken user preset is reported (file, key, problem) and skipped, never deleted or overwritten.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod/mini';
import './zod.js';
import { UsageError } from './errors.js';
import { dumpYaml } from './emit.js';
import { presetsDir, userPresetsDir } from './paths.js';
import {
  AnswerKeyError,
  QUESTIONS,
  parseAnswers,
  withDefaults,
  type Answers,
  type Question,
  type QuestionId,
} from './questions.js';
import { DEFAULT_FILES, type Setup } from './setup.js';
import { timestamp, writeFileSafely, type WriteResult } from './write.js';

/** Files in presets/ that are data of another kind, not presets. */
const NOT_PRESETS = new Set(['models.yaml']);
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const stepSchema = z.strictObject({
  name: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a step name is letters, digits, . _ -')),
  uses_config: z._default(z.boolean(), false),
  args: z
    .array(z.pipe(z.union([z.string(), z.number()]), z.transform(String)))
    .check(z.minLength(1, 'a step needs at least the training script')),
});
/** The preset file format (validated with zod). */
export const presetFileSchema = z.strictObject({
  name: z.optional(z.string().check(z.regex(NAME_RE, 'a preset name is letters, digits, . _ -'))),
  description: z._default(z.string(), ''),
  model: z.optional(
    z.strictObject({
      name: z.optional(z.string()),
      params: z.optional(z.union([z.string(), z.number()])),
      largest_layer: z.optional(z.union([z.string(), z.number()])),
    }),
  ),
  answers: z._default(z.record(z.string(), scalar), {}),
  files: z.optional(
    z.strictObject({
      accelerate_config: z.string().check(z.minLength(1)),
      ds_config: z.string().check(z.minLength(1)),
    }),
  ),
  steps: z._default(z.array(stepSchema), []),
});
/** A preset file as written. */
export type PresetFile = z.output<typeof presetFileSchema>;

/** A loaded preset. */
export interface Preset {
  name: string;
  description: string;
  source: 'builtin' | 'user' | 'file';
  path: string;
  setup: Setup;
  /** The answers the preset sets (the rest are defaults). */
  given: Partial<Answers>;
}

/** A preset file that could not be read: where, which key, what is wrong. */
export interface PresetProblem {
  path: string;
  key: string;
  problem: string;
}

/** Reads and checks one preset file. Throws a PresetProblem-shaped UsageError if it is broken. */
export function readPresetFile(path: string, source: Preset['source']): Preset {
  const fail = (key: string, problem: string): never => {
    throw Object.assign(
      new UsageError(
        `preset ${path}: ${key ? `${key}: ` : ''}${problem}`,
        'fix the file (it was left as it is), or see the preset format in the README',
      ),
      { problem: { path, key, problem } satisfies PresetProblem },
    );
  };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return fail('', `cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
    // Launch arguments are strings exactly as written: `1e-4` must not become 0.0001.
    const asText = parseYaml(text, { schema: 'failsafe' }) as { steps?: Array<{ args?: unknown }> } | null;
    const steps = (data as { steps?: Array<{ args?: unknown }> } | null)?.steps;
    if (Array.isArray(steps) && Array.isArray(asText?.steps)) {
      steps.forEach((s, i) => {
        const raw = asText.steps?.[i]?.args;
        if (s && Array.isArray(s.args) && Array.isArray(raw) && raw.length === s.args.length) s.args = raw;
      });
    }
  } catch (e) {
    return fail('', `not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  const checked = presetFileSchema.safeParse(data ?? {});
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    return fail(issue.path.join('.'), issue.message);
  }
  const file = checked.data;
  // A preset is found by its file name, so that is its name; `name:` only names a preset given as a file.
  const name = source === 'file' ? (file.name ?? basename(path, extname(path))) : basename(path, extname(path));
  const raw: Record<string, unknown> = { ...file.answers };
  if (file.model?.name !== undefined) raw.model_name = file.model.name;
  if (file.model?.params !== undefined) raw.model_params = file.model.params;
  if (file.model?.largest_layer !== undefined) raw.largest_layer_params = file.model.largest_layer;
  let given: Partial<Answers>;
  try {
    given = parseAnswers(raw);
  } catch (e) {
    const key =
      e instanceof AnswerKeyError
        ? file.model && ['model_name', 'model_params', 'largest_layer_params'].includes(e.key)
          ? `model.${e.key}`
          : `answers.${e.key}`
        : '';
    return fail(key, (e as Error).message);
  }
  const setup: Setup = {
    name,
    answers: withDefaults(given),
    files: file.files
      ? { accelerateConfig: file.files.accelerate_config, dsConfig: file.files.ds_config }
      : { ...DEFAULT_FILES },
    steps: file.steps.map((s) => ({ name: s.name, args: s.args, usesConfig: s.uses_config })),
  };
  return { name, description: file.description, source, path, setup, given };
}

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && !NOT_PRESETS.has(f))
    .sort((x, y) => x.replace(/\.ya?ml$/, '').localeCompare(y.replace(/\.ya?ml$/, '')))
    .map((f) => join(dir, f))
    .filter((p) => statSync(p).isFile());
}

/** Every preset: built-ins then the user's, with the problems of the ones that could not be read. */
export function listPresets(env: NodeJS.ProcessEnv = process.env): { presets: Preset[]; problems: PresetProblem[] } {
  const presets: Preset[] = [];
  const problems: PresetProblem[] = [];
  for (const [dir, source] of [
    [presetsDir(), 'builtin'],
    [userPresetsDir(env), 'user'],
  ] as const) {
    for (const path of yamlFiles(dir)) {
      try {
        presets.push(readPresetFile(path, source));
      } catch (e) {
        const problem = (e as { problem?: PresetProblem }).problem;
        problems.push(problem ?? { path, key: '', problem: (e as Error).message });
      }
    }
  }
  return { presets, problems };
}

/** True when `ref` names a file rather than a preset. */
function looksLikePath(ref: string): boolean {
  return ref.includes('/') || ref.includes('\\') || /\.ya?ml$/i.test(ref);
}

/** Finds a preset by name (user presets shadow built-ins) or by file path. */
export function findPreset(ref: string, env: NodeJS.ProcessEnv = process.env): Preset {
  if (looksLikePath(ref)) {
    if (!existsSync(ref))
      throw new UsageError(
        `no preset file '${ref}'`,
        'check the path, or give a preset name from `zerowiz preset list`',
      );
    return readPresetFile(ref, 'file');
  }
  if (!NAME_RE.test(ref))
    throw new UsageError(
      `'${ref}' is not a preset name`,
      'names are letters, digits, . _ -; see `zerowiz preset list`',
    );
  for (const dir of [userPresetsDir(env), presetsDir()]) {
    for (const ext of ['.yaml', '.yml']) {
      const path = join(dir, ref + ext);
      if (existsSync(path) && !NOT_PRESETS.has(basename(path)))
        return readPresetFile(path, dir === presetsDir() ? 'builtin' : 'user');
    }
  }
  throw new UsageError(`no preset named '${ref}'`, 'see `zerowiz preset list` for the names');
}

/** Loads a preset (name or file) as a Setup. Throws UsageError when it is missing or broken. */
export async function loadPreset(ref: string, env: NodeJS.ProcessEnv = process.env): Promise<Setup> {
  return findPreset(ref, env).setup;
}

/** The preset file for a setup: the answers that differ from the defaults, the model, files and steps. */
export function presetFileFor(setup: Setup, description = '', given?: Partial<Answers>): PresetFile {
  const defaults = withDefaults({});
  const answers: Record<string, string | number | boolean | null> = {};
  const model: NonNullable<PresetFile['model']> = {};
  const a = setup.answers;
  for (const qq of QUESTIONS) {
    const id = qq.id as QuestionId;
    const value = a[id];
    const isGiven = given ? id in given : value !== defaults[id];
    if (!isGiven) continue;
    if (id === 'model_name') {
      if (value !== '') model.name = value as string;
    } else if (id === 'model_params' || id === 'largest_layer_params') {
      if (value !== null)
        model[id === 'model_params' ? 'params' : 'largest_layer'] = (qq as Question).format(value as never);
    } else {
      // Written as the question formats it when a plain number would read back differently (memory sizes:
      // a bare number means GiB), so a saved preset reloads the same answers.
      const plain = value as string | number | boolean | null;
      const back = typeof plain === 'number' ? (qq as Question).parse(String(plain), a) : null;
      const roundTrips = back === null || (back.ok && back.value === plain);
      answers[id] = roundTrips ? plain : (qq as Question).format(value as never);
    }
  }
  const file: PresetFile = {
    name: setup.name,
    description,
    answers,
    steps: setup.steps.map((s) => ({ name: s.name, uses_config: s.usesConfig, args: s.args })),
  };
  if (Object.keys(model).length > 0) file.model = model;
  file.files = { accelerate_config: setup.files.accelerateConfig, ds_config: setup.files.dsConfig };
  return file;
}

/** Renders a preset file in the documented layout (name, description, model, answers, files, steps). */
export function renderPresetFile(file: PresetFile): string {
  const ordered: Record<string, unknown> = { name: file.name, description: file.description };
  if (file.model) ordered.model = file.model;
  ordered.answers = file.answers;
  if (file.files) ordered.files = file.files;
  ordered.steps = file.steps;
  return dumpYamlInOrder(ordered);
}

function dumpYamlInOrder(obj: Record<string, unknown>): string {
  // Presets are for people: keep the documented order rather than accelerate's sorted keys.
  return dumpYaml(obj, false);
}

/** What saving a preset did: the write, and the built-in it now hides, if any. */
export interface SavedPreset extends WriteResult {
  shadows: string | null;
}

/** Saves a user preset; an existing file with other content is backed up first. */
export async function savePresetFile(
  name: string,
  setup: Setup,
  description = '',
  given?: Partial<Answers>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SavedPreset> {
  if (!NAME_RE.test(name))
    throw new UsageError(`'${name}' is not a valid preset name`, 'use letters, digits, . _ - (e.g. my-zero3)');
  const dir = userPresetsDir(env);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.yaml`);
  const text = renderPresetFile(presetFileFor({ ...setup, name }, description, given));
  const result = await writeFileSafely(path, text);
  const builtin = join(presetsDir(), `${name}.yaml`);
  return { ...result, shadows: existsSync(builtin) ? builtin : null };
}

/** Saves a user preset (see savePresetFile); resolves with its path. */
export async function savePreset(
  name: string,
  setup: Setup,
  description = '',
  given?: Partial<Answers>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  return (await savePresetFile(name, setup, description, given, env)).path;
}

/** Deletes a user preset (after keeping a backup). Built-ins cannot be deleted. */
export async function deletePreset(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = userPresetsDir(env);
  for (const ext of ['.yaml', '.yml']) {
    const path = join(dir, name + ext);
    if (existsSync(path)) {
      const backup = `${path}.deleted-${timestamp()}`;
      await rename(path, backup);
      return backup;
    }
  }
  if (existsSync(join(presetsDir(), `${name}.yaml`))) {
    throw new UsageError(
      `'${name}' is a built-in preset and cannot be deleted`,
      'save a user preset under another name instead',
    );
  }
  throw new UsageError(`no user preset named '${name}'`, 'see `zerowiz preset list`');
}
