/**
 * `zerowiz explain`: every value accelerate and DeepSpeed will use for each step of a preset (or for an
 * accelerate YAML), with its source and the rule that decided it, and what changed since the last run. The
 * files are read here (the preset's configs as zerowiz would write them, a pinned or default accelerate
 * config, the JSON it names) and handed to the pure model (provenance.ts), one step at a time. The text is
 * built here too, so the CLI and the wizard's view show the same lines.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../text/index.js';
import { accelerateDefaultConfig } from '../fs/index.js';
import { printable } from '../text/index.js';
import { parseYamlQuietly, pathPresent, readUserFile } from '../fs/index.js';
import { noDeepSpeedConfigObject, noDeepSpeedConfigPath } from '../config/index.js';
import { compileSetup } from '../config/index.js';
import { isPlainObject } from '../config/index.js';
import { parseDeepSpeedJson } from '../config/index.js';
import { checkAccelerateConfig, checkDeepSpeedConfig } from '../config/index.js';
import { findPreset } from '../setups/index.js';
import {
  SOURCE_LABELS,
  UNKNOWN_SCRIPT,
  explainStep,
  type ConfigInput,
  type ExplainedValue,
  type Origin,
  type ScriptContext,
  type Source,
  type StepExplanation,
} from './provenance.js';
import { QUESTIONS, type Answers, type Question, type QuestionId } from '../config/index.js';
import { dsConfigReference, toLaunchCommands, type LaunchStep, type Setup } from '../config/index.js';

/** What is explained: a preset (or the wizard's setup), or an accelerate YAML. */
export interface ExplainTarget {
  kind: 'preset' | 'setup' | 'accelerate-config';
  /** The preset's name, or the YAML's path. */
  name: string;
  /** The file it was read from, or null (a built-in's is named too). */
  path: string | null;
}

/** What `explain` says. */
export interface ExplainReport {
  target: ExplainTarget;
  steps: StepExplanation[];
}

/** Where explain looks: the launch directory and environment, the script as described by flags. */
export interface ExplainContext {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  script: ScriptContext;
  /** Only this step. */
  step?: string;
  /** The processes that really run, when not num_processes (a launch that overrides it; the real tier). */
  worldSize?: number;
}

// ---------------------------------------------------------------------------------------------
// Reading files as accelerate reads them

/** A file's parsed content, or why it cannot be used. */
type Read = { ok: true; data: Record<string, unknown> } | { ok: false; problem: string };

function readYamlFile(path: string): Read {
  let text: string;
  try {
    text = readUserFile(path, 'accelerate config');
  } catch (e) {
    return { ok: false, problem: (e as Error).message };
  }
  try {
    const data = parseYamlQuietly(text, { version: '1.1' });
    return isPlainObject(data) ? { ok: true, data } : { ok: false, problem: 'it does not hold a mapping of keys' };
  } catch (e) {
    return { ok: false, problem: `not YAML: ${(e as Error).message.split('\n')[0]}` };
  }
}

function readJsonFile(path: string): Read {
  if (!pathPresent(path))
    return { ok: false, problem: `no such file (accelerate resolves it from the launch directory: ${path})` };
  let text: string;
  try {
    text = readUserFile(path, 'DeepSpeed config');
  } catch (e) {
    return { ok: false, problem: (e as Error).message };
  }
  const parsed = parseDeepSpeedJson(text);
  if (!parsed.ok) return { ok: false, problem: parsed.problem };
  return isPlainObject(parsed.data)
    ? { ok: true, data: parsed.data }
    : { ok: false, problem: 'it does not hold a JSON object' };
}

/** A file on disk as a config input: its keys come from it (`source`), named `path: key`. */
function fromDisk(read: Read, path: string, source: Source): ConfigInput | { problem: string } {
  if (!read.ok) return { problem: read.problem };
  return { data: read.data, origin: (key) => ({ source, where: `${path}: ${key}` }) };
}

// ---------------------------------------------------------------------------------------------
// Where a setup's values come from

/** Which answer writes a config key (the catalog's yamlKey/jsonKey), for a setup's attribution. */
function answerFor(file: 'yaml' | 'json', path: string): QuestionId | null {
  let best: { id: QuestionId; len: number } | null = null;
  for (const q of QUESTIONS as readonly Question[]) {
    for (const k of (file === 'yaml' ? q.yamlKey : q.jsonKey)?.split(', ') ?? []) {
      // The key itself, or a key inside a block it writes (activation_checkpointing.*).
      if ((path === k || path.startsWith(`${k}.`)) && (!best || k.length > best.len))
        best = { id: q.id as QuestionId, len: k.length };
    }
  }
  return best?.id ?? null;
}

/**
 * The origin of a key of a setup's own files: the answer that writes it, given in the preset (or by the
 * user: `answersLabel`), or zerowiz's default for it; keys kept from an import; keys zerowiz always writes.
 */
function setupOrigin(
  setup: Setup,
  given: Partial<Answers>,
  answersLabel: string,
  file: 'yaml' | 'json',
): (path: string) => Origin {
  const extra = file === 'yaml' ? setup.extra?.yaml : setup.extra?.json;
  return (path) => {
    const parts = path.split('.');
    let cur: unknown = extra;
    for (const p of parts) cur = isPlainObject(cur) ? cur[p] : undefined;
    if (cur !== undefined) return { source: 'preset', where: `kept from the imported file: ${path}` };
    const id = answerFor(file, path);
    if (id === null) return { source: 'zerowiz-default', where: `zerowiz writes ${path}` };
    if (id === 'ds_config_path' && setup.answers.ds_config_path === '')
      return { source: 'zerowiz-default', where: `the JSON zerowiz writes with the setup (${setup.files.dsConfig})` };
    const q = QUESTIONS.find((x) => x.id === id) as Question;
    const shown = q.format(setup.answers[id] as never);
    return id in given
      ? { source: 'preset', where: `${answersLabel}: ${id} ${shown}` }
      : { source: 'zerowiz-default', where: `${id} ${shown} (zerowiz's default, not set by ${answersLabel})` };
  };
}

/** The step input of one step of a setup: its argv, its configs as zerowiz writes them, the default config. */
function setupStepInput(
  setup: Setup,
  given: Partial<Answers>,
  answersLabel: string,
  step: LaunchStep,
  ctx: ExplainContext,
): Parameters<typeof explainStep>[0] {
  const cmd = toLaunchCommands({ ...setup, steps: [step] })[0]!;
  const at = (p: string) => resolve(ctx.cwd, p);
  const yamlPath = at(setup.files.accelerateConfig);
  const pinned = at(noDeepSpeedConfigPath(setup));
  const jsonRef = dsConfigReference(setup);
  const ownJson = setup.answers.ds_config_path === '' ? at(setup.files.dsConfig) : null;
  return {
    name: step.name,
    args: cmd.argv.slice(1),
    defaultConfig: defaultConfigInput(ctx),
    readConfig: (p) => {
      if (at(p) === yamlPath)
        return {
          data: compileSetup(setup).accelerateConfig,
          origin: setupOrigin(setup, given, answersLabel, 'yaml'),
        };
      if (at(p) === pinned)
        return {
          data: noDeepSpeedConfigObject(setup.answers),
          origin: (key) => ({ source: 'zerowiz-default', where: `zerowiz's config without DeepSpeed: ${key}` }),
        };
      return fromDisk(readYamlFile(at(p)), p, 'accelerate-yaml');
    },
    readJson: (p) => {
      if (ownJson !== null && at(p) === at(jsonRef))
        return {
          data: compileSetup(setup).deepSpeedJson,
          origin: setupOrigin(setup, given, answersLabel, 'json'),
        };
      return fromDisk(readJsonFile(at(p)), p, 'deepspeed-json');
    },
    env: ctx.env,
    script: ctx.script,
    ...(ctx.worldSize !== undefined ? { worldSize: ctx.worldSize } : {}),
  };
}

/** accelerate's default config file, as a step without --config_file finds it (null when there is none). */
function defaultConfigInput(ctx: ExplainContext): (ConfigInput & { path: string }) | null {
  const path = accelerateDefaultConfig(ctx.env as NodeJS.ProcessEnv);
  if (!existsSync(path)) return null;
  const read = readYamlFile(path);
  if (!read.ok) return null;
  return {
    path,
    data: read.data,
    origin: (key) => ({ source: 'default-config', where: `${path}: ${key}` }),
  };
}

// ---------------------------------------------------------------------------------------------
// The acceptance rules

/** Rules explainStep already reports in accelerate's own words (the finding would say it twice). */
const SAID_BY_THE_MODEL: ReadonlySet<string> = new Set(['ds-no-zero']);

/**
 * explainStep, with the acceptance rules (accept.ts: what accelerate and DeepSpeed accept, the rules `generate
 * --from` refuses with) run over the files the step reads: each error is one of the step's errors, in the
 * same words, each warning one of its warnings.
 */
function explainWithRules(input: Parameters<typeof explainStep>[0]): StepExplanation {
  let yaml: Record<string, unknown> | null = null;
  let json: Record<string, unknown> | null = null;
  const step = explainStep({
    ...input,
    readConfig: (p) => {
      const r = input.readConfig(p);
      if (!('problem' in r)) yaml = r.data;
      return r;
    },
    readJson: (p) => {
      const r = input.readJson(p);
      if (!('problem' in r)) json = r.data;
      return r;
    },
  });
  const y: Record<string, unknown> | null =
    yaml ?? (step.config.kind === 'default' ? (input.defaultConfig?.data ?? null) : null);
  const j: Record<string, unknown> | null = json;
  const worldSize = typeof y?.num_processes === 'number' ? { worldSize: y.num_processes } : {};
  const findings = [...(y ? checkAccelerateConfig(y) : []), ...(j ? checkDeepSpeedConfig(j, worldSize) : [])];
  for (const f of findings) {
    if (SAID_BY_THE_MODEL.has(f.rule)) continue;
    const list = f.level === 'error' ? step.errors : step.warnings;
    if (!list.includes(f.message)) list.push(f.message);
  }
  return step;
}

// ---------------------------------------------------------------------------------------------
// Explaining

/** The steps to explain (all, or the one --step names; an unknown name is bad input). */
function pick<T extends { name: string }>(steps: readonly T[], want: string | undefined): T[] {
  if (want === undefined) return [...steps];
  const hit = steps.filter((s) => s.name === want);
  if (hit.length === 0)
    throw new UsageError(
      `no step '${printable(want)}'`,
      `the steps are: ${steps.map((s) => s.name).join(', ') || '(none)'}`,
    );
  return hit;
}

/** A setup's steps (or, without any, the example step its launch lines show: `train.py` with its config). */
function stepsOf(setup: Setup): LaunchStep[] {
  return setup.steps.length > 0 ? setup.steps : [{ name: 'train', args: ['train.py'], usesConfig: true }];
}

/** Explains a setup (a preset's, a run record's, the wizard's): each step. */
export function explainSetup(
  setup: Setup,
  given: Partial<Answers>,
  target: ExplainTarget,
  ctx: ExplainContext,
  answersLabel = `preset ${setup.name}`,
): ExplainReport {
  return {
    target,
    steps: pick(stepsOf(setup), ctx.step).map((s) =>
      explainWithRules(setupStepInput(setup, given, answersLabel, s, ctx)),
    ),
  };
}

/**
 * Explains one `accelerate launch ARGS` command as written (ARGS: what follows `launch`): its --config_file (or
 * accelerate's default config) and the JSON it names are read from disk, relative to the launch directory.
 */
export function explainCommand(
  args: readonly string[],
  ctx: ExplainContext,
  name = 'accelerate launch',
): StepExplanation {
  const at = (p: string) => (isAbsolute(p) ? p : resolve(ctx.cwd, p));
  return explainWithRules({
    name,
    args,
    defaultConfig: defaultConfigInput(ctx),
    readConfig: (p) => fromDisk(readYamlFile(at(p)), p, 'accelerate-yaml'),
    readJson: (p) => fromDisk(readJsonFile(at(p)), p, 'deepspeed-json'),
    env: ctx.env,
    script: ctx.script,
    ...(ctx.worldSize !== undefined ? { worldSize: ctx.worldSize } : {}),
  });
}

/** Explains an accelerate YAML as `accelerate launch --config_file FILE` uses it (no steps: one run). */
export function explainAccelerateConfig(path: string, ctx: ExplainContext): ExplainReport {
  const abs = isAbsolute(path) ? path : resolve(ctx.cwd, path);
  const read = readYamlFile(abs);
  if (!read.ok) throw new UsageError(`${path}: ${read.problem}`, 'is this the right file?');
  if (ctx.step !== undefined)
    throw new UsageError(
      'an accelerate config has no steps',
      'leave --step out, or explain a preset (zerowiz preset list)',
    );
  const step = explainCommand(['--config_file', path, 'train.py'], ctx);
  return { target: { kind: 'accelerate-config', name: path, path: abs }, steps: [step] };
}

/** True for a file that is an accelerate config rather than a preset (it has accelerate's own keys). */
function isAccelerateConfig(path: string): boolean {
  const read = readYamlFile(path);
  return read.ok && ['distributed_type', 'compute_environment', 'deepspeed_config'].some((k) => k in read.data);
}

/** `explain NAME|FILE`: a preset (name or file) or an accelerate YAML. */
export function explainRef(ref: string, ctx: ExplainContext): ExplainReport {
  const abs = resolve(ctx.cwd, ref);
  if ((ref.includes('/') || /\.ya?ml$/i.test(ref)) && pathPresent(abs) && isAccelerateConfig(abs))
    return explainAccelerateConfig(ref, ctx);
  const p = findPreset(isAbsolute(ref) || ref.includes('/') ? abs : ref, ctx.env as NodeJS.ProcessEnv);
  return explainSetup(p.setup, p.given, { kind: 'preset', name: p.name, path: p.path }, ctx);
}

/** The script as explain assumes it unless flags describe it. */
export const DEFAULT_SCRIPT: ScriptContext = UNKNOWN_SCRIPT;

// ---------------------------------------------------------------------------------------------
// Since the last run

/** One value that differs between the last run and now. */
export interface ValueChange {
  step: string;
  key: string;
  before: { value: unknown; source: Source; where: string } | null;
  after: { value: unknown; source: Source; where: string } | null;
}

/** What changed, value by value, between two explanations of the same steps (a key in one only counts too). */
export function diffReports(before: ExplainReport, after: ExplainReport): ValueChange[] {
  const out: ValueChange[] = [];
  const names = new Set([...before.steps.map((s) => s.name), ...after.steps.map((s) => s.name)]);
  for (const name of names) {
    const b = new Map((before.steps.find((s) => s.name === name)?.values ?? []).map((v) => [v.key, v]));
    const a = new Map((after.steps.find((s) => s.name === name)?.values ?? []).map((v) => [v.key, v]));
    for (const key of new Set([...b.keys(), ...a.keys()])) {
      const x = b.get(key);
      const y = a.get(key);
      if (x && y && JSON.stringify(x.value) === JSON.stringify(y.value)) continue;
      const side = (v: ExplainedValue | undefined) => (v ? { value: v.value, source: v.source, where: v.where } : null);
      out.push({ step: name, key, before: side(x), after: side(y) });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Text

/** A value as the text shows it. */
export function showValue(v: unknown): string {
  if (v === null) return '(unknown)';
  if (v === Number.POSITIVE_INFINITY) return 'inf';
  if (typeof v === 'number' && Number.isInteger(v) && v >= 1e5 && /^[1-9]0*$/.test(String(v)))
    return `${String(v)[0]}e${String(v).length - 1}`;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function originText(o: { source: Source; where: string }): string {
  return o.where ? `${SOURCE_LABELS[o.source]}: ${o.where}` : SOURCE_LABELS[o.source];
}

/** Sources whose values say enough by where they come from (the rest also print their rule). */
const PLAIN: ReadonlySet<Source> = new Set<Source>([
  'deepspeed-json',
  'accelerate-yaml',
  'preset',
  'zerowiz-default',
  'default-config',
]);

/** The text of a report: per step, its config, every value with its source, the batch identity, the problems. */
export function explainLines(r: ExplainReport): string[] {
  const out: string[] = [];
  for (const s of r.steps) {
    const cfg =
      s.config.kind === 'none'
        ? 'no accelerate config'
        : `${s.config.kind === 'default' ? "accelerate's default config " : 'config '}${s.config.path}`;
    out.push(
      `step ${s.name} · ${cfg}${s.config.json ? ` · DeepSpeed JSON ${s.config.json}` : ''}${s.deepspeed ? '' : ' · runs without DeepSpeed'}`,
    );
    const defaults = s.values.filter((v) => v.source === 'deepspeed-default');
    for (const v of s.values.filter((x) => x.source !== 'deepspeed-default')) {
      out.push(`  ${v.key} = ${showValue(v.value)}   (${originText(v)})`);
      if (!PLAIN.has(v.source) || v.overridden.length > 0) out.push(`      why: ${v.rule}`);
      for (const o of v.overridden) out.push(`      over: ${showValue(o.value)} (${originText(o)})`);
    }
    if (defaults.length > 0)
      out.push(
        `  DeepSpeed's defaults (absent from the config): ${defaults.map((v) => `${v.key} ${showValue(v.value)}`).join(', ')}`,
      );
    if (s.batch) {
      const b = s.batch;
      const f = (x: { value: number | null; source: Source; where: string }) => `${x.value ?? '?'} [${originText(x)}]`;
      out.push(
        `  batch: train_batch_size ${f(b.trainBatchSize)} = micro ${f(b.microBatch)} x accumulation ${f(b.accumulation)} x GPUs ${f(b.worldSize)} · ${b.holds === null ? 'not known until the script runs' : b.holds ? 'holds' : 'DOES NOT HOLD: DeepSpeed refuses it'}`,
      );
    }
    for (const w of s.warnings) out.push(`  warning: ${w}`);
    for (const e of s.errors) out.push(`  error: ${e}`);
  }
  return out.map(printable);
}

/** The text of a diff since the last run. */
export function diffLines(changes: readonly ValueChange[], since: string): string[] {
  if (changes.length === 0) return [`since ${since}: nothing changed`];
  const side = (x: ValueChange['before']) => (x ? `${showValue(x.value)} (${originText(x)})` : '(absent)');
  return [
    `since ${since}: ${changes.length} value(s) changed`,
    ...changes.map((c) => printable(`  ${c.step}: ${c.key}: ${side(c.before)} -> ${side(c.after)}`)),
  ];
}

/** The answers a JSON report shows per value (the documented `--json` shape). */
export function reportJson(r: ExplainReport): Record<string, unknown> {
  return {
    target: r.target,
    steps: r.steps.map((s) => ({
      name: s.name,
      config: s.config,
      deepspeed: s.deepspeed,
      values: s.values.map((v) => ({
        key: v.key,
        value: v.value === Number.POSITIVE_INFINITY ? 'Infinity' : v.value,
        source: v.source,
        where: v.where,
        rule: v.rule,
        overridden: v.overridden,
      })),
      batch: s.batch,
      errors: s.errors,
      warnings: s.warnings,
    })),
  };
}
