/**
 * Import: an existing accelerate YAML (and the DeepSpeed JSON its deepspeed_config_file names) into a
 * Setup. Keys zerowiz does not model are kept (written back as they were) and reported, never dropped.
 * Keys accelerate refuses next to a JSON file (mixed_precision, zero_stage, ...) are moved into the
 * answers, so the files zerowiz writes back are accepted.
 */
import { dirname, isAbsolute, join } from 'node:path';
import { UsageError } from '../errors.js';
import { printable } from '../printable.js';
import { parseYamlQuietly, pathPresent, readUserFile } from '../read.js';
import { DEEPSPEED_DEFAULTS, accelerateConfigObject, deepSpeedConfigObject, isPlainObject, plainJson } from './emit.js';
import { MODE_INFO, modeFromStage } from './modes.js';
import { ACCELERATE_KEYS_REFUSED_WITH_DS_FILE, parseAnswers, withDefaults, type Answers } from './questions.js';
import { DEFAULT_FILES, type Setup } from './setup.js';
import { checkAccelerateConfig, checkDeepSpeedConfig, type Finding } from './validate.js';

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
}

function readStructured(path: string, what: string): Record<string, unknown> {
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

const YES = (v: unknown) => v === true || v === 'true' || v === 'yes';

/** Reads an accelerate config (and its DeepSpeed JSON) into a setup. */
export function importAccelerateConfig(yamlPath: string, cwd = process.cwd()): ImportResult {
  const abs = isAbsolute(yamlPath) ? yamlPath : join(cwd, yamlPath);
  const y = readStructured(abs, 'accelerate config');
  const findings: Finding[] = [...checkAccelerateConfig(y)];
  const ds = isPlainObject(y.deepspeed_config) ? y.deepspeed_config : {};
  const raw: Record<string, unknown> = {};
  const setIf = (id: string, v: unknown) => {
    if (v !== undefined && v !== null) raw[id] = v;
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
  ])
    setIf(id, y[id]);
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
  }
  setIf('zero3_init', ds.zero3_init_flag);
  setIf('moe_layer_cls_names', ds.deepspeed_moe_layer_cls_names);
  setIf('multinode_launcher', ds.deepspeed_multinode_launcher);
  setIf('hostfile', ds.deepspeed_hostfile);
  setIf('exclusion_filter', ds.deepspeed_exclusion_filter);
  setIf('inclusion_filter', ds.deepspeed_inclusion_filter);
  const moved: string[] = [];
  const note = (message: string, fix: string) => findings.push({ level: 'warning', rule: 'import-note', message, fix });
  if (y.distributed_type !== 'DEEPSPEED') {
    note(
      `distributed_type was ${String(y.distributed_type)}; zerowiz writes DEEPSPEED, so accelerate uses DeepSpeed with the ZeRO mode chosen here`,
      'check the ZeRO mode (default 2) before writing',
    );
  }
  // Values accelerate itself would take from the YAML when there is no JSON (or refuse when there is).
  let yamlPrecision: string | null = null;
  if (typeof y.mixed_precision === 'string') {
    const mp = y.mixed_precision.toLowerCase();
    moved.push('mixed_precision');
    if (['no', 'fp16', 'bf16'].includes(mp)) yamlPrecision = mp;
    else if (mp === 'fp8') {
      yamlPrecision = 'bf16';
      note(
        'mixed_precision fp8 cannot sit in the YAML next to a DeepSpeed JSON; zerowiz writes bf16 into the JSON (what accelerate does for fp8)',
        'pass --mixed_precision fp8 to accelerate launch to keep FP8 training',
      );
    }
  }
  for (const k of ACCELERATE_KEYS_REFUSED_WITH_DS_FILE) {
    const [scope, key] = k.split('.') as [string, string | undefined];
    if (key !== undefined && scope === 'deepspeed_config' && key in ds) moved.push(k);
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
  if (ref) {
    const candidates = isAbsolute(ref) ? [ref] : [...new Set([join(cwd, ref), join(dirname(abs), ref)])];
    jsonPath = candidates.find(pathPresent) ?? null;
    // Never a silent stand-in: without its JSON, the file's ZeRO stage and offload settings are unknown.
    if (!jsonPath)
      throw new UsageError(
        `accelerate config ${yamlPath} names deepspeed_config_file ${printable(ref)}, which does not exist (looked in ${candidates.join(' and ')})`,
        'fix that path in the YAML, or put the DeepSpeed JSON there; zerowiz does not guess the ZeRO stage',
      );
    j = readStructured(jsonPath, 'DeepSpeed config');
    findings.push(
      ...checkDeepSpeedConfig(j, typeof y.num_processes === 'number' ? { worldSize: y.num_processes } : {}),
    );
  } else {
    j = jsonFromYaml(ds);
    findings.push(...checkDeepSpeedConfig(j).filter((f) => f.rule !== 'ds-stage-missing'));
  }
  absorbJson(j, raw);
  if (isPlainObject(j.zero_optimization) && j.zero_optimization.stage === 0) {
    note(
      "zero_optimization.stage is 0 (ZeRO off, plain data parallelism), which is not one of zerowiz's modes: the stage is kept as it is until you choose a ZeRO mode",
      'choose a ZeRO mode to shard the optimizer states (1), the gradients (2) or the parameters (3)',
    );
  }
  // A precision the YAML sets wins over a JSON "auto" (accelerate fills the "auto" from it).
  if (
    yamlPrecision !== null &&
    (raw.mixed_precision === 'auto' || (raw.mixed_precision === 'no' && !jsonSetsPrecision(j)))
  )
    raw.mixed_precision = yamlPrecision;
  let given: Partial<Answers>;
  try {
    given = parseAnswers(raw);
  } catch (e) {
    throw new UsageError(
      `cannot import ${yamlPath}: ${(e as Error).message}`,
      'fix that value in the file (zerowiz left it untouched) and try again',
    );
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
  const jsonExtra = difference(j, plainJson(deepSpeedConfigObject(setup)) as Record<string, unknown>, '', new Set());
  setup.extra = {};
  if (yamlExtra.paths.length > 0) setup.extra.yaml = yamlExtra.value;
  if (jsonExtra.paths.length > 0) setup.extra.json = jsonExtra.value;
  // Key names and values come from the file: shown escaped, never raw.
  const kept = [...yamlExtra.paths, ...jsonExtra.paths.map((p) => `json:${p}`)].map(printable);
  const shown = findings.map((f) => ({ ...f, message: printable(f.message), fix: printable(f.fix) }));
  return { setup, kept, moved, findings: shown, jsonPath, given };
}

/** The DeepSpeed config accelerate builds from a YAML's deepspeed_config keys when there is no JSON file. */
function jsonFromYaml(ds: Record<string, unknown>): Record<string, unknown> {
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
  return out;
}

/** True when the JSON itself turns fp16 or bf16 on or off (rather than leaving it out or to "auto"). */
function jsonSetsPrecision(j: Record<string, unknown>): boolean {
  return [j.fp16, j.bf16].some((b) => isPlainObject(b) && typeof b.enabled === 'boolean');
}

/** Takes the modelled values of a DeepSpeed JSON into raw answers; absent keys get DeepSpeed's own defaults. */
function absorbJson(j: Record<string, unknown>, raw: Record<string, unknown>): void {
  const D = DEEPSPEED_DEFAULTS;
  const zero = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : D.stage;
  const opt = isPlainObject(zero.offload_optimizer) ? zero.offload_optimizer : {};
  const par = isPlainObject(zero.offload_param) ? zero.offload_param : {};
  const device = (v: unknown) => (v === 'cpu' || v === 'nvme' ? v : 'none');
  const optDev = device(opt.device);
  // DeepSpeed reads offload_param at stage 3 only.
  const parDev = stage === 3 ? device(par.device) : 'none';
  const mode = modeFromStage(stage, optDev !== 'none');
  if (mode) {
    raw.mode = mode;
    if (MODE_INFO[mode].offloadOptimizer && optDev !== 'none') raw.offload_device = optDev;
    // The parameters follow the optimizer's device unless the file splits them.
    const given = withDefaults(
      parseAnswers({ mode: raw.mode, ...(raw.offload_device ? { offload_device: raw.offload_device } : {}) }),
    );
    if (stage === 3 && given.offload_param_device !== parDev) raw.offload_param_device = parDev;
  }
  const nvme = [opt, par].map((b) => b.nvme_path).find((p) => typeof p === 'string' && p !== 'auto');
  if (nvme !== undefined) raw.nvme_path = nvme;
  const pin = opt.pin_memory ?? par.pin_memory;
  if (typeof pin === 'boolean') raw.pin_memory = pin;
  const pick = (...keys: string[]) => keys.map((k) => zero[k]).find((v) => v !== undefined);
  raw.overlap_comm = typeof zero.overlap_comm === 'boolean' ? zero.overlap_comm : D.overlapComm(stage);
  raw.contiguous_gradients = pick('contiguous_gradients') ?? D.contiguous_gradients;
  raw.reduce_bucket_size = pick('reduce_bucket_size') ?? D.reduce_bucket_size;
  if (stage === 3) {
    // Stage-3-only keys: absent means DeepSpeed's default; below stage 3 they are not written at all.
    raw.sub_group_size = pick('sub_group_size') ?? D.sub_group_size;
    raw.prefetch_bucket_size =
      pick('stage3_prefetch_bucket_size', 'prefetch_bucket_size') ?? D.stage3_prefetch_bucket_size;
    raw.param_persistence_threshold =
      pick('stage3_param_persistence_threshold', 'param_persistence_threshold') ?? D.stage3_param_persistence_threshold;
    raw.max_live_parameters = pick('stage3_max_live_parameters', 'max_live_parameters') ?? D.stage3_max_live_parameters;
    raw.max_reuse_distance = pick('stage3_max_reuse_distance', 'max_reuse_distance') ?? D.stage3_max_reuse_distance;
    const gather = pick(
      'stage3_gather_16bit_weights_on_model_save',
      'gather_16bit_weights_on_model_save',
      'stage3_gather_fp16_weights_on_model_save',
    );
    raw.zero3_save_16bit_model =
      gather === undefined || gather === 'auto' ? D.stage3_gather_16bit_weights_on_model_save : YES(gather);
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
  if (j.gradient_accumulation_steps !== undefined) raw.gradient_accumulation_steps = j.gradient_accumulation_steps;
  if (j.gradient_clipping !== undefined) raw.gradient_clipping = j.gradient_clipping;
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
