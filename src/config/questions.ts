/**
 * The one question catalog. The wizard renders it, `zerowiz generate` maps its flags onto the same ids
 * (kebab case), presets store the same ids. Order = `accelerate config`'s order on the
 * "This machine -> multi-GPU -> DeepSpeed" path (see shared/reference/accelerate-config.md, §1), with the
 * model questions placed just before the ZeRO mode and the DeepSpeed-JSON questions after accelerate's last.
 */
import { MODES, MODE_INFO, isMode, type Mode, type OffloadDevice } from './modes.js';
import { decimalSizeNote, formatBytesExact, formatCountExact, parseBytes, parseCount } from '../text/index.js';
import { UsageError } from '../text/index.js';
import { hasControl } from '../text/index.js';
import type { Interconnect, MasterWeights, OptimizerKind } from './training.js';
import { DEEPSPEED_DEFAULTS as DS } from './deepspeed-defaults.js';
import { ACCELERATE_KEYS_REFUSED_WITH_DS_FILE, LAUNCHERS, keyInfo } from './keys.js';

export { LAUNCHERS };
export type Launcher = (typeof LAUNCHERS)[number];
export const PRECISIONS = ['auto', 'no', 'fp16', 'bf16'] as const;
export type Precision = (typeof PRECISIONS)[number];
export const DYNAMO_BACKENDS = [
  'no',
  'eager',
  'aot_eager',
  'inductor',
  'aot_ts_nvfuser',
  'nvprims_nvfuser',
  'cudagraphs',
  'ofi',
  'fx2trt',
  'onnxrt',
  'tensorrt',
  'aot_torchxla_trace_once',
  'tvm',
] as const;
export type DynamoBackend = (typeof DYNAMO_BACKENDS)[number];
/** What the trained model's tokens are: a language model's sequence, an image DiT's patches, or a video DiT's. */
export type ModelKindAnswer = 'lm' | 'dit' | 'video';
/** Full fine-tuning (every parameter trained) or LoRA adapters on a frozen model. */
export type FineTuning = 'full' | 'lora';

/** Every answer of a setup. Always complete: unanswered ids hold their defaults. */
export interface Answers {
  num_machines: number;
  machine_rank: number;
  main_process_ip: string;
  main_process_port: number | null;
  same_network: boolean;
  rdzv_backend: string;
  debug: boolean;
  dynamo_backend: DynamoBackend;
  model_name: string;
  model_params: number | null;
  largest_layer_params: number | null;
  gpu_memory: number | null;
  cpu_memory: number | null;
  gpu_links: string;
  gpu_model: string;
  cpu_cores: number | null;
  internode: string;
  gpu_hour_price: number | null;
  model_kind: ModelKindAnswer;
  fine_tuning: FineTuning;
  lora_rank: number;
  lora_targets: string;
  trainable_params: number | null;
  micro_batch: number;
  seq_len: number;
  max_pixels: number;
  frames: number;
  gradient_checkpointing: boolean;
  optimizer: OptimizerKind;
  master_weights: MasterWeights;
  extra_gpu_params: number;
  encoders_on_gpu: boolean;
  fp8_models: Fp8Models;
  headroom: number;
  mode: Mode;
  offload_device: OffloadDevice;
  offload_param_device: ParamOffloadDevice;
  nvme_path: string;
  gradient_accumulation_steps: number | 'auto';
  /** null: not written, DeepSpeed's own default applies (what an import keeps when the file has no clipping). */
  gradient_clipping: number | 'auto' | null;
  zero3_save_16bit_model: boolean;
  zero3_init: boolean;
  moe_layer_cls_names: string;
  multinode_launcher: Launcher;
  hostfile: string;
  exclusion_filter: string;
  inclusion_filter: string;
  num_processes: number;
  mixed_precision: Precision;
  overlap_comm: boolean;
  pin_memory: boolean;
  contiguous_gradients: boolean;
  sub_group_size: number;
  reduce_bucket_size: number | 'auto';
  prefetch_bucket_size: number | 'auto';
  param_persistence_threshold: number | 'auto';
  max_live_parameters: number;
  max_reuse_distance: number;
  ds_config_path: string;
}
/** A question id. */
export type QuestionId = keyof Answers;
/** Where ZeRO-3 keeps the parameters: on the GPUs (none), or offloaded to the CPU or NVMe. */
export type ParamOffloadDevice = 'none' | OffloadDevice;
export const PARAM_OFFLOAD_DEVICES: readonly ParamOffloadDevice[] = ['none', 'cpu', 'nvme'];

/** What was found on this machine, used for defaults (GPU count and memory). */
export interface DetectedEnv {
  gpuCount: number | null;
  gpuMemoryBytes: number | null;
  cpuMemoryBytes: number | null;
  /** How the GPUs are linked (nvidia-smi topo -m), for the step-time estimate; absent when not detected. */
  interconnect?: Interconnect;
  /** The GPU catalog's name for the detected GPUs (src/estimate/gpus.ts), for the step time; absent when unknown. */
  gpuModel?: string;
  /** CPU cores of this machine (the OS's count), for the host optimizer's step time; absent when not detected. */
  cpuCores?: number;
}
export const NO_DETECTION: DetectedEnv = { gpuCount: null, gpuMemoryBytes: null, cpuMemoryBytes: null };

/** Parse result of one typed answer. */
/** A parsed answer, or why not; `note` says how it was read when that may surprise (`80GB` is 74.51 GiB). */
export type Parsed<T> = { ok: true; value: T; note?: string } | { ok: false; error: string };

/** One choice of a select question. */
export interface Choice<T> {
  value: T;
  label: string;
  help?: string;
}

/** DiffSynth's video size (its Wan examples: --height 480 --width 832), the max_pixels default of a video model. */
export const VIDEO_DEFAULT_PIXELS = 480 * 832;

/** Which frozen models DiffSynth loads in fp8 (its --fp8_models): none, the encoders, the LoRA base model (dit), or all. */
export type Fp8Models = 'none' | 'encoders' | 'dit' | 'all';

/** One question: how it is asked, when, its default, how it is parsed, and which keys it sets. */
export interface Question<K extends QuestionId = QuestionId> {
  id: K;
  kind: 'select' | 'text' | 'boolean';
  section: 'machine' | 'model' | 'deepspeed' | 'processes' | 'json';
  /** zerowiz's wording. */
  prompt: string;
  /** accelerate config's wording, when accelerate asks it. */
  acceleratePrompt?: string;
  help: string;
  /** The accelerate YAML key it sets (dotted), if any. */
  yamlKey?: string;
  /** The DeepSpeed JSON keys it sets (dotted paths, exactly as the emitter writes them), if any. */
  jsonKey?: string;
  /** Where zerowiz's default differs from `accelerate config`'s: accelerate's default and why zerowiz's differs. */
  accelerateDefault?: { value: string; why: string };
  choices?: readonly Choice<Answers[K]>[];
  /** Advanced: left out of the wizard's walk (defaults apply), editable from the review screen and flags. */
  advanced?: boolean;
  /**
   * A file or directory path: what the user types (the wizard's field, the flag) expands `~` and `$VAR` as a
   * shell would and is resolved against the launch directory (src/fs/expand.ts expandPathAnswer).
   */
  path?: boolean;
  when: (a: Answers) => boolean;
  defaultValue: (a: Answers, env: DetectedEnv) => Answers[K];
  parse: (text: string, a: Answers) => Parsed<Answers[K]>;
  format: (v: Answers[K]) => string;
}

// ---------------------------------------------------------------------------------------------
// Parsers shared by many questions.

function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}
function fail<T>(error: string): Parsed<T> {
  return { ok: false, error };
}
function intIn(min: number, max = Number.MAX_SAFE_INTEGER, what = 'a whole number') {
  return (text: string): Parsed<number> => {
    const t = text.trim();
    if (!/^[0-9]+$/.test(t)) return fail(`'${text}' is not ${what}; type digits only, e.g. ${min}`);
    const n = Number(t);
    if (n < min || n > max)
      return fail(max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}` : `must be from ${min} to ${max}`);
    return ok(n);
  };
}
/** Yes/no, as accelerate's converter but also taking y/n/true/false. */
export function parseBool(text: string): Parsed<boolean> {
  const t = text.trim().toLowerCase();
  if (['yes', 'y', 'true', '1', 'on'].includes(t)) return ok(true);
  if (['no', 'n', 'false', '0', 'off'].includes(t)) return ok(false);
  return fail(`'${text}' is not yes or no`);
}
function choiceParser<T extends string>(values: readonly T[]) {
  return (text: string): Parsed<T> => {
    const t = text.trim();
    const hit = values.find((v) => v.toLowerCase() === t.toLowerCase());
    return hit !== undefined ? ok(hit) : fail(`'${text}' is not one of ${values.join(', ')}`);
  };
}
/** A count of elements in decimal (`50000000`, `5e7`, `1.5e8`): never hexadecimal, octal or binary. */
const DECIMAL_COUNT_RE = /^[0-9]+(\.[0-9]*)?(e\+?[0-9]+)?$/i;
function bigInt(text: string): Parsed<number> {
  const t = text.trim();
  const n = Number(t);
  if (!DECIMAL_COUNT_RE.test(t) || !Number.isInteger(n))
    return fail(`'${text}' is not a whole number >= 0 in decimal (1e9 and 50000000 both work)`);
  if (!Number.isSafeInteger(n))
    return fail(`'${text}' is larger than the ${formatSci(Number.MAX_SAFE_INTEGER)} a JSON number keeps exactly`);
  return ok(n);
}
function bigIntOrAuto(text: string): Parsed<number | 'auto'> {
  return text.trim().toLowerCase() === 'auto' ? ok('auto') : bigInt(text);
}
function str(text: string): Parsed<string> {
  return ok(text.trim());
}
const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** An IPv6 address: at most one `::`, hex groups, an optional IPv4 tail and `%zone`. */
function isIPv6(text: string): boolean {
  const [addr = '', zone, more] = text.split('%');
  if (more !== undefined || (zone !== undefined && !/^[A-Za-z0-9_.-]+$/.test(zone))) return false;
  const v4 = /^(.*:)(\d+\.[\d.]+)$/.exec(addr);
  if (v4 && !IPV4_RE.test(v4[2]!)) return false;
  const body = v4 ? `${v4[1]}0:0` : addr;
  const halves = body.split('::');
  if (halves.length > 2) return false;
  const groups = halves.map((h) => (h === '' ? [] : h.split(':')));
  if (!groups.flat().every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  const n = groups.flat().length;
  return halves.length === 2 ? n <= 7 : n === 8;
}
/** A host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123), not all digits. */
function isHostName(text: string): boolean {
  if (text.length > 253 || /^[\d.]+$/.test(text)) return false;
  return text.split('.').every((l) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(l));
}
/** The address of node 0: an IPv4 or IPv6 address or a host name (empty: not set). */
function hostOrAddress(text: string): Parsed<string> {
  const t = text.trim();
  if (t === '' || IPV4_RE.test(t) || isIPv6(t) || isHostName(t)) return ok(t);
  return fail(`'${text}' is not an IP address or a host name; e.g. 10.0.0.1, fe80::1 or node0.cluster`);
}
function countOrNull(what: string) {
  return (text: string): Parsed<number | null> => {
    if (text.trim() === '') return ok(null);
    try {
      return ok(parseCount(text, what));
    } catch (e) {
      return fail(e instanceof UsageError ? `${e.message}; ${e.hint ?? ''}`.trim() : String(e));
    }
  };
}
function bytesOrNull(what: string) {
  return (text: string): Parsed<number | null> => {
    if (text.trim() === '') return ok(null);
    try {
      const value = parseBytes(text, what);
      const note = decimalSizeNote(text);
      return note ? { ok: true, value, note } : ok(value);
    } catch (e) {
      return fail(e instanceof UsageError ? `${e.message}; ${e.hint ?? ''}`.trim() : String(e));
    }
  };
}
/**
 * A detected memory size as a default answer: rounded down to 0.01 GiB, so it reads as `79.64GiB` rather
 * than `81559MiB` or a KiB count, never overstates the memory, and still reads back exactly.
 */
function detectedSize(bytes: number | null): number | null {
  if (bytes === null) return null;
  return Math.round((Math.floor((bytes / 2 ** 30) * 100) / 100) * 2 ** 30);
}
const always = () => true;
const multiNode = (a: Answers) => a.num_machines > 1;
const yesNo = (v: boolean) => (v ? 'yes' : 'no');
const boolChoices: readonly Choice<boolean>[] = [
  { value: false, label: 'no' },
  { value: true, label: 'yes' },
];
const hasModel = (a: Answers) => a.model_params !== null;
const isStage3 = (a: Answers) => MODE_INFO[a.mode].stage === 3;

/** Where the optimizer states go: the mode offloads them (to offload_device) or keeps them on the GPUs. */
export function optimizerOffloadDevice(a: Answers): ParamOffloadDevice {
  return MODE_INFO[a.mode].offloadOptimizer ? a.offload_device : 'none';
}
/** Where the parameters go: only ZeRO-3 offloads them (DeepSpeed ignores offload_param below stage 3). */
export function paramOffloadDevice(a: Answers): ParamOffloadDevice {
  return isStage3(a) ? a.offload_param_device : 'none';
}
/** The gpu_links answer for detected links: nvlink:N, pcie, or empty when not detected. */
function linksOf(i: Interconnect | undefined): string {
  if (!i || i.kind === 'unknown') return '';
  return i.kind === 'nvlink' && i.nvlinks ? `nvlink:${i.nvlinks}` : 'pcie';
}
const isOffload = (a: Answers) => optimizerOffloadDevice(a) !== 'none' || paramOffloadDevice(a) !== 'none';
const usesNvme = (a: Answers) => optimizerOffloadDevice(a) === 'nvme' || paramOffloadDevice(a) === 'nvme';

function q<K extends QuestionId>(def: Question<K>): Question<K> {
  return def;
}

/** The catalog, in the order asked. */
export const QUESTIONS = [
  q({
    id: 'num_machines',
    kind: 'text',
    section: 'machine',
    prompt: 'How many machines (nodes) will you use? More than 1 means multi-node training.',
    acceleratePrompt: 'How many different machines will you use (use more than 1 for multi-node training)? [1]: ',
    help: 'The number of nodes. Each node runs num_processes / num_machines processes (one per GPU).',
    yamlKey: 'num_machines',
    when: always,
    defaultValue: () => 1,
    parse: intIn(1, 100000),
    format: String,
  }),
  q({
    id: 'machine_rank',
    kind: 'text',
    section: 'machine',
    prompt: 'What is the rank of this machine? (0 on the main node)',
    acceleratePrompt: 'What is the rank of this machine?',
    help: 'Which node this is, from 0 to num_machines - 1. The node with rank 0 hosts the main process.',
    yamlKey: 'machine_rank',
    when: multiNode,
    defaultValue: () => 0,
    parse: (t, a) => intIn(0, Math.max(0, a.num_machines - 1))(t),
    format: String,
  }),
  q({
    id: 'main_process_ip',
    kind: 'text',
    section: 'machine',
    prompt: 'IP address of the machine that hosts the main process (rank 0)',
    acceleratePrompt: 'What is the IP address of the machine that will host the main process? ',
    help: 'Every node connects to this address. Use the address of node 0 on the network the nodes share.',
    yamlKey: 'main_process_ip',
    when: multiNode,
    defaultValue: () => '',
    parse: hostOrAddress,
    format: (v) => v,
  }),
  q({
    id: 'main_process_port',
    kind: 'text',
    section: 'machine',
    prompt: 'Port for talking to the main process',
    acceleratePrompt: 'What is the port you will use to communicate with the main process? ',
    help: 'A free TCP port on node 0, the same on every node. accelerate uses 29500 when none is given.',
    yamlKey: 'main_process_port',
    when: multiNode,
    defaultValue: () => 29500,
    parse: (t) => (t.trim() === '' ? ok(null) : intIn(1, 65535, 'a port number')(t)),
    format: (v) => (v === null ? '' : String(v)),
  }),
  q({
    id: 'same_network',
    kind: 'boolean',
    section: 'machine',
    prompt: 'Are all the machines on the same local network?',
    acceleratePrompt:
      'Are all the machines on the same local network? Answer `no` if nodes are on the cloud and/or on different network hosts [YES/no]: ',
    help: 'Answer no if the nodes are in the cloud or on different networks; you will then be asked for a rendezvous backend.',
    yamlKey: 'same_network',
    choices: [...boolChoices].reverse(),
    when: multiNode,
    defaultValue: () => true,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'rdzv_backend',
    kind: 'text',
    section: 'machine',
    prompt: "Rendezvous backend ('static', 'c10d', ...)",
    acceleratePrompt: "What rendezvous backend will you use? ('static', 'c10d', ...): ",
    help: "How the nodes find each other. 'static' needs a fixed main IP; 'c10d' suits elastic or cloud setups.",
    yamlKey: 'rdzv_backend',
    when: (a) => multiNode(a) && !a.same_network,
    defaultValue: () => 'static',
    parse: (t) => (t.trim() === '' ? fail('type a backend name, e.g. static or c10d') : ok(t.trim())),
    format: (v) => v,
  }),
  q({
    id: 'debug',
    kind: 'boolean',
    section: 'machine',
    prompt: 'Check distributed operations for errors while running? (avoids silent timeouts, but slower)',
    acceleratePrompt:
      'Should distributed operations be checked while running for errors? This can avoid timeout issues but will be slower. [yes/NO]: ',
    help: 'Sets debug: true, which makes accelerate check collective operations and report mismatches instead of hanging.',
    yamlKey: 'debug',
    choices: boolChoices,
    when: always,
    defaultValue: () => false,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'dynamo_backend',
    kind: 'select',
    section: 'machine',
    prompt: 'Optimize your script with torch dynamo? Pick a backend, or no.',
    acceleratePrompt: 'Do you wish to optimize your script with torch dynamo?[yes/NO]:',
    help: 'torch.compile backend; inductor is the usual one. Stored upper-case under dynamo_config.dynamo_backend.',
    yamlKey: 'dynamo_config.dynamo_backend',
    choices: DYNAMO_BACKENDS.map((b) => ({ value: b, label: b === 'no' ? 'no (do not compile)' : b })),
    when: always,
    defaultValue: () => 'no',
    parse: choiceParser(DYNAMO_BACKENDS),
    format: (v) => v,
  }),
  q({
    id: 'model_name',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'Model name (for your notes; not written to the configs)',
    help: 'A label kept in presets, e.g. Qwen-Image DiT.',
    when: always,
    defaultValue: () => '',
    parse: str,
    format: (v) => v,
  }),
  q({
    id: 'model_params',
    kind: 'text',
    section: 'model',
    prompt: 'How many parameters does the trained model have? (e.g. 20.4B, 7e9, 350M; empty to skip the estimate)',
    help: 'All parameters of the model being trained, counted once. Used only for the memory estimate at the ZeRO question.',
    when: always,
    defaultValue: () => null,
    parse: countOrNull('parameter count'),
    format: (v) => (v === null ? '' : formatCountExact(v)),
  }),
  q({
    id: 'largest_layer_params',
    kind: 'text',
    section: 'model',
    prompt:
      'Parameters of the largest single layer (e.g. 120M; empty: leave the gathered layer out of the ZeRO-3 figures)',
    help: "ZeRO-3 gathers one whole layer at a time on a GPU; DeepSpeed's estimator calls this largest_layer_params.",
    when: (a) => a.model_params !== null,
    defaultValue: () => null,
    parse: countOrNull('largest layer'),
    format: (v) => (v === null ? '' : formatCountExact(v)),
  }),
  q({
    id: 'gpu_memory',
    kind: 'text',
    section: 'model',
    prompt: 'Memory of one GPU (e.g. 80GiB; G and GiB mean 2^30 bytes, GB 10^9)',
    help: 'Taken from nvidia-smi when it is found. Used to mark which ZeRO modes fit.',
    when: (a) => a.model_params !== null,
    defaultValue: (_a, env) => detectedSize(env.gpuMemoryBytes),
    parse: bytesOrNull('GPU memory'),
    format: (v) => (v === null ? '' : formatBytesExact(v)),
  }),
  q({
    id: 'cpu_memory',
    kind: 'text',
    section: 'model',
    prompt: 'CPU memory (RAM) of one machine (e.g. 1TiB)',
    help: 'Read from the OS when zerowiz runs on the training machine. Offload modes keep optimizer states here.',
    when: (a) => a.model_params !== null,
    defaultValue: (_a, env) => detectedSize(env.cpuMemoryBytes),
    parse: bytesOrNull('CPU memory'),
    format: (v) => (v === null ? '' : formatBytesExact(v)),
  }),
  q({
    id: 'gpu_links',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'How the GPUs of a machine are linked: nvlink:N (N links per pair), pcie, or empty (not known)',
    help: 'Read from nvidia-smi topo -m when the wizard starts; the step time of each ZeRO mode uses it, and a launch of the setup uses the same links (empty: it says PCIe is assumed). Not written to the configs.',
    when: hasModel,
    defaultValue: (_a, env) => linksOf(env.interconnect),
    parse: (t) => {
      const v = t.trim().toLowerCase();
      if (v === '' || v === 'pcie' || /^nvlink:[1-9]\d{0,2}$/.test(v)) return ok(v);
      return fail(`'${t}' is not nvlink:N, pcie or empty`);
    },
    format: (v) => v,
  }),
  q({
    id: 'gpu_model',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'Which GPU: its name in the GPU catalog (e.g. h100-sxm, a100-80, rtx-4090; empty: not known)',
    help: "Read from nvidia-smi's GPU name when the wizard starts. The step time divides the workload by its peak; empty uses the estimate's stated default (an A100 80 GB). `zerowiz estimate --list-gpus` lists the catalog. Not written to the configs.",
    when: hasModel,
    defaultValue: (_a, env) => env.gpuModel ?? '',
    parse: (t) => {
      const v = t.trim().toLowerCase();
      if (v === '' || /^[a-z0-9][a-z0-9-]*$/.test(v)) return ok(v);
      return fail(`'${t}' is not a GPU catalog name (lower-case letters, digits and dashes, e.g. h100-sxm)`);
    },
    format: (v) => v,
  }),
  q({
    id: 'cpu_cores',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'CPU cores of one machine (empty: not known)',
    help: "Read from the OS when the wizard starts. With the optimizer offloaded, DeepSpeed's CPU Adam runs on them. Not written to the configs.",
    when: hasModel,
    defaultValue: (_a, env) => env.cpuCores ?? null,
    parse: (t) => (t.trim() === '' ? ok(null) : intIn(1, 100000)(t)),
    format: (v) => (v === null ? '' : String(v)),
  }),
  q({
    id: 'internode',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'The network between machines: [NICs x]FABRIC or RATE (e.g. 8xib-ndr, eth-100g, 400Gb; empty: not known)',
    help: 'What the collectives run on across nodes, for the step time. Fabrics: ib-edr, ib-hdr, ib-ndr, ib-xdr, eth-10g ... eth-400g, roce-100g ... roce-400g. Not written to the configs.',
    when: (a) => hasModel(a) && a.num_machines > 1,
    defaultValue: () => '',
    parse: (t) => {
      const v = t.trim().toLowerCase().replace(/\s+/g, '');
      if (v === '' || /^(\d{1,3}x)?[a-z0-9.-]+$/.test(v)) return ok(v);
      return fail(`'${t}' is not [NICs x]FABRIC or RATE, e.g. 8xib-ndr or 400Gb`);
    },
    format: (v) => v,
  }),
  q({
    id: 'gpu_hour_price',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: "Price of one GPU-hour, for the run's cost (e.g. 2.49; empty: no price)",
    help: "The pipeline's price is its GPU-hours times this. In whatever currency you pay in. Not written to the configs.",
    when: hasModel,
    defaultValue: () => null,
    parse: (t) => {
      const v = t.trim().replace(/^\$/, '');
      if (v === '') return ok(null);
      const n = Number(v);
      return /^\d+(\.\d+)?$/.test(v) && n <= 1e6 ? ok(n) : fail(`'${t}' is not a price, e.g. 2.49`);
    },
    format: (v) => (v === null ? '' : String(v)),
  }),
  q({
    id: 'model_kind',
    kind: 'select',
    section: 'model',
    advanced: true,
    prompt: 'What are the model tokens: a sequence (language model) or image patches (DiT)?',
    help: 'Decides whether the workload is a sequence length or an image resolution. Picking a catalog model sets it.',
    choices: [
      { value: 'lm', label: 'language model', help: 'tokens per sample = the sequence length' },
      { value: 'dit', label: 'image model', help: 'tokens per sample = image patches (from the resolution) + text' },
      { value: 'video', label: 'video DiT', help: 'tokens per sample = patches per frame x latent frames' },
    ],
    when: hasModel,
    defaultValue: () => 'lm',
    parse: choiceParser(['lm', 'dit', 'video'] as const),
    format: (v) => v,
  }),
  q({
    id: 'fine_tuning',
    kind: 'select',
    section: 'model',
    prompt: 'Train every parameter, or LoRA adapters on the frozen model?',
    help: 'Full fine-tuning keeps gradients (16-bit and an fp32 copy) and Adam states (18 bytes per parameter) for every parameter; LoRA only for the adapters, so the frozen model costs just its 16-bit weights. Used for the memory estimate; not written to the configs.',
    choices: [
      { value: 'full', label: 'full fine-tuning', help: 'every parameter trainable' },
      { value: 'lora', label: 'LoRA', help: 'adapters of a chosen rank on the frozen model' },
    ],
    when: hasModel,
    defaultValue: () => 'full',
    parse: choiceParser(['full', 'lora'] as const),
    format: (v) => v,
  }),
  q({
    id: 'lora_rank',
    kind: 'text',
    section: 'model',
    prompt: 'LoRA rank (e.g. 16, 32, 64)',
    help: 'Each targeted Linear layer gains rank x (in + out) trainable parameters.',
    when: (a) => hasModel(a) && a.fine_tuning === 'lora',
    defaultValue: () => 16,
    parse: intIn(1, 65536),
    format: String,
  }),
  q({
    id: 'lora_targets',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: "LoRA target modules, comma-separated (empty: the catalog's usual targets for the model)",
    help: "Module names as PEFT or DiffSynth-Studio's --lora_target_modules take them, e.g. to_q,to_k,to_v. The catalog knows their shapes.",
    when: (a) => hasModel(a) && a.fine_tuning === 'lora',
    defaultValue: () => '',
    parse: (t) =>
      ok(
        t
          .split(',')
          .map((x) => x.trim())
          .filter((x) => x !== '')
          .join(','),
      ),
    format: (v) => v,
  }),
  q({
    id: 'trainable_params',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'Trainable parameters, if not all (e.g. 2B; for LoRA the adapters; empty: from the model and LoRA rank)',
    help: "Full fine-tuning of part of the model (a frozen backbone): the rest counts as frozen 16-bit weights. LoRA: the adapters' parameter count, for a model the catalog does not know; they come on top of the model's parameters.",
    when: hasModel,
    defaultValue: () => null,
    parse: countOrNull('trainable parameters'),
    format: (v) => (v === null ? '' : formatCountExact(v)),
  }),
  q({
    id: 'micro_batch',
    kind: 'text',
    section: 'model',
    prompt: 'Micro-batch per GPU (samples in one forward pass)',
    help: 'train_micro_batch_size_per_gpu: activations grow with it. Used for the memory estimate.',
    when: hasModel,
    defaultValue: () => 1,
    parse: intIn(1, 100000),
    format: String,
  }),
  q({
    id: 'seq_len',
    kind: 'text',
    section: 'model',
    prompt: 'Sequence length (tokens per sample)',
    help: 'The longest sample you train on (model_max_length / max_seq_len). Activations and logits grow with it.',
    when: (a) => hasModel(a) && a.model_kind === 'lm',
    defaultValue: () => 2048,
    parse: intIn(1, 100000000),
    format: String,
  }),
  q({
    id: 'max_pixels',
    kind: 'text',
    section: 'model',
    prompt: 'Largest image in pixels (width x height, e.g. 1048576 for 1024x1024; the --max_pixels of the script)',
    help: "The catalog's VAE and patch factors turn pixels into image tokens (Qwen-Image: 256 pixels per token, so 1024x1024 is 4096 tokens), plus the text tokens. Default DiffSynth's: 1048576 (1024x1024) for an image model, 399360 (480x832) for a video model.",
    when: (a) => hasModel(a) && a.model_kind !== 'lm',
    // DiffSynth's video examples train at --height 480 --width 832; its image ones at --max_pixels 1048576.
    defaultValue: (a) => (a.model_kind === 'video' ? VIDEO_DEFAULT_PIXELS : 1048576),
    parse: (t) => {
      const m = /^\s*(\d+)\s*[x*]\s*(\d+)\s*$/.exec(t);
      if (m) return intIn(1, 1e10)(String(Number(m[1]) * Number(m[2])));
      return intIn(1, 1e10)(t);
    },
    format: String,
  }),
  q({
    id: 'frames',
    kind: 'text',
    section: 'model',
    prompt: 'Frames per video sample (the --num_frames of the script)',
    help: 'The video VAE compresses time (Wan and CogVideoX 4x, LTX-Video 8x): 81 frames make 21 latent frames, each as many tokens as one image of the size above.',
    when: (a) => hasModel(a) && a.model_kind === 'video',
    defaultValue: () => 81,
    parse: intIn(1, 100000),
    format: String,
  }),
  q({
    id: 'gradient_checkpointing',
    kind: 'boolean',
    section: 'model',
    prompt:
      'Will training use gradient checkpointing? (recomputes activations; adds the activation_checkpointing block)',
    help: "Keeps only each block's input and recomputes the rest in backward: far less activation memory for about a third more compute. The memory estimate counts it, and the JSON gets the activation_checkpointing block: ZeRO-3 offload is incompatible with PyTorch's native gradient checkpointing, so scripts such as DiffSynth-Studio's then use DeepSpeed's own, configured by that block.",
    jsonKey: 'activation_checkpointing',
    choices: boolChoices,
    when: always,
    defaultValue: () => false,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'optimizer',
    kind: 'select',
    section: 'model',
    prompt: 'Which optimizer does the training script use?',
    help: "Its states per trained parameter: AdamW two moments (fp32 with fp32 master weights: 8 bytes), 8-bit AdamW two 1-byte moments, Adafactor and SGD about none. torch's AdamW also allocates a copy of one moment during its step. With the optimizer offloaded, accelerate replaces it with DeepSpeed's CPU Adam. Used for the memory estimate; not written to the configs.",
    choices: [
      { value: 'adamw', label: 'AdamW', help: 'torch.optim.AdamW (DiffSynth-Studio, diffusers, HF Trainer)' },
      { value: 'adamw-8bit', label: '8-bit AdamW', help: "bitsandbytes' AdamW8bit: 1-byte moments" },
      { value: 'adafactor', label: 'Adafactor', help: 'factored second moment, no first moment' },
      { value: 'sgd', label: 'SGD', help: 'no state (momentum 0)' },
    ],
    when: hasModel,
    defaultValue: () => 'adamw',
    parse: choiceParser(['adamw', 'adamw-8bit', 'adafactor', 'sgd'] as const),
    format: (v) => v,
  }),
  q({
    id: 'master_weights',
    kind: 'select',
    section: 'model',
    advanced: true,
    prompt: 'Keep fp32 master weights, or train the bf16 weights directly?',
    help: 'DeepSpeed keeps an fp32 copy of the trained weights, fp32 gradients and fp32 Adam moments (16 bytes per trained parameter beyond the 16-bit weight and gradient). none writes bf16.bf16_master_weights_and_grads and bf16_optimizer_states into the JSON: master weights, gradients and moments in bf16 (8 bytes), as trainers without DeepSpeed do in pure bf16. bf16 only.',
    jsonKey: 'bf16.bf16_master_weights_and_grads, bf16.bf16_optimizer_states',
    choices: [
      { value: 'fp32', label: 'fp32 master weights', help: "DeepSpeed's default" },
      { value: 'none', label: 'none (pure bf16)', help: 'bf16_master_weights_and_grads + bf16_optimizer_states' },
    ],
    // Written into the JSON (and read by DeepSpeed at stages 1-3) whenever the precision is bf16 or auto.
    when: (a) => a.mixed_precision === 'bf16' || a.mixed_precision === 'auto',
    defaultValue: () => 'fp32',
    parse: choiceParser(['fp32', 'none'] as const),
    format: (v) => v,
  }),
  q({
    id: 'extra_gpu_params',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'Parameters of other models kept on each GPU during training (text encoder, VAE, EMA; 0 if none)',
    help: 'Frozen models the script keeps on the GPU beside the trained one are not sharded by DeepSpeed. A cached pass (the seed) has none; a single-pass Qwen-Image recipe holds the text encoder and the VAE.',
    when: hasModel,
    defaultValue: () => 0,
    parse: (t) => {
      if (/^\s*0*\s*$/.test(t)) return ok(0);
      const r = countOrNull('parameter count')(t);
      return r.ok ? ok(r.value ?? 0) : r;
    },
    format: (v) => (v === 0 ? '0' : formatCountExact(v)),
  }),
  q({
    id: 'encoders_on_gpu',
    kind: 'boolean',
    section: 'model',
    advanced: true,
    prompt: 'Do the text encoder and VAE run on the GPU every step (nothing precomputed)?',
    help: "A cached pass (the seed's data_process) precomputes the latents and text embeddings, so training holds neither. Without it the encoders stay on each GPU (not sharded) and the VAE encodes each sample at full resolution before the forward pass: the estimate adds their weights (the catalog's, unless extra_gpu_params says) and that working memory.",
    choices: boolChoices,
    when: (a) => hasModel(a) && a.model_kind !== 'lm',
    defaultValue: () => false,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'fp8_models',
    kind: 'select',
    section: 'model',
    advanced: true,
    prompt: 'Which frozen models are loaded in fp8 (DiffSynth --fp8_models)?',
    help: "DiffSynth's --fp8_models loads models whose weights no gradient updates in fp8: 1 byte a parameter instead of bf16's 2. The encoders (when they run on the GPU), the LoRA base model, or both. Used for the memory estimate; not written to the configs.",
    choices: [
      { value: 'none', label: 'none', help: 'every model in the training dtype' },
      { value: 'encoders', label: 'the encoders', help: 'the text encoder(s) and the VAE' },
      { value: 'dit', label: 'the LoRA base model', help: 'the frozen weights under the LoRA adapters' },
      { value: 'all', label: 'both', help: 'the encoders and the LoRA base model' },
    ],
    when: (a) => hasModel(a) && a.model_kind !== 'lm',
    defaultValue: () => 'none',
    parse: choiceParser(['none', 'encoders', 'dit', 'all'] as const),
    format: (v) => v,
  }),
  q({
    id: 'headroom',
    kind: 'text',
    section: 'model',
    advanced: true,
    prompt: 'GPU headroom: percent of each GPU kept free beyond the estimated peak',
    help: 'A mode fits when its peak stays within (100 - headroom)% of the GPU. The peak already counts the CUDA context and the allocator margin.',
    when: hasModel,
    defaultValue: () => 10,
    parse: intIn(0, 90, 'a percentage'),
    format: String,
  }),
  q({
    id: 'ds_config_path',
    kind: 'text',
    path: true,
    section: 'json',
    advanced: true,
    prompt: 'Path the YAML gives for the DeepSpeed JSON (empty: next to the YAML)',
    acceleratePrompt: 'Please enter the path to the json DeepSpeed config file: ',
    help: 'Written as deepspeed_config.deepspeed_config_file. A relative path is resolved from the directory you launch in.',
    yamlKey: 'deepspeed_config.deepspeed_config_file',
    when: always,
    defaultValue: () => '',
    parse: str,
    format: (v) => v,
  }),
  q({
    id: 'mode',
    kind: 'select',
    section: 'deepspeed',
    prompt: "Which ZeRO mode? (DeepSpeed's ZeRO optimization stage, with or without offload)",
    acceleratePrompt: "What should be your DeepSpeed's ZeRO optimization stage?",
    help: 'Sets zero_optimization.stage and the offload_optimizer/offload_param blocks in the DeepSpeed JSON (a ZeRO-3 mode also makes deepspeed_config.zero3_init_flag default to yes in the YAML). Higher stages shard more and save more GPU memory; offload moves state to the CPU (or NVMe) at the cost of traffic.',
    jsonKey:
      'zero_optimization.stage, zero_optimization.offload_optimizer.device, zero_optimization.offload_param.device',
    choices: MODES.map((m) => ({
      value: m,
      label: `${MODE_INFO[m].label}`,
      help: `${MODE_INFO[m].shards} ${MODE_INFO[m].cost}`,
    })),
    when: always,
    defaultValue: () => '2',
    parse: (t) =>
      isMode(t.trim()) ? ok(t.trim() as Mode) : fail(`'${t}' is not a ZeRO mode; use one of ${MODES.join(', ')}`),
    format: (v) => v,
  }),
  q({
    id: 'offload_device',
    kind: 'select',
    section: 'deepspeed',
    prompt: 'Offload to CPU memory or to an NVMe drive?',
    acceleratePrompt: 'Where to offload optimizer states?',
    help: 'cpu keeps offloaded state in RAM. nvme (ZeRO-Infinity) swaps it to a fast local drive; it only really works at stage 3. At ZeRO-3 the parameters follow this device unless the advanced question "where does ZeRO-3 keep the parameters" splits them.',
    jsonKey: 'zero_optimization.offload_optimizer.device',
    choices: [
      { value: 'cpu', label: 'cpu', help: 'Offload to CPU memory (pinned).' },
      { value: 'nvme', label: 'nvme', help: 'Offload to an NVMe drive (ZeRO-Infinity, stage 3).' },
    ],
    when: (a) => MODE_INFO[a.mode].offloadOptimizer,
    defaultValue: () => 'cpu',
    parse: choiceParser(['cpu', 'nvme'] as const),
    format: (v) => v,
  }),
  q({
    id: 'offload_param_device',
    kind: 'select',
    section: 'deepspeed',
    advanced: true,
    prompt: 'Where does ZeRO-3 keep the parameters? (none: on the GPUs)',
    acceleratePrompt: 'Where to offload parameters?',
    help: "accelerate config asks where the optimizer states and where the parameters go, separately; zerowiz's ZeRO-3 offload mode sends both to one device and this answer splits them: ZeRO-3 offload with the parameters on the GPUs (none) offloads only the optimizer states (the usual middle ground), ZeRO-3 with the parameters on cpu offloads only the parameters, and the two may use different devices (optimizer cpu, parameters nvme). Only stage 3 offloads parameters: DeepSpeed ignores offload_param below it.",
    jsonKey: 'zero_optimization.offload_param.device',
    choices: [
      { value: 'none', label: 'none', help: 'Parameters stay on the GPUs (sharded).' },
      { value: 'cpu', label: 'cpu', help: 'Parameters offloaded to CPU memory.' },
      { value: 'nvme', label: 'nvme', help: 'Parameters offloaded to an NVMe drive (ZeRO-Infinity).' },
    ],
    when: isStage3,
    defaultValue: (a) => (MODE_INFO[a.mode].offloadParam ? a.offload_device : 'none'),
    parse: choiceParser(PARAM_OFFLOAD_DEVICES),
    format: (v) => v,
  }),
  q({
    id: 'nvme_path',
    kind: 'text',
    path: true,
    section: 'deepspeed',
    prompt: 'Path on the NVMe drive to offload to',
    acceleratePrompt: 'Nvme Path to offload parameters?',
    help: 'A directory on a local NVMe drive with room for the offloaded state. DeepSpeed writes under it. zerowiz writes it into the JSON: accelerate never passes the nvme paths of its own YAML on, so with accelerate config alone DeepSpeed gets the path "none".',
    jsonKey: 'zero_optimization.offload_optimizer.nvme_path, zero_optimization.offload_param.nvme_path',
    when: usesNvme,
    defaultValue: () => '/nvme',
    parse: (t) => (t.trim() === '' ? fail('NVMe offload needs a path; type a directory such as /nvme') : ok(t.trim())),
    format: (v) => v,
  }),
  q({
    id: 'gradient_accumulation_steps',
    kind: 'text',
    section: 'deepspeed',
    prompt: "Gradient accumulation steps ('auto' takes it from your script's Accelerator)",
    acceleratePrompt: "How many gradient accumulation steps you're passing in your script? [1]: ",
    help: "Written to the DeepSpeed JSON. 'auto' lets accelerate fill in the value your script passes to Accelerator().",
    jsonKey: 'gradient_accumulation_steps',
    accelerateDefault: {
      value: '1',
      why: "a number in the JSON overrides your script's Accelerator(gradient_accumulation_steps=...) (accelerate warns \"mismatch ... Using DeepSpeed's value\"); 'auto' takes the script's value",
    },
    when: always,
    defaultValue: () => 'auto',
    parse: (t) => (t.trim().toLowerCase() === 'auto' ? ok('auto' as const) : intIn(1)(t)),
    format: String,
  }),
  q({
    id: 'gradient_clipping',
    kind: 'text',
    section: 'deepspeed',
    prompt: "Gradient clipping value ('auto': accelerate's default 1.0; 0 turns clipping off)",
    acceleratePrompt: 'Do you want to use gradient clipping? [yes/NO]: ',
    help: "Maximum gradient norm, written to the DeepSpeed JSON. 'default' writes no key, so DeepSpeed's own default applies (1.0 since DeepSpeed 0.19.3, 0.0 before).",
    jsonKey: 'gradient_clipping',
    accelerateDefault: {
      value: 'no',
      why: "accelerate config asks yes/no and writes no value for no, yet accelerate then fills 1.0 at prepare() all the same; 'auto' says so in the JSON (set 0 to really turn clipping off)",
    },
    when: always,
    defaultValue: () => 'auto',
    parse: (t) => {
      const s = t.trim().toLowerCase();
      if (s === 'auto') return ok('auto' as const);
      // Empty (a preset's `null`): not written, so DeepSpeed's own default applies.
      if (s === '' || s === 'default') return ok(null);
      const n = Number(s);
      return Number.isFinite(n) && n >= 0 ? ok(n) : fail(`'${t}' is not a number >= 0, 'auto' or 'default'`);
    },
    format: (v) => (v === null ? 'default' : String(v)),
  }),
  q({
    id: 'zero3_save_16bit_model',
    kind: 'boolean',
    section: 'deepspeed',
    prompt: 'Save 16-bit model weights when using ZeRO-3? (gathers the full weights on save)',
    acceleratePrompt: 'Do you want to save 16-bit model weights when using ZeRO Stage-3? [yes/NO]: ',
    help: 'Without it, a ZeRO-3 checkpoint holds only shards and needs zero_to_fp32.py to recover weights.',
    jsonKey: 'zero_optimization.stage3_gather_16bit_weights_on_model_save',
    accelerateDefault: {
      value: 'no',
      why: 'without it a ZeRO-3 save_model() writes only shards, which need zero_to_fp32.py before anything can load them; gathering the 16-bit weights on save costs a moment and memory on one rank',
    },
    choices: boolChoices,
    when: isStage3,
    defaultValue: () => true,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'zero3_init',
    kind: 'boolean',
    section: 'deepspeed',
    prompt: 'Enable deepspeed.zero.Init to build massive models already sharded (ZeRO-3)?',
    acceleratePrompt:
      'Do you want to enable `deepspeed.zero.Init` when using ZeRO Stage-3 for constructing massive models? [yes/NO]: ',
    help: 'Constructs the model directly in shards so no single GPU or process holds it whole. Needs transformers; only has an effect at stage 3.',
    yamlKey: 'deepspeed_config.zero3_init_flag',
    accelerateDefault: {
      value: 'no',
      why: 'at stage 3, building a transformers model already sharded keeps each process from first holding the whole model in memory; accelerate leaves it off',
    },
    choices: boolChoices,
    when: always,
    defaultValue: (a) => isStage3(a),
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'moe_layer_cls_names',
    kind: 'text',
    section: 'deepspeed',
    prompt: 'Mixture-of-Experts layer class names, comma-separated (empty: not an MoE model)',
    acceleratePrompt: 'Do you want to enable Mixture-of-Experts training (MoE)? [yes/NO]: ',
    help: 'E.g. MixtralSparseMoeBlock or Qwen2MoeSparseMoeBlock (case-sensitive); makes ZeRO-3 treat each block as a leaf.',
    yamlKey: 'deepspeed_config.deepspeed_moe_layer_cls_names',
    when: always,
    defaultValue: () => '',
    parse: str,
    format: (v) => v,
  }),
  q({
    id: 'multinode_launcher',
    kind: 'select',
    section: 'deepspeed',
    prompt: 'Which launcher starts the processes on the other nodes?',
    acceleratePrompt: 'Which Type of launcher do you want to use?',
    help: "pdsh uses ssh from node 0 and a hostfile; 'standard' is torchrun on each node; slurm/openmpi/mvapich/mpich use those schedulers; nossh needs DeepSpeed >= 0.14.5.",
    yamlKey: 'deepspeed_config.deepspeed_multinode_launcher',
    choices: LAUNCHERS.map((l) => ({ value: l, label: l })),
    when: multiNode,
    defaultValue: () => 'pdsh',
    parse: choiceParser(LAUNCHERS),
    format: (v) => v,
  }),
  q({
    id: 'hostfile',
    kind: 'text',
    path: true,
    section: 'deepspeed',
    prompt: 'Path of the DeepSpeed hostfile (rows like `node1 slots=8`)',
    acceleratePrompt:
      'DeepSpeed configures multi-node compute resources with hostfile. Each row is of the format `hostname slots=[num_gpus]`, e.g., `localhost slots=2`; for more information please refer official [documentation](https://www.deepspeed.ai/getting-started/#resource-configuration-multi-node). Please specify the location of hostfile: ',
    help: 'One row per node: `hostname slots=<gpus>`. accelerate always passes it to DeepSpeed; with none, DeepSpeed trains on this node only. See DeepSpeed "resource configuration (multi-node)".',
    yamlKey: 'deepspeed_config.deepspeed_hostfile',
    when: (a) => multiNode(a) && a.multinode_launcher !== 'standard',
    defaultValue: () => '',
    parse: str,
    format: (v) => v,
  }),
  q({
    id: 'exclusion_filter',
    kind: 'text',
    section: 'deepspeed',
    prompt: 'DeepSpeed exclusion filter (empty: none), e.g. node1:0,1',
    acceleratePrompt: 'Do you want to specify exclusion filter string? [yes/NO]: ',
    help: 'Hosts or GPUs to leave out. When both filters are set, the exclusion filter wins.',
    yamlKey: 'deepspeed_config.deepspeed_exclusion_filter',
    when: (a) => multiNode(a) && a.multinode_launcher !== 'standard',
    defaultValue: () => '',
    parse: str,
    format: (v) => v,
  }),
  q({
    id: 'inclusion_filter',
    kind: 'text',
    section: 'deepspeed',
    prompt: 'DeepSpeed inclusion filter (empty: all), e.g. node1@node2:0,1',
    acceleratePrompt: 'Do you want to specify inclusion filter string? [yes/NO]: ',
    help: 'Only these hosts or GPUs are used.',
    yamlKey: 'deepspeed_config.deepspeed_inclusion_filter',
    when: (a) => multiNode(a) && a.multinode_launcher !== 'standard',
    defaultValue: () => '',
    parse: str,
    format: (v) => v,
  }),
  q({
    id: 'num_processes',
    kind: 'text',
    section: 'processes',
    prompt: 'How many GPUs in total, across all machines? (one process per GPU)',
    acceleratePrompt: 'How many GPU(s) should be used for distributed training? [1]:',
    help: 'The TOTAL over all nodes: 2 nodes x 8 GPUs = 16. The launcher divides it by num_machines.',
    yamlKey: 'num_processes',
    accelerateDefault: {
      value: '1',
      why: 'zerowiz counts the GPUs nvidia-smi finds, times the machines: the total a multi-GPU run wants',
    },
    when: always,
    defaultValue: (a, env) => Math.max(1, env.gpuCount ?? 1) * a.num_machines,
    parse: intIn(1, 1000000),
    format: String,
  }),
  q({
    id: 'mixed_precision',
    kind: 'select',
    section: 'processes',
    prompt: 'Mixed precision (written into the DeepSpeed JSON)',
    acceleratePrompt: 'Do you wish to use mixed precision?',
    help: "accelerate refuses mixed_precision in the YAML next to a DeepSpeed JSON, so zerowiz writes it into the JSON's fp16/bf16 blocks. 'auto' leaves both to `accelerate launch --mixed_precision`; without that flag training runs in fp32.",
    jsonKey: 'fp16.enabled, bf16.enabled',
    accelerateDefault: {
      value: 'no',
      why: "bf16 halves the memory of weights, activations and gradients on Ampere and newer GPUs without fp16's loss scaling; pick no (or fp16) on older GPUs",
    },
    choices: [
      {
        value: 'auto',
        label: 'auto',
        help: 'fp16/bf16 "auto": accelerate fills them from --mixed_precision at launch.',
      },
      { value: 'bf16', label: 'bf16', help: 'bf16 on (Ampere or newer).' },
      { value: 'fp16', label: 'fp16', help: 'fp16 with dynamic loss scaling.' },
      { value: 'no', label: 'no', help: 'fp32 training.' },
    ],
    when: always,
    defaultValue: () => 'bf16',
    parse: choiceParser(PRECISIONS),
    format: (v) => v,
  }),
  q({
    id: 'overlap_comm',
    kind: 'boolean',
    section: 'json',
    advanced: true,
    prompt: 'Overlap gradient communication with the backward pass? (faster, uses more GPU memory)',
    help: 'DeepSpeed defaults to true at stage 3, false below. The buckets it needs cost GPU memory.',
    jsonKey: 'zero_optimization.overlap_comm',
    choices: boolChoices,
    when: always,
    defaultValue: () => false,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'pin_memory',
    kind: 'boolean',
    section: 'json',
    advanced: true,
    prompt: 'Pin the CPU memory used for offload? (faster transfers, less pageable RAM)',
    help: 'offload_optimizer.pin_memory and offload_param.pin_memory.',
    jsonKey: 'zero_optimization.offload_optimizer.pin_memory, zero_optimization.offload_param.pin_memory',
    choices: [...boolChoices].reverse(),
    when: isOffload,
    defaultValue: () => true,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'contiguous_gradients',
    kind: 'boolean',
    section: 'json',
    advanced: true,
    prompt: 'Copy gradients into one contiguous buffer? (avoids fragmentation)',
    help: `zero_optimization.contiguous_gradients (DeepSpeed default ${DS.contiguous_gradients}).`,
    jsonKey: 'zero_optimization.contiguous_gradients',
    choices: [...boolChoices].reverse(),
    when: always,
    defaultValue: () => true,
    parse: parseBool,
    format: yesNo,
  }),
  q({
    id: 'sub_group_size',
    kind: 'text',
    section: 'json',
    advanced: true,
    prompt: 'ZeRO-3 sub_group_size (elements per optimizer step tile)',
    help: `Smaller values lower peak memory of the optimizer step with offload. DeepSpeed default ${formatSci(DS.sub_group_size)}.`,
    jsonKey: 'zero_optimization.sub_group_size',
    when: isStage3,
    defaultValue: () => DS.sub_group_size,
    parse: bigInt,
    format: formatSci,
  }),
  q({
    id: 'reduce_bucket_size',
    kind: 'text',
    section: 'json',
    advanced: true,
    prompt: 'reduce_bucket_size (elements reduced at once)',
    help: `Larger is faster but uses more GPU memory. DeepSpeed default ${formatSci(DS.reduce_bucket_size)}; the seed uses 5e7. 'auto': accelerate sets hidden_size^2.`,
    jsonKey: 'zero_optimization.reduce_bucket_size',
    when: always,
    defaultValue: () => 5e7,
    parse: bigIntOrAuto,
    format: (v) => (v === 'auto' ? v : formatSci(v)),
  }),
  q({
    id: 'prefetch_bucket_size',
    kind: 'text',
    section: 'json',
    advanced: true,
    prompt: 'stage3_prefetch_bucket_size (elements fetched ahead)',
    help: `ZeRO-3 parameter prefetch size. DeepSpeed default ${formatSci(DS.stage3_prefetch_bucket_size)}.`,
    jsonKey: 'zero_optimization.stage3_prefetch_bucket_size',
    when: isStage3,
    defaultValue: () => 5e7,
    parse: bigIntOrAuto,
    format: (v) => (v === 'auto' ? v : formatSci(v)),
  }),
  q({
    id: 'param_persistence_threshold',
    kind: 'text',
    section: 'json',
    advanced: true,
    prompt: 'stage3_param_persistence_threshold (parameters below this stay whole on every GPU)',
    help: `DeepSpeed default ${formatSci(DS.stage3_param_persistence_threshold)}.`,
    jsonKey: 'zero_optimization.stage3_param_persistence_threshold',
    when: isStage3,
    defaultValue: () => 1e5,
    parse: bigIntOrAuto,
    format: (v) => (v === 'auto' ? v : formatSci(v)),
  }),
  q({
    id: 'max_live_parameters',
    kind: 'text',
    section: 'json',
    advanced: true,
    prompt: 'stage3_max_live_parameters (most parameters resident on a GPU at once)',
    help: `Lower it to save GPU memory at some speed. DeepSpeed default ${formatSci(DS.stage3_max_live_parameters)}; the seed uses 1e8.`,
    jsonKey: 'zero_optimization.stage3_max_live_parameters',
    when: isStage3,
    defaultValue: () => 1e8,
    parse: bigInt,
    format: formatSci,
  }),
  q({
    id: 'max_reuse_distance',
    kind: 'text',
    section: 'json',
    advanced: true,
    prompt: 'stage3_max_reuse_distance (keep a parameter if reused within this many)',
    help: `DeepSpeed default ${formatSci(DS.stage3_max_reuse_distance)}; the seed uses 1e8.`,
    jsonKey: 'zero_optimization.stage3_max_reuse_distance',
    when: isStage3,
    defaultValue: () => 1e8,
    parse: bigInt,
    format: formatSci,
  }),
  // biome-ignore lint/suspicious/noExplicitAny: each entry is a Question of its own answer type.
] as const satisfies readonly Question<any>[];

/** Formats an element count like the seed JSON does: 1e9, 5e7, 1e5; other values in full. */
export function formatSci(n: number): string {
  if (n >= 1e5 && Number.isInteger(n)) {
    const exp = Math.floor(Math.log10(n));
    const mant = n / 10 ** exp;
    if (Number.isInteger(mant)) return `${mant}e${exp}`;
  }
  return String(n);
}

/** The catalog by id: each id's own `Question<K>`. */
const BY_ID = Object.fromEntries(QUESTIONS.map((x) => [x.id, x])) as { readonly [K in QuestionId]: Question<K> };

/** The question with this id. */
export function question<K extends QuestionId>(id: K): Question<K> {
  const found: Question<K> | undefined = BY_ID[id];
  if (!found) throw new Error(`no question ${id}`);
  return found;
}

/** The kebab-case flag name of a question id (`num_processes` -> `num-processes`). */
export function flagName(id: QuestionId): string {
  return id.replace(/_/g, '-');
}

/**
 * Fills every answer with its default, in catalog order (a default may depend on earlier answers),
 * keeping the answers given in `given`.
 */
export function withDefaults(given: Partial<Answers>, env: DetectedEnv = NO_DETECTION): Answers {
  const a: Partial<Record<QuestionId, unknown>> = {};
  for (const qq of QUESTIONS) {
    const id = qq.id;
    a[id] = id in given && given[id] !== undefined ? given[id] : qq.defaultValue(a as Answers, env);
  }
  return a as Answers;
}

/** The questions asked for these answers (their `when` holds), in order. */
export function activeQuestions(a: Answers, includeAdvanced = false): Question[] {
  // biome-ignore lint/suspicious/noExplicitAny: a list of questions of different answer types (an existential).
  return (QUESTIONS as readonly Question<any>[]).filter(
    (x) => (includeAdvanced || !x.advanced) && x.when(a),
  ) as Question[];
}

/** The accelerate YAML keys accelerate refuses next to a deepspeed_config_file: the key table's list. */
export { ACCELERATE_KEYS_REFUSED_WITH_DS_FILE };

/** A raw answer that could not be parsed: which key, and why. */
export class AnswerKeyError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

/** Parses one answer value from a preset, a flag or an imported file through its question. */
export function parseAnswer(id: QuestionId, value: unknown, soFar: Answers): Answers[QuestionId] {
  const qq = question(id) as Question;
  if (value === null) {
    const parsed = qq.parse('', soFar);
    if (parsed.ok) return parsed.value;
    throw new Error('may not be empty');
  }
  // Answers end up in files and on the terminal: no control characters (ESC, BEL, newlines) in them.
  if (typeof value === 'string' && hasControl(value)) throw new Error('contains a control character');
  const parsed = qq.parse(String(value), soFar);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

/** Turns raw answers (strings or YAML scalars) into typed answers, in catalog order; throws on the first bad one. */
export function parseAnswers(raw: Record<string, unknown>, base: Partial<Answers> = {}): Partial<Answers> {
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(BY_ID, key)) throw new AnswerKeyError(key, `unknown answer '${key}'`);
  }
  const given: Partial<Answers> = { ...base };
  for (const qq of QUESTIONS) {
    const id = qq.id as QuestionId;
    if (!(id in raw)) continue;
    try {
      (given as Record<string, unknown>)[id] = parseAnswer(id, raw[id], withDefaults(given));
    } catch (e) {
      throw new AnswerKeyError(id, (e as Error).message);
    }
  }
  return given;
}

/**
 * Where a key an import moved out of the YAML went in the DeepSpeed JSON (the key table's `sets`):
 * `deepspeed_config.zero_stage` -> `zero_optimization.stage`, `mixed_precision` -> `fp16.enabled / bf16.enabled`.
 */
export function movedTo(key: string): string {
  const sets = keyInfo('yaml', key)?.sets;
  return sets && sets.length > 0 ? sets.join(' / ') : 'the DeepSpeed JSON';
}
