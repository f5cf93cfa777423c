/**
 * Emitters: pure functions of a Setup. The accelerate YAML is written the way accelerate's own
 * `to_yaml_file` writes it (PyYAML safe_dump: sorted keys, block style, `'no'` quoted, None dropped);
 * the DeepSpeed JSON in the seed's key order, with its 4-space indent and 1e9-style element counts.
 */
import { Document } from 'yaml';
import { DEEPSPEED_DEFAULTS } from './deepspeed-defaults.js';
import { MODE_INFO } from './modes.js';
import { formatSci, optimizerOffloadDevice, paramOffloadDevice, type Answers } from './questions.js';

export { DEEPSPEED_DEFAULTS };
import { dsConfigReference, type Setup } from './setup.js';

/** The batch keys zerowiz writes as "auto" unless the setup fixes one of them. */
export const BATCH_KEYS = ['train_batch_size', 'train_micro_batch_size_per_gpu'] as const;

/** A number the JSON writes in the seed's short scientific form (5e7). */
export class Sci {
  constructor(readonly value: number) {}
}

/** A JSON value as the emitter builds it: plain JSON plus Sci numbers. */
export type JsonOut = null | boolean | number | string | Sci | JsonOut[] | { [key: string]: JsonOut };

// ---------------------------------------------------------------------------------------------
// accelerate YAML

/** The accelerate config as a plain object, before serialization (keys unsorted). */
export function accelerateConfigObject(setup: Setup): Record<string, unknown> {
  const a = setup.answers;
  const multi = a.num_machines > 1;
  const ds: Record<string, unknown> = {
    deepspeed_config_file: dsConfigReference(setup),
    zero3_init_flag: a.zero3_init,
  };
  if (a.moe_layer_cls_names !== '') ds.deepspeed_moe_layer_cls_names = a.moe_layer_cls_names;
  if (multi) {
    ds.deepspeed_multinode_launcher = a.multinode_launcher;
    if (a.multinode_launcher !== 'standard') {
      ds.deepspeed_hostfile = a.hostfile;
      if (a.exclusion_filter !== '') ds.deepspeed_exclusion_filter = a.exclusion_filter;
      if (a.inclusion_filter !== '') ds.deepspeed_inclusion_filter = a.inclusion_filter;
    }
  }
  const out: Record<string, unknown> = { ...machineKeys(a), deepspeed_config: ds, distributed_type: 'DEEPSPEED' };
  if (a.dynamo_backend !== 'no') out.dynamo_config = { dynamo_backend: a.dynamo_backend.toUpperCase() };
  return deepMerge(out, setup.extra?.yaml ?? {});
}

/**
 * The keys `accelerate config` writes on its "This machine" path whatever the distributed type: the
 * machines, the processes, the rendezvous, and the fixed ones (no CPU, no TPU, no NUMA affinity).
 */
export function machineKeys(
  a: Pick<
    Answers,
    | 'debug'
    | 'num_machines'
    | 'num_processes'
    | 'machine_rank'
    | 'same_network'
    | 'rdzv_backend'
    | 'main_process_ip'
    | 'main_process_port'
  >,
): Record<string, unknown> {
  const multi = a.num_machines > 1;
  const out: Record<string, unknown> = {
    compute_environment: 'LOCAL_MACHINE',
    debug: a.debug,
    downcast_bf16: 'no',
    enable_cpu_affinity: false,
    machine_rank: multi ? a.machine_rank : 0,
    main_training_function: 'main',
    num_machines: a.num_machines,
    num_processes: a.num_processes,
    rdzv_backend: multi && !a.same_network ? a.rdzv_backend : 'static',
    same_network: multi ? a.same_network : true,
    tpu_env: [],
    tpu_use_cluster: false,
    tpu_use_sudo: false,
    use_cpu: false,
  };
  if (multi) {
    out.main_process_ip = a.main_process_ip;
    if (a.main_process_port !== null) out.main_process_port = a.main_process_port;
  }
  return out;
}

/** Serializes like PyYAML's safe_dump with default options. */
export function dumpYaml(obj: unknown, sortKeys = true): string {
  const doc = new Document(obj, { version: '1.1', sortMapEntries: sortKeys });
  return doc.toString({
    singleQuote: true,
    indentSeq: false,
    lineWidth: 0,
    minContentWidth: 0,
    flowCollectionPadding: false,
  });
}

/** The accelerate YAML text, byte for byte as accelerate saves it. */
export function toAccelerateYaml(setup: Setup): string {
  return dumpYaml(accelerateConfigObject(setup));
}

// ---------------------------------------------------------------------------------------------
// DeepSpeed JSON

function sciOrAuto(v: number | 'auto'): JsonOut {
  return v === 'auto' ? 'auto' : new Sci(v);
}

/** DeepSpeed's default offload_param.buffer_size (elements of one NVMe swap buffer). */
export const NVME_PARAM_BUFFER_ELEMENTS = DEEPSPEED_DEFAULTS.offload_param_buffer_size;

function offloadBlock(a: Answers, device: 'cpu' | 'nvme', forParams: boolean): { [key: string]: JsonOut } {
  const block: { [key: string]: JsonOut } = { device };
  if (device === 'nvme') block.nvme_path = a.nvme_path;
  block.pin_memory = a.pin_memory;
  // NVMe parameter swapping asserts that one rank's share of the largest tensor fits one swap buffer
  // ("More elements ... than buffer size"); size the buffer up when the largest layer says it would not.
  if (forParams && device === 'nvme' && a.largest_layer_params !== null) {
    const perRank = Math.ceil(a.largest_layer_params / Math.max(1, a.num_processes));
    if (perRank > NVME_PARAM_BUFFER_ELEMENTS)
      block.buffer_size = new Sci(Math.ceil(perRank / NVME_PARAM_BUFFER_ELEMENTS) * NVME_PARAM_BUFFER_ELEMENTS);
  }
  return block;
}

/** The DeepSpeed config as an ordered object (the seed's order). */
export function deepSpeedConfigObject(setup: Setup): { [key: string]: JsonOut } {
  const a = setup.answers;
  const info = MODE_INFO[a.mode];
  const precision = a.mixed_precision;
  const fp16: { [key: string]: JsonOut } = {
    enabled: precision === 'auto' ? 'auto' : precision === 'fp16',
    ...DEEPSPEED_DEFAULTS.fp16,
  };
  const bf16: { [key: string]: JsonOut } = { enabled: precision === 'auto' ? 'auto' : precision === 'bf16' };
  // No fp32 master weights: DeepSpeed keeps the master weights, gradients and moments in bf16.
  if (a.master_weights === 'none' && (precision === 'bf16' || precision === 'auto')) {
    bf16.bf16_master_weights_and_grads = true;
    bf16.bf16_optimizer_states = true;
  }
  const zero: { [key: string]: JsonOut } = { stage: info.stage };
  const optDevice = optimizerOffloadDevice(a);
  const paramDevice = paramOffloadDevice(a);
  if (optDevice !== 'none') zero.offload_optimizer = offloadBlock(a, optDevice, false);
  if (paramDevice !== 'none') zero.offload_param = offloadBlock(a, paramDevice, true);
  zero.overlap_comm = a.overlap_comm;
  zero.contiguous_gradients = a.contiguous_gradients;
  if (info.stage === 3) zero.sub_group_size = new Sci(a.sub_group_size);
  zero.reduce_bucket_size = sciOrAuto(a.reduce_bucket_size);
  if (info.stage === 3) {
    zero.stage3_prefetch_bucket_size = sciOrAuto(a.prefetch_bucket_size);
    zero.stage3_param_persistence_threshold = sciOrAuto(a.param_persistence_threshold);
    zero.stage3_max_live_parameters = new Sci(a.max_live_parameters);
    zero.stage3_max_reuse_distance = new Sci(a.max_reuse_distance);
    zero.stage3_gather_16bit_weights_on_model_save = a.zero3_save_16bit_model;
  }
  const out: { [key: string]: JsonOut } = { fp16, bf16, zero_optimization: zero };
  if (optDevice === 'nvme' || paramDevice === 'nvme') out.aio = { ...DEEPSPEED_DEFAULTS.aio };
  if (a.gradient_checkpointing) {
    out.activation_checkpointing = {
      partition_activations: false,
      cpu_checkpointing: false,
      contiguous_memory_optimization: false,
    };
  }
  out.gradient_accumulation_steps = a.gradient_accumulation_steps;
  if (a.gradient_clipping !== null) out.gradient_clipping = a.gradient_clipping;
  out.train_batch_size = 'auto';
  out.train_micro_batch_size_per_gpu = 'auto';
  out.wall_clock_breakdown = false;
  const extra = (setup.extra?.json ?? {}) as { [key: string]: JsonOut };
  const merged = deepMerge(out, extra) as { [key: string]: JsonOut };
  // A batch size the setup fixes (an import keeps the file's) comes with exactly the batch keys the setup
  // gives: an "auto" partner would make accelerate fill it from the DataLoader, and DeepSpeed then asserts the
  // fixed one against it; without it, DeepSpeed derives it.
  if (BATCH_KEYS.some((k) => typeof extra[k] === 'number'))
    for (const k of BATCH_KEYS) if (!(k in extra)) delete merged[k];
  return merged;
}

/** Serializes with the seed's layout: 4-space indent, `"key": value`, Sci numbers as 5e7, no trailing newline. */
export function stringifyJson(value: JsonOut, indent = ''): string {
  if (value instanceof Sci) return formatSci(value.value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => inner + stringifyJson(v, inner)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${stringifyJson(v, inner)}`).join(',\n')}\n${indent}}`;
}

/** The DeepSpeed JSON text (the seed's layout, no trailing newline, as the seed file). */
export function toDeepSpeedJson(setup: Setup): string {
  return stringifyJson(deepSpeedConfigObject(setup));
}

/** Turns Sci markers into plain numbers: what a JSON parser reads back. */
export function plainJson(value: JsonOut): unknown {
  if (value instanceof Sci) return value.value;
  if (Array.isArray(value)) return value.map(plainJson);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainJson(v)]));
  return value;
}

/** Merges `extra` into `base`: existing keys keep their place, objects merge, new keys go last. */
export function deepMerge<T extends Record<string, unknown>>(base: T, extra: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    const cur = out[k];
    if (isPlainObject(cur) && isPlainObject(v)) out[k] = deepMerge(cur, v);
    else out[k] = v;
  }
  return out as T;
}

/** True for a plain object (not an array, not null, not a Sci). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Sci);
}
