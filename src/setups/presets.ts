/**
 * Presets: YAML files holding the answers (question ids), a model, the files to write and the launch
 * steps. Built-ins live in presets/ (data only); the user's in $XDG_CONFIG_HOME/zerowiz/presets.
 * A broken user preset is reported (file, key, problem) and skipped, never deleted or overwritten.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { UsageError, fileError } from '../text/index.js';
import { NearMiss } from '../text/index.js';
import { dumpYaml } from '../config/index.js';
import { presetsDir, userPresetsDir } from '../fs/index.js';
import {
  UntrustedPathError,
  lstatOrNull,
  mkdirPrivate,
  ownedByMe,
  untrustedDirProblem,
  userName,
} from '../fs/index.js';
import { secretsIn } from '../text/index.js';
import {
  AnswerKeyError,
  QUESTIONS,
  parseAnswers,
  withDefaults,
  type Answers,
  type Question,
  type QuestionId,
} from '../config/index.js';
import { DEFAULT_FILES, SAFE_NAME_RE, type LaunchStep, type Setup } from '../config/index.js';
import { printable } from '../text/index.js';
import { parseYamlQuietly, pathPresent, readUserFile } from '../fs/index.js';
import { moveAside, writeFilesTogether, type WriteResult } from '../fs/index.js';
import { timestamp } from '../text/index.js';

/** Files in presets/ that are data of another kind, not presets. */
const NOT_PRESETS = new Set(['models.yaml', 'templates.yaml']);
/** The longest preset name: file names stay well inside the file system's limit with the suffixes added. */
export const MAX_PRESET_NAME_CHARS = 100;
const PRESET_EXT_RE = /\.ya?ml$/i;

/** What is wrong with a name (the first thing), or null when it is a good one. */
function nameProblem(name: string): string | null {
  if (name === '') return 'it is empty';
  if (name.length > MAX_PRESET_NAME_CHARS)
    return `it is ${name.length} characters long (at most ${MAX_PRESET_NAME_CHARS})`;
  if (name.includes('/')) return "it holds '/' (a preset file is given by its path with .yaml, e.g. ./my.yaml)";
  if (!/^[A-Za-z0-9]/.test(name))
    return `it starts with '${printable(name[0]!)}' (a name starts with a letter or digit)`;
  const bad = [...name].find((c) => !/[A-Za-z0-9._-]/.test(c));
  if (bad !== undefined) return `it holds ${bad === ' ' ? 'a space' : `'${printable(bad)}'`}`;
  return SAFE_NAME_RE.test(name) ? null : 'it is not letters, digits, . _ -';
}

/**
 * The one check of a preset name, used by every verb: letters, digits, . _ - (no path, nothing hidden), at
 * most MAX_PRESET_NAME_CHARS. `x.yaml` names the preset x. Returns the name without the extension.
 */
export function presetName(ref: string): string {
  const name = ref.replace(PRESET_EXT_RE, '');
  const why = nameProblem(name);
  if (why !== null)
    throw new UsageError(
      `'${printable(ref.length > 60 ? `${ref.slice(0, 60)}…` : ref)}' is not a preset name: ${why}`,
      `a name is letters, digits, . _ - (starting with a letter or digit, at most ${MAX_PRESET_NAME_CHARS}), e.g. my-zero3; see \`zerowiz preset list\``,
    );
  return name;
}

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const stepSchema = z.strictObject({
  name: z.string().check(z.regex(SAFE_NAME_RE, 'a step name is letters, digits, . _ -')),
  uses_config: z._default(z.boolean(), false),
  args: z
    .array(z.pipe(z.union([z.string(), z.number()]), z.transform(String)))
    .check(z.minLength(1, 'a step needs at least the training script')),
});
/** The preset file format (validated with zod). */
export const presetFileSchema = z.strictObject({
  name: z.optional(z.string().check(z.regex(SAFE_NAME_RE, 'a preset name is letters, digits, . _ -'))),
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
  /** Where a run's notifications go (src/notify/targets.ts): URLs, command lines or argument arrays. */
  notify: z.optional(z.array(z.union([z.string(), z.array(z.string())]))),
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
  /** The notification targets the preset names (`notify:`), as written. */
  notify: (string | string[])[];
}

/** A preset file that could not be read: where, which key, what is wrong. */
export interface PresetProblem {
  path: string;
  key: string;
  problem: string;
}

/** Reads and checks one preset file. Throws a PresetProblem-shaped UsageError if it is broken. */
export function readPresetFile(path: string, source: Preset['source']): Preset {
  let text: string;
  try {
    text = readUserFile(path, 'preset');
  } catch (e) {
    const message = (e as Error).message;
    // The reader names the file; the problem is what follows it.
    const problem = message.includes(`${path}: `)
      ? message.slice(message.indexOf(`${path}: `) + path.length + 2)
      : message;
    throw presetProblem(path, '', problem.replace(/^cannot read preset /, ''));
  }
  return parsePresetText(text, path, source);
}

/** A broken preset as an error: one line (file, key, problem; sanitized) and the problem for listings. */
function presetProblem(path: string, key: string, problem: string): UsageError {
  const p: PresetProblem = { path: printable(path), key: printable(key), problem: printable(problem) };
  return Object.assign(
    new UsageError(
      `preset ${p.path}: ${p.key ? `${p.key}: ` : ''}${p.problem}`,
      'fix the file (it was left as it is), or see the preset format in docs/presets.md',
    ),
    { problem: p },
  );
}

/** Checks the text of a preset file (see readPresetFile). */
export function parsePresetText(text: string, path: string, source: Preset['source']): Preset {
  const fail = (key: string, problem: string): never => {
    throw presetProblem(path, key, problem);
  };
  let data: unknown;
  try {
    data = parseYamlQuietly(text);
    // Launch arguments are strings exactly as written: `1e-4` must not become 0.0001.
    const asText = parseYamlQuietly(text, { schema: 'failsafe' }) as { steps?: Array<{ args?: unknown }> } | null;
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
  return { name, description: printable(file.description), source, path, setup, given, notify: file.notify ?? [] };
}

/** The preset files of a folder (every *.yaml / *.yml, whatever kind of file), and why the folder cannot be read. */
function yamlFiles(dir: string): { paths: string[]; problem: PresetProblem | null } {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { paths: [], problem: null };
    const err = fileError(e, dir, 'presets folder');
    return {
      paths: [],
      problem: {
        path: printable(dir),
        key: '',
        problem: printable(err.message.replace(/^presets folder [^:]*: /, '')),
      },
    };
  }
  const paths = names
    .filter((f) => PRESET_EXT_RE.test(f) && !NOT_PRESETS.has(f))
    .sort((x, y) => x.replace(PRESET_EXT_RE, '').localeCompare(y.replace(PRESET_EXT_RE, '')))
    .map((f) => join(dir, f));
  return { paths, problem: null };
}

/**
 * Why the user's presets cannot be trusted, or null: a preset names commands zerowiz runs, so the folders
 * holding them (`zerowiz`, `zerowiz/presets`) must be the user's own and writable by no one else, and each
 * preset file the user's own (safe-fs.ts untrustedDirProblem). `path` is a preset file, or null for the
 * folders alone.
 */
function userPresetsProblem(env: NodeJS.ProcessEnv, path: string | null): UntrustedPathError | null {
  const dir = userPresetsDir(env);
  for (const d of [dirname(dir), dir]) {
    const why = untrustedDirProblem(d);
    if (why)
      return new UntrustedPathError(
        d,
        `${why}; zerowiz reads and writes your presets only in a folder that is yours alone`,
        `check what it holds, then make it yours and private (chmod go-w), or set XDG_CONFIG_HOME to a folder of your own`,
      );
  }
  const st = path ? lstatOrNull(path) : null;
  if (st && !ownedByMe(st))
    return new UntrustedPathError(
      path!,
      `belongs to ${userName(st.uid)}, not to you; zerowiz runs only presets that are yours`,
      'look at it and remove it, or save your own preset under that name',
    );
  return null;
}

/** Every preset: built-ins then the user's, with the problems of the ones that could not be read. */
export function listPresets(env: NodeJS.ProcessEnv = process.env): { presets: Preset[]; problems: PresetProblem[] } {
  const presets: Preset[] = [];
  const problems: PresetProblem[] = [];
  for (const [dir, source] of [
    [presetsDir(), 'builtin'],
    [userPresetsDir(env), 'user'],
  ] as const) {
    const untrusted = source === 'user' ? userPresetsProblem(env, null) : null;
    if (untrusted) {
      problems.push({
        path: printable(untrusted.path),
        key: '',
        problem: printable(untrusted.message.slice(untrusted.path.length + 1)),
      });
      continue;
    }
    const { paths, problem } = yamlFiles(dir);
    if (problem) problems.push(problem);
    for (const path of paths) {
      try {
        if (source === 'user') {
          const foreign = userPresetsProblem(env, path);
          if (foreign) throw presetProblem(path, '', foreign.message.slice(path.length + 1));
        }
        const bad = basename(path).replace(PRESET_EXT_RE, '');
        if (!SAFE_NAME_RE.test(bad) || bad.length > MAX_PRESET_NAME_CHARS)
          throw presetProblem(path, '', 'the file name is not a preset name (letters, digits, . _ -)');
        presets.push(readPresetFile(path, source));
      } catch (e) {
        const problem = (e as { problem?: PresetProblem }).problem;
        problems.push(problem ?? { path: printable(path), key: '', problem: printable((e as Error).message) });
      }
    }
  }
  return { presets, problems };
}

/** The user's preset file for a name: `NAME.yaml`, else an existing `NAME.yml`. */
function userPresetPath(name: string, env: NodeJS.ProcessEnv): string {
  const dir = userPresetsDir(env);
  const yaml = join(dir, `${name}.yaml`);
  const yml = join(dir, `${name}.yml`);
  return !pathPresent(yaml) && pathPresent(yml) ? yml : yaml;
}

/**
 * Finds a preset by name (user presets shadow built-ins) or by file path. A ref with a slash is a file;
 * `x.yaml` is the file ./x.yaml when there is one, else the preset x.
 */
export function findPreset(ref: string, env: NodeJS.ProcessEnv = process.env): Preset {
  const isPath = ref.includes('/') || ref.includes('\\');
  if (isPath || (PRESET_EXT_RE.test(ref) && pathPresent(ref))) {
    if (!pathPresent(ref))
      throw new UsageError(
        `no preset file '${printable(ref)}'`,
        'check the path, or give a preset name from `zerowiz preset list`',
      );
    return readPresetFile(ref, 'file');
  }
  const name = presetName(ref);
  const user = userPresetPath(name, env);
  if (pathPresent(user)) {
    const untrusted = userPresetsProblem(env, user);
    if (untrusted) throw untrusted;
    return readPresetFile(user, 'user');
  }
  for (const ext of ['.yaml', '.yml']) {
    const path = join(presetsDir(), name + ext);
    if (existsSync(path) && !NOT_PRESETS.has(basename(path))) return readPresetFile(path, 'builtin');
  }
  throw new NearMiss(
    `no preset named '${name}'`,
    ref,
    listPresets(env).presets.map((p) => p.name),
    'see `zerowiz preset list` for the names',
  );
}

/** Loads a preset (name or file) as a Setup. Throws UsageError when it is missing or broken. */
export async function loadPreset(ref: string, env: NodeJS.ProcessEnv = process.env): Promise<Setup> {
  return findPreset(ref, env).setup;
}

/** The preset file for a setup: the answers that differ from the defaults, the model, files and steps. */
export function presetFileFor(
  setup: Setup,
  description = '',
  given?: Partial<Answers>,
  /** The `notify:` list to keep (a preset saved from another keeps its targets). */
  notify: readonly (string | string[])[] = [],
): PresetFile {
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
  if (notify.length > 0) file.notify = notify.map((t) => (Array.isArray(t) ? [...t] : t));
  return file;
}

/** The `steps:` block of a preset file for these steps (what `preset import-steps FILE` prints). */
export function renderStepsYaml(steps: readonly LaunchStep[]): string {
  return dumpYamlInOrder({ steps: steps.map((s) => ({ name: s.name, uses_config: s.usesConfig, args: s.args })) });
}

/** Renders a preset file in the documented layout (name, description, model, answers, files, steps, notify). */
export function renderPresetFile(file: PresetFile): string {
  const ordered: Record<string, unknown> = { name: file.name, description: file.description };
  if (file.model) ordered.model = file.model;
  ordered.answers = file.answers;
  if (file.files) ordered.files = file.files;
  ordered.steps = file.steps;
  if (file.notify && file.notify.length > 0) ordered.notify = file.notify;
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

/**
 * Saves a user preset; an existing file with other content is backed up first. A file there that is not a
 * readable preset is never replaced (refused with its problem), nor is a symbolic link.
 */
export async function savePresetFile(
  name: string,
  setup: Setup,
  description = '',
  given?: Partial<Answers>,
  env: NodeJS.ProcessEnv = process.env,
  notify?: readonly (string | string[])[],
): Promise<SavedPreset> {
  const clean = presetName(name);
  const path = userPresetPath(clean, env);
  const untrusted = userPresetsProblem(env, path);
  if (untrusted) throw untrusted;
  // Folders zerowiz makes for presets are the user's alone (0700 whatever the umask): presets name commands.
  mkdirPrivate(dirname(path));
  // Without a list given, the preset replaced keeps its own: a save from the wizard or `preset save NAME` sets the
  // setup, not where its runs' notifications go.
  const text = (old: string | null) =>
    renderPresetFile(presetFileFor({ ...setup, name: clean }, description, given, notify ?? notifyKept(old, path)));
  const guard = (old: string) => {
    try {
      parsePresetText(old, path, 'user');
    } catch (e) {
      const p = (e as { problem?: PresetProblem }).problem;
      throw new UsageError(
        `${printable(path)} exists and is not a preset zerowiz can read (${p ? `${p.key ? `${p.key}: ` : ''}${p.problem}` : printable((e as Error).message)}); it was left as it is`,
        'fix that file or move it away, or save under another name',
      );
    }
  };
  // A preset whose steps pass a secret (../redact.ts) is the user's alone: 0600 whatever the umask.
  const secret = setup.steps.some((s) => secretsIn(s.args).length > 0);
  const [result] = await writeFilesTogether([{ path, text, guard, ...(secret ? { mode: 0o600 } : {}) }]);
  const builtin = join(presetsDir(), `${clean}.yaml`);
  return { ...result!, shadows: existsSync(builtin) ? builtin : null };
}

/** The `notify:` list of the preset a save replaces (none when there is no file, or it is not a readable preset). */
function notifyKept(old: string | null, path: string): (string | string[])[] {
  if (old === null) return [];
  try {
    return parsePresetText(old, path, 'user').notify;
  } catch {
    return [];
  }
}

/**
 * Saves a user preset (see savePresetFile); resolves with its path. `from` names the preset the setup came from
 * (the wizard's start): its `notify:` list goes with it, as `preset save NAME --preset FROM` keeps it; without
 * one, a preset replaced keeps its own.
 */
export async function savePreset(
  name: string,
  setup: Setup,
  description = '',
  given?: Partial<Answers>,
  env: NodeJS.ProcessEnv = process.env,
  from: string | null = null,
): Promise<string> {
  return (await savePresetFile(name, setup, description, given, env, from === null ? undefined : notifyOf(from, env)))
    .path;
}

/** The `notify:` list of a preset, or none when it can no longer be read (deleted or broken since it was loaded). */
function notifyOf(name: string, env: NodeJS.ProcessEnv): (string | string[])[] {
  try {
    return findPreset(name, env).notify;
  } catch {
    return [];
  }
}

/**
 * Deletes a user preset: renames it to `NAME.yaml.deleted-<time>` (`-1`, `-2`, ... when that exists, so no
 * deleted copy is ever replaced). Built-ins cannot be deleted.
 */
export async function deletePreset(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const clean = presetName(name);
  const path = userPresetPath(clean, env);
  const untrusted = userPresetsProblem(env, path);
  if (untrusted) throw untrusted;
  if (pathPresent(path)) return moveAside(path, `${path}.deleted-${timestamp()}`);
  if (existsSync(join(presetsDir(), `${clean}.yaml`))) {
    throw new UsageError(
      `'${clean}' is a built-in preset and cannot be deleted`,
      'save a user preset under another name instead',
    );
  }
  throw new UsageError(`no user preset named '${clean}'`, 'see `zerowiz preset list`');
}
