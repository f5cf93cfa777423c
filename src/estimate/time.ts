/**
 * The step-time model: seconds per optimizer step of one ZeRO placement (or none: DDP), as the sum of what each
 * term adds to the step after what overlaps with the GPU's compute, with a band (low-high) and the term that
 * bounds it. One formula per term, each with its source:
 *
 * - compute: the FLOPs of the workload (./flops.ts: the block layout, attention at the real sequence length,
 *   recomputation under gradient checkpointing, frozen weights' cheaper backward) x micro-batch x gradient
 *   accumulation, over the GPU's dense peak (./gpus.ts) x an efficiency: COMPUTE_EFFICIENCY, the fraction of
 *   the peak training code reaches on the hardware FLOPs it runs (recomputation included).
 * - collectives: ZeRO's ring volumes per stage (Rajbhandari et al. 2020, "ZeRO", Sec. 7: DDP all-reduces 2x the
 *   gradients; stages 1-2 reduce-scatter the gradients and all-gather the updated partition, the same 2x; stage
 *   3 gathers every parameter in forward and again in backward, 3x), a ring moving (N-1)/N of the volume per GPU,
 *   on the node's link (NVLink or PCIe) or the network between nodes, whichever is slower (./gpus.ts). What
 *   overlaps: DDP's all-reduce runs in buckets during the last micro-step's backward (accelerate's accumulate()
 *   skips it, no_sync, on the others); DeepSpeed's stage-2 reduce runs in backward's hooks on every micro-step,
 *   overlapped when overlap_comm is on; stage 1 reduces after backward and stages 1-2 all-gather after the step,
 *   neither overlapped; stage 3 prefetches its gathers under compute (DeepSpeed's
 *   PartitionedParameterCoordinator) and re-gathers for the recomputation under checkpointing.
 * - offload: PCIe copies per GPU (DeepSpeed stage_1_and_2.py with offload: each micro-step's reduced gradient
 *   partition to the host, the updated 16-bit partition back after the step; stage3.py with parameter
 *   offload: every gathered partition fetched from the host in forward, backward and recomputation), on the
 *   GPU's PCIe generation; not overlapped.
 * - hostOptimizer: DeepSpeedCPUAdam over the node's trained partitions. Its rate is the host's: at most
 *   HOST_OPTIMIZER_PARAMS_PER_S_PER_NODE (bound by the host's memory, whatever the threads), and no more than
 *   HOST_OPTIMIZER_PARAMS_PER_S_PER_THREAD per thread the ranks run it on: OMP_NUM_THREADS, which torchrun (what
 *   `accelerate launch` runs) sets to 1 for each of several processes on a node when it is not set
 *   (torch/distributed/run.py), or the host's cores for one process. Not overlapped (the step waits for it).
 * - nvme: the swap traffic of ZeRO-Infinity (the optimizer states read and written each step; parameters read in
 *   forward, backward and recomputation, written after the step) through the node's drive at the speed `check`
 *   measured, else NVME_BYTES_PER_S (assumed, said so).
 *
 * The band: the step at COMPUTE_EFFICIENCY_BAND's ends and the host rate HOST_RATE_BAND x its figure. Not
 * modelled (docs/step-time.md says what this gets wrong): DeepSpeed's per-module fetch latency at stage 3,
 * the optimizer step on the GPU, the data loader, the frozen encoders' forward, kernel-launch overhead at small
 * micro-batches.
 */
import type { ActivationInput } from './activations.js';
import { trainingFlops } from './flops.js';
import { formatByteRate, formatSeconds } from '../text/index.js';
import type { GpuSpec, Internode } from './gpus.js';
import { internodeBytesPerS, intraNodeLink, pcieBytesPerS, peakFlops } from './gpus.js';
import type { Interconnect, Precision } from '../config/index.js';

/**
 * The fraction of the dense peak training code reaches on its hardware FLOPs (recomputation included): 0.45,
 * between the published model-FLOPs utilisations of LLaMA (Touvron et al. 2023: 380 tokens/s/GPU for 65.2B on
 * A100-80GB, 6 x 65.2e9 x 380 / 312e12 = 0.48) and Open-Llama's accelerate + DeepSpeed trainer (3290
 * tokens/s/GPU for 6.89B on A100-80GB: 0.44), and below MosaicML's tuned FSDP runs (llm-foundry's benchmark
 * tables: hardware-FLOPs utilisation 0.35-0.59 on H100, 0.52-0.75 on A100).
 */
export const COMPUTE_EFFICIENCY = 0.45;
/** The band's ends: 0.30 (Open-Llama's first trainer, transformers' eager attention, reached 0.18) to 0.60 (llm-foundry's A100 median). */
export const COMPUTE_EFFICIENCY_BAND: readonly [number, number] = [0.3, 0.6];
/**
 * DeepSpeedCPUAdam's rate per node, parameters per second, when threads are plenty: 11.6B parameters stepped in
 * 8.2 s (DeepSpeed PR #735, its author, on the DGX-2 host of the ZeRO-Offload paper: 1.41e9/s). The step reads
 * and writes the fp32 master weights, both moments and the gradient: bound by the host's memory.
 */
export const HOST_OPTIMIZER_PARAMS_PER_S_PER_NODE = 1.41e9;
/** One thread's rate: a flat fp32 AdamW on one thread of an 8 x H100 node's host, 536.9M parameters in 1.93 s (Megatron-LM fork issue ISEEKYAN/Megatron-LM#188). */
export const HOST_OPTIMIZER_PARAMS_PER_S_PER_THREAD = 0.278e9;
/** The host rate's band, as a factor of its figure (an assumption: hosts differ in memory channels and speed). */
export const HOST_RATE_BAND: readonly [number, number] = [0.75, 1.25];
/**
 * What a micro-step spends on the host per block (kernel launches, autograd and Python between small kernels),
 * beside the GPU's work: a micro-step takes the longer of the two. 4.69 ms, set from one row of the calibration
 * (qwen-7b-lora-1gpu-seq256: 1.2 s measured for 8 micro-steps of 256 tokens through 32 blocks, 1.2 / 256, the
 * GPU's FLOPs taking less), so that row is no test of it; the other short-sequence rows are.
 */
export const STEP_OVERHEAD_SECONDS_PER_BLOCK = 4.69e-3;
/**
 * ZeRO-3's fetch of a block's partitions, per block and pass (forward, backward, recomputation): hooks,
 * all-gather launches and waits that prefetching does not hide. 2.08 ms, set from one row of the calibration
 * (qwen-1.8b-full-z3-1gpu-seq256: 2.1 s measured for 8 micro-steps through 24 blocks under checkpointing, less
 * 8 x 24 x STEP_OVERHEAD_SECONDS_PER_BLOCK, over 8 x 24 x 3 passes), so that row is no test of it; the other
 * ZeRO-3 rows are.
 */
export const ZERO3_FETCH_SECONDS_PER_BLOCK = 2.08e-3;
/** NVMe offload when `check` measured nothing: stas00 measured 1 to 3.15 GB/s reads on a 3.5 GB/s drive (DeepSpeed#998); assumed 2 GB/s. */
export const NVME_BYTES_PER_S = 2e9;

/** The five terms, seconds each adds to an optimizer step after what overlaps. */
export interface TimeTerms {
  compute: number;
  collectives: number;
  offload: number;
  hostOptimizer: number;
  nvme: number;
}
/** A term's name. */
export type TimeTerm = keyof TimeTerms;

/** One placement's step time: the figure, the band, the bounding term and the terms. */
export interface StepTimeBand {
  /** Seconds per optimizer step (micro-batch x gradient accumulation), the terms' sum. */
  stepSeconds: number;
  /** The band's fast and slow ends. */
  low: number;
  high: number;
  /** The largest term. */
  bound: TimeTerm;
  terms: TimeTerms;
  /** What each term moves or computes before overlap (seconds), for the panel and the run's comparison. */
  raw: TimeTerms;
  /** The link the collectives run on, in words. */
  link: string;
  /** Threads DeepSpeedCPUAdam runs on per node (0 when the optimizer is on the GPU). */
  hostThreads: number;
  /** The NVMe speed the swapping term used, and whether `check` measured it (null: nothing swaps to NVMe). */
  nvme: { bytesPerS: number; measured: boolean } | null;
}

/** The machine and launch facts the time model needs beyond the peak's input. */
export interface TimeContext {
  gpu: GpuSpec;
  /** Where the GPU came from: the flag or an answer, detection, or the default. */
  gpuSource: 'given' | 'detected' | 'default';
  /** CPU cores per node. */
  hostCores: number;
  hostCoresSource: 'given' | 'detected' | 'default';
  /** OMP_NUM_THREADS of the launch, or null when unset (torchrun then sets 1 per process with several per node). */
  ompThreads: number | null;
  internode: Internode;
  nvmeBytesPerS: number;
  nvmeMeasured: boolean;
  /** Gradient accumulation steps per optimizer step. */
  accumulation: number;
}

/** A placement as the time model reads it (stage 0: no ZeRO). */
export interface TimePlacement {
  stage: 0 | 1 | 2 | 3;
  optimizer: 'none' | 'cpu' | 'nvme';
  param: 'none' | 'cpu' | 'nvme';
}

/** What the time model reads of the estimator's normalized input. */
export interface TimeInput {
  params: number;
  trainable: number;
  gpusPerNode: number;
  nodes: number;
  totalGpus: number;
  precision: Precision;
  interconnect: Interconnect;
  knobs: { overlapComm: boolean };
  /** The shape and workload, or null (then compute counts 2 weights' FLOPs per parameter and token). */
  activation: ActivationInput | null;
  /** Tokens per sample and micro-batch when the shape is unknown. */
  workload: { tokens: number; microBatch: number; checkpointing: boolean };
  /** LoRA adapters' parameters (beside frozen weights), 0 without. */
  adapterParams: number;
  timing: TimeContext;
}

/** The constants one end of the band is computed with. */
interface BandEnd {
  efficiency: number;
  hostRate: number;
}

function ringBytes(elems: number, bytes: number, n: number): number {
  return n <= 1 ? 0 : (elems * bytes * (n - 1)) / n;
}

/** FLOPs one GPU computes per micro-batch (see ./flops.ts), the shape's or the fallback's. */
export function microBatchFlops(n: TimeInput): number {
  const frozenParams = n.adapterParams > 0;
  const trainedFraction = frozenParams ? 0 : n.params > 0 ? n.trainable / n.params : 1;
  const a = n.activation;
  if (a) return a.microBatch * trainingFlops(a, trainedFraction, n.adapterParams).total;
  const w = n.workload;
  const weightParams = n.params - n.adapterParams;
  const passes = 1 + (w.checkpointing ? 1 : 0) + 1 + trainedFraction;
  const adapters = 2 * n.adapterParams * (w.checkpointing ? 4 : 3);
  return w.microBatch * w.tokens * (2 * weightParams * passes + adapters);
}

/**
 * The hidden size per block of LLaMA's shapes (Touvron et al. 2023, Table 2: 4096/32, 5120/40, 6656/60, 8192/80:
 * 128 down to 102): what a model of unknown shape is assumed to have, so that P = 12 h^2 L gives its blocks.
 */
export const HIDDEN_PER_BLOCK = 128;

/** Blocks of a model of `params` parameters and unknown shape: P = 12 (128 L)^2 L, so L = (P / 196608)^(1/3). */
export function assumedBlocks(params: number): number {
  return Math.max(1, Math.round(Math.cbrt(params / (12 * HIDDEN_PER_BLOCK * HIDDEN_PER_BLOCK))));
}

/** Blocks a micro-step runs (the shape's layers; a UNet's ResNet and transformer blocks); assumed without a shape. */
export function blocksOf(a: ActivationInput | null, params = 0): number {
  if (!a) return params > 0 ? assumedBlocks(params) : 0;
  if (a.block !== 'unet' || !a.unet) return a.layers;
  const u = a.unet;
  const perLevel = 2 * u.layersPerBlock + 1;
  const transformers = u.transformerLayers.reduce((s, l) => s + (l > 0 ? perLevel : 0), 0);
  return u.channels.length * perLevel + transformers + 2 + (u.midTransformerLayers > 0 ? 1 : 0);
}

/** Bus bytes per second of the collectives: the node's link, or the network when it is slower and there are nodes. */
export function collectiveLink(n: Pick<TimeInput, 'timing' | 'interconnect' | 'nodes'>): {
  link: string;
  bytesPerS: number;
} {
  const intra = intraNodeLink(n.timing.gpu, n.interconnect);
  if (n.nodes <= 1) return intra;
  const net = internodeBytesPerS(n.timing.internode);
  return net < intra.bytesPerS
    ? { link: `the network (${n.timing.internode.spec})`, bytesPerS: net }
    : { link: intra.link, bytesPerS: intra.bytesPerS };
}

/** Whether the blocks run forward again in backward (gradient checkpointing). */
function recomputes(n: TimeInput): boolean {
  return n.activation ? n.activation.checkpointing === 'full' : n.workload.checkpointing;
}

/**
 * The collectives of stages 0-2 per optimizer step (stage 3's gathers ride the host path, microStep below):
 * bytes that overlap with backward, bytes that do not, and the backward they may hide under.
 */
function collectiveBytes(p: TimePlacement, n: TimeInput, backwardSeconds: number) {
  const wire = n.precision === 'fp32' ? 4 : 2;
  const acc = n.timing.accumulation;
  const grads = ringBytes(n.trainable, wire, n.totalGpus);
  if (p.stage === 0) return { overlap: 2 * grads, exposed: 0, window: backwardSeconds / acc };
  if (p.stage === 1) return { overlap: 0, exposed: 2 * grads, window: 0 };
  const reduce = acc * grads;
  const overlaps = n.knobs.overlapComm;
  const gather = p.stage === 2 ? grads : 0;
  return { overlap: overlaps ? reduce : 0, exposed: gather + (overlaps ? 0 : reduce), window: backwardSeconds };
}

/**
 * One micro-step: the GPU's FLOPs, and the host's path that issues them (PyTorch launches asynchronously, so the
 * step takes the longer of the two): STEP_OVERHEAD_SECONDS_PER_BLOCK per block, and at stage 3 each block's fetch
 * per pass (ZERO3_FETCH_SECONDS_PER_BLOCK) with its all-gather on the link, which the next block's compute can
 * hide but the host's own wait cannot.
 */
function microStep(p: TimePlacement, n: TimeInput, efficiency: number, bus: { bytesPerS: number }) {
  const t = n.timing;
  const blocks = blocksOf(n.activation, n.params);
  const gpu = microBatchFlops(n) / (peakFlops(t.gpu, n.precision) * efficiency);
  const launch = blocks * STEP_OVERHEAD_SECONDS_PER_BLOCK;
  const passes = 2 + (recomputes(n) ? 1 : 0);
  const wire = n.precision === 'fp32' ? 4 : 2;
  const fetch = p.stage === 3 ? blocks * passes * ZERO3_FETCH_SECONDS_PER_BLOCK : 0;
  const gathers = p.stage === 3 ? (passes * ringBytes(n.params, wire, n.totalGpus)) / bus.bytesPerS : 0;
  const host = launch + fetch + gathers;
  const excess = Math.max(0, host - gpu);
  const toComm = host > 0 ? (excess * (fetch + gathers)) / host : 0;
  return { gpu, compute: gpu + excess - toComm, collectives: toComm, gathers };
}

/** PCIe bytes per GPU per optimizer step (offloaded gradients out, parameters in). */
function pcieBytes(p: TimePlacement, n: TimeInput): number {
  if (p.stage === 0) return 0;
  const wire = n.precision === 'fp32' ? 4 : 2;
  const acc = n.timing.accumulation;
  const N = n.totalGpus;
  const recompute = recomputes(n);
  let bytes = 0;
  if (p.optimizer !== 'none') bytes += (acc + (p.param === 'none' ? 1 : 0)) * ((wire * n.trainable) / N);
  if (p.stage === 3 && p.param !== 'none') bytes += acc * (2 + (recompute ? 1 : 0)) * ((wire * n.params) / N);
  return bytes;
}

/** NVMe bytes per node per optimizer step (ZeRO-Infinity's swaps), through one drive. */
function nvmeBytes(p: TimePlacement, n: TimeInput): number {
  if (p.stage !== 3) return 0;
  const wire = n.precision === 'fp32' ? 4 : 2;
  const acc = n.timing.accumulation;
  const perNode = (elems: number) => (elems * n.gpusPerNode) / n.totalGpus;
  const recompute = recomputes(n);
  let bytes = 0;
  // fp32 master weights and two fp32 moments, read and written back.
  if (p.optimizer === 'nvme') bytes += 2 * 12 * perNode(n.trainable);
  if (p.param === 'nvme')
    bytes += acc * (2 + (recompute ? 1 : 0)) * wire * perNode(n.params) + wire * perNode(n.trainable);
  return bytes;
}

/** The threads DeepSpeedCPUAdam runs on per node: OMP_NUM_THREADS, else torchrun's 1 per process (several per node), else the cores. */
export function hostOptimizerThreads(n: Pick<TimeInput, 'gpusPerNode' | 'timing'>): number {
  const perRank = n.timing.ompThreads ?? (n.gpusPerNode > 1 ? 1 : n.timing.hostCores);
  return Math.max(1, Math.min(n.timing.hostCores, n.gpusPerNode * perRank));
}

/** DeepSpeedCPUAdam's parameters per second on one node at a band end's host factor. */
function hostRate(n: TimeInput, factor: number): number {
  const threads = hostOptimizerThreads(n);
  return Math.min(threads * HOST_OPTIMIZER_PARAMS_PER_S_PER_THREAD, HOST_OPTIMIZER_PARAMS_PER_S_PER_NODE) * factor;
}

/** The terms at one end of the band. */
function termsAt(p: TimePlacement, n: TimeInput, end: BandEnd): { terms: TimeTerms; raw: TimeTerms; link: string } {
  const t = n.timing;
  const acc = t.accumulation;
  const bus = collectiveLink(n);
  const micro = microStep(p, n, end.efficiency, bus);
  const compute = acc * micro.compute;
  const c = collectiveBytes(p, n, acc * (2 / 3) * micro.gpu);
  const overlapSeconds = c.overlap / bus.bytesPerS;
  const exposedSeconds = c.exposed / bus.bytesPerS;
  const collectives = acc * micro.collectives + exposedSeconds + Math.max(0, overlapSeconds - c.window);
  const offload = pcieBytes(p, n) / pcieBytesPerS(t.gpu);
  const hostOptimizer =
    p.stage !== 0 && p.optimizer !== 'none' ? n.trainable / n.nodes / (end.hostRate > 0 ? end.hostRate : 1) : 0;
  const nvme = nvmeBytes(p, n) / t.nvmeBytesPerS;
  const terms = { compute, collectives, offload, hostOptimizer, nvme };
  const raw = {
    ...terms,
    compute: acc * micro.gpu,
    collectives: acc * micro.gathers + overlapSeconds + exposedSeconds,
  };
  return { terms, raw, link: bus.link };
}

const sum = (t: TimeTerms) => t.compute + t.collectives + t.offload + t.hostOptimizer + t.nvme;

/** The step time of a placement: the terms at the central constants, the band at their ends, the bounding term. */
export function stepTimeOf(p: TimePlacement, n: TimeInput): StepTimeBand {
  const central = termsAt(p, n, { efficiency: COMPUTE_EFFICIENCY, hostRate: hostRate(n, 1) });
  const fast = termsAt(p, n, { efficiency: COMPUTE_EFFICIENCY_BAND[1], hostRate: hostRate(n, HOST_RATE_BAND[1]) });
  const slow = termsAt(p, n, { efficiency: COMPUTE_EFFICIENCY_BAND[0], hostRate: hostRate(n, HOST_RATE_BAND[0]) });
  const terms = central.terms;
  const bound = (Object.keys(terms) as TimeTerm[]).reduce((a, b) => (terms[b] > terms[a] ? b : a), 'compute');
  return {
    stepSeconds: sum(terms),
    low: sum(fast.terms),
    high: sum(slow.terms),
    bound,
    terms,
    raw: central.raw,
    link: central.link,
    hostThreads: p.stage !== 0 && p.optimizer !== 'none' ? hostOptimizerThreads(n) : 0,
    nvme: terms.nvme > 0 ? { bytesPerS: n.timing.nvmeBytesPerS, measured: n.timing.nvmeMeasured } : null,
  };
}

/** Words for each term, as the table, the panel and the run's comparison name them. */
export const TERM_WORDS: Record<TimeTerm, string> = {
  compute: 'compute',
  collectives: 'the collectives',
  offload: 'PCIe offload',
  hostOptimizer: 'the CPU optimizer',
  nvme: 'NVMe swapping',
};

/** A band as the table prints it: `9.1-12 s/step`; one figure when the ends round alike. */
export function formatBand(t: Pick<StepTimeBand, 'low' | 'high'>): string {
  const lo = formatSeconds(t.low);
  const hi = formatSeconds(t.high);
  if (lo === hi) return `${hi}/step`;
  return lo.endsWith(' s') && hi.endsWith(' s') ? `${lo.slice(0, -2)}-${hi}/step` : `${lo}-${hi}/step`;
}

/** What bounds a step, in words: `bound by the CPU optimizer on 8 threads`. */
export function boundWords(t: StepTimeBand): string {
  if (t.bound === 'hostOptimizer')
    return `bound by the CPU optimizer on ${t.hostThreads} thread${t.hostThreads === 1 ? '' : 's'} per node`;
  if (t.bound === 'collectives') return `bound by the collectives on ${t.link}`;
  if (t.bound === 'nvme' && t.nvme)
    return `bound by NVMe swapping at ${formatByteRate(t.nvme.bytesPerS)} (${t.nvme.measured ? 'measured by `zerowiz check`' : 'assumed; `zerowiz check` measures the drive'})`;
  return `bound by ${TERM_WORDS[t.bound]}`;
}
