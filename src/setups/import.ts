/**
 * Import: an existing accelerate YAML (and the DeepSpeed JSON its deepspeed_config_file names) into a
 * Setup. An import never changes what the configuration means without saying so: keys zerowiz does not model
 * are kept (written back as they were) and listed; what it cannot keep as written it refuses or says in
 * `notes`, naming the key, the old and the new value. Keys accelerate refuses next to a JSON file
 * (mixed_precision, zero_stage, ...) are moved into the JSON when they agree with it and refused, as accelerate
 * refuses them, when they do not. Deprecated DeepSpeed keys are migrated to the one new name. The JSON is read
 * as accelerate reads it (json.load: no comments).
 */
import { dirname, isAbsolute, join } from 'node:path';
import { UsageError } from '../text/index.js';
import { printable } from '../text/index.js';
import { parseYamlQuietly, pathPresent, readUserFile } from '../fs/index.js';
import {
  BATCH_KEYS,
  DEEPSPEED_DEFAULTS,
  accelerateConfigObject,
  deepSpeedConfigObject,
  isPlainObject,
  plainJson,
} from '../config/index.js';
import { MODE_INFO, modeFromStage } from '../config/index.js';
import { parseDeepSpeedJson } from '../config/index.js';
import {
  ACCELERATE_KEYS_REFUSED_WITH_DS_FILE,
  DEPRECATED_JSON_KEYS,
  PLUGIN_KEYS,
  autoRule,
  canonicalPath,
  deepSpeedDefault,
  mustKey,
} from '../config/index.js';
import { formatSci, parseAnswers, question, withDefaults, type Answers, type QuestionId } from '../config/index.js';
import { DEFAULT_FILES, type Setup } from '../config/index.js';
import { checkAccelerateConfig, checkDeepSpeedConfig } from '../config/index.js';
import type { Finding } from '../config/index.js';

/** The result of an import. */
export interface ImportResult {
  setup: Setup;
  /** Dotted paths of keys zerowiz does not model, kept as they were. */
  kept: string[];
  /** Keys moved out of the YAML into the JSON (accelerate refuses them next to a JSON file). */
  moved: string[];
  /** What accelerate and DeepSpeed would say about the files as they are now. */
  findings: Finding[];
  /** The JSON file read, if any. */
  jsonPath: string | null;
  /** The answers the files give (the rest are defaults, which follow the answers changed later). */
  given: Partial<Answers>;
  /**
   * What the import changed or kept in a way the files do not say themselves, one line each, naming the key
   * and both values (`gradient_accumulation_steps: (absent) -> 1: ...`): printed by `generate --from` and
   * `preset save --from`, listed on the wizard's review.
   */
  notes: string[];
}

function readYaml(path: string, what: string): Record<string, unknown> {
  const text = readUserFile(path, what);
  let data: unknown;
  try {
    data = parseYamlQuietly(text, { version: '1.1' }); // accelerate reads YAML with PyYAML (YAML 1.1); JSON is YAML too
  } catch (e) {
    throw new UsageError(
      `${what} ${path} is not valid YAML/JSON: ${printable((e as Error).message.split('\n')[0] ?? '')}`,
      'fix the file; zerowiz left it untouched',
    );
  }
  if (!isPlainObject(data))
    throw new UsageError(`${what} ${path} does not hold a mapping of keys`, 'is this the right file?');
  return data;
}

/** The DeepSpeed JSON, read as accelerate reads it (json.load). */
function readJson(path: string): Record<string, unknown> {
  const parsed = parseDeepSpeedJson(readUserFile(path, 'DeepSpeed config'));
  if (!parsed.ok)
    throw new UsageError(
      `DeepSpeed config ${path}: ${parsed.problem}`,
      'fix the file (plain JSON, no comments); zerowiz left it untouched',
    );
  if (!isPlainObject(parsed.data))
    throw new UsageError(`DeepSpeed config ${path} does not hold a JSON object`, 'is this the right file?');
  return parsed.data;
}

/** A value as the notes and messages write it: JSON, with element counts as 5e7. */
function shown(v: unknown): string {
  if (v === undefined) return '(absent)';
  if (typeof v === 'number' && Number.isInteger(v) && v >= 1e5) return formatSci(v);
  return JSON.stringify(v);
}

function getPath(obj: Record<string, unknown>, path: string): unknown {
  let cur: unknown = obj;
  for (const p of path.split('.')) cur = isPlainObject(cur) ? cur[p] : undefined;
  return cur;
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    if (!isPlainObject(cur[p])) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

const YES = (v: unknown) => v === true || v === 'true' || v === 'yes';

/**
 * Rules of accept.ts whose refusal an import repairs itself (and says so in a note): keys beside the JSON file
 * are moved into it, and distributed_type becomes DEEPSPEED. The files written have neither problem.
 */
export const IMPORT_REPAIRS: ReadonlySet<string> = new Set([
  'forbidden-next-to-ds-file',
  'accelerate-distributed-type',
]);

/** Reads an accelerate config (and its DeepSpeed JSON) into a setup. */
export function importAccelerateConfig(yamlPath: string, cwd = process.cwd()): ImportResult {
  const abs = isAbsolute(yamlPath) ? yamlPath : join(cwd, yamlPath);
  const y = readYaml(abs, 'accelerate config');
  const findings: Finding[] = [...checkAccelerateConfig(y)];
  const ds = isPlainObject(y.deepspeed_config) ? y.deepspeed_config : {};
  const raw: Record<string, unknown> = {};
  /** The file and key each raw answer came from, for the message when it cannot be parsed. */
  const from: Partial<Record<QuestionId, string>> = {};
  const setIf = (id: QuestionId, v: unknown, key: string) => {
    if (v !== undefined && v !== null) {
      raw[id] = v;
      from[id] = key;
    }
  };
  for (const id of [
    'num_machines',
    'machine_rank',
    'main_process_ip',
    'main_process_port',
    'same_network',
    'rdzv_backend',
    'debug',
    'num_processes',
  ] as const)
    setIf(id, y[id], id);
  if (
    typeof y.num_machines === 'number' &&
    y.num_machines > 1 &&
    typeof y.machine_rank === 'number' &&
    y.machine_rank >= y.num_machines
  )
    delete raw.machine_rank;
  if (isPlainObject(y.dynamo_config) && typeof y.dynamo_config.dynamo_backend === 'string') {
    const b = y.dynamo_config.dynamo_backend.toLowerCase();
    raw.dynamo_backend = b === 'no' ? 'no' : b;
    from.dynamo_backend = 'dynamo_config.dynamo_backend';
  }
  setIf('zero3_init', ds.zero3_init_flag, 'deepspeed_config.zero3_init_flag');
  setIf('moe_layer_cls_names', ds.deepspeed_moe_layer_cls_names, 'deepspeed_config.deepspeed_moe_layer_cls_names');
  setIf('multinode_launcher', ds.deepspeed_multinode_launcher, 'deepspeed_config.deepspeed_multinode_launcher');
  setIf('hostfile', ds.deepspeed_hostfile, 'deepspeed_config.deepspeed_hostfile');
  setIf('exclusion_filter', ds.deepspeed_exclusion_filter, 'deepspeed_config.deepspeed_exclusion_filter');
  setIf('inclusion_filter', ds.deepspeed_inclusion_filter, 'deepspeed_config.deepspeed_inclusion_filter');
  const moved: string[] = [];
  const notes: string[] = [];
  const note = (message: string, fix: string) => {
    findings.push({ level: 'warning', rule: 'import-note', message, fix });
    notes.push(message);
  };
  if (y.distributed_type !== 'DEEPSPEED') {
    note(
      `distributed_type was ${String(y.distributed_type)}; zerowiz writes DEEPSPEED, so accelerate uses DeepSpeed with the ZeRO mode chosen here`,
      'check the ZeRO mode (default 2) before writing',
    );
  }
  // The precision the YAML gives accelerate (fp8 trains with bf16 under DeepSpeed).
  let yamlPrecision: 'no' | 'fp16' | 'bf16' | 'fp8' | null = null;
  if (typeof y.mixed_precision === 'string') {
    const mp = y.mixed_precision.toLowerCase();
    if (mp === 'no' || mp === 'fp16' || mp === 'bf16' || mp === 'fp8') yamlPrecision = mp;
    if (mp === 'fp8')
      note(
        'mixed_precision fp8 cannot sit in the YAML next to a DeepSpeed JSON; zerowiz writes bf16 into the JSON (what accelerate does for fp8)',
        'pass --mixed_precision fp8 to accelerate launch to keep FP8 training',
      );
  }
  if (y.use_cpu === true) {
    note(
      'use_cpu: true (what `accelerate config default` writes on a machine without GPUs) makes accelerate launch run on the CPU without DeepSpeed; zerowiz writes use_cpu: false',
      'keep it only if you meant to train without DeepSpeed, and then do not use these files',
    );
  }

  // The DeepSpeed JSON, resolved like accelerate does (from the launch directory), else next to the YAML.
  // Without one, the JSON accelerate would build from the YAML's own keys stands in for it.
  const ref =
    typeof ds.deepspeed_config_file === 'string' &&
    ds.deepspeed_config_file !== 'none' &&
    ds.deepspeed_config_file !== ''
      ? ds.deepspeed_config_file
      : null;
  let jsonPath: string | null = null;
  let j: Record<string, unknown>;
  /** The JSON as the file has it (after the deprecated names are migrated): what the kept keys are taken from. */
  let source: Record<string, unknown>;
  let clippingAbsent = false;
  if (ref) {
    const candidates = isAbsolute(ref) ? [ref] : [...new Set([join(cwd, ref), join(dirname(abs), ref)])];
    jsonPath = candidates.find(pathPresent) ?? null;
    // Never a silent stand-in: without its JSON, the file's ZeRO stage and offload settings are unknown.
    if (!jsonPath)
      throw new UsageError(
        `accelerate config ${yamlPath} names deepspeed_config_file ${printable(ref)}, which does not exist (looked in ${candidates.join(' and ')})`,
        'fix that path in the YAML, or put the DeepSpeed JSON there; zerowiz does not guess the ZeRO stage',
      );
    const file = readJson(jsonPath);
    findings.push(
      ...checkDeepSpeedConfig(file, typeof y.num_processes === 'number' ? { worldSize: y.num_processes } : {}),
    );
    j = structuredClone(file);
    migrateDeprecated(j, jsonPath, notes);
    reconcileYamlKeys(yamlPath, ds, yamlPrecision, j, jsonPath, moved, notes);
    source = structuredClone(j);
    // DeepSpeedPlugin (JSON-file path): a JSON without gradient_accumulation_steps gets 1.
    if (!('gradient_accumulation_steps' in j)) {
      j.gradient_accumulation_steps = 1;
      source.gradient_accumulation_steps = 1;
      notes.push(
        'gradient_accumulation_steps: (absent) -> 1: accelerate writes 1 into a DeepSpeed JSON without it, and that 1 overrides your script\'s Accelerator(gradient_accumulation_steps=...); zerowiz writes it, so the file says it (write "auto" to take the script\'s)',
      );
    }
    if (!('gradient_clipping' in j)) {
      clippingAbsent = true;
      notes.push(
        `gradient_clipping: (absent), kept absent: DeepSpeed's own default applies (${mustKey('json', 'gradient_clipping').history}), not zerowiz's "auto"`,
      );
    }
  } else {
    for (const k of ACCELERATE_KEYS_REFUSED_WITH_DS_FILE) if (getPath(y, k) !== undefined) moved.push(k);
    j = jsonFromYaml(ds, yamlPrecision);
    findings.push(...checkDeepSpeedConfig(j).filter((f) => f.rule !== 'ds-stage-missing'));
    source = j;
    if (yamlPrecision === 'fp16')
      notes.push(
        'fp16.auto_cast: (absent) -> true: with no JSON, accelerate\'s plugin writes the fp16 block as {"enabled": true, "auto_cast": true}; zerowiz keeps the auto_cast in the JSON it writes',
      );
  }
  const zeroIn = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
  if (zeroIn.stage === 'auto')
    notes.push(
      'zero_optimization.stage: "auto" -> 2: accelerate fills it from a launch --zero_stage or ACCELERATE_DEEPSPEED_ZERO_STAGE, else 2; zerowiz writes 2',
    );
  absorbJson(j, raw, from);
  noteDefaultNvmePath(j, raw, notes);
  if (clippingAbsent) raw.gradient_clipping = null;
  if (isPlainObject(j.zero_optimization) && j.zero_optimization.stage === 0) {
    note(
      "zero_optimization.stage is 0 (ZeRO off, plain data parallelism), which is not one of zerowiz's modes: the stage is kept as it is until you choose a ZeRO mode",
      'choose a ZeRO mode to shard the optimizer states (1), the gradients (2) or the parameters (3)',
    );
  }
  let given: Partial<Answers>;
  try {
    given = parseAnswers(raw);
  } catch (e) {
    const id = (e as { key?: QuestionId }).key;
    const key = id ? (from[id] ?? id) : null;
    // What accelerate or DeepSpeed would refuse in the file is said in the rules' own words (as `explain` says it).
    const refused = findings.find((f) => f.level === 'error' && !IMPORT_REPAIRS.has(f.rule));
    if (refused)
      throw new UsageError(printable(refused.message), `${printable(refused.fix)}; zerowiz left the file untouched`);
    throw unparsable(yamlPath, key, id ? raw[id] : undefined, (e as Error).message);
  }
  const answers = withDefaults(given);
  const setup: Setup = {
    name: 'imported',
    answers,
    files: { accelerateConfig: yamlPath, dsConfig: ref ?? DEFAULT_FILES.dsConfig },
    steps: [],
  };
  // Whatever the answers do not reproduce is kept as it was.
  // distributed_type and use_cpu are what make accelerate use DeepSpeed at all: zerowiz's own values stand.
  const dropFromYaml = new Set(['distributed_type', 'use_cpu', ...ACCELERATE_KEYS_REFUSED_WITH_DS_FILE]);
  const yamlExtra = difference(y, accelerateConfigObject(setup), '', dropFromYaml);
  const jsonExtra = difference(
    source,
    plainJson(deepSpeedConfigObject(setup)) as Record<string, unknown>,
    '',
    new Set(),
  );
  setup.extra = {};
  if (yamlExtra.paths.length > 0) setup.extra.yaml = yamlExtra.value;
  // A batch size the file fixes is kept with its partner as the file has it (or without it): zerowiz writes
  // neither batch key as "auto" then (see emit.ts), so accelerate fills nothing DeepSpeed would then check.
  const batch = BATCH_KEYS.filter((k) => k in source);
  if (batch.some((k) => typeof source[k] === 'number')) {
    for (const k of batch) {
      jsonExtra.value[k] = source[k];
      if (!jsonExtra.paths.includes(k)) jsonExtra.paths.push(k);
    }
  }
  if (jsonExtra.paths.length > 0) setup.extra.json = jsonExtra.value;
  // Key names and values come from the file: shown escaped, never raw.
  const kept = [...yamlExtra.paths, ...jsonExtra.paths.map((p) => `json:${p}`)].map(printable);
  const shownFindings = findings.map((f) => ({ ...f, message: printable(f.message), fix: printable(f.fix) }));
  return { setup, kept, moved, findings: shownFindings, jsonPath, given, notes: notes.map(printable) };
}

/**
 * An NVMe offload whose file names no path: zerowiz's setup needs one, and takes its default; the note says so
 * (DeepSpeed itself refuses the file: accept.ts nvme-needs-path).
 */
function noteDefaultNvmePath(j: Record<string, unknown>, raw: Record<string, unknown>, notes: string[]): void {
  const zero = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
  const blocks = [zero.offload_optimizer, zero.offload_param].filter(isPlainObject);
  const nvme = blocks.some((b) => b.device === 'nvme');
  if (!nvme || raw.nvme_path !== undefined) return;
  const d = question('nvme_path').format(withDefaults({}).nvme_path as never);
  notes.push(
    `nvme_path: (absent) -> ${d}: the file offloads to NVMe without a path; zerowiz's setup takes its default`,
  );
}

/** The error for a value the answers cannot take: the key named, and for an "auto" nobody fills, why. */
function unparsable(yamlPath: string, key: string | null, value: unknown, problem: string): UsageError {
  const jsonKey = key !== null && !key.includes('deepspeed_config') ? canonicalPath(key) : null;
  if (value === 'auto' && jsonKey !== null && autoRule(jsonKey)?.accelerate === undefined) {
    const d = deepSpeedDefault(jsonKey);
    return new UsageError(
      `cannot import ${yamlPath}: ${jsonKey} is "auto", which accelerate never fills: it raises "\`${jsonKey}\` not found in kwargs" at prepare() (DeepSpeed alone would drop the "auto" and use ${d === undefined ? 'its default' : shown(d)})`,
      `write ${d === undefined ? 'a value' : `a number (DeepSpeed's default is ${shown(d)})`} there; zerowiz left the file untouched`,
    );
  }
  return new UsageError(
    `cannot import ${yamlPath}: ${key ?? 'a value'} ${shown(value)}: ${problem}`,
    'fix that value in the file (zerowiz left it untouched) and try again',
  );
}

/**
 * Deprecated DeepSpeed keys become the one key that replaces them, as DeepSpeed itself reads them
 * (runtime/config_utils.py: the value carried over, or `{"device": "cpu"}` for cpu_offload: true), and other
 * names of the same field become the name zerowiz writes; each change is a note. A deprecated key next to its
 * replacement is refused, as DeepSpeed refuses it.
 */
function migrateDeprecated(j: Record<string, unknown>, jsonPath: string, notes: string[]): void {
  if (isPlainObject(j.bfloat16) && !('bf16' in j)) {
    j.bf16 = j.bfloat16;
    delete j.bfloat16;
    notes.push('bfloat16 -> bf16: the same block under its current name (DeepSpeed reads both)');
  }
  const zero = j.zero_optimization;
  if (!isPlainObject(zero)) return;
  const name = (path: string) => path.slice(path.lastIndexOf('.') + 1);
  for (const dep of DEPRECATED_JSON_KEYS) {
    const old = name(dep.path);
    if (!(old in zero) || !dep.deprecated) continue;
    const target = mustKey('json', dep.deprecated.use);
    const now = name(target.path);
    const v = zero[old];
    if (dep.deprecated.carries !== 'nothing' && (now in zero || (target.alias !== undefined && target.alias in zero)))
      throw new UsageError(
        `DeepSpeed config ${jsonPath}: zero_optimization has both the deprecated ${old} and ${now}; DeepSpeed refuses that ("Cannot provide deprecated parameter ... together")`,
        `keep only ${now}; zerowiz left the file untouched`,
      );
    delete zero[old];
    if (dep.deprecated.carries === 'value') {
      zero[now] = v;
      notes.push(
        `${dep.path} (deprecated) -> ${target.path}: ${shown(v)}: DeepSpeed reads the old name into the new one; zerowiz writes the new name only`,
      );
    } else if (dep.deprecated.carries === 'device cpu when true') {
      if (v === true) {
        zero[now] = { device: 'cpu' };
        notes.push(
          `${dep.path} (deprecated) true -> ${target.path} {"device": "cpu"}: what DeepSpeed reads it as; zerowiz writes the new key only`,
        );
      } else notes.push(`${dep.path} (deprecated) ${shown(v)} dropped: it offloads nothing`);
    } else {
      notes.push(
        `${dep.path} (deprecated) ${shown(v)} dropped: DeepSpeed only warns about it and never uses its value`,
      );
    }
  }
  for (const k of Object.keys(zero)) {
    const canonical = name(canonicalPath(`zero_optimization.${k}`));
    if (canonical === k || canonical in zero) continue;
    zero[canonical] = zero[k];
    delete zero[k];
    notes.push(
      `zero_optimization.${k} -> zero_optimization.${canonical}: ${shown(zero[canonical])}: two names of one DeepSpeed field; zerowiz writes the ${canonical} name`,
    );
  }
}

/** What DeepSpeed reads at a JSON path when the file leaves it out (and accelerate's 1 for the accumulation). */
function valueWhenAbsent(path: string, stage: number): unknown {
  if (path === 'gradient_accumulation_steps') return 1;
  return deepSpeedDefault(path, stage);
}

/** A YAML value of an accelerate key as the launcher passes it on (numbers, lower-case devices, booleans). */
function yamlValue(path: string, v: unknown): unknown {
  const k = mustKey('yaml', path);
  if (k.type === 'bool') return YES(v);
  if ((k.type === 'int' || k.type === 'number') && typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)))
    return Number(v);
  if (k.type === 'enum' && typeof v === 'string') return v.toLowerCase();
  return v;
}

/**
 * The YAML's keys that accelerate refuses next to deepspeed_config_file: each one that agrees with the JSON (or
 * fills an "auto" there, as accelerate's plugin would) is moved into it and said; when any says otherwise, the
 * import is refused as accelerate refuses the file, naming each key with both values.
 */
function reconcileYamlKeys(
  yamlPath: string,
  ds: Record<string, unknown>,
  precision: 'no' | 'fp16' | 'bf16' | 'fp8' | null,
  j: Record<string, unknown>,
  jsonPath: string,
  moved: string[],
  notes: string[],
): void {
  const zero = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : 0;
  const conflicts: string[] = [];
  for (const k of PLUGIN_KEYS) {
    const key = k.path.slice('deepspeed_config.'.length);
    if (!(key in ds) || !k.refusedNextToJson) continue;
    const yv = yamlValue(k.path, ds[key]);
    const path = k.sets![0]!;
    const jv = getPath(j, path);
    if (jv === 'auto') {
      setPath(j, path, yv);
      moved.push(k.path);
      notes.push(
        `moved ${k.path} ${shown(yv)} into the JSON's ${path} "auto" (accelerate refuses it in the YAML beside a JSON file; its plugin would have filled the "auto" with it)`,
      );
      continue;
    }
    const now = jv === undefined ? valueWhenAbsent(path, stage) : jv;
    if (JSON.stringify(now) === JSON.stringify(yv)) {
      moved.push(k.path);
      notes.push(
        `moved ${k.path} ${shown(yv)} into the JSON, whose ${path} is ${shown(now)}${jv === undefined ? ' (absent: the default)' : ''} already (accelerate refuses it in the YAML beside a JSON file)`,
      );
    } else
      conflicts.push(
        `${key} ${shown(yv).replace(/^"(.*)"$/, '$1')} (the JSON's ${path}: ${shown(now)}${jv === undefined ? ', absent' : ''})`,
      );
  }
  if (precision !== null) {
    const clash = precisionClash(j, precision);
    if (clash) conflicts.push(`mixed_precision ${precision} (the JSON: ${clash})`);
    else {
      applyPrecision(j, precision);
      moved.push('mixed_precision');
      notes.push(
        `moved mixed_precision ${precision} into the JSON's fp16/bf16 blocks (accelerate refuses it in the YAML beside a JSON file; it fills their "auto" with it)`,
      );
    }
  }
  if (conflicts.length > 0)
    throw new UsageError(
      `cannot import ${yamlPath}: accelerate refuses deepspeed_config keys beside deepspeed_config_file, and ${jsonPath} says otherwise: ${conflicts.join('; ')}`,
      'keep one value for each: set it in the JSON and remove it from the YAML (zerowiz left both files untouched)',
    );
}

/** What a JSON's own fp16/bf16 say against a precision, when they contradict it (else null). */
function precisionClash(j: Record<string, unknown>, mp: 'no' | 'fp16' | 'bf16' | 'fp8'): string | null {
  const enabled = (b: string) => (isPlainObject(j[b]) ? (j[b] as Record<string, unknown>).enabled : undefined);
  const fp16 = enabled('fp16');
  const bf16 = enabled('bf16');
  const want = mp === 'fp16' ? 'fp16' : mp === 'no' ? null : 'bf16';
  for (const [b, v] of [
    ['fp16', fp16],
    ['bf16', bf16],
  ] as const) {
    if (v === true && b !== want) return `${b}.enabled true`;
    // A block that says false where the precision wants it on (absent or "auto": accelerate turns it on).
    if (b === want && v === false) return `${b}.enabled false`;
  }
  return null;
}

/** accelerate's set_mixed_precision on a JSON: the block it adds when missing, and its "auto"s filled. */
function applyPrecision(j: Record<string, unknown>, mp: 'no' | 'fp16' | 'bf16' | 'fp8'): void {
  if (mp === 'fp16' && !('fp16' in j)) j.fp16 = { enabled: true, auto_cast: true };
  if ((mp === 'bf16' || mp === 'fp8') && !('bf16' in j)) j.bf16 = { enabled: true };
  const on = { fp16: mp === 'fp16', bf16: mp === 'bf16' || mp === 'fp8' };
  for (const b of ['fp16', 'bf16'] as const) {
    const block = j[b];
    if (isPlainObject(block) && block.enabled === 'auto') block.enabled = on[b];
  }
}

/** The DeepSpeed config accelerate builds from a YAML's deepspeed_config keys when there is no JSON file. */
function jsonFromYaml(
  ds: Record<string, unknown>,
  precision: 'no' | 'fp16' | 'bf16' | 'fp8' | null,
): Record<string, unknown> {
  const zero: Record<string, unknown> = { stage: typeof ds.zero_stage === 'number' ? ds.zero_stage : 2 };
  for (const [block, dev, path] of [
    ['offload_optimizer', 'offload_optimizer_device', 'offload_optimizer_nvme_path'],
    ['offload_param', 'offload_param_device', 'offload_param_nvme_path'],
  ] as const) {
    const device = ds[dev];
    if (typeof device === 'string' && device !== 'none')
      zero[block] = device === 'nvme' ? { device, nvme_path: ds[path] ?? 'none' } : { device };
  }
  if (ds.zero3_save_16bit_model !== undefined)
    zero.stage3_gather_16bit_weights_on_model_save = YES(ds.zero3_save_16bit_model);
  const out: Record<string, unknown> = { zero_optimization: zero };
  if (ds.gradient_accumulation_steps !== undefined) out.gradient_accumulation_steps = ds.gradient_accumulation_steps;
  if (ds.gradient_clipping !== undefined) out.gradient_clipping = ds.gradient_clipping;
  // DeepSpeedPlugin.set_mixed_precision: the block of the precision, written by accelerate itself.
  if (precision !== null) applyPrecision(out, precision);
  return out;
}

/**
 * Takes the modelled values of a DeepSpeed JSON into raw answers; absent keys get DeepSpeed's own defaults.
 * `from` records the JSON key each answer came from. An "auto" goes to the answer as it is: the answers that
 * take one (accelerate fills it) keep it, the others refuse it, and the import names the key.
 */
function absorbJson(
  j: Record<string, unknown>,
  raw: Record<string, unknown>,
  from: Partial<Record<QuestionId, string>>,
): void {
  const D = DEEPSPEED_DEFAULTS;
  const zero = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : D.stage;
  const opt = isPlainObject(zero.offload_optimizer) ? zero.offload_optimizer : {};
  const par = isPlainObject(zero.offload_param) ? zero.offload_param : {};
  const device = (v: unknown) => (v === 'cpu' || v === 'nvme' ? v : 'none');
  const optDev = device(opt.device);
  // DeepSpeed reads offload_param at stage 3 only.
  const parDev = stage === 3 ? device(par.device) : 'none';
  const put = (id: QuestionId, value: unknown, key: string) => {
    raw[id] = value;
    from[id] = key;
  };
  const mode = modeFromStage(stage, optDev !== 'none');
  if (mode) {
    put('mode', mode, 'zero_optimization.stage');
    if (MODE_INFO[mode].offloadOptimizer && optDev !== 'none')
      put('offload_device', optDev, 'zero_optimization.offload_optimizer.device');
    // The parameters follow the optimizer's device unless the file splits them.
    const given = withDefaults(
      parseAnswers({ mode: raw.mode, ...(raw.offload_device ? { offload_device: raw.offload_device } : {}) }),
    );
    if (stage === 3 && given.offload_param_device !== parDev)
      put('offload_param_device', parDev, 'zero_optimization.offload_param.device');
  }
  const nvme = (
    [
      [opt, 'offload_optimizer'],
      [par, 'offload_param'],
    ] as const
  ).find(([b]) => typeof b.nvme_path === 'string' && b.nvme_path !== 'auto');
  if (nvme) put('nvme_path', nvme[0].nvme_path, `zero_optimization.${nvme[1]}.nvme_path`);
  const pin = (
    [
      [opt, 'offload_optimizer'],
      [par, 'offload_param'],
    ] as const
  ).find(([b]) => b.pin_memory !== undefined);
  if (pin) put('pin_memory', pin[0].pin_memory, `zero_optimization.${pin[1]}.pin_memory`);
  /** The value of a zero_optimization key (by its name or alias), else DeepSpeed's default, with its path. */
  const pick = (id: QuestionId, key: string, fallback: unknown) => {
    const k = mustKey('json', `zero_optimization.${key}`);
    const v = zero[key] ?? (k.alias !== undefined ? zero[k.alias] : undefined);
    put(id, v ?? fallback, k.path);
  };
  pick('overlap_comm', 'overlap_comm', D.overlapComm(stage));
  pick('contiguous_gradients', 'contiguous_gradients', D.contiguous_gradients);
  pick('reduce_bucket_size', 'reduce_bucket_size', D.reduce_bucket_size);
  if (stage === 3) {
    // Stage-3-only keys: absent means DeepSpeed's default; below stage 3 they are not written at all.
    pick('sub_group_size', 'sub_group_size', D.sub_group_size);
    pick('prefetch_bucket_size', 'stage3_prefetch_bucket_size', D.stage3_prefetch_bucket_size);
    pick('param_persistence_threshold', 'stage3_param_persistence_threshold', D.stage3_param_persistence_threshold);
    pick('max_live_parameters', 'stage3_max_live_parameters', D.stage3_max_live_parameters);
    pick('max_reuse_distance', 'stage3_max_reuse_distance', D.stage3_max_reuse_distance);
    pick(
      'zero3_save_16bit_model',
      'stage3_gather_16bit_weights_on_model_save',
      D.stage3_gather_16bit_weights_on_model_save,
    );
    // accelerate fills an "auto" here with false at prepare().
    if (raw.zero3_save_16bit_model === 'auto') raw.zero3_save_16bit_model = false;
    else raw.zero3_save_16bit_model = YES(raw.zero3_save_16bit_model);
  }
  const fp16 = isPlainObject(j.fp16) ? j.fp16.enabled : undefined;
  const bf16 = isPlainObject(j.bf16) ? j.bf16.enabled : isPlainObject(j.bfloat16) ? j.bfloat16.enabled : undefined;
  // An enabled block wins over an "auto" one: accelerate fills the "auto" with false unless --mixed_precision
  // asks for it, and refuses the other precision at launch.
  if (fp16 === true) raw.mixed_precision = 'fp16';
  else if (bf16 === true) raw.mixed_precision = 'bf16';
  else if (fp16 === 'auto' || bf16 === 'auto') raw.mixed_precision = 'auto';
  else if (raw.mixed_precision === undefined) raw.mixed_precision = 'no';
  raw.gradient_checkpointing = isPlainObject(j.activation_checkpointing);
  // bf16 master weights, gradients and moments (what master_weights none writes): the estimate counts them.
  const b = isPlainObject(j.bf16) ? j.bf16 : null;
  if (b && b.bf16_master_weights_and_grads === true && b.bf16_optimizer_states === true) raw.master_weights = 'none';
  if (j.gradient_accumulation_steps !== undefined)
    put('gradient_accumulation_steps', j.gradient_accumulation_steps, 'gradient_accumulation_steps');
  if (j.gradient_clipping !== undefined) put('gradient_clipping', j.gradient_clipping, 'gradient_clipping');
}

/** The parts of `orig` that `emitted` does not reproduce (missing or different leaves), as a nested object. */
function difference(
  orig: Record<string, unknown>,
  emitted: Record<string, unknown>,
  prefix: string,
  drop: Set<string>,
): { value: Record<string, unknown>; paths: string[] } {
  const value: Record<string, unknown> = {};
  const paths: string[] = [];
  for (const [k, v] of Object.entries(orig)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (drop.has(path)) continue;
    const e = emitted[k];
    if (isPlainObject(v) && isPlainObject(e)) {
      const sub = difference(v, e, path, drop);
      if (sub.paths.length > 0) {
        value[k] = sub.value;
        paths.push(...sub.paths);
      }
    } else if (JSON.stringify(v) !== JSON.stringify(e)) {
      value[k] = v;
      paths.push(path);
    }
  }
  return { value, paths };
}
