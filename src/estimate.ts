/**
 * The ZeRO tradeoff engine: memory, communication and offload traffic per mode, DeepSpeed's own estimator
 * rows, fits and a recommendation. Pure and synchronous: the wizard calls it on every keypress.
 *
 * Model states only, as DeepSpeed's estimators (mixed precision + Adam). Activations come from
 * src/activations.ts when the caller supplies them. All byte counts are integers.
 */
import { MODES, MODE_INFO } from './modes.js';
import type { Mode, OffloadDevice } from './modes.js';
import { formatBytesShort } from './units.js';

/** DeepSpeed's default `additional_buffer_factor` (applied to CPU memory only). */
export const ADDITIONAL_BUFFER_FACTOR = 1.5;
/** GPU headroom kept free for CUDA context, NCCL and allocator buffers: this fraction of GPU memory... */
export const GPU_HEADROOM_FRACTION = 0.1;
/** ...but at least this many bytes. */
export const GPU_HEADROOM_MIN_BYTES = 2 * 2 ** 30;
/** CPU headroom kept free for the OS, the data loader and pinned staging: this fraction of CPU memory. */
export const CPU_HEADROOM_FRACTION = 0.1;
/** Largest parameter count accepted: beyond it 18*P exceeds 2^53 and double arithmetic stops matching Python's ints. */
export const MAX_PARAMS = 1e14;
/** DeepSpeed defaults used by the derived NVMe CPU formula (zero_optimization.sub_group_size). */
export const SUB_GROUP_SIZE_ELEMS = 1e9;
/** offload_optimizer.buffer_count default (pinned fp32 swap buffers per rank). */
export const OPTIMIZER_SWAP_BUFFER_COUNT = 4;
/** offload_param.buffer_count x buffer_size defaults (fp16 swap buffers per rank, elements). */
export const PARAM_SWAP_BUFFER_ELEMS = 5 * 1e8;

/** What the engine needs to know about the model and the machines. */
export interface EstimateInput {
  /** Total parameter count P (unique storage, as DeepSpeed's model_to_params counts). */
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
  /** Activation bytes per GPU (src/activations.ts), added to GPU need in `fits`; null or absent if not estimated. */
  activationBytes?: number | null;
  /** Include the NVMe variants of the offload modes (default true). */
  includeNvme?: boolean;
}

/** One mode's figures. */
export interface ModeEstimate {
  mode: Mode;
  /** Where offloaded state goes: cpu or nvme for offload modes, null otherwise. */
  offloadDevice: OffloadDevice | null;
  /** zero_init used for the figure (stage 3); null for stages 1-2, where it does not apply. */
  zeroInit: boolean | null;
  /** Model-state bytes per GPU. */
  gpuBytes: number;
  /** CPU bytes per node (peak: model init or offloaded state). */
  cpuBytes: number;
  /** Collective communication bytes per GPU per optimizer step (16-bit ring volume). */
  commBytesPerStep: number;
  /** GPU<->host (PCIe) bytes per GPU per optimizer step. */
  offloadBytesPerStep: number;
  /** NVMe space per node for offloaded state (NVMe rows), else 0. */
  nvmeBytes: number;
  /** Host<->NVMe bytes per GPU per optimizer step (NVMe rows), else 0. */
  nvmeBytesPerStep: number;
  /** GPU bytes counted for `fits`: gpuBytes plus the activation estimate, if any. */
  gpuNeedBytes: number;
  /** Whether GPU need fits the usable GPU memory; null when GPU memory is unknown. */
  gpuFits: boolean | null;
  /** Whether CPU need fits the usable CPU memory; null when CPU memory is unknown. */
  cpuFits: boolean | null;
  /** Whether nvmeBytes fit the free NVMe space; null when not an NVMe row or the space is unknown. */
  nvmeFits: boolean | null;
  /** Overall: GPU fits and CPU (if known) and NVMe (if known) fit; null when GPU memory is unknown. */
  fits: boolean | null;
  /** A caveat for this row (e.g. NVMe at stage 2), or null. */
  note: string | null;
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
  deepspeed: DeepSpeedRow[];
  /** The recommended mode, or null when nothing fits or GPU memory is unknown. */
  recommended: Mode | null;
  /** Offload device of the recommended row (cpu or nvme), or null. */
  recommendedOffloadDevice: OffloadDevice | null;
  /** One sentence saying why. */
  reason: string;
}

/** The input with defaults filled and derived totals. */
export interface NormalizedInput {
  params: number;
  largestLayer: number;
  gpusPerNode: number;
  nodes: number;
  totalGpus: number;
  zeroInit: boolean;
  gpuMemoryBytes: number | null;
  cpuMemoryBytes: number | null;
  nvmeFreeBytes: number | null;
  activationBytes: number | null;
  /** GPU bytes available to model states + activations after headroom; null if GPU memory unknown. */
  usableGpuBytes: number | null;
  /** CPU bytes available after headroom; null if CPU memory unknown. */
  usableCpuBytes: number | null;
}

/** Thrown for impossible input (the CLI validates first and reports a UsageError). */
export class EstimateInputError extends Error {
  override name = 'EstimateInputError';
}

function checkInt(value: number, what: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new EstimateInputError(`${what} must be a whole number from ${min} to ${max}, got ${value}`);
  }
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
  const activationBytes = input.activationBytes ?? null;
  for (const [v, what] of [
    [gpuMemoryBytes, 'GPU memory'],
    [cpuMemoryBytes, 'CPU memory'],
    [nvmeFreeBytes, 'NVMe free space'],
    [activationBytes, 'activation bytes'],
  ] as const) {
    if (v !== null && !(Number.isFinite(v) && v >= 0))
      throw new EstimateInputError(`${what} must be a non-negative number, got ${v}`);
  }
  return {
    params: input.params,
    largestLayer: input.largestLayer,
    gpusPerNode: input.gpusPerNode,
    nodes: input.nodes,
    totalGpus: input.gpusPerNode * input.nodes,
    zeroInit: input.zeroInit,
    gpuMemoryBytes,
    cpuMemoryBytes,
    nvmeFreeBytes,
    activationBytes,
    usableGpuBytes: gpuMemoryBytes === null ? null : usableGpu(gpuMemoryBytes),
    usableCpuBytes: cpuMemoryBytes === null ? null : Math.floor(cpuMemoryBytes * (1 - CPU_HEADROOM_FRACTION)),
  };
}

/** GPU bytes left for model states and activations: memory minus max(10 %, 2 GiB). */
export function usableGpu(gpuMemoryBytes: number): number {
  return Math.max(
    0,
    Math.floor(gpuMemoryBytes - Math.max(gpuMemoryBytes * GPU_HEADROOM_FRACTION, GPU_HEADROOM_MIN_BYTES)),
  );
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
// ---------------------------------------------------------------------------------------------

/** Ring all-reduce style volume per GPU in 16-bit: `elems x 2 bytes x (N-1)/N`, 0 with one GPU. */
function ringBytes(elems: number, totalGpus: number): number {
  return Math.floor((elems * 2 * (totalGpus - 1)) / totalGpus);
}

/**
 * The figures of one mode (offloadDevice selects the NVMe variant of an offload mode).
 *
 * GPU and CPU:
 * - `1`: GPU = 4P + int(16P/N) (fp16 params and grads replicated; fp32 grads, fp32 master weights and
 *   Adam states partitioned, DeepSpeed's accounting; the ZeRO paper's K=12 form gives 4P + 12P/N);
 *   CPU = DeepSpeed's zero2 no-offload CPU (P*4*gpusPerNode*1.5, the model loaded once per rank).
 * - `2` / `2-offload`: DeepSpeed zero2 cpu_offload = false / true.
 * - `3` / `3-offload`: DeepSpeed zero3 offload none/none and param cpu + optimizer cpu, zero_init as given.
 * Communication (collectives): stages 1-2 2P elems, stage 3 3P elems, each x 2 bytes x (N-1)/N.
 * Offload traffic (derived, 16-bit transfers, each GPU moves only its 1/N partition):
 * - `2-offload`: fp16 grads GPU->CPU + updated fp16 params CPU->GPU = 4P/N bytes.
 * - `3-offload`: fp16 params CPU->GPU for forward and again for backward + fp16 grads GPU->CPU = 6P/N bytes.
 * NVMe (derived from DeepSpeed's defaults; NVMe swapping exists only in stage 3):
 * - `2-offload` nvme: DeepSpeed stages 1-2 do plain CPU offload for device nvme, so same as cpu.
 * - `3-offload` nvme (params and optimizer on NVMe): GPU as cpu; CPU per node =
 *   int(gpusPerNode x (4 x 4 x min(1e9, ceil(P/N)) [optimizer swap buffers, fp32, buffer_count 4,
 *   sub_group_size 1e9] + 2 x 5e8 [param swap buffers, buffer_count 5 x buffer_size 1e8, fp16]) x 1.5);
 *   NVMe space per node = 18P/nodes (fp16 params 2 + fp32 params, grads, Adam m and v 16 per param);
 *   NVMe traffic per GPU per step = 30P/N bytes: fp16 params read for forward and backward and written
 *   after the step (2+2+2), and fp32 master params, Adam m and v read and written once (12+12).
 */
export function estimateMode(
  mode: Mode,
  input: EstimateInput | NormalizedInput,
  offloadDevice: OffloadDevice = 'cpu',
): ModeEstimate {
  const n = 'totalGpus' in input ? input : normalizeInput(input);
  const { params: P, largestLayer: L, gpusPerNode: g, nodes, totalGpus: N, zeroInit } = n;
  const info = MODE_INFO[mode];
  const offload = info.offloadOptimizer || info.offloadParam;
  const device: OffloadDevice | null = offload ? offloadDevice : null;
  let gpuBytes: number;
  let cpuBytes: number;
  let offloadBytesPerStep = 0;
  let nvmeBytes = 0;
  let nvmeBytesPerStep = 0;
  let note: string | null = null;
  switch (mode) {
    case '1':
      gpuBytes = 4 * P + Math.trunc((16 * P) / N);
      cpuBytes = deepspeedZero2(P, g, nodes, false)[0];
      break;
    case '2':
      [cpuBytes, gpuBytes] = deepspeedZero2(P, g, nodes, false);
      break;
    case '2-offload':
      [cpuBytes, gpuBytes] = deepspeedZero2(P, g, nodes, true);
      offloadBytesPerStep = Math.floor((4 * P) / N);
      if (device === 'nvme') note = 'DeepSpeed swaps to NVMe only at stage 3; at stage 2 device nvme acts as cpu';
      break;
    case '3':
      [cpuBytes, gpuBytes] = deepspeedZero3(P, L, g, nodes, false, false, zeroInit);
      break;
    case '3-offload':
      [cpuBytes, gpuBytes] = deepspeedZero3(P, L, g, nodes, true, true, zeroInit);
      offloadBytesPerStep = Math.floor((6 * P) / N);
      if (device === 'nvme') {
        const partition = Math.ceil(P / N);
        const perRank =
          4 * OPTIMIZER_SWAP_BUFFER_COUNT * Math.min(SUB_GROUP_SIZE_ELEMS, partition) + 2 * PARAM_SWAP_BUFFER_ELEMS;
        cpuBytes = Math.trunc(g * perRank * ADDITIONAL_BUFFER_FACTOR);
        nvmeBytes = Math.ceil((18 * P) / nodes);
        nvmeBytesPerStep = Math.floor((30 * P) / N);
      }
      break;
  }
  const commBytesPerStep = ringBytes(info.stage === 3 ? 3 * P : 2 * P, N);
  const gpuNeedBytes = gpuBytes + (n.activationBytes ?? 0);
  const gpuFits = n.usableGpuBytes === null ? null : gpuNeedBytes <= n.usableGpuBytes;
  const cpuFits = n.usableCpuBytes === null ? null : cpuBytes <= n.usableCpuBytes;
  const nvmeFits =
    device === 'nvme' && mode === '3-offload' && n.nvmeFreeBytes !== null ? nvmeBytes <= n.nvmeFreeBytes : null;
  const fits = gpuFits === null ? null : gpuFits && cpuFits !== false && nvmeFits !== false;
  return {
    mode,
    offloadDevice: device,
    zeroInit: info.stage === 3 ? zeroInit : null,
    gpuBytes,
    cpuBytes,
    commBytesPerStep,
    offloadBytesPerStep,
    nvmeBytes,
    nvmeBytesPerStep,
    gpuNeedBytes,
    gpuFits,
    cpuFits,
    nvmeFits,
    fits,
    note,
  };
}

/** Preference order for the recommendation: no offload first, then less communication, then lower stage, cpu before nvme. */
function preference(row: ModeEstimate): [number, number, number, number] {
  const info = MODE_INFO[row.mode];
  const offload = info.offloadOptimizer || info.offloadParam ? 1 : 0;
  return [offload, row.commBytesPerStep + row.offloadBytesPerStep, info.stage, row.offloadDevice === 'nvme' ? 1 : 0];
}

function compareRows(a: ModeEstimate, b: ModeEstimate): number {
  const pa = preference(a);
  const pb = preference(b);
  for (let i = 0; i < pa.length; i++) {
    const d = pa[i]! - pb[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

function label(row: ModeEstimate): string {
  const base = MODE_INFO[row.mode].label;
  return row.offloadDevice === 'nvme' ? `${base} (NVMe)` : base;
}

/** All modes (and their NVMe variants), DeepSpeed's rows, the recommendation and its reason. */
export function estimateModes(input: EstimateInput): EstimateReport {
  const n = normalizeInput(input);
  const modes: ModeEstimate[] = [];
  for (const mode of MODES) {
    modes.push(estimateMode(mode, n, 'cpu'));
    if (input.includeNvme !== false && (MODE_INFO[mode].offloadOptimizer || MODE_INFO[mode].offloadParam)) {
      modes.push(estimateMode(mode, n, 'nvme'));
    }
  }
  const { recommended, reason } = recommend(n, modes);
  return {
    input: n,
    modes,
    deepspeed: deepspeedRows(n),
    recommended: recommended?.mode ?? null,
    recommendedOffloadDevice: recommended?.offloadDevice ?? null,
    reason,
  };
}

/** Picks the fastest row that fits and says why in one sentence. */
export function recommend(
  n: NormalizedInput,
  modes: ModeEstimate[],
): { recommended: ModeEstimate | null; reason: string } {
  const oneGpu =
    n.totalGpus === 1 ? 'With one GPU, stages 1-3 without offload shard over a single device and save nothing; ' : '';
  if (n.gpuMemoryBytes === null || n.usableGpuBytes === null) {
    return {
      recommended: null,
      reason: `${oneGpu}${oneGpu ? 'give' : 'Give'} the GPU memory (--gpu-memory or --detect) to see which modes fit.`,
    };
  }
  const mem = formatBytesShort(n.gpuMemoryBytes);
  const acts = n.activationBytes ? ' (activations included)' : '';
  const sorted = [...modes].sort(compareRows);
  const best = sorted.find((r) => r.fits === true) ?? null;
  if (!best) {
    const lowest = modes.reduce((a, b) => (b.gpuNeedBytes < a.gpuNeedBytes ? b : a));
    const why =
      lowest.gpuFits === false
        ? `even ${label(lowest)} needs ${formatBytesShort(lowest.gpuNeedBytes)} per GPU${acts} and ${formatBytesShort(n.usableGpuBytes)} of ${mem} is usable`
        : `${label(lowest)} fits the GPU but needs ${formatBytesShort(lowest.cpuBytes)} of CPU memory per node${lowest.nvmeFits === false ? ' or more NVMe space' : ''}`;
    const advice =
      lowest.gpuFits === false
        ? `add GPUs or nodes${n.activationBytes ? ', shorten sequences or use activation checkpointing' : ''}`
        : `add CPU memory${lowest.offloadDevice === 'nvme' ? '' : ', offload to NVMe (ZeRO-3 offload NVMe)'} or add nodes`;
    return { recommended: null, reason: `${oneGpu}No mode fits: ${why}; ${advice}.` };
  }
  const spare = formatBytesShort(n.usableGpuBytes - best.gpuNeedBytes);
  const info = MODE_INFO[best.mode];
  const fitsText = `${label(best)} fits in ${mem} with ${spare} to spare${acts}`;
  let tail: string;
  if (info.offloadOptimizer || info.offloadParam) {
    const noOffload = modes.filter((r) => r.offloadDevice === null);
    const smallest = noOffload.reduce((a, b) => (b.gpuNeedBytes < a.gpuNeedBytes ? b : a));
    tail = `; no mode without offload fits (${label(smallest)} needs ${formatBytesShort(smallest.gpuNeedBytes)} per GPU), and it moves ${formatBytesShort(best.offloadBytesPerStep)} per GPU per step over PCIe`;
    if (best.offloadDevice === 'nvme') tail += ' and swaps to NVMe';
  } else if (info.stage === 3) {
    tail = n.totalGpus === 1 ? '' : '; ZeRO-1 and ZeRO-2 do not fit, and it moves 1.5x the communication of DDP';
  } else {
    tail = n.totalGpus === 1 ? '' : ' and adds no communication over DDP';
  }
  const sentence = `${fitsText}${tail}.`;
  return { recommended: best, reason: `${oneGpu}${sentence}` };
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
