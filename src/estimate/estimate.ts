/**
 * The ZeRO tradeoff engine: per mode, the peak GPU and CPU memory of the real training step (src/estimate/peak.ts:
 * model states split trainable/frozen, activations, DeepSpeed's buffers, CUDA context, extra models, the
 * allocator margin), the traffic of a step and its time, DeepSpeed's own estimator rows beside them, fits
 * and a recommendation. Pure and synchronous: the wizard calls it on every keypress. All byte counts are
 * integers below 2^53.
 */
import { activationBreakdown } from './activations.js';
import type { ActivationBreakdown, ActivationInput } from './activations.js';
import { MODE_INFO, modeOffloads, modeRows, placementOf, rowLabel } from '../config/index.js';
import type { Mode, OffloadDevice, Placement } from '../config/index.js';
import { DEEPSPEED_DEFAULTS } from '../config/index.js';
import {
  LOAD_BYTES_PER_PARAM,
  NO_ZERO,
  OPTIMIZER_SWAP_BUFFER_COUNT,
  PARAM_SWAP_BUFFER_ELEMS,
  loraParams,
  peakOf,
  weightBytes,
} from './peak.js';
import type { NoZeroPlacement, Peak, PeakInput, ZeroKnobs } from './peak.js';
import { DEFAULT_HOST_CORES, defaultGpu, defaultInternode } from './gpus.js';
import { NVME_BYTES_PER_S, boundWords, formatBand, stepTimeOf } from './time.js';
import type { StepTimeBand, TimeContext, TimeInput } from './time.js';
import type { Interconnect, MasterWeights, OptimizerKind, Precision } from '../config/index.js';
import { formatBytesShort } from '../text/index.js';

import { ADDITIONAL_BUFFER_FACTOR, CPU_HEADROOM_FRACTION, DEFAULT_HEADROOM_PERCENT } from './headroom.js';

export { ADDITIONAL_BUFFER_FACTOR, CPU_HEADROOM_FRACTION, DEFAULT_HEADROOM_PERCENT } from './headroom.js';
/** Largest parameter count accepted: beyond it 18*P exceeds 2^53 and double arithmetic stops matching Python's ints. */
export const MAX_PARAMS = 1e14;
/** Largest GPU memory accepted (64 TiB): far above any GPU, far below 2^53. */
export const MAX_GPU_MEMORY_BYTES = 2 ** 46;
/** Largest CPU memory or NVMe space accepted (1 PiB). */
export const MAX_HOST_BYTES = 2 ** 50;
/** Largest element count accepted for a bucket, prefetch or live-parameter knob (1e12). */
export const MAX_KNOB_ELEMS = 1e12;
/** DeepSpeed defaults used by the derived NVMe CPU formula (zero_optimization.sub_group_size). */
export const SUB_GROUP_SIZE_ELEMS = DEEPSPEED_DEFAULTS.sub_group_size;
export { OPTIMIZER_SWAP_BUFFER_COUNT, PARAM_SWAP_BUFFER_ELEMS };
/** DeepSpeed's zero_optimization defaults (config.py at edaa7221): the knobs when the caller gives none. */
export const DEEPSPEED_DEFAULT_KNOBS: ZeroKnobs = {
  reduceBucketElems: DEEPSPEED_DEFAULTS.reduce_bucket_size,
  overlapComm: false,
  contiguousGradients: DEEPSPEED_DEFAULTS.contiguous_gradients,
  prefetchBucketElems: DEEPSPEED_DEFAULTS.stage3_prefetch_bucket_size,
  maxLiveParams: DEEPSPEED_DEFAULTS.stage3_max_live_parameters,
  subGroupElems: DEEPSPEED_DEFAULTS.sub_group_size,
};

/** LoRA adapters: their rank and the [in, out, count] shapes of the Linears the targets match. */
export interface LoraSpec {
  rank: number;
  shapes: readonly (readonly [number, number, number])[];
}

/** What the engine needs to know about the model, the workload and the machines. */
export interface EstimateInput {
  /** Parameter count P of the model being trained (unique storage, as DeepSpeed's model_to_params counts); LoRA adapters come on top. */
  params: number;
  /** Parameters of the largest single module L (gathered whole on a GPU in ZeRO-3); 0 if unknown. */
  largestLayer: number;
  /** GPUs per node (>= 1). */
  gpusPerNode: number;
  /** Nodes (>= 1). */
  nodes: number;
  /** zero.Init (accelerate's zero3_init_flag); only ZeRO-3 figures depend on it. */
  zeroInit: boolean;
  /** Memory of one GPU in bytes, or null if unknown (then `fits` is null). */
  gpuMemoryBytes?: number | null;
  /** CPU memory of one node in bytes, or null if unknown (then only the GPU decides `fits`). */
  cpuMemoryBytes?: number | null;
  /** Free bytes at the NVMe path, or null if unknown (then NVMe capacity is not checked). */
  nvmeFreeBytes?: number | null;
  /** The workload's activation shape, or null when unknown (activations then count 0 and a note says so). */
  activation?: ActivationInput | null;
  /** Activation bytes per GPU given directly (used when `activation` is absent). */
  activationBytes?: number | null;
  /** Trainable parameters T among `params` (the rest frozen); default all. Not with `lora`. */
  trainableParams?: number | null;
  /** LoRA adapters added to the frozen model (their parameters are the trainable ones). Not with `trainableParams`. */
  lora?: LoraSpec | null;
  /** LoRA adapters given as a parameter count (when the module shapes are unknown), added to `params`. */
  loraParams?: number | null;
  /** Training precision (default bf16). */
  precision?: Precision;
  /** The optimizer the script builds (default adamw). */
  optimizer?: OptimizerKind;
  /** fp32 master weights (default, DeepSpeed's) or none (pure bf16: bf16_master_weights_and_grads). */
  masterWeights?: MasterWeights;
  /** The optimizer steps with a fused kernel (DeepSpeed's FusedAdam from a JSON optimizer block); default false. */
  fusedOptimizer?: boolean;
  /** The frozen encoders' working memory per GPU when they run every step (not precomputed); default 0. */
  encoderTransientBytes?: number;
  /** Frozen parameters of other models resident on each GPU (text encoder, VAE, EMA...). */
  extraGpuParams?: number;
  /** Frozen models resident on each GPU at their real bytes (the catalog's encoders at their dtype); default 0. */
  frozenGpuBytes?: number;
  /** Bytes of a frozen weight of the model (1 when DiffSynth's --fp8_models loads the frozen base in fp8); default the precision's. */
  frozenBytesPerParam?: number;
  /** Bytes per parameter a rank loads on the CPU (DiffSynth's bf16: 2); default LOAD_BYTES_PER_PARAM (fp32). */
  loadBytesPerParam?: number;
  /** What each rank also loads on the CPU (the frozen encoders), bytes; default 0. */
  loadExtraBytes?: number;
  /** DeepSpeed's buffer knobs; missing ones take DeepSpeed's defaults. */
  knobs?: Partial<ZeroKnobs>;
  /** CUDA context + NCCL per process, overriding the documented constants. */
  cudaContextBytes?: number | null;
  /** How the node's GPUs are linked (nvidia-smi topo -m), default unknown. */
  interconnect?: Interconnect;
  /** GPU memory kept free beyond the peak, percent (default 10). */
  headroomPercent?: number;
  /** Include the NVMe variants of the offload modes (default true). */
  includeNvme?: boolean;
  /** The GPU, host, network and launch facts of the step time; each missing one takes its stated default. */
  timing?: Partial<TimeContext>;
  /** Tokens per sample, micro-batch and checkpointing for the step time when `activation` is absent. */
  workload?: TimeInput['workload'];
  /** How an image or video model's tokens come from its pixels and frames, for the advice when nothing fits. */
  tokenShape?: TokenShape | null;
  /** The LoRA the answers would train instead of a full fine-tune (the catalog's targets), for the advice. */
  loraAlternative?: LoraSpec | null;
}

/** An image or video model's tokens per sample: ceil(pixels / pixelsPerToken) x images x latent frames + text. */
export interface TokenShape {
  pixels: number;
  pixelsPerToken: number;
  /** Images of the sample's size in the sequence (1, or 2 for an edit model). */
  images: number;
  /** Frames per sample and the VAE's temporal compression (video), else null. */
  frames: number | null;
  temporalFactor: number | null;
  /** Text tokens in the sequence (joint attention), else 0. */
  textTokens: number;
}

/** Tokens per sample of a token shape at `pixels` and `frames`. */
export function tokensOfShape(t: TokenShape, pixels: number, frames: number | null): number {
  const latent = frames !== null && t.temporalFactor !== null ? 1 + Math.ceil((frames - 1) / t.temporalFactor) : 1;
  return Math.ceil(pixels / t.pixelsPerToken) * t.images * latent + t.textTokens;
}

/** Sizes the advice names when fewer pixels would fit (width x height, DiffSynth's usual ones first). */
const ADVICE_SIZES: readonly (readonly [number, number])[] = [
  [1328, 1328],
  [1024, 1024],
  [720, 1280],
  [768, 768],
  [480, 832],
  [512, 512],
  [384, 672],
  [320, 576],
  [256, 256],
];

/** One mode's figures. */
export interface ModeEstimate {
  mode: Mode;
  /** Where offloaded state goes: cpu or nvme for offload modes, null otherwise. */
  offloadDevice: OffloadDevice | null;
  /** The stage and the two offload devices this row stands for. */
  placement: Placement;
  /** zero_init used for the figure (stage 3); null for stages 1-2, where it does not apply. */
  zeroInit: boolean | null;
  /** Model-state bytes per GPU as DeepSpeed's estimator counts them (every parameter trainable). */
  gpuBytes: number;
  /** CPU bytes per node as DeepSpeed's estimator counts them (model init or offloaded state, x1.5). */
  cpuBytes: number;
  /** Collective communication bytes per GPU per step (ring volume, training precision). */
  commBytesPerStep: number;
  /** GPU<->host (PCIe) bytes per GPU per step. */
  offloadBytesPerStep: number;
  /** NVMe space per node for offloaded state (NVMe rows), else 0. */
  nvmeBytes: number;
  /** Host<->NVMe bytes per GPU per step (NVMe rows), else 0. */
  nvmeBytesPerStep: number;
  /** GPU bytes counted for `fits`: the modelled peak (peak.gpuBytes). */
  gpuNeedBytes: number;
  /** Whether the GPU peak fits the usable GPU memory; null when GPU memory is unknown. */
  gpuFits: boolean | null;
  /** Whether the CPU peak fits the usable CPU memory; null when CPU memory is unknown. */
  cpuFits: boolean | null;
  /** Whether nvmeBytes fit the free NVMe space; null when not an NVMe row or the space is unknown. */
  nvmeFits: boolean | null;
  /** Overall: GPU fits and CPU (if known) and NVMe (if known) fit; null when GPU memory is unknown. */
  fits: boolean | null;
  /** A caveat for this row (e.g. NVMe at stage 2), or null. */
  note: string | null;
  /** The peak model: GPU line items, CPU per node and the layout of the states. */
  peak: Peak;
  /** Seconds per optimizer step: the band, its terms and what bounds it (src/estimate/time.ts). */
  time: StepTimeBand;
}

/** The baseline: no DeepSpeed (plain PyTorch on one GPU, DDP on several), with its peak and step time. */
export interface BaselineEstimate {
  mode: '0';
  placement: NoZeroPlacement;
  gpuNeedBytes: number;
  gpuFits: boolean | null;
  cpuFits: boolean | null;
  fits: boolean | null;
  /** DDP's all-reduce per GPU per step (0 with one GPU). */
  commBytesPerStep: number;
  peak: Peak;
  time: StepTimeBand;
}

/** One row as DeepSpeed's `estimate_zero{2,3}_model_states_mem_needs_all_cold` prints it. */
export interface DeepSpeedRow {
  estimator: 'zero2' | 'zero3';
  offloadParam: 'none' | 'cpu';
  offloadOptimizer: 'none' | 'cpu';
  /** zero_init for zero3 rows; null for zero2 (no such option). */
  zeroInit: boolean | null;
  gpuBytes: number;
  cpuBytes: number;
}

/** Everything `zerowiz estimate` and the wizard show. */
export interface EstimateReport {
  input: NormalizedInput;
  modes: ModeEstimate[];
  /** Mode 0: the same training without DeepSpeed. */
  baseline: BaselineEstimate;
  deepspeed: DeepSpeedRow[];
  /** The recommended mode, or null when nothing fits or GPU memory is unknown. */
  recommended: Mode | null;
  /** Offload device of the recommended row (cpu or nvme), or null. */
  recommendedOffloadDevice: OffloadDevice | null;
  /** One or two sentences saying why (and, when nothing fits, what to change). */
  reason: string;
  /** Changes that would make a mode fit when none does (each a short phrase), else empty. */
  advice: string[];
}

/** The input with defaults filled and derived totals. */
export interface NormalizedInput extends PeakInput, Omit<TimeInput, 'knobs'> {
  /** The model's own parameters (without LoRA adapters). */
  baseParams: number;
  gpuMemoryBytes: number | null;
  cpuMemoryBytes: number | null;
  nvmeFreeBytes: number | null;
  /** The activation total per GPU, or null when not estimated. */
  activationBytes: number | null;
  activation: ActivationInput | null;
  lora: LoraSpec | null;
  headroomPercent: number;
  /** GPU bytes the peak may use after headroom; null if GPU memory unknown. */
  usableGpuBytes: number | null;
  /** CPU bytes available after headroom; null if CPU memory unknown. */
  usableCpuBytes: number | null;
}

/** Thrown for impossible input (the CLI validates first and reports a UsageError with the hint). */
export class EstimateInputError extends Error {
  override name = 'EstimateInputError';
  constructor(
    message: string,
    readonly hint: string = 'check the values; zerowiz sizes runs up to 100T parameters, 64 TiB per GPU and 1 PiB per node',
  ) {
    super(message);
  }
}

function checkInt(value: number, what: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new EstimateInputError(`${what} must be a whole number from ${min} to ${max}, got ${value}`);
  }
}

function checkBytes(v: number | null, what: string, max: number): void {
  if (v !== null && !(Number.isFinite(v) && v >= 0 && v <= max))
    throw new EstimateInputError(`${what} must be a number of bytes from 0 to ${max}, got ${v}`);
}

/** The activation shape's sane ranges (beyond them no real run exists, and products would pass 2^53). */
const ACTIVATION_LIMITS = {
  layers: 100_000,
  hidden: 1_000_000,
  heads: 100_000,
  kvHeads: 100_000,
  ffn: 10_000_000,
  vocab: 100_000_000,
  tokens: 100_000_000,
  microBatch: 100_000,
} as const satisfies Partial<Record<keyof ActivationInput, number>>;

function checkActivation(a: ActivationInput): void {
  for (const [k, max] of Object.entries(ACTIVATION_LIMITS) as [keyof typeof ACTIVATION_LIMITS, number][]) {
    const v = a[k];
    checkInt(v, `activation ${k}`, k === 'vocab' ? 0 : 1, max);
  }
  if (a.kvHeads > a.heads) throw new EstimateInputError(`kv heads (${a.kvHeads}) cannot exceed heads (${a.heads})`);
}

/** Validates and fills defaults; throws EstimateInputError. */
export function normalizeInput(input: EstimateInput): NormalizedInput {
  checkInt(input.params, 'params', 1, MAX_PARAMS);
  checkInt(input.largestLayer, 'largest layer', 0, input.params);
  checkInt(input.gpusPerNode, 'GPUs per node', 1, 1024);
  checkInt(input.nodes, 'nodes', 1, 100_000);
  const gpuMemoryBytes = input.gpuMemoryBytes ?? null;
  const cpuMemoryBytes = input.cpuMemoryBytes ?? null;
  const nvmeFreeBytes = input.nvmeFreeBytes ?? null;
  checkBytes(gpuMemoryBytes, 'GPU memory', MAX_GPU_MEMORY_BYTES);
  checkBytes(cpuMemoryBytes, 'CPU memory', MAX_HOST_BYTES);
  checkBytes(nvmeFreeBytes, 'NVMe free space', Number.MAX_SAFE_INTEGER);
  const lora = input.lora ?? null;
  const trainableGiven = input.trainableParams ?? null;
  const loraCount = input.loraParams ?? null;
  if ([lora !== null, trainableGiven !== null, loraCount !== null].filter(Boolean).length > 1)
    throw new EstimateInputError(
      'give LoRA (rank and targets) or a trainable-parameter count, not both',
      'the LoRA rank and targets already decide the trainable parameters',
    );
  let trainable = input.params;
  let total = input.params;
  let largestTrainable = input.largestLayer;
  if (lora) {
    checkInt(lora.rank, 'LoRA rank', 1, 65_536);
    if (lora.shapes.length === 0) throw new EstimateInputError('LoRA needs at least one target module');
    for (const [i, o, c] of lora.shapes) {
      checkInt(i, 'LoRA target in_features', 1, 10_000_000);
      checkInt(o, 'LoRA target out_features', 1, 10_000_000);
      checkInt(c, 'LoRA target count', 1, 1_000_000);
    }
    trainable = loraParams(lora.rank, lora.shapes);
    checkInt(trainable, 'LoRA parameters', 1, MAX_PARAMS);
    total = input.params + trainable;
    largestTrainable = Math.max(...lora.shapes.map(([i, o]) => lora.rank * Math.max(i, o)));
  } else if (loraCount !== null) {
    checkInt(loraCount, 'LoRA parameters', 1, MAX_PARAMS);
    trainable = loraCount;
    total = input.params + loraCount;
    largestTrainable = Math.min(input.largestLayer, loraCount);
  } else if (trainableGiven !== null) {
    checkInt(trainableGiven, 'trainable parameters', 0, input.params);
    trainable = trainableGiven;
    largestTrainable = Math.min(input.largestLayer, trainableGiven);
  }
  const extraGpuParams = input.extraGpuParams ?? 0;
  checkInt(extraGpuParams, 'extra GPU parameters', 0, MAX_PARAMS);
  const knobs: ZeroKnobs = { ...DEEPSPEED_DEFAULT_KNOBS, ...input.knobs };
  for (const k of ['reduceBucketElems', 'prefetchBucketElems', 'maxLiveParams', 'subGroupElems'] as const)
    checkInt(knobs[k], k, 0, MAX_KNOB_ELEMS);
  const headroomPercent = input.headroomPercent ?? DEFAULT_HEADROOM_PERCENT;
  if (!(Number.isFinite(headroomPercent) && headroomPercent >= 0 && headroomPercent <= 90))
    throw new EstimateInputError(`headroom must be a percentage from 0 to 90, got ${headroomPercent}`);
  const cudaContextBytes = input.cudaContextBytes ?? null;
  checkBytes(cudaContextBytes, 'CUDA context', MAX_GPU_MEMORY_BYTES);
  checkBytes(input.encoderTransientBytes ?? 0, 'encoder working memory', MAX_GPU_MEMORY_BYTES * 1024);
  checkBytes(input.frozenGpuBytes ?? 0, 'frozen models on the GPU', MAX_GPU_MEMORY_BYTES * 1024);
  checkBytes(input.loadExtraBytes ?? 0, 'frozen models loaded on the CPU', MAX_GPU_MEMORY_BYTES * 1024);
  const activation = input.activation ?? null;
  let activations: ActivationBreakdown | null = null;
  if (activation) {
    checkActivation(activation);
    activations = activationBreakdown(activation);
  } else if (input.activationBytes !== undefined && input.activationBytes !== null) {
    checkBytes(input.activationBytes, 'activation bytes', Number.MAX_SAFE_INTEGER);
    activations = {
      blocksBytes: input.activationBytes,
      recomputeBytes: 0,
      logitsBytes: 0,
      workspaceBytes: 0,
      totalBytes: input.activationBytes,
    };
  }
  if (activations && !(activations.totalBytes <= MAX_GPU_MEMORY_BYTES * 1024))
    throw new EstimateInputError(
      `the activations come to ${activations.totalBytes.toExponential(2)} bytes per GPU, beyond anything zerowiz can size`,
      'check the sequence length, micro-batch and model shape',
    );
  return {
    params: total,
    baseParams: input.params,
    largestLayer: input.largestLayer,
    trainable,
    largestTrainable,
    gpusPerNode: input.gpusPerNode,
    nodes: input.nodes,
    totalGpus: input.gpusPerNode * input.nodes,
    zeroInit: input.zeroInit,
    precision: input.precision ?? 'bf16',
    optimizer: input.optimizer ?? 'adamw',
    masterWeights: input.masterWeights ?? 'fp32',
    fusedOptimizer: input.fusedOptimizer ?? false,
    encoderTransientBytes: input.encoderTransientBytes ?? 0,
    knobs,
    activations,
    activation,
    activationBytes: activations?.totalBytes ?? null,
    extraGpuParams,
    frozenGpuBytes: input.frozenGpuBytes ?? 0,
    frozenBytesPerParam: input.frozenBytesPerParam ?? weightBytes(input.precision ?? 'bf16'),
    loadBytesPerParam: input.loadBytesPerParam ?? LOAD_BYTES_PER_PARAM,
    loadExtraBytes: input.loadExtraBytes ?? 0,
    cudaContextBytes,
    interconnect: input.interconnect ?? { kind: 'unknown', nvlinks: null },
    timing: timingOf(input),
    workload: input.workload ?? workloadOf(activation),
    adapterParams: lora || loraCount !== null ? trainable : 0,
    lora,
    gpuMemoryBytes,
    cpuMemoryBytes,
    nvmeFreeBytes,
    headroomPercent,
    usableGpuBytes: gpuMemoryBytes === null ? null : usableGpu(gpuMemoryBytes, headroomPercent),
    usableCpuBytes: cpuMemoryBytes === null ? null : Math.floor(cpuMemoryBytes * (1 - CPU_HEADROOM_FRACTION)),
  };
}

/** The step time's facts with their stated defaults filled, checked. */
function timingOf(input: EstimateInput): TimeContext {
  const t = input.timing ?? {};
  const accumulation = t.accumulation ?? 1;
  checkInt(accumulation, 'gradient accumulation steps', 1, 1_000_000);
  const hostCores = t.hostCores ?? DEFAULT_HOST_CORES;
  checkInt(hostCores, 'CPU cores', 1, 100_000);
  if (t.ompThreads !== undefined && t.ompThreads !== null) checkInt(t.ompThreads, 'OMP_NUM_THREADS', 1, 100_000);
  const nvmeBytesPerS = t.nvmeBytesPerS ?? NVME_BYTES_PER_S;
  if (!(Number.isFinite(nvmeBytesPerS) && nvmeBytesPerS > 0))
    throw new EstimateInputError(`NVMe speed must be a positive number of bytes per second, got ${nvmeBytesPerS}`);
  return {
    gpu: t.gpu ?? defaultGpu(),
    gpuSource: t.gpuSource ?? (t.gpu ? 'given' : 'default'),
    hostCores,
    hostCoresSource: t.hostCoresSource ?? (t.hostCores !== undefined ? 'given' : 'default'),
    ompThreads: t.ompThreads ?? null,
    internode: t.internode ?? defaultInternode(input.gpusPerNode),
    nvmeBytesPerS,
    nvmeMeasured: t.nvmeMeasured ?? false,
    accumulation,
  };
}

/** The step time's workload from the activation shape; none (0 tokens: no compute counted) without one. */
function workloadOf(a: ActivationInput | null): TimeInput['workload'] {
  return a
    ? { tokens: a.tokens, microBatch: a.microBatch, checkpointing: a.checkpointing === 'full' }
    : { tokens: 0, microBatch: 1, checkpointing: false };
}

/** GPU bytes the peak may use: the memory minus the headroom percentage. */
export function usableGpu(gpuMemoryBytes: number, headroomPercent = DEFAULT_HEADROOM_PERCENT): number {
  return Math.max(0, Math.floor(gpuMemoryBytes * (1 - headroomPercent / 100)));
}

// ---------------------------------------------------------------------------------------------
// DeepSpeed's estimators, operation for operation (Python int() truncates toward zero; Python's
// left-to-right int*int*float matches IEEE doubles here because every intermediate int is < 2^53).
// ---------------------------------------------------------------------------------------------

/** DeepSpeed's `estimate_zero2_model_states_mem_needs` (current formula, since v0.14.3): [cpu, gpu]. */
export function deepspeedZero2(
  P: number,
  gpusPerNode: number,
  nodes: number,
  cpuOffload: boolean,
  abf = ADDITIONAL_BUFFER_FACTOR,
): [number, number] {
  const totalGpus = nodes * gpusPerNode;
  let gpu: number;
  let cpu: number;
  if (cpuOffload) {
    gpu = 2 * P;
    cpu = P * Math.max(4 * totalGpus, 16) * abf;
  } else {
    gpu = 2 * P + Math.trunc((18 * P) / totalGpus);
    cpu = P * 4 * gpusPerNode * abf;
  }
  return [Math.trunc(cpu), Math.trunc(gpu)];
}

/** DeepSpeed's `estimate_zero3_model_states_mem_needs`: [cpu, gpu]. */
export function deepspeedZero3(
  P: number,
  L: number,
  gpusPerNode: number,
  nodes: number,
  cpuOffload: boolean,
  cpuOffloadParams: boolean,
  zeroInit: boolean,
  abf = ADDITIONAL_BUFFER_FACTOR,
): [number, number] {
  const totalGpus = nodes * gpusPerNode;
  const gpusFactor = 1 / nodes;
  const largestLayerMemory = 4 * L;
  let gpu: number;
  let cpu: number;
  if (cpuOffload) {
    if (cpuOffloadParams) {
      gpu = largestLayerMemory;
      cpu = zeroInit ? P * 18 * gpusFactor * abf : P * Math.max(4 * gpusPerNode, 18 * gpusFactor) * abf;
    } else {
      gpu = largestLayerMemory + Math.trunc((2 * P) / totalGpus);
      cpu = zeroInit ? P * 16 * gpusFactor * abf : P * Math.max(4 * gpusPerNode, 16 * gpusFactor) * abf;
    }
  } else {
    gpu = largestLayerMemory + Math.trunc((18 * P) / totalGpus);
    cpu = zeroInit ? L * 4 * gpusPerNode * abf : P * 4 * gpusPerNode * abf;
  }
  return [Math.trunc(cpu), Math.trunc(gpu)];
}

/** Every row DeepSpeed's two `_all_cold` estimators print, in their order (zero2: offload cpu, none; zero3: 6 rows). */
export function deepspeedRows(
  input: Pick<NormalizedInput, 'params' | 'largestLayer' | 'gpusPerNode' | 'nodes'>,
): DeepSpeedRow[] {
  const { params: P, largestLayer: L, gpusPerNode: g, nodes: n } = input;
  const rows: DeepSpeedRow[] = [];
  for (const cpuOffload of [true, false]) {
    const [cpu, gpu] = deepspeedZero2(P, g, n, cpuOffload);
    rows.push({
      estimator: 'zero2',
      offloadParam: 'none',
      offloadOptimizer: cpuOffload ? 'cpu' : 'none',
      zeroInit: null,
      gpuBytes: gpu,
      cpuBytes: cpu,
    });
  }
  for (const cpuOffload of [true, false]) {
    for (const cpuOffloadParams of [true, false]) {
      if (!cpuOffload && cpuOffloadParams) continue;
      for (const zeroInit of [true, false]) {
        const [cpu, gpu] = deepspeedZero3(P, L, g, n, cpuOffload, cpuOffloadParams, zeroInit);
        rows.push({
          estimator: 'zero3',
          offloadParam: cpuOffloadParams ? 'cpu' : 'none',
          offloadOptimizer: cpuOffload ? 'cpu' : 'none',
          zeroInit,
          gpuBytes: gpu,
          cpuBytes: cpu,
        });
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Per mode.

/**
 * The figures of one mode (offloadDevice selects the NVMe variant of an offload mode).
 *
 * DeepSpeed's figures (`gpuBytes`, `cpuBytes`: model states only, every parameter trainable, as its
 * estimator prints them; shown beside zerowiz's peak):
 * - `1`: GPU = 4P + int(16P/N) (fp16 params and grads replicated; fp32 grads, fp32 master weights and
 *   Adam states partitioned, DeepSpeed's accounting; the ZeRO paper's K=12 form gives 4P + 12P/N);
 *   CPU = DeepSpeed's zero2 no-offload CPU (P*4*gpusPerNode*1.5, the model loaded once per rank).
 * - `2` / `2-offload`: DeepSpeed zero2 cpu_offload = false / true.
 * - `3` / `3-offload`: DeepSpeed zero3 offload none/none and param cpu + optimizer cpu, zero_init as given.
 * - `3-offload` nvme (derived from DeepSpeed's defaults): CPU per node =
 *   int(gpusPerNode x (4 x 4 x min(1e9, ceil(P/N)) + 2 x 5e8) x 1.5) (optimizer and param swap buffers).
 * zerowiz's peak (`peak`, src/estimate/peak.ts) decides `fits`; the traffic fields come from its layout: collectives
 * (reduce-scatter + all-gather ring volume), PCIe (offload) and NVMe bytes per GPU per step, and
 * `nvmeBytes` the NVMe space per node.
 */
export function estimateMode(
  mode: Mode,
  input: EstimateInput | NormalizedInput,
  offloadDevice: OffloadDevice = 'cpu',
): ModeEstimate {
  const n = 'totalGpus' in input ? input : normalizeInput(input);
  const device: OffloadDevice | null = modeOffloads(mode) ? offloadDevice : null;
  return estimatePlacement(placementOf(mode, device), n, mode, device);
}

/** DeepSpeed's [cpu, gpu] figures for a mode (see estimateMode). */
function deepspeedFigures(mode: Mode, n: NormalizedInput, device: OffloadDevice | null): [number, number] {
  const { params: P, largestLayer: L, gpusPerNode: g, nodes, totalGpus: N, zeroInit } = n;
  switch (mode) {
    case '1':
      return [deepspeedZero2(P, g, nodes, false)[0], 4 * P + Math.trunc((16 * P) / N)];
    case '2':
      return deepspeedZero2(P, g, nodes, false);
    case '2-offload':
      return deepspeedZero2(P, g, nodes, true);
    case '3':
      return deepspeedZero3(P, L, g, nodes, false, false, zeroInit);
    case '3-offload': {
      const [cpu, gpu] = deepspeedZero3(P, L, g, nodes, true, true, zeroInit);
      if (device !== 'nvme') return [cpu, gpu];
      const perRank =
        4 * OPTIMIZER_SWAP_BUFFER_COUNT * Math.min(SUB_GROUP_SIZE_ELEMS, Math.ceil(P / N)) +
        2 * PARAM_SWAP_BUFFER_ELEMS;
      return [Math.trunc(g * perRank * ADDITIONAL_BUFFER_FACTOR), gpu];
    }
  }
}

/**
 * The figures of any placement (a mode's, or stage and devices given separately, e.g. stage 3 with only
 * the optimizer offloaded); `mode` and `device` name the table row it belongs to.
 */
export function estimatePlacement(
  placement: Placement,
  n: NormalizedInput,
  mode: Mode,
  device: OffloadDevice | null,
): ModeEstimate {
  const [cpuBytes, gpuBytes] = deepspeedFigures(mode, n, device);
  const peak = peakOf(placement, n);
  for (const [v, what] of [
    [peak.gpuBytes, 'GPU peak'],
    [peak.cpuBytes, 'CPU peak'],
    [peak.nvmeBytes, 'NVMe space'],
    [gpuBytes, "DeepSpeed estimator's GPU figure"],
    [cpuBytes, "DeepSpeed estimator's CPU figure"],
  ] as const) {
    if (!Number.isSafeInteger(v)) throw beyondRange(what, n);
  }
  const t = peak.layout.traffic;
  const nvmeRow = device === 'nvme' && placement.stage === 3;
  const gpuNeedBytes = peak.gpuBytes;
  const gpuFits = n.usableGpuBytes === null ? null : gpuNeedBytes <= n.usableGpuBytes;
  const cpuFits = n.usableCpuBytes === null ? null : peak.cpuBytes <= n.usableCpuBytes;
  const nvmeFits = nvmeRow && n.nvmeFreeBytes !== null ? peak.nvmeBytes <= n.nvmeFreeBytes : null;
  const fits = gpuFits === null ? null : gpuFits && cpuFits !== false && nvmeFits !== false;
  const note =
    device === 'nvme' && placement.stage !== 3
      ? 'DeepSpeed swaps to NVMe only at stage 3; at stage 2 device nvme acts as cpu'
      : null;
  return {
    mode,
    offloadDevice: device,
    placement,
    zeroInit: placement.stage === 3 ? n.zeroInit : null,
    gpuBytes,
    cpuBytes,
    commBytesPerStep: t.allReduce + t.reduceScatter + t.allGather,
    offloadBytesPerStep: t.pcieToGpu + t.pcieToCpu,
    nvmeBytes: nvmeRow ? peak.nvmeBytes : 0,
    nvmeBytesPerStep: nvmeRow ? t.nvme : 0,
    gpuNeedBytes,
    gpuFits,
    cpuFits,
    nvmeFits,
    fits,
    note,
    peak,
    time: stepTimeOf(placement, n),
  };
}

/** Mode 0: the same training without DeepSpeed (DDP over several GPUs), its peak, fit and step time. */
export function baselineOf(n: NormalizedInput): BaselineEstimate {
  const peak = peakOf(NO_ZERO, n);
  const t = peak.layout.traffic;
  const gpuFits = n.usableGpuBytes === null ? null : peak.gpuBytes <= n.usableGpuBytes;
  const cpuFits = n.usableCpuBytes === null ? null : peak.cpuBytes <= n.usableCpuBytes;
  return {
    mode: '0',
    placement: NO_ZERO,
    gpuNeedBytes: peak.gpuBytes,
    gpuFits,
    cpuFits,
    fits: gpuFits === null ? null : gpuFits && cpuFits !== false,
    commBytesPerStep: t.allReduce,
    peak,
    time: stepTimeOf(NO_ZERO, n),
  };
}

/** The refusal for inputs whose figures pass 2^53 bytes (JSON consumers would lose precision). */
function beyondRange(what: string, n: NormalizedInput): EstimateInputError {
  return new EstimateInputError(
    `the ${what} for ${n.params} parameters on ${n.gpusPerNode} GPU(s) per node comes to more than 2^53 bytes, beyond anything zerowiz can size`,
    'check the model size, GPUs per node, sequence length and micro-batch',
  );
}

/**
 * Two rows whose step times differ by less than this fraction (or SAME_COST_SECONDS) take the same time: below
 * what the step-time model resolves (its calibration's median error is 14%, docs/step-time.md).
 */
export const SAME_TIME_FRACTION = 0.1;
/** ... and by less than this many seconds. */
export const SAME_COST_SECONDS = 0.01;
/** At the same time, a row with at least this much more room (lower peak per GPU) is preferred to a lower stage. */
export const ROOM_PREFERENCE_MIN_BYTES = 2 ** 30;

/** Whether two step times are the same to the table's eye (SAME_TIME_FRACTION or SAME_COST_SECONDS apart). */
export function sameTime(a: number, b: number): boolean {
  const d = Math.abs(a - b);
  return d < SAME_COST_SECONDS || d < SAME_TIME_FRACTION * Math.max(a, b);
}

/**
 * Orders rows by the recommendation's preference, the first fitting row being the recommended one: the faster
 * step first; at the same time (sameTime) no offload before offload (host memory and PCIe at stake), stages 1-2
 * before stage 3 (which gathers the weights at every save and keeps a partitioned checkpoint), then the row with
 * more room when it has at least ROOM_PREFERENCE_MIN_BYTES more (ZeRO-2 over ZeRO-1), then the lower stage, CPU
 * before NVMe.
 */
export function compareRows(a: ModeEstimate, b: ModeEstimate): number {
  const ta = a.time.stepSeconds;
  const tb = b.time.stepSeconds;
  if (!sameTime(ta, tb)) return ta - tb;
  const offload = (r: ModeEstimate) => (modeOffloads(r.mode) ? 1 : 0);
  if (offload(a) !== offload(b)) return offload(a) - offload(b);
  const three = (r: ModeEstimate) => (MODE_INFO[r.mode].stage === 3 ? 1 : 0);
  if (three(a) !== three(b)) return three(a) - three(b);
  const room = a.gpuNeedBytes - b.gpuNeedBytes;
  if (Math.abs(room) >= ROOM_PREFERENCE_MIN_BYTES) return room;
  const stage = MODE_INFO[a.mode].stage - MODE_INFO[b.mode].stage;
  if (stage !== 0) return stage;
  return (a.offloadDevice === 'nvme' ? 1 : 0) - (b.offloadDevice === 'nvme' ? 1 : 0);
}

/**
 * A row's collective traffic as a multiple of DDP's (the table's comm column, the recommendation's sentence
 * and the glossary all print this): `1x`, `1.5x`, `88.1x`; `-` when DDP moves nothing (one GPU).
 */
export function commMultipleText(commBytesPerStep: number, ddpBytesPerStep: number): string {
  if (ddpBytesPerStep <= 0) return '-';
  return `${Number((commBytesPerStep / ddpBytesPerStep).toFixed(2))}x`;
}

/** DDP's traffic per GPU per step in a report: ZeRO-1's collectives (the same volume); 0 with one GPU. */
export function ddpBytesOf(modes: readonly ModeEstimate[]): number {
  return modes.find((m) => m.mode === '1')?.commBytesPerStep ?? 0;
}

/**
 * Why DeepSpeed's estimator differs from the peak, said wherever its figure is shown: it counts every
 * parameter as trained (18 bytes each with fp32 Adam, LoRA or not) and the model states only (no
 * activations, buffers, CUDA context or frozen encoders).
 */
export const DEEPSPEED_ESTIMATOR_WHY = 'every parameter trained, model states only';

function label(row: ModeEstimate): string {
  return rowLabel(row.mode, row.offloadDevice);
}

/** The rows of a report: every mode (and its NVMe variant) for a normalized input. */
function rowsOf(n: NormalizedInput, includeNvme: boolean): ModeEstimate[] {
  return modeRows(includeNvme).map((r) => estimateMode(r.mode, n, r.device ?? 'cpu'));
}

/** All modes (and their NVMe variants), DeepSpeed's rows, the recommendation and its reason. */
export function estimateModes(input: EstimateInput): EstimateReport {
  const n = normalizeInput(input);
  const modes = rowsOf(n, input.includeNvme !== false);
  const baseline = baselineOf(n);
  const { recommended, reason } = recommend(n, modes, baseline);
  let advice: string[] = [];
  let fullReason = reason;
  if (!recommended && n.usableGpuBytes !== null) {
    advice = adviseWhenNothingFits(input, modes);
    // The changes that would fit (the first two; all of them are in `advice`), else why no change helps.
    fullReason =
      advice.length > 0
        ? `${reason} What would fit: ${advice.slice(0, 2).join('; ')}.`
        : `${reason} ${nothingHelps(n, modes)}`;
  }
  const deepspeed = deepspeedRows(n);
  for (const r of deepspeed) {
    if (!Number.isSafeInteger(r.cpuBytes) || !Number.isSafeInteger(r.gpuBytes))
      throw beyondRange(`DeepSpeed ${r.estimator} estimator's figure`, n);
  }
  return {
    input: n,
    modes,
    baseline,
    deepspeed,
    recommended: recommended?.mode ?? null,
    recommendedOffloadDevice: recommended?.offloadDevice ?? null,
    reason: fullReason,
    advice,
  };
}

/** Whether any row of a variant of the input fits, and the best such row. */
function bestFitting(input: EstimateInput): ModeEstimate | null {
  try {
    const n = normalizeInput(input);
    const rows = rowsOf(n, input.includeNvme !== false);
    return [...rows].sort(compareRows).find((r) => r.fits === true) ?? null;
  } catch {
    return null;
  }
}

/**
 * When no mode fits: the changes that would make one fit, each tried on the estimate itself and only where the
 * answers allow it (never what is already on): gradient checkpointing, micro-batch 1, LoRA instead of a full
 * fine-tune, a smaller LoRA rank, fewer frames, fewer pixels (alone, then with the earlier changes), an offload
 * mode that fits the GPU with the CPU memory it needs, and more GPUs only where they shrink the per-GPU figure
 * (whole nodes, up to 64 times as many).
 */
export function adviseWhenNothingFits(input: EstimateInput, modes: ModeEstimate[]): string[] {
  const out: string[] = [];
  const at = (row: ModeEstimate) => `${label(row)} at ${formatBytesShort(row.gpuNeedBytes)}/GPU`;
  const say = (change: string, row: ModeEstimate | null): boolean => {
    if (row) out.push(`${change} (${at(row)})`);
    return row !== null;
  };
  const a = input.activation ?? null;
  // The cheap changes, each alone.
  const cheap: { words: string; apply: (x: EstimateInput) => EstimateInput }[] = [];
  if (a && a.checkpointing === 'none')
    cheap.push({
      words: 'gradient checkpointing',
      apply: (x) => ({
        ...x,
        activation: { ...x.activation!, checkpointing: 'full' },
        ...workloadWith(x, { checkpointing: true }),
      }),
    });
  if (a && a.microBatch > 1)
    cheap.push({
      words: 'micro-batch 1',
      apply: (x) => ({ ...x, activation: { ...x.activation!, microBatch: 1 }, ...workloadWith(x, { microBatch: 1 }) }),
    });
  const full = !input.lora && (input.loraParams ?? null) === null && (input.trainableParams ?? null) === null;
  if (full && input.loraAlternative)
    cheap.push({
      words: `LoRA (rank ${input.loraAlternative.rank}) instead of full fine-tuning`,
      apply: (x) => ({ ...x, lora: input.loraAlternative! }),
    });
  if (!input.zeroInit) cheap.push({ words: 'zero3_init on', apply: (x) => ({ ...x, zeroInit: true }) });
  const lora = input.lora ?? null;
  if (lora && lora.rank > 8) cheap.push({ words: 'LoRA rank 8', apply: (x) => ({ ...x, lora: { ...lora, rank: 8 } }) });
  let cheapFits = false;
  for (const c of cheap) cheapFits = say(c.words, bestFitting(c.apply(input))) || cheapFits;
  // Fewer frames or pixels, with the numbers: alone, else with the fewest cheap changes (in order) beside them.
  const t = input.tokenShape ?? null;
  if (t && a) {
    const sized = (x: EstimateInput, pixels: number, frames: number | null): EstimateInput => {
      const tokens = tokensOfShape(t, pixels, frames);
      return { ...x, activation: { ...x.activation!, tokens }, ...workloadWith(x, { tokens }) };
    };
    const tries: {
      words: (v: number) => string;
      values: number[];
      make: (x: EstimateInput, v: number) => EstimateInput;
    }[] = [];
    if (t.frames !== null && t.temporalFactor !== null && t.frames > 1) {
      const f = t.temporalFactor;
      const values: number[] = [];
      for (let k = Math.ceil((t.frames - 1) / f) - 1; k >= 0; k--) values.push(1 + k * f);
      tries.push({ words: (v) => `${v} frames instead of ${t.frames}`, values, make: (x, v) => sized(x, t.pixels, v) });
    }
    const sizes = ADVICE_SIZES.filter(([w, h]) => w * h < t.pixels);
    tries.push({
      words: (i) => {
        const [w, h] = sizes[i]!;
        return `--max_pixels ${w * h} (${w}x${h}) instead of ${t.pixels}`;
      },
      values: sizes.map((_, i) => i),
      make: (x, i) => sized(x, sizes[i]![0] * sizes[i]![1], t.frames),
    });
    const first = (x: EstimateInput, tr: (typeof tries)[number], prefix: string): boolean =>
      tr.values.some((v) => say(`${prefix}${tr.words(v)}`, bestFitting(tr.make(x, v))));
    for (const tr of tries) {
      if (first(input, tr, '') || cheapFits) continue;
      for (let k = 1; k <= cheap.length; k++) {
        const used = cheap.slice(0, k);
        const x = used.reduce((acc, c) => c.apply(acc), input);
        if (first(x, tr, `${used.map((c) => c.words).join(' and ')} and `)) break;
      }
    }
  }
  // An offload mode that fits the GPU where the host is what is short: its CPU need.
  const n = normalizeInput(input);
  const hostShort = [...modes].sort(compareRows).find((r) => r.gpuFits === true && r.cpuFits === false);
  if (hostShort) {
    const twin = modes.find(
      (r) =>
        hostShort.offloadDevice === 'cpu' &&
        r.mode === hostShort.mode &&
        r.offloadDevice === 'nvme' &&
        r.gpuFits === true &&
        r.peak.cpuBytes < hostShort.peak.cpuBytes,
    );
    out.push(
      `more CPU memory: ${label(hostShort)} needs ${formatBytesShort(hostShort.peak.cpuBytes)} of CPU memory per node (${formatBytesShort(n.usableCpuBytes ?? 0)} usable here)${twin ? `, its NVMe variant ${formatBytesShort(twin.peak.cpuBytes)}` : ''}, and fits the GPU at ${formatBytesShort(hostShort.gpuNeedBytes)}/GPU`,
    );
  }
  for (const factor of [2, 4, 8, 16, 32, 64]) {
    const nodes = input.nodes * factor;
    if (nodes > 100_000) break;
    if (
      say(
        `${input.gpusPerNode * nodes} GPUs (${nodes} nodes of ${input.gpusPerNode})`,
        bestFitting({ ...input, nodes }),
      )
    )
      break;
  }
  return out;
}

/** The workload of an input with some of its fields changed (when the input gives one). */
function workloadWith(x: EstimateInput, w: Partial<NonNullable<EstimateInput['workload']>>): Partial<EstimateInput> {
  return x.workload ? { workload: { ...x.workload, ...w } } : {};
}

/** Why no change zerowiz tries makes the job fit: what dominates the smallest row. */
function nothingHelps(n: NormalizedInput, modes: ModeEstimate[]): string {
  const lowest = modes.reduce((a, b) => (b.gpuNeedBytes < a.gpuNeedBytes ? b : a));
  if (lowest.gpuFits !== false)
    return `Add CPU memory${lowest.offloadDevice === 'nvme' ? '' : ' or offload to NVMe (ZeRO-3 offload NVMe)'}${n.zeroInit ? '' : ', use zero3_init'}, or add nodes.`;
  const acts = lowest.peak.items.activations;
  if (n.usableGpuBytes !== null && acts > n.usableGpuBytes / 2)
    return `No change zerowiz tries fits it: the activations alone take ${formatBytesShort(acts)} per GPU; fewer tokens per sample (a shorter sequence, fewer pixels or frames) or GPUs with more memory.`;
  return `No change zerowiz tries fits it (the largest layer, gathered whole, and the per-GPU buffers stay); GPUs with more memory.`;
}

/** The step time in words: `9.1-12 s/step, bound by the CPU optimizer on 8 threads per node`. */
export function timeWords(t: StepTimeBand): string {
  return `${formatBand(t)}, ${boundWords(t)}`;
}

/** How many times `t` is `base`, as the sentences say it: `4.1x`. */
export function timesText(t: number, base: number): string {
  return `${base > 0 ? (t / base).toFixed(1) : '?'}x`;
}

/**
 * The fitting rows slower than the best, each with what it costs (`ZeRO-3 also fits, at 1.3x the time`), or in
 * the same time with less room; NVMe variants only when their CPU twin does not fit. At most three.
 */
function slowerFitting(best: ModeEstimate, sorted: ModeEstimate[]): string[] {
  const cpuTwinFits = (r: ModeEstimate) =>
    sorted.some((x) => x.mode === r.mode && x.offloadDevice === 'cpu' && x.fits === true);
  return sorted
    .filter((r) => r !== best && r.fits === true && !(r.offloadDevice === 'nvme' && cpuTwinFits(r)))
    .slice(0, 3)
    .map((r) =>
      sameTime(r.time.stepSeconds, best.time.stepSeconds)
        ? `${label(r)} also fits in the same time, with ${formatBytesShort(Math.abs(r.gpuNeedBytes - best.gpuNeedBytes))} ${r.gpuNeedBytes > best.gpuNeedBytes ? 'less' : 'more'} room`
        : `${label(r)} also fits, at ${timesText(r.time.stepSeconds, best.time.stepSeconds)} the time`,
    );
}

/**
 * When DeepSpeedCPUAdam bounds the step on torchrun's one thread per process (OMP_NUM_THREADS unset) and the
 * node has more cores: the export that gives each process its share, and the step it would take.
 */
function threadsAdvice(n: NormalizedInput, best: ModeEstimate): string | null {
  const t = n.timing;
  if (best.time.bound !== 'hostOptimizer' || t.ompThreads !== null || n.gpusPerNode <= 1) return null;
  const share = Math.floor(t.hostCores / n.gpusPerNode);
  if (share <= 1) return null;
  const faster = stepTimeOf(best.placement, { ...n, timing: { ...t, ompThreads: share } });
  if (!(faster.stepSeconds < best.time.stepSeconds * (1 - SAME_TIME_FRACTION))) return null;
  return `torchrun runs DeepSpeedCPUAdam on one thread per process when OMP_NUM_THREADS is not set; export OMP_NUM_THREADS=${share} before the launch (${t.hostCores} cores / ${n.gpusPerNode} processes): about ${formatBand(faster)}`;
}

/** What the same training needs without DeepSpeed, beside the recommendation. */
function baselineWords(b: BaselineEstimate, best: ModeEstimate, gpus: number): string {
  const ddp = gpus > 1 ? 'Without DeepSpeed (DDP)' : 'Without DeepSpeed';
  if (b.fits === true)
    return `${ddp} it fits too, at ${timesText(b.time.stepSeconds, best.time.stepSeconds)} the time (peak ${formatBytesShort(b.gpuNeedBytes)} per GPU)`;
  if (b.gpuFits === false) return `${ddp} it needs ${formatBytesShort(b.gpuNeedBytes)} per GPU`;
  return `${ddp} it needs ${formatBytesShort(b.peak.cpuBytes)} of CPU memory per node`;
}

/** "Fits" with its sum: the peak, the usable figure and what it is, and what is left. */
export function fitsWords(n: NormalizedInput, row: Pick<ModeEstimate, 'gpuNeedBytes'>): string {
  const usable = n.usableGpuBytes ?? 0;
  const mem = formatBytesShort(n.gpuMemoryBytes ?? 0);
  return `peak ${formatBytesShort(row.gpuNeedBytes)} per GPU of the ${formatBytesShort(usable)} usable (${mem} less ${n.headroomPercent}% headroom), ${formatBytesShort(usable - row.gpuNeedBytes)} to spare`;
}

/** Picks the fastest row whose peak fits and says why, what the slower fitting rows cost, and the baseline. */
export function recommend(
  n: NormalizedInput,
  modes: ModeEstimate[],
  baseline: BaselineEstimate | null = null,
): { recommended: ModeEstimate | null; reason: string } {
  const oneGpu =
    n.totalGpus === 1 ? 'With one GPU, stages 1-3 without offload shard over a single device and save nothing; ' : '';
  if (n.gpuMemoryBytes === null || n.usableGpuBytes === null) {
    return {
      recommended: null,
      reason: `${oneGpu}${oneGpu ? 'give' : 'Give'} the GPU memory (--gpu-memory, --gpu or --detect) to see which modes fit.`,
    };
  }
  const mem = formatBytesShort(n.gpuMemoryBytes);
  const sorted = [...modes].sort(compareRows);
  const best = sorted.find((r) => r.fits === true) ?? null;
  if (!best) {
    const lowest = modes.reduce((a, b) => (b.gpuNeedBytes < a.gpuNeedBytes ? b : a));
    const why =
      lowest.gpuFits === false
        ? `even ${label(lowest)} peaks at ${formatBytesShort(lowest.gpuNeedBytes)} per GPU and ${formatBytesShort(n.usableGpuBytes)} of ${mem} is usable`
        : `${label(lowest)} fits the GPU but needs ${formatBytesShort(lowest.peak.cpuBytes)} of CPU memory per node${lowest.nvmeFits === false ? ' or more NVMe space' : ''}`;
    // What would fit follows (estimateModes: adviseWhenNothingFits), from the answers.
    return { recommended: null, reason: `${oneGpu}${oneGpu ? 'no' : 'No'} mode fits: ${why}.` };
  }
  const sentences = [`${oneGpu}${label(best)} fits: ${fitsWords(n, best)}; ${timeWords(best.time)}`];
  if (modeOffloads(best.mode)) {
    const noOffload = modes.filter((r) => r.offloadDevice === null);
    const smallest = noOffload.reduce((a, b) => (b.gpuNeedBytes < a.gpuNeedBytes ? b : a));
    sentences.push(
      `No mode without offload fits (${label(smallest)} peaks at ${formatBytesShort(smallest.gpuNeedBytes)} per GPU)`,
    );
  }
  if (MODE_INFO[best.mode].stage === 3 && n.totalGpus > 1)
    sentences.push(
      `It moves ${commMultipleText(best.commBytesPerStep, ddpBytesOf(modes))} the communication of DDP${n.trainable < n.params ? ' (it gathers every parameter, trained or frozen, on every pass)' : ''}, ${best.time.link === '' ? '' : `on ${best.time.link}`}`.replace(
        /, $/,
        '',
      ),
    );
  const threads = threadsAdvice(n, best);
  if (threads) sentences.push(threads);
  const slower = slowerFitting(best, sorted);
  if (slower.length > 0) sentences.push(slower.join('; '));
  if (baseline) sentences.push(baselineWords(baseline, best, n.totalGpus));
  return { recommended: best, reason: `${sentences.join('. ')}.` };
}

/**
 * The ZeRO paper's model-state bytes per device (Rajbhandari et al. 2020, Sec. 5): stage 0 (DDP)
 * (2+2+K)P, stage 1 4P + KP/N, stage 2 2P + (2+K)P/N, stage 3 (4+K)P/N; K = 12 for mixed-precision Adam.
 * For comparison only: DeepSpeed's estimators count 16-bit grads and 32-bit grads separately (18P/N).
 */
export function zeroPaperBytes(stage: 0 | 1 | 2 | 3, P: number, N: number, K = 12): number {
  switch (stage) {
    case 0:
      return (4 + K) * P;
    case 1:
      return 4 * P + (K * P) / N;
    case 2:
      return 2 * P + ((2 + K) * P) / N;
    case 3:
      return ((4 + K) * P) / N;
  }
}
