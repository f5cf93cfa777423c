/**
 * Every value accelerate and DeepSpeed will use for one `accelerate launch` step, and where each came from.
 * A pure model of accelerate 1.15.0 on the way from the files to `deepspeed.initialize`:
 *
 * 1. `accelerate launch` (commands/launch.py _validate_launch_command): the step's flags, then the accelerate
 *    config (its `--config_file`, else accelerate's default config file), a flag winning over the YAML;
 * 2. the launcher (utils/launch.py prepare_deepspeed_cmd_env): ACCELERATE_* variables from those arguments, and
 *    the variables of the environment it inherits where no argument sets them;
 * 3. DeepSpeedPlugin (utils/dataclasses.py): the JSON (or the config it builds from the YAML's keys), the keys
 *    it refuses beside a JSON, its values written into the JSON's "auto"s, zero.Init, set_mixed_precision;
 * 4. Accelerator.prepare (accelerator.py _prepare_deepspeed): the "auto"s filled from the script (the
 *    DataLoader's batch size, Accelerator(gradient_accumulation_steps=...), model.config.hidden_size);
 * 5. DeepSpeed: its defaults for what is still absent, and the batch identity it asserts.
 *
 * The key table (keys.ts) says which key is which. effective.ts reads the dict this model builds, so the real
 * accelerate tier (__tests__/real), which checks that dict against the real accelerate, checks this model.
 */
import { isPlainObject } from '../config/index.js';
import {
  CONFIG_KEYS,
  HIDDEN_SIZE_KEYS,
  PLUGIN_KEYS,
  autoFill,
  canonicalPath,
  defaultOf,
  keyInfo,
  mustKey,
  type KeyInfo,
} from '../config/index.js';
import { groupArgs } from '../config/index.js';

/** Where a value comes from. */
export type Source =
  | 'deepspeed-default'
  | 'accelerate-default'
  | 'preset'
  | 'zerowiz-default'
  | 'accelerate-yaml'
  | 'deepspeed-json'
  | 'launch-flag'
  | 'environment'
  | 'default-config'
  | 'script';

/** What each source is, in words (the text output's legend). */
export const SOURCE_LABELS: Record<Source, string> = {
  'deepspeed-default': "DeepSpeed's default",
  'accelerate-default': "accelerate's default",
  preset: 'the preset',
  'zerowiz-default': "zerowiz's default",
  'accelerate-yaml': 'the accelerate YAML',
  'deepspeed-json': 'the DeepSpeed JSON',
  'launch-flag': 'a launch flag',
  environment: 'the environment',
  'default-config': "accelerate's default config",
  script: 'filled at prepare() from the script',
};

/** A source and exactly where: a file and key, a flag, a variable, a script call. */
export interface Origin {
  source: Source;
  where: string;
}

/** A value that lost to another, and where it came from. */
export interface Overridden {
  value: unknown;
  source: Source;
  where: string;
}

/** One value the step will use. */
export interface ExplainedValue {
  /** A DeepSpeed key (dotted, as in the dict DeepSpeed gets) or `launch.<argument>` for accelerate's own. */
  key: string;
  /** The value; null when the script decides it and the script was not described (--script-*). */
  value: unknown;
  source: Source;
  where: string;
  /** The rule that decided it (precedence, a refusal, the accumulation sync, the "auto" fill, a default). */
  rule: string;
  /** The values it won over, in the order they lost. */
  overridden: Overridden[];
}

/** One factor of DeepSpeed's batch identity. */
export interface BatchFactor {
  value: number | null;
  source: Source;
  where: string;
  rule: string;
}

/** train_batch_size = micro batch x gradient accumulation x world size, each with its source. */
export interface BatchIdentity {
  trainBatchSize: BatchFactor;
  microBatch: BatchFactor;
  accumulation: BatchFactor;
  worldSize: BatchFactor;
  /** Whether DeepSpeed's assertion holds; null while a factor is unknown. */
  holds: boolean | null;
}

/** What the script does that accelerate fills "auto"s from; null: not known (the value is then unknown). */
export interface ScriptContext {
  /** The DataLoader's batch_size. */
  batchSize: number | null;
  /** Accelerator(gradient_accumulation_steps=N); null: the script passes none (accelerate's 1). */
  accumulation: number | null;
  /** Accelerator(mixed_precision=...); null: none passed. */
  mixedPrecision: 'no' | 'fp16' | 'bf16' | 'fp8' | null;
  /** model.config.hidden_size; null: not known; 'none': the model has no config (accelerate raises). */
  hiddenSize: number | 'none' | null;
  /** A torch optimizer is passed to prepare() (accelerate then sets zero_allow_untested_optimizer). */
  torchOptimizer: boolean;
}

/** The script as zerowiz assumes it when nothing says otherwise. */
export const UNKNOWN_SCRIPT: ScriptContext = {
  batchSize: null,
  accumulation: null,
  mixedPrecision: null,
  hiddenSize: null,
  torchOptimizer: true,
};

/** A parsed config file and how its keys are attributed. */
export interface ConfigInput {
  data: Record<string, unknown>;
  /** Where a key (dotted path in the file) comes from. */
  origin: (path: string) => Origin;
}

/** Everything one step's values depend on. */
export interface StepInput {
  name: string;
  /** The step's arguments after `accelerate launch` (zerowiz's --config_file included). */
  args: readonly string[];
  /** How the step finds its accelerate config when its args name none: the default config, or none. */
  defaultConfig: (ConfigInput & { path: string }) | null;
  /** Reads the accelerate config a `--config_file` names (null: it does not exist or cannot be read, with why). */
  readConfig: (path: string) => ConfigInput | { problem: string };
  /** Reads the DeepSpeed JSON a config names, resolved from the launch directory. */
  readJson: (path: string) => ConfigInput | { problem: string };
  /** The environment the launch inherits (its ACCELERATE_* variables count). */
  env: Readonly<Record<string, string | undefined>>;
  script: ScriptContext;
  /** The processes that really run, when not num_processes (a launch that overrides it; the real tier). */
  worldSize?: number;
}

/** Everything one step will use. */
export interface StepExplanation {
  name: string;
  /** The accelerate config the step runs with, and how it found it. */
  config: { kind: 'file' | 'default' | 'none'; path: string | null; json: string | null };
  /** Whether accelerate runs the step under DeepSpeed. */
  deepspeed: boolean;
  values: ExplainedValue[];
  batch: BatchIdentity | null;
  /** What makes accelerate or DeepSpeed refuse the step (the dict is then as far as it got). */
  errors: string[];
  warnings: string[];
  /** The dict handed to deepspeed.initialize (steps_per_print is Infinity), null without DeepSpeed. */
  dict: Record<string, unknown> | null;
  /** deepspeed.zero.Init on (zero3_init_flag after accelerate's stage check). */
  zeroInit: boolean;
  /** The Accelerator's gradient accumulation after prepare(). */
  accumulation: number | null;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const ACCEL_DEFAULT = (where: string): Origin => ({ source: 'accelerate-default', where });
const DS_DEFAULT: Origin = { source: 'deepspeed-default', where: 'DeepSpeed 0.19.5' };

function getAt(obj: Record<string, unknown>, path: string): unknown {
  let cur: unknown = obj;
  for (const p of path.split('.')) cur = isPlainObject(cur) ? cur[p] : undefined;
  return cur;
}

function hasAt(obj: Record<string, unknown>, path: string): boolean {
  const parts = path.split('.');
  let cur: unknown = obj;
  for (const p of parts.slice(0, -1)) cur = isPlainObject(cur) ? cur[p] : undefined;
  return isPlainObject(cur) && parts[parts.length - 1]! in cur;
}

function setAt(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    if (!isPlainObject(cur[p])) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

function leaves(v: unknown, path: string, out: string[]): string[] {
  if (isPlainObject(v) && Object.keys(v).length > 0)
    for (const [k, x] of Object.entries(v)) leaves(x, path ? `${path}.${k}` : k, out);
  else if (path) out.push(path);
  return out;
}

/** A value as a rule or message writes it. */
function shown(v: unknown): string {
  if (v === Number.POSITIVE_INFINITY) return 'inf';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The launch options before the script, by accelerate's argument name (`-` read as `_`, as accelerate does). */
function launchOptions(args: readonly string[]): Map<string, { value: string | null; text: string }> {
  const out = new Map<string, { value: string | null; text: string }>();
  for (const g of groupArgs(args)) {
    if (g.role !== 'launch' || g.flag === null || !g.flag.startsWith('--')) continue;
    const name = g.flag.slice(2).replace(/-/g, '_');
    if (!out.has(name)) out.set(name, { value: g.value, text: g.value === null ? g.flag : `${g.flag} ${g.value}` });
  }
  return out;
}

/** A flag's or variable's text as the launcher's argparse types it (int, float, or the string). */
function typed(k: KeyInfo | undefined, text: string): unknown {
  if (k?.type === 'int' && /^-?[0-9]+$/.test(text.trim())) return Number(text);
  if (k?.type === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}

const TRUE_RE = /^(y|yes|t|true|on|1)$/i;

// ---------------------------------------------------------------------------------------------
// The model

/** The provenance of each leaf of the dict DeepSpeed gets. */
class Dict {
  readonly data: Record<string, unknown> = {};
  readonly prov = new Map<string, { origin: Origin; rule: string; overridden: Overridden[] }>();

  load(json: Record<string, unknown>, origin: (path: string) => Origin, rule: string): void {
    Object.assign(this.data, structuredClone(json));
    for (const p of leaves(json, '', [])) this.prov.set(p, { origin: origin(p), rule, overridden: [] });
  }

  set(path: string, value: unknown, origin: Origin, rule: string): void {
    const before = this.prov.get(path);
    const overridden: Overridden[] = [];
    if (before && hasAt(this.data, path))
      overridden.push(...before.overridden, {
        value: getAt(this.data, path),
        source: before.origin.source,
        where: before.origin.where,
      });
    setAt(this.data, path, value);
    for (const p of leaves(value, path, []))
      this.prov.set(p, { origin, rule, overridden: p === path ? overridden : [] });
  }

  /** Records a value that lost to the one at `path` (which stays). */
  lost(path: string, value: unknown, origin: Origin, rule: string): void {
    const p = this.prov.get(path);
    if (!p) return;
    p.overridden.push({ value, source: origin.source, where: origin.where });
    p.rule = rule;
  }
}

/** One accelerate argument as the launch resolves it: the value and its origin, and what it won over. */
interface Arg {
  value: unknown;
  origin: Origin;
  rule: string;
  overridden: Overridden[];
}

/** One step on its way through the model: what it read so far, and what it found. */
interface Walk {
  input: StepInput;
  /** The launch options before the script, by accelerate's argument name. */
  opts: ReturnType<typeof launchOptions>;
  env: StepInput['env'];
  errors: string[];
  warnings: string[];
  values: ExplainedValue[];
  /** The accelerate config the step runs with (null: none). */
  cfg: ConfigInput | null;
  config: StepExplanation['config'];
  /** Its data ({} without one), and its deepspeed_config block. */
  yaml: Record<string, unknown>;
  ds: Record<string, unknown>;
}

/** accelerate launch's own values for the step (step 2). */
interface LaunchArgs {
  useDeepSpeed: boolean;
  numProcesses: Arg;
  mixedPrecision: Arg;
  /** The mixed precision comes from the accelerate config (a key refused beside a JSON). */
  mixedPrecisionFromConfig: boolean;
  worldSize: number | null;
}

/** Explains one step: see the module comment. Each numbered stage there is one step of this pipeline. */
export function explainStep(input: StepInput): StepExplanation {
  const w = readAccelerateConfig(input);
  const launch = launchArgs(w);
  if (!launch.useDeepSpeed) return withoutDeepSpeed(w, launch);
  const plugin = new Map<string, Arg>(PLUGIN_KEYS.map((k) => [k.path, pluginArg(w, k)]));
  const zero3Init = zero3InitArg(w);
  const dict = deepSpeedDict(w, plugin, launch);
  const { stage, zeroInit } = zeroInitOf(w, dict, zero3Init);
  setMixedPrecision(w, dict, launch.mixedPrecision);
  const accumulation = prepareFills(w, dict, plugin, launch.worldSize);
  return deepSpeedReport(w, dict, launch, { stage, zeroInit, accumulation });
}

/** A value of the step as accelerate launch resolves it, under `launch.KEY`. */
function pushArg(w: Walk, key: string, a: Arg): void {
  w.values.push({
    key: `launch.${key}`,
    value: a.value,
    source: a.origin.source,
    where: a.origin.where,
    rule: a.rule,
    overridden: a.overridden,
  });
}

/** An accelerate argument: the flag, else the YAML, else `fallback`. */
function arg(w: Walk, name: string, yamlPath: string, fallback: () => Arg): Arg {
  const { cfg, yaml } = w;
  const flag = w.opts.get(name);
  const k = keyInfo('yaml', yamlPath);
  const inYaml = cfg !== null && hasAt(yaml, yamlPath) && getAt(yaml, yamlPath) !== null;
  if (flag) {
    const overridden: Overridden[] = inYaml ? [{ value: getAt(yaml, yamlPath), ...cfg!.origin(yamlPath) }] : [];
    return {
      value: flag.value === null ? true : typed(k, flag.value),
      origin: { source: 'launch-flag', where: flag.text },
      rule: inYaml
        ? 'a launch flag wins over the accelerate config (accelerate launch never overwrites a flag given on the command line)'
        : 'given on the command line',
      overridden,
    };
  }
  if (inYaml)
    return {
      value: getAt(yaml, yamlPath),
      origin: cfg!.origin(yamlPath),
      rule: 'read from the accelerate config (no launch flag overrides it)',
      overridden: [],
    };
  return fallback();
}

/** A value nothing sets: accelerate's default (`what`). */
function none(what: string, value: unknown = null): Arg {
  return { value, origin: ACCEL_DEFAULT(what), rule: 'nothing sets it', overridden: [] };
}

/** A value from a variable of the environment. */
function envArg(name: string, text: string, value: unknown, rule: string): Arg {
  return { value, origin: { source: 'environment', where: `${name}=${text}` }, rule, overridden: [] };
}

/** 1. Which accelerate config: --config_file, else accelerate's default config file (unless --cpu). */
function readAccelerateConfig(input: StepInput): Walk {
  const opts = launchOptions(input.args);
  const errors: string[] = [];
  let cfg: ConfigInput | null = null;
  let config: StepExplanation['config'] = { kind: 'none', path: null, json: null };
  const cfgFlag = opts.get('config_file');
  if (cfgFlag?.value) {
    const read = input.readConfig(cfgFlag.value);
    if ('problem' in read) {
      errors.push(`accelerate cannot read --config_file ${cfgFlag.value}: ${read.problem}`);
    } else cfg = read;
    config = { kind: 'file', path: cfgFlag.value, json: null };
  } else if (input.defaultConfig && !opts.has('cpu')) {
    cfg = input.defaultConfig;
    config = { kind: 'default', path: input.defaultConfig.path, json: null };
  }
  const yaml = cfg?.data ?? {};
  const ds = isPlainObject(yaml.deepspeed_config) ? yaml.deepspeed_config : {};
  const w: Walk = { input, opts, env: input.env, errors, warnings: [], values: [], cfg, config, yaml, ds };
  if (cfg) {
    pushArg(w, 'config_file', {
      value: config.path,
      origin: cfgFlag?.value
        ? { source: 'launch-flag', where: cfgFlag.text }
        : { source: 'default-config', where: config.path ?? '' },
      rule: cfgFlag?.value
        ? 'the step names its config'
        : 'the step passes no --config_file, so accelerate launch reads its default config file',
      overridden: [],
    });
  } else {
    pushArg(w, 'config_file', {
      value: null,
      origin: ACCEL_DEFAULT('no config file'),
      rule: 'the step passes no --config_file and accelerate has no default config file: every value is a flag or a default',
      overridden: [],
    });
  }
  return w;
}

/** 1. accelerate launch's own values: DeepSpeed or not, the processes, the machines, the mixed precision. */
function launchArgs(w: Walk): LaunchArgs {
  const { opts, cfg, yaml, env } = w;
  const cpu = opts.has('cpu') || yaml.use_cpu === true;
  const distributed =
    typeof yaml.distributed_type === 'string' ? yaml.distributed_type : yaml.distributed_type === false ? 'NO' : null;
  const useDeepSpeed = !cpu && (opts.has('use_deepspeed') || (cfg !== null && distributed === 'DEEPSPEED'));
  pushArg(w, 'use_deepspeed', {
    value: useDeepSpeed,
    origin: opts.has('use_deepspeed')
      ? { source: 'launch-flag', where: '--use_deepspeed' }
      : cfg !== null && distributed !== null
        ? cfg.origin('distributed_type')
        : ACCEL_DEFAULT('no distributed_type'),
    rule: cpu
      ? '--cpu / use_cpu: true runs the script on the CPU without DeepSpeed'
      : useDeepSpeed
        ? 'distributed_type DEEPSPEED (or --use_deepspeed) makes accelerate launch use DeepSpeed'
        : `distributed_type ${distributed ?? '(none)'}: accelerate launch does not use DeepSpeed`,
    overridden: [],
  });
  const numProcesses = arg(w, 'num_processes', 'num_processes', () =>
    none('the GPUs torch sees on the machine (accelerate launch counts them)'),
  );
  pushArg(w, 'num_processes', numProcesses);
  pushArg(
    w,
    'num_machines',
    arg(w, 'num_machines', 'num_machines', () => none('1 machine', 1)),
  );
  // The launcher always exports ACCELERATE_MIXED_PRECISION: a variable in the environment is replaced.
  const mixedPrecision = arg(w, 'mixed_precision', 'mixed_precision', () => none("'no'", 'no'));
  if (env.ACCELERATE_MIXED_PRECISION !== undefined)
    mixedPrecision.overridden.push({
      value: env.ACCELERATE_MIXED_PRECISION,
      source: 'environment',
      where: `ACCELERATE_MIXED_PRECISION=${env.ACCELERATE_MIXED_PRECISION}`,
    });
  const mixedPrecisionFromConfig =
    !opts.has('mixed_precision') && cfg !== null && typeof yaml.mixed_precision === 'string';
  const worldSize =
    w.input.worldSize ??
    (typeof numProcesses.value === 'number' ? numProcesses.value : Number(numProcesses.value) || null);
  return { useDeepSpeed, numProcesses, mixedPrecision, mixedPrecisionFromConfig, worldSize };
}

/** A step accelerate runs without DeepSpeed: its launch values, and no dict. */
function withoutDeepSpeed(w: Walk, launch: LaunchArgs): StepExplanation {
  pushArg(w, 'mixed_precision', launch.mixedPrecision);
  return {
    name: w.input.name,
    config: w.config,
    deepspeed: false,
    values: w.values,
    batch: null,
    errors: w.errors,
    warnings: w.warnings,
    dict: null,
    zeroInit: false,
    accumulation: null,
  };
}

/** 2. One of DeepSpeedPlugin's fields: the launcher's variable (flag > YAML > the environment > default). */
function pluginArg(w: Walk, k: KeyInfo): Arg {
  const { opts, yaml, env } = w;
  const name = k.path.slice('deepspeed_config.'.length);
  const fromEnv = k.env !== undefined ? env[k.env] : undefined;
  // The launcher passes the NVMe paths on from no flag and no YAML: only the environment reaches the plugin.
  const launcherPasses = !name.endsWith('_nvme_path');
  const fallback = (rule: string, value: unknown): Arg =>
    fromEnv !== undefined
      ? envArg(k.env!, fromEnv, value, rule)
      : none(`DeepSpeedPlugin's ${shown(k.accelerateDefault)}`, k.accelerateDefault);
  const a: Arg = launcherPasses
    ? arg(w, name, k.path, () =>
        fallback(
          'no flag or config sets it, so the launch keeps the variable of the environment',
          typed(k, fromEnv ?? ''),
        ),
      )
    : fallback('DeepSpeedPlugin reads it from the environment only', fromEnv);
  if (launcherPasses && fromEnv !== undefined && a.origin.source !== 'environment')
    a.overridden.push({ value: fromEnv, source: 'environment', where: `${k.env}=${fromEnv}` });
  if (!launcherPasses && (opts.has(name) || hasAt(yaml, k.path))) {
    const given = opts.get(name)?.value ?? getAt(yaml, k.path);
    const lost: Origin = opts.has(name)
      ? { source: 'launch-flag', where: opts.get(name)!.text }
      : w.cfg!.origin(k.path);
    a.overridden.push({ value: given, ...lost });
    a.rule = 'accelerate launch never passes the NVMe paths on: DeepSpeedPlugin reads only the environment variable';
  }
  // zero3_save_16bit_model reaches the plugin as the text "true"/"false".
  if (k.type === 'bool' && typeof a.value === 'string') a.value = TRUE_RE.test(a.value);
  if (k.path.endsWith('gradient_accumulation_steps') && typeof a.value === 'string' && /^[0-9]+$/.test(a.value))
    a.value = Number(a.value);
  return a;
}

/** 2. zero3_init_flag as the launcher passes it; 'stage 3' when nothing sets it (DeepSpeedPlugin's is_zero3()). */
function zero3InitArg(w: Walk): Arg {
  const key = mustKey('yaml', 'deepspeed_config.zero3_init_flag');
  const a = arg(w, 'zero3_init_flag', key.path, () => {
    const v = w.env[key.env!];
    return v !== undefined
      ? envArg(
          key.env!,
          v,
          TRUE_RE.test(v),
          'no flag or config sets it, so the launch keeps the variable of the environment',
        )
      : none('on at stage 3 (DeepSpeedPlugin: is_zero3())', 'stage 3');
  });
  if (typeof a.value === 'string' && a.value !== 'stage 3') a.value = TRUE_RE.test(a.value);
  return a;
}

/**
 * 3. The dict DeepSpeedPlugin starts from: the DeepSpeed JSON (--deepspeed_config_file / the YAML's, else
 * ACCELERATE_DEEPSPEED_CONFIG_FILE) with the plugin's values in its "auto"s, or the config the plugin builds from
 * its own fields; then accelerate's steps_per_print.
 */
function deepSpeedDict(w: Walk, plugin: ReadonlyMap<string, Arg>, launch: LaunchArgs): Dict {
  const fileKey = mustKey('yaml', 'deepspeed_config.deepspeed_config_file');
  const fileArg = arg(w, 'deepspeed_config_file', fileKey.path, () => {
    const v = w.env[fileKey.env!];
    return v !== undefined
      ? envArg(
          fileKey.env!,
          v,
          v,
          'no flag or config names a JSON, so DeepSpeedPlugin takes the variable of the environment',
        )
      : none('none: DeepSpeedPlugin builds the config from the accelerate keys', 'none');
  });
  pushArg(w, 'deepspeed_config_file', fileArg);
  const dict = new Dict();
  const jsonRef =
    typeof fileArg.value === 'string' && fileArg.value !== 'none' && fileArg.value !== '' ? fileArg.value : null;
  let json: ConfigInput | null = null;
  if (jsonRef !== null) {
    const read = w.input.readJson(jsonRef);
    if ('problem' in read) w.errors.push(`DeepSpeed config ${jsonRef}: ${read.problem}`);
    else json = read;
    w.config = { ...w.config, json: jsonRef };
  }
  if (json) fromJson(w, dict, json, plugin, launch);
  else fromPlugin(dict, plugin);
  dict.set(
    'steps_per_print',
    Number.POSITIVE_INFINITY,
    ACCEL_DEFAULT('DeepSpeedPlugin'),
    'accelerate sets it to infinity so DeepSpeed prints no progress lines',
  );
  return dict;
}

/** The JSON's dict: the keys accelerate refuses beside it, and DeepSpeedPlugin's values only in its "auto"s. */
function fromJson(w: Walk, dict: Dict, json: ConfigInput, plugin: ReadonlyMap<string, Arg>, launch: LaunchArgs): void {
  const fieldsFromConfig = [...Object.keys(w.ds), ...(launch.mixedPrecisionFromConfig ? ['mixed_precision'] : [])];
  dict.load(json.data, json.origin, 'written in the DeepSpeed JSON');
  if (!('gradient_accumulation_steps' in dict.data))
    dict.set(
      'gradient_accumulation_steps',
      1,
      ACCEL_DEFAULT('DeepSpeedPlugin'),
      "the JSON has no gradient_accumulation_steps, so DeepSpeedPlugin writes 1 (which overrides the script's Accelerator(...))",
    );
  if (!isPlainObject(dict.data.zero_optimization))
    w.errors.push('Please specify the ZeRO optimization config in the DeepSpeed config.');
  // The keys accelerate refuses beside a JSON file (_deepspeed_config_checks).
  const refused = fieldsFromConfig.filter(
    (f) => keyInfo('yaml', f === 'mixed_precision' ? f : `deepspeed_config.${f}`)?.refusedNextToJson,
  );
  if (refused.length > 0)
    w.errors.push(
      `accelerate refuses ${refused.join(', ')} in the accelerate config beside deepspeed_config_file ("When using \`deepspeed_config_file\`, the following accelerate config variables will be ignored")`,
    );
  // DeepSpeedPlugin writes its values only into the JSON's "auto"s; a value the JSON gives wins.
  for (const k of PLUGIN_KEYS) {
    const a = plugin.get(k.path)!;
    const path = k.sets![0]!;
    const now = getAt(dict.data, path);
    if (now === 'auto' && a.value !== 'auto') {
      dict.set(
        path,
        a.value,
        a.origin,
        `the JSON's "auto" takes DeepSpeedPlugin's ${k.path.slice('deepspeed_config.'.length)} (${a.rule})`,
      );
      dict.prov.get(path)!.overridden.push(...a.overridden);
    } else if (
      now !== undefined &&
      a.origin.source !== 'accelerate-default' &&
      JSON.stringify(now) !== JSON.stringify(a.value)
    )
      dict.lost(
        path,
        a.value,
        a.origin,
        'the JSON gives a value, and DeepSpeedPlugin writes its own only into "auto": the JSON wins',
      );
  }
}

/** DeepSpeedPlugin without a JSON: the config it builds from its own fields. */
function fromPlugin(dict: Dict, plugin: ReadonlyMap<string, Arg>): void {
  const p = (path: string) => plugin.get(path)!;
  const viaPlugin = (a: Arg, what: string) => ({
    origin: a.origin,
    rule: `DeepSpeedPlugin builds the config without a JSON: ${what} (${a.rule})`,
  });
  const put = (path: string, value: unknown, o: { origin: Origin; rule: string }) =>
    dict.set(path, value, o.origin, o.rule);
  const auto = ACCEL_DEFAULT('DeepSpeedPlugin');
  put('train_batch_size', 'auto', { origin: auto, rule: 'DeepSpeedPlugin builds the config without a JSON: "auto"' });
  put('train_micro_batch_size_per_gpu', 'auto', {
    origin: auto,
    rule: 'DeepSpeedPlugin builds the config without a JSON: "auto"',
  });
  const gas = p('deepspeed_config.gradient_accumulation_steps');
  put('gradient_accumulation_steps', gas.value, viaPlugin(gas, 'its gradient_accumulation_steps'));
  const stage = p('deepspeed_config.zero_stage');
  put('zero_optimization.stage', stage.value, viaPlugin(stage, 'its zero_stage'));
  for (const [block, dev, nvme] of [
    ['offload_optimizer', 'deepspeed_config.offload_optimizer_device', 'deepspeed_config.offload_optimizer_nvme_path'],
    ['offload_param', 'deepspeed_config.offload_param_device', 'deepspeed_config.offload_param_nvme_path'],
  ] as const) {
    const d = p(dev);
    put(`zero_optimization.${block}.device`, d.value, viaPlugin(d, `its ${dev.slice(17)}`));
    const n = p(nvme);
    put(
      `zero_optimization.${block}.nvme_path`,
      d.value === 'nvme' ? n.value : null,
      d.value === 'nvme'
        ? viaPlugin(n, `its ${nvme.slice(17)}`)
        : { origin: auto, rule: 'no NVMe device: DeepSpeedPlugin writes None' },
    );
  }
  const save = p('deepspeed_config.zero3_save_16bit_model');
  put(
    'zero_optimization.stage3_gather_16bit_weights_on_model_save',
    save.value,
    viaPlugin(save, 'its zero3_save_16bit_model'),
  );
  const clip = p('deepspeed_config.gradient_clipping');
  // `if self.gradient_clipping:` 0 (or 0.0) writes nothing.
  if (clip.value) put('gradient_clipping', clip.value, viaPlugin(clip, 'its gradient_clipping'));
  for (const [path, a] of plugin) {
    const k = mustKey('yaml', path);
    const target = k.sets![0]!;
    const prov = dict.prov.get(target);
    if (prov && a.overridden.length > 0) prov.overridden.push(...a.overridden);
  }
}

/** 3. zero.Init: the flag, else is_zero3(); turned off below stage 3. */
function zeroInitOf(w: Walk, dict: Dict, zero3Init: Arg): { stage: number; zeroInit: boolean } {
  const stageNow = getAt(dict.data, 'zero_optimization.stage');
  const stage = typeof stageNow === 'number' ? stageNow : 0;
  let zeroInit = zero3Init.value === 'stage 3' ? stage === 3 : zero3Init.value === true;
  if (zeroInit && stage !== 3) {
    w.warnings.push('DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting it to False.');
    zeroInit = false;
  }
  w.values.push({
    key: 'launch.zero3_init_flag',
    value: zeroInit,
    source: zero3Init.origin.source,
    where: zero3Init.origin.where,
    rule:
      zero3Init.value === 'stage 3'
        ? `nothing sets it, so DeepSpeedPlugin turns it on exactly at stage 3 (the stage is ${stage})`
        : zeroInit || zero3Init.value !== true
          ? zero3Init.rule
          : `asked for, but accelerate turns it off below stage 3 (the stage is ${stage})`,
    overridden: zero3Init.overridden,
  });
  return { stage, zeroInit };
}

/** 3. set_mixed_precision: the script's Accelerator(mixed_precision=...) wins over ACCELERATE_MIXED_PRECISION. */
function setMixedPrecision(w: Walk, dict: Dict, mpArg: Arg): void {
  const script = w.input.script;
  let mp = mpArg;
  if (script.mixedPrecision !== null) {
    mp = {
      value: script.mixedPrecision,
      origin: { source: 'script', where: `Accelerator(mixed_precision='${script.mixedPrecision}')` },
      rule: "the script's Accelerator(mixed_precision=...) wins over the launch's ACCELERATE_MIXED_PRECISION",
      overridden: [...mpArg.overridden, { value: mpArg.value, source: mpArg.origin.source, where: mpArg.origin.where }],
    };
  }
  pushArg(w, 'mixed_precision', mp);
  const precision = String(mp.value).toLowerCase();
  const mpRule = (what: string) => `${what} (the mixed precision ${precision}: ${mp.rule})`;
  if (precision === 'fp16' && !('fp16' in dict.data))
    dict.set(
      'fp16',
      { enabled: true, auto_cast: true },
      mp.origin,
      mpRule('accelerate writes the fp16 block, with auto_cast, when the JSON has none'),
    );
  if ((precision === 'bf16' || precision === 'fp8') && !('bf16' in dict.data))
    dict.set('bf16', { enabled: true }, mp.origin, mpRule('accelerate writes the bf16 block when the JSON has none'));
  if (precision !== 'no') {
    const other = precision === 'fp16' ? 'bf16' : 'fp16';
    const block = dict.data[other];
    if (isPlainObject(block) && String(block.enabled).toLowerCase() === 'true')
      w.errors.push(
        `\`--mixed_precision\` arg cannot be set to \`${precision}\` when \`${other}\` is set in the DeepSpeed config file.`,
      );
  }
  for (const b of ['fp16', 'bf16'] as const) {
    if (!(b in dict.data))
      dict.set(
        b,
        { enabled: false },
        ACCEL_DEFAULT('set_mixed_precision'),
        'accelerate writes the missing precision block as {"enabled": false}',
      );
    if (getAt(dict.data, `${b}.enabled`) === 'auto') {
      const on = b === 'fp16' ? precision === 'fp16' : precision === 'bf16' || precision === 'fp8';
      dict.set(`${b}.enabled`, on, mp.origin, mpRule(`the JSON's "auto" takes the mixed precision`));
      dict.prov.get(`${b}.enabled`)!.overridden.push(...mp.overridden);
    }
  }
}

/**
 * 4. Accelerator.prepare(): the Accelerator's accumulation synced with the JSON's, then the "auto"s the run fills
 * from the script. Returns the accumulation the Accelerator keeps.
 */
function prepareFills(w: Walk, dict: Dict, plugin: ReadonlyMap<string, Arg>, world: number | null): number | null {
  const accum = scriptAccumulation(w, plugin.get('deepspeed_config.gradient_accumulation_steps')!);
  const micro = scriptMicroBatch(w.input.script);
  const accumulation = syncAccumulation(w, dict, accum);
  const gasFinal = getAt(dict.data, 'gradient_accumulation_steps');
  const microNow = getAt(dict.data, 'train_micro_batch_size_per_gpu');
  const microFinal = microNow === 'auto' ? micro.value : microNow;
  const fillCtx = {
    hiddenSize: typeof w.input.script.hiddenSize === 'number' ? w.input.script.hiddenSize : null,
    microBatch: typeof microFinal === 'number' ? microFinal : null,
    accumulation: typeof gasFinal === 'number' ? gasFinal : null,
    worldSize: world ?? 0,
  };
  const scriptFill: Record<string, { value: unknown; origin: Origin; rule: string }> = {
    train_micro_batch_size_per_gpu: {
      value: micro.value,
      origin: micro.origin,
      rule: `the "auto" takes ${micro.rule}`,
    },
    train_batch_size: {
      value:
        fillCtx.microBatch !== null && fillCtx.accumulation !== null && world !== null
          ? autoFill('train_batch_size', fillCtx)
          : null,
      origin: { source: 'script', where: 'micro batch x gradient accumulation x processes, at prepare()' },
      rule: 'the "auto" takes train_micro_batch_size_per_gpu x gradient_accumulation_steps x num_processes, computed at prepare()',
    },
    gradient_clipping: {
      value: autoFill('gradient_clipping', fillCtx),
      origin: ACCEL_DEFAULT('Accelerator.prepare'),
      rule: 'the "auto" takes accelerate\'s 1.0 at prepare()',
    },
    'zero_optimization.stage3_gather_16bit_weights_on_model_save': {
      value: false,
      origin: ACCEL_DEFAULT('Accelerator.prepare'),
      rule: 'the "auto" takes accelerate\'s false at prepare()',
    },
  };
  if (w.input.script.torchOptimizer)
    dict.set(
      'zero_allow_untested_optimizer',
      true,
      { source: 'script', where: 'a torch optimizer passed to prepare()' },
      'accelerate sets it when the script passes a torch optimizer',
    );
  fillAutos(w, dict, scriptFill, fillCtx);
  return accumulation;
}

/** The Accelerator's gradient accumulation: the launcher's variable, else the script's, else 1. */
function scriptAccumulation(w: Walk, gasArg: Arg): Arg {
  const script = w.input.script;
  // The launcher exports the variable from a flag or the YAML; else the environment's passes through.
  const accelVar = gasArg.origin.source !== 'accelerate-default' ? gasArg : null;
  if (accelVar && typeof accelVar.value === 'number')
    return {
      value: accelVar.value,
      origin: accelVar.origin,
      rule: "ACCELERATE_GRADIENT_ACCUMULATION_STEPS (from it) wins over the script's Accelerator(gradient_accumulation_steps=...)",
      overridden:
        script.accumulation !== null
          ? [
              {
                value: script.accumulation,
                source: 'script',
                where: `Accelerator(gradient_accumulation_steps=${script.accumulation})`,
              },
            ]
          : [],
    };
  if (script.accumulation !== null)
    return {
      value: script.accumulation,
      origin: { source: 'script', where: `Accelerator(gradient_accumulation_steps=${script.accumulation})` },
      rule: "the script's Accelerator(gradient_accumulation_steps=...)",
      overridden: [],
    };
  return {
    value: 1,
    origin: ACCEL_DEFAULT('Accelerator(gradient_accumulation_steps=1)'),
    rule: "the script passes no gradient_accumulation_steps (give --script-accumulation N if it does), so Accelerator's 1",
    overridden: [],
  };
}

/** The DataLoader's batch size the script passes to prepare() (null when not known here). */
function scriptMicroBatch(script: ScriptContext): Arg {
  return script.batchSize !== null
    ? {
        value: script.batchSize,
        origin: { source: 'script', where: `DataLoader(batch_size=${script.batchSize})` },
        rule: "the DataLoader's batch_size passed to prepare()",
        overridden: [],
      }
    : {
        value: null,
        origin: { source: 'script', where: "your DataLoader's batch_size" },
        rule: "the DataLoader's batch_size passed to prepare() (not known here: --script-batch-size N)",
        overridden: [],
      };
}

/** The accumulation sync at prepare(): the JSON's "auto" takes the Accelerator's; a number in the JSON wins. */
function syncAccumulation(w: Walk, dict: Dict, accum: Arg): number | null {
  let accumulation: number | null = typeof accum.value === 'number' ? accum.value : null;
  const gasNow = getAt(dict.data, 'gradient_accumulation_steps');
  if (gasNow === 'auto') {
    dict.set(
      'gradient_accumulation_steps',
      accum.value,
      accum.origin,
      `the JSON's "auto" takes the Accelerator's accumulation at prepare(): ${accum.rule}`,
    );
    dict.prov.get('gradient_accumulation_steps')!.overridden.push(...accum.overridden);
  } else if (typeof gasNow === 'number' && gasNow !== accum.value) {
    w.warnings.push(
      `Gradient accumulation steps mismatch: GradientAccumulationPlugin has ${shown(accum.value)}, DeepSpeed config has ${gasNow}. Using DeepSpeed's value.`,
    );
    dict.lost(
      'gradient_accumulation_steps',
      accum.value,
      accum.origin,
      `the accumulation sync: a number in the DeepSpeed config wins over the Accelerator's (${accum.rule}), with accelerate's "mismatch" warning`,
    );
    accumulation = gasNow;
  } else if (typeof gasNow === 'number') accumulation = gasNow;
  return accumulation;
}

/** The "auto"s left: the script's fills (the hidden-size ones from model.config), or accelerate's refusal. */
function fillAutos(
  w: Walk,
  dict: Dict,
  scriptFill: Record<string, { value: unknown; origin: Origin; rule: string }>,
  fillCtx: Parameters<typeof autoFill>[1],
): void {
  const h = w.input.script.hiddenSize;
  const autosLeft = leaves(dict.data, '', []).filter((p) => getAt(dict.data, p) === 'auto');
  const hiddenAutos = autosLeft.filter((p) => HIDDEN_SIZE_KEYS.includes(canonicalPath(p)));
  if (hiddenAutos.length > 0) {
    if (h === 'none')
      w.errors.push(
        "Can't find `model.config` entry, therefore it's not possible to automatically fill out the hidden-size `auto` entries",
      );
    for (const p of hiddenAutos) {
      scriptFill[p] = {
        value: typeof h === 'number' ? autoFill(p, fillCtx) : null,
        origin: {
          source: 'script',
          where: typeof h === 'number' ? `model.config.hidden_size ${h}` : 'model.config.hidden_size',
        },
        rule: `the "auto" takes ${p.endsWith('reduce_bucket_size') ? 'hidden_size^2' : p.endsWith('prefetch_bucket_size') ? 'int(0.9 x hidden_size^2)' : '10 x hidden_size'} at prepare()${typeof h === 'number' ? '' : ' (the hidden size is not known here: --script-hidden-size H)'}`,
      };
    }
  }
  for (const p of autosLeft) {
    const f = scriptFill[p];
    if (f) {
      dict.set(p, f.value, f.origin, f.rule);
    } else if (!p.endsWith('.nvme_path')) {
      w.errors.push(`\`${p}\` not found in kwargs. Please specify \`${p}\` without \`auto\``);
    }
  }
}

/** 5. DeepSpeed: the batch identity it derives and asserts, every value of the dict, then its defaults for what is absent. */
function deepSpeedReport(
  w: Walk,
  dict: Dict,
  launch: LaunchArgs,
  found: { stage: number; zeroInit: boolean; accumulation: number | null },
): StepExplanation {
  const { stage } = found;
  const batch = batchIdentity(dict, launch.worldSize, launch.numProcesses, w.input.worldSize);
  if (batch.holds === false)
    w.errors.push(
      `DeepSpeed asserts train_batch_size ${batch.trainBatchSize.value} == micro batch ${batch.microBatch.value} x accumulation ${batch.accumulation.value} x ${batch.worldSize.value} GPU(s), and it does not hold`,
    );
  for (const p of leaves(dict.data, '', [])) {
    const prov = dict.prov.get(p);
    w.values.push({
      key: p,
      value: getAt(dict.data, p),
      source: prov?.origin.source ?? 'accelerate-default',
      where: prov?.origin.where ?? '',
      rule: prov?.rule ?? '',
      overridden: prov?.overridden ?? [],
    });
  }
  for (const k of absentDefaults(dict.data, stage)) {
    const d = defaultOf(k, stage);
    w.values.push({
      key: k.path,
      value: d,
      ...DS_DEFAULT,
      rule: `absent, so DeepSpeed's default${k.defaultAtStage ? ` at stage ${stage}` : ''}${k.history ? ` (${k.history})` : ''}`,
      overridden: [],
    });
  }
  return {
    name: w.input.name,
    config: w.config,
    deepspeed: true,
    values: w.values,
    batch,
    errors: w.errors,
    warnings: w.warnings,
    dict: dict.data,
    zeroInit: found.zeroInit,
    accumulation: found.accumulation,
  };
}

/** DeepSpeed's batch identity (runtime/config.py _configure_train_batch_size): derived parts, then the check. */
function batchIdentity(dict: Dict, world: number | null, numProcesses: Arg, forced: number | undefined): BatchIdentity {
  const factor = (path: string): BatchFactor => {
    const v = getAt(dict.data, path);
    const p = dict.prov.get(path);
    return {
      value: typeof v === 'number' ? v : null,
      source: p?.origin.source ?? 'deepspeed-default',
      where: p?.origin.where ?? '',
      rule: p?.rule ?? 'absent',
    };
  };
  const tbs = factor('train_batch_size');
  const micro = factor('train_micro_batch_size_per_gpu');
  const gas = factor('gradient_accumulation_steps');
  const ws: BatchFactor = {
    value: world,
    source: forced !== undefined ? 'launch-flag' : numProcesses.origin.source,
    where: forced !== undefined ? `${forced} processes running` : numProcesses.origin.where,
    rule: forced !== undefined ? 'the processes that run' : `num_processes (${numProcesses.rule})`,
  };
  const derived = (value: number, how: string): BatchFactor => ({
    value,
    source: 'deepspeed-default',
    where: 'DeepSpeed derives it',
    rule: how,
  });
  const has = (f: BatchFactor, path: string) => hasAt(dict.data, path) && f.value !== null;
  const hT = has(tbs, 'train_batch_size');
  const hM = has(micro, 'train_micro_batch_size_per_gpu');
  const hG = has(gas, 'gradient_accumulation_steps');
  let T = tbs;
  let M = micro;
  let G = gas;
  if (world !== null) {
    if (hT && hM && !hG)
      G = derived(Math.floor(tbs.value! / micro.value! / world), 'absent: train_batch_size / micro batch / GPUs');
    else if (hT && hG && !hM)
      M = derived(Math.floor(tbs.value! / world / gas.value!), 'absent: train_batch_size / GPUs / accumulation');
    else if (hM && hG && !hT)
      T = derived(micro.value! * gas.value! * world, 'absent: micro batch x accumulation x GPUs');
    else if (hT && !hM && !hG) {
      G = derived(1, 'absent: 1');
      M = derived(Math.floor(tbs.value! / world), 'absent: train_batch_size / GPUs');
    } else if (hM && !hT && !hG) {
      G = derived(1, 'absent: 1');
      T = derived(micro.value! * world, 'absent: micro batch x GPUs');
    }
  }
  const all = [T.value, M.value, G.value, world];
  const holds = all.every((v) => typeof v === 'number') ? T.value === M.value! * G.value! * world! : null;
  return { trainBatchSize: T, microBatch: M, accumulation: G, worldSize: ws, holds };
}

/** The table's DeepSpeed keys the dict leaves out that DeepSpeed reads at this stage, with a default to tell. */
function absentDefaults(data: Record<string, unknown>, stage: number): KeyInfo[] {
  const enabled = (b: string) => getAt(data, `${b}.enabled`) === true;
  const device = (b: string) => getAt(data, `zero_optimization.${b}.device`);
  return CONFIG_KEYS.filter((k) => {
    if (k.file !== 'json' || k.type === 'block' || k.deprecated || defaultOf(k, stage) === undefined) return false;
    if (hasAt(data, k.path) || (k.alias && hasAt(data, `${k.path.slice(0, k.path.lastIndexOf('.'))}.${k.alias}`)))
      return false;
    if (k.stage3 && stage !== 3) return false;
    const top = k.path.split('.')[0]!;
    if (top === 'fp16' || top === 'bf16') return enabled(top);
    if (top === 'aio') return device('offload_optimizer') === 'nvme' || device('offload_param') === 'nvme';
    if (top === 'activation_checkpointing') return isPlainObject(data.activation_checkpointing);
    if (top === 'optimizer' || top === 'scheduler' || top === 'amp') return false;
    if (k.path.startsWith('zero_optimization.offload_')) {
      const block = k.path.split('.')[1]!;
      const dev = device(block.replace('zero_optimization.', ''));
      return dev === 'cpu' || dev === 'nvme';
    }
    if (top === 'zero_optimization') return stage > 0;
    return ['gradient_clipping', 'wall_clock_breakdown'].includes(k.path);
  });
}
