/**
 * The peak-memory model: what one GPU (and one node's CPU) really holds at the peak of a training step
 * under a ZeRO placement, as line items, plus the traffic of a step turned into seconds.
 *
 * Every line item is a pure function of the input, with its derivation and its source beside it. The
 * DeepSpeed facts were read in deepspeedai/DeepSpeed at edaa7221 (v0.19.6, 2026-08-22):
 * - deepspeed/runtime/zero/stage_1_and_2.py, DeepSpeedZeroOptimizer: `setup_buckets` allocates one
 *   contiguous-gradient (IPG) buffer of `reduce_bucket_size` elements in the optimizer's 16-bit dtype, and
 *   a second one when `overlap_comm` is on ("Use double buffers to avoid data access conflict"); `__init__`
 *   keeps the 16-bit parameters flat and whole on every GPU (`bit16_groups_flat`), the fp32 master
 *   partition (`single_partition_of_fp32_groups`), and with CPU offload a GPU `temp_grad_buffer_for_gpu_offload`
 *   of the largest parameter's size, plus pinned CPU copies (`param_buffer_of_bit16_for_cpu_offload_groups`,
 *   `temp_grad_buffer_for_cpu_offload`); `copy_grads_in_partition` moves this rank's 16-bit gradients into
 *   `grads_in_partition` (partition size); `step` creates the fp32 gradient partition per group
 *   (`flat_grad_partition.to(fp32)`). At stage 1 (`partition_gradients` false) full gradients stay on the
 *   GPU until `reduce_gradients` at the end of backward.
 * - deepspeed/runtime/utils.py, `all_gather_dp_groups`: with `dist.has_all_gather_into_tensor()` (every
 *   current PyTorch) the updated partitions are gathered straight into the flat 16-bit buffer, so
 *   `allgather_bucket_size` allocates nothing; it only chunks the fallback path.
 * - deepspeed/runtime/zero/stage3.py, DeepSpeedZeroOptimizer_Stage3: one IPG buffer of `reduce_bucket_size`
 *   per dtype (`overlap_comm` only selects a side stream, no second buffer); `grad_partitions_flat_buffer`
 *   (this rank's 16-bit gradient partitions; pinned on the CPU when the optimizer is offloaded);
 *   `initialize_optimizer_states` allocates one fp32 `gradient_buffer` of the largest sub-group
 *   (<= `sub_group_size`) on the optimizer's device and keeps it as every sub-group's `.grad`.
 * - deepspeed/runtime/zero/partitioned_param_coordinator.py, `fetch_sub_module`: the current module is
 *   gathered whole; prefetch adds up to min(`stage3_max_live_parameters` - available,
 *   `stage3_prefetch_bucket_size`) elements; `__params_to_release` keeps parameters reused within
 *   `stage3_max_reuse_distance`. So at most the largest module plus max(prefetch bucket, max live
 *   parameters) are gathered at once.
 * Fixed costs are from stas00/ml-engineering (training/performance/README.md at 744d01e, "Preloaded CUDA
 * kernels memory usage" and "torch.distributed memory usage"). Limits are listed in docs/peak-model.md.
 */
import type { Interconnect, MasterWeights, OptimizerKind, Precision } from '../config/index.js';
import type { ActivationBreakdown } from './activations.js';
import { DEEPSPEED_DEFAULTS } from '../config/index.js';
import type { Placement } from '../config/index.js';

/** CUDA context and preloaded kernels per process: 0.92 GiB measured on an A100 with pytorch 2.1.1 (eager module loading; 0.47 GiB lazy), ml-engineering "Preloaded CUDA kernels memory usage". */
export const CUDA_CONTEXT_BYTES = Math.round(0.92 * 2 ** 30);
/** NCCL's communicator and buffers after the first collective: 2.00 - 0.55 GiB in ml-engineering's torch-dist-mem-usage.py run with 2 ranks ("torch.distributed memory usage"). */
export const NCCL_INIT_BYTES = Math.round(1.45 * 2 ** 30);
/**
 * The allocator's caching and fragmentation on top of what tensors hold: users read nvidia-smi, which shows
 * what PyTorch's caching allocator has reserved, not what is allocated (DeepSpeed#1437). It grows with what
 * is allocated and freed within a step (activations, gathered parameters, buckets, stage 1's gradients),
 * not with the flat buffers DeepSpeed allocates once (parameter, gradient and optimizer partitions). An
 * assumption, checked against the published measurements in __tests__/fixtures/peak-calibration.json.
 */
export const FRAGMENTATION_MARGIN_FRACTION = 0.1;
/** Bytes per parameter while a rank loads the model on CPU before sharding: fp32, as DeepSpeed's estimator assumes (`P * 4 * num_gpus_per_node`). */
export const LOAD_BYTES_PER_PARAM = 4;
/**
 * DiffSynth-Studio's pipelines load every model in their torch_dtype (bf16: `ModelConfig`s loaded with
 * `torch_dtype=torch.bfloat16` in its training scripts), so an image or video model costs 2 bytes a parameter
 * per rank on the CPU, not the estimator's fp32.
 */
export const DIFFSYNTH_LOAD_BYTES_PER_PARAM = 2;
/** DeepSpeed's offload_optimizer.buffer_count default: pinned fp32 swap buffers per rank for NVMe. */
export const OPTIMIZER_SWAP_BUFFER_COUNT = DEEPSPEED_DEFAULTS.offload_optimizer_buffer_count;
/** DeepSpeed's offload_param.buffer_count x buffer_size defaults (5 x 1e8 elements): 16-bit swap buffers per rank. */
export const PARAM_SWAP_BUFFER_ELEMS =
  DEEPSPEED_DEFAULTS.offload_param_buffer_count * DEEPSPEED_DEFAULTS.offload_param_buffer_size;
/** No ZeRO at all: plain PyTorch, or DDP over N GPUs (every state whole on every GPU). */
export interface NoZeroPlacement {
  stage: 0;
  optimizer: 'none';
  param: 'none';
}
/** A ZeRO placement, or none (stage 0: what a trainer without DeepSpeed does). */
export type PeakPlacement = Placement | NoZeroPlacement;
/** The stage-0 placement. */
export const NO_ZERO: NoZeroPlacement = { stage: 0, optimizer: 'none', param: 'none' };

/** Bytes per element of each model state, as the optimizer, the master weights and the placement make them. */
export interface StateBytes {
  /** Every parameter (trained and frozen): 2 in bf16/fp16, 4 in fp32 or under torch AMP with fp32 master. */
  params: number;
  /** The trained parameters' gradients, as backward writes them. */
  grads: number;
  /** A separate master copy of the trained weights (0: the weights are their own master). */
  master: number;
  /** Each optimizer moment, and how many there are (Adam 2, Adafactor and SGD 0). */
  moment: number;
  moments: number;
  /** The gradient copy the optimizer steps with (DeepSpeed's fp32 partition; 0 without DeepSpeed). */
  masterGrads: number;
  /** Bytes per element of the step group that the optimizer step allocates and frees (foreach intermediates). */
  stepTemp: number;
  /** A note when the answers are overridden (offload swaps the optimizer, fp16 keeps fp32 master). */
  note: string | null;
}

/** DeepSpeed's knobs that size buffers (zero_optimization keys), in elements. */
export interface ZeroKnobs {
  reduceBucketElems: number;
  overlapComm: boolean;
  contiguousGradients: boolean;
  prefetchBucketElems: number;
  maxLiveParams: number;
  subGroupElems: number;
}

/** Everything the peak model needs (the estimator's normalized input). */
export interface PeakInput {
  /** Total parameters P (trainable T plus frozen). */
  params: number;
  /** Parameters of the largest module L (gathered whole at stage 3). */
  largestLayer: number;
  /** Trainable parameters T (P for full fine-tuning). */
  trainable: number;
  /** Elements of the largest trainable tensor (the stage 1-2 offload staging buffer, the gathered gradient at stage 3). */
  largestTrainable: number;
  gpusPerNode: number;
  nodes: number;
  totalGpus: number;
  zeroInit: boolean;
  precision: Precision;
  /** The optimizer the script builds (default adamw). */
  optimizer: OptimizerKind;
  /** fp32 master weights (DeepSpeed's default) or none (pure 16-bit). */
  masterWeights: MasterWeights;
  /**
   * The optimizer steps with a fused kernel (DeepSpeed's FusedAdam from the JSON's optimizer block, torch's
   * fused=True) instead of torch's default foreach implementation, which allocates a copy of the second moment.
   */
  fusedOptimizer: boolean;
  /** Frozen encoders run on this GPU every step (not precomputed): their forward's working memory, bytes. */
  encoderTransientBytes: number;
  knobs: ZeroKnobs;
  /** Activations per GPU, or null when the model's shape or the workload is unknown. */
  activations: ActivationBreakdown | null;
  /** Frozen parameters of other models resident on each GPU (text encoder, VAE, EMA, reference model). */
  extraGpuParams: number;
  /** Frozen models resident on each GPU given at their real bytes (the catalog's encoders at their dtype). */
  frozenGpuBytes: number;
  /** Bytes of one frozen (not trained) weight of the model: the training precision's, 1 when loaded in fp8. */
  frozenBytesPerParam: number;
  /** Bytes per parameter a rank loads on the CPU before DeepSpeed holds the model (LOAD_BYTES_PER_PARAM, or 2 for DiffSynth's bf16). */
  loadBytesPerParam: number;
  /** What a rank loads on the CPU besides the model (the frozen encoders), bytes. */
  loadExtraBytes: number;
  /** CUDA context + NCCL per process; null means the documented constants. */
  cudaContextBytes: number | null;
  interconnect: Interconnect;
}

/** The line items of a GPU's peak, integers in bytes (the `--json` `peak.items`). */
export interface PeakItems {
  cudaContext: number;
  params: number;
  grads: number;
  optimizer: number;
  activations: number;
  /** The optimizer step's temporaries beyond the activations freed before it (foreach AdamW's copy of v). */
  optimizerStep: number;
  /** Frozen encoders' forward (not precomputed) beyond what the activations and the step reuse. */
  encoders: number;
  buffers: number;
  extraModels: number;
  margin: number;
}

/** One model state, where it lives and what it costs per GPU, per node's CPU and per node's NVMe. */
export interface StateSlice {
  state: 'params' | 'grads' | 'master' | 'momentum' | 'variance' | 'gradsFp32';
  /** Elements over the whole model (P for params, T for the others). */
  elements: number;
  bytesPerElement: number;
  /** 1 when every GPU holds it whole, N (total GPUs) when each holds a 1/N slice. */
  shards: number;
  /** True when each rank keeps only its slice (false: every GPU holds it whole), whatever N is. */
  sharded: boolean;
  where: 'gpu' | 'cpu' | 'nvme';
  gpuBytes: number;
  cpuBytesPerNode: number;
  nvmeBytesPerNode: number;
}

/** Bytes one GPU moves in a step, by kind. */
export interface StepTraffic {
  /** DDP's all-reduce; ZeRO replaces it with a reduce-scatter and an all-gather of the same volume, so 0 here. */
  allReduce: number;
  /** Gradients reduced to their owners (ring volume, 16-bit). */
  reduceScatter: number;
  /** Parameters gathered: updated partitions at stages 1-2, every forward and backward at stage 3. */
  allGather: number;
  /** CPU -> GPU over PCIe (offloaded parameters fetched, updated parameters returned). */
  pcieToGpu: number;
  /** GPU -> CPU over PCIe (gradients to the CPU optimizer). */
  pcieToCpu: number;
  /** NVMe reads and writes (swapped parameters and optimizer states): the sum of the four below. */
  nvme: number;
  /** Optimizer states read from NVMe into the CPU buffers, and written back, per step. */
  nvmeOptimizerIn: number;
  nvmeOptimizerOut: number;
  /** Parameters read from NVMe (forward and backward), and the updated ones written back. */
  nvmeParamsIn: number;
  nvmeParamsOut: number;
}

/** What each GPU and the CPU hold, and the step's traffic: the split the wizard's picture draws. */
export interface MemoryLayout {
  placement: PeakPlacement;
  states: StateSlice[];
  traffic: StepTraffic;
}

/** The whole peak of one placement. */
export interface Peak {
  gpuBytes: number;
  cpuBytes: number;
  items: PeakItems;
  /** Bytes per element of each state for this placement (the optimizer answer, master weights, offload). */
  bytes: StateBytes;
  /** CPU per node: the larger of loading the model and the steady state (offloaded states, pinned buffers), with its items. */
  cpu: CpuItems;
  nvmeBytes: number;
  layout: MemoryLayout;
}

/**
 * CPU memory per node, in line items: loading (every rank's copy of the weights, and of the frozen encoders
 * when they run every step) and training (offloaded states, pinned buffers, NVMe swap buffers); the peak is
 * the larger of loadBytes and steadyBytes.
 */
export interface CpuItems {
  loadWeights: number;
  loadEncoders: number;
  loadBytes: number;
  states: number;
  pinned: number;
  swap: number;
  steadyBytes: number;
}

/** Bytes of one weight (and its gradient) in the training precision. */
export function weightBytes(precision: Precision): number {
  return precision === 'fp32' ? 4 : 2;
}

/**
 * Bytes per element of each state. Sources: DeepSpeed stage_1_and_2.py / stage3.py (fp32 master partition,
 * fp32 gradient partition; with bf16.bf16_master_weights_and_grads both in bf16, and with
 * bf16_optimizer_states Adam's moments too: DeepSpeed's "bf16 master weights and optimizer states" blog);
 * torch.optim.AdamW (moments in the parameter's dtype; "the foreach implementation uses ~ sizeof(params)
 * more peak memory than the for-loop version due to the intermediates being a tensorlist": its docstring,
 * the copy _foreach_sqrt makes of the second moment); bitsandbytes AdamW8bit (1-byte moments, updated in
 * place); transformers' Adafactor (factored second moment: rows + columns per matrix, counted as 0; a
 * per-tensor fp32 update); accelerate's offload swap to DeepSpeedCPUAdam (fp32 moments on the CPU).
 */
export function stateBytes(
  placement: PeakPlacement,
  n: Pick<PeakInput, 'precision' | 'optimizer' | 'masterWeights' | 'fusedOptimizer'>,
): StateBytes {
  const w = weightBytes(n.precision);
  const offloaded = placement.stage !== 0 && placement.optimizer !== 'none';
  let note: string | null = null;
  if (offloaded) {
    if (n.optimizer !== 'adamw' || n.masterWeights === 'none')
      note =
        'with the optimizer offloaded, accelerate swaps the optimizer for DeepSpeedCPUAdam: fp32 master weights and moments on the CPU';
    return { params: w, grads: w, master: 4, moment: 4, moments: 2, masterGrads: 4, stepTemp: 0, note };
  }
  let pure = n.masterWeights === 'none' || w === 4;
  if (n.masterWeights === 'none' && n.precision === 'fp16') {
    pure = false;
    note = 'master weights none is modelled for bf16 only; with fp16 DeepSpeed keeps fp32 master weights';
  }
  const stateElem = placement.stage === 0 ? (pure ? w : 4) : pure ? w : 4;
  const moments = n.optimizer === 'adamw' || n.optimizer === 'adamw-8bit' ? 2 : 0;
  const moment = n.optimizer === 'adamw-8bit' ? 1 : moments > 0 ? stateElem : 0;
  const stepTemp = n.optimizer === 'adamw' && !n.fusedOptimizer ? moment : 0;
  if (placement.stage === 0) {
    // Without DeepSpeed: the weights are the master (fp32 under torch AMP, 16-bit in pure bf16).
    const p = pure ? w : 4;
    return { params: p, grads: p, master: 0, moment, moments, masterGrads: 0, stepTemp, note };
  }
  // DeepSpeed keeps a master partition (fp32, or bf16 with bf16_master_weights_and_grads) and its gradients.
  const m = pure ? w : 4;
  return { params: w, grads: w, master: m, moment, moments, masterGrads: m, stepTemp, note };
}

/**
 * LoRA's trainable parameters: rank x (in + out) for every Linear a target name matches (the A matrix is
 * rank x in, B is out x rank; no bias), from the catalog's module shapes.
 */
export function loraParams(rank: number, targets: readonly (readonly [number, number, number])[]): number {
  let total = 0;
  for (const [inF, outF, count] of targets) total += rank * (inF + outF) * count;
  return total;
}

/**
 * Where DeepSpeed really puts the optimizer: stages 1-2 treat `device: nvme` as plain CPU offload (only
 * stage 3 swaps to NVMe: `swap_optimizer = device == nvme` in stage3.py), and ignore offload_param.
 */
export function effectiveOptimizer(placement: PeakPlacement): Placement['optimizer'] {
  return placement.stage !== 3 && placement.optimizer === 'nvme' ? 'cpu' : placement.optimizer;
}

/** Ring volume per GPU for a collective over `elems` elements of `bytes` each: elems x bytes x (N-1)/N. */
function ring(elems: number, bytes: number, n: number): number {
  return n <= 1 ? 0 : Math.floor((elems * bytes * (n - 1)) / n);
}

/**
 * Where each model state lives and what one GPU, one node's CPU and its NVMe hold (ZeRO paper, Sec. 5.1,
 * in DeepSpeed's implementation; bytes per element from stateBytes):
 * - parameters (P, trained and frozen): whole on every GPU at stages 0-2; a 1/N slice at stage 3, on the
 *   GPU, or on the CPU / NVMe with offload_param.
 * - gradients (T): whole at stages 0-1 (kept until the end of backward); a 1/N slice at stages 2-3; at
 *   stages 1-2 with the optimizer offloaded they go straight from the bucket to the CPU's fp32 gradient
 *   (none kept in 16-bit, except stage 1's whole ones during backward); at stage 3 the slice sits in pinned
 *   CPU memory when the optimizer is offloaded.
 * - master weights and the optimizer's moments (T): a 1/N slice where the optimizer is (whole at stage 0);
 *   none when the weights are their own master, no moments for Adafactor (factored) or SGD.
 * - the gradients the optimizer steps with (T, DeepSpeed only): a 1/N slice at the step, where the
 *   optimizer is; at stage 3 without offload one sub-group's buffer (min(sub_group_size, T/N)).
 * Traffic per GPU and step (ring volumes in the training precision, N = all GPUs):
 * - stage 0 (DDP): an all-reduce of the T gradients (2 ring volumes);
 * - stages 1-2: reduce-scatter of T gradients, all-gather of T updated parameters;
 * - stage 3: all-gather of all P parameters in forward and again in backward, reduce-scatter of T gradients;
 * - PCIe with the optimizer offloaded: this rank's T/N gradients out and, when the parameters stay on the
 *   GPU, its T/N updated parameters back; with parameters offloaded, its P/N parameters in for forward and
 *   again for backward;
 * - NVMe: an optimizer on NVMe reads its fp32 states (master, moments: 12 T/N) in and writes them back;
 *   parameters on NVMe are read twice (P/N each) and the updated T/N written once.
 */
export function memoryLayout(placement: PeakPlacement, n: PeakInput): MemoryLayout {
  const N = n.totalGpus;
  const g = n.gpusPerNode;
  const P = n.params;
  const T = n.trainable;
  const { stage } = placement;
  const b = stateBytes(placement, n);
  const w = b.params;
  const opt = effectiveOptimizer(placement);
  const param = stage === 3 ? placement.param : 'none';
  const slice = (
    state: StateSlice['state'],
    elements: number,
    bytesPerElement: number,
    sharded: boolean,
    where: StateSlice['where'],
    perRankElems?: number,
  ): StateSlice => {
    const shards = sharded ? N : 1;
    const perRank = Math.ceil((perRankElems ?? elements / shards) * bytesPerElement);
    return {
      state,
      elements,
      bytesPerElement,
      shards,
      sharded,
      where,
      gpuBytes: where === 'gpu' ? perRank : 0,
      cpuBytesPerNode: where === 'cpu' ? g * perRank : 0,
      nvmeBytesPerNode: where === 'nvme' ? g * perRank : 0,
    };
  };
  const optWhere: StateSlice['where'] = opt === 'none' ? 'gpu' : opt;
  const shardOpt = stage !== 0;
  const states: StateSlice[] = [];
  // Without DeepSpeed under torch AMP the trained weights are fp32 and the frozen ones stay 16-bit (or fp8).
  const frozen = n.frozenBytesPerParam;
  const paramBytes = w === frozen ? w : (w * T + frozen * (P - T)) / P;
  states.push(slice('params', P, paramBytes, stage === 3, param === 'none' ? 'gpu' : param));
  if (stage <= 1) states.push(slice('grads', T, b.grads, false, 'gpu'));
  else if (stage === 2) states.push(slice('grads', T, b.grads, true, 'gpu', opt === 'none' ? undefined : 0));
  else states.push(slice('grads', T, b.grads, true, opt === 'none' ? 'gpu' : 'cpu'));
  if (b.master > 0) states.push(slice('master', T, b.master, shardOpt, optWhere));
  if (b.moments > 0) {
    states.push(slice('momentum', T, b.moment, shardOpt, optWhere));
    states.push(slice('variance', T, b.moment, shardOpt, optWhere));
  }
  const partition = Math.ceil(T / N);
  if (b.masterGrads > 0) {
    if (stage === 3 && opt === 'none') {
      // One sub-group's gradient buffer stays on the GPU (initialize_optimizer_states).
      states.push(slice('gradsFp32', T, b.masterGrads, true, 'gpu', Math.min(n.knobs.subGroupElems, partition)));
    } else {
      states.push(slice('gradsFp32', T, b.masterGrads, true, optWhere));
    }
  }
  const wire = weightBytes(n.precision);
  const traffic: StepTraffic = {
    allReduce: stage === 0 ? 2 * ring(T, wire, N) : 0,
    reduceScatter: stage === 0 ? 0 : ring(T, wire, N),
    allGather: stage === 0 ? 0 : stage === 3 ? 2 * ring(P, wire, N) : ring(T, wire, N),
    pcieToGpu: 0,
    pcieToCpu: 0,
    nvme: 0,
    nvmeOptimizerIn: 0,
    nvmeOptimizerOut: 0,
    nvmeParamsIn: 0,
    nvmeParamsOut: 0,
  };
  if (opt !== 'none') {
    traffic.pcieToCpu += Math.floor((wire * T) / N);
    if (param === 'none') traffic.pcieToGpu += Math.floor((wire * T) / N);
  }
  if (param !== 'none') traffic.pcieToGpu += 2 * Math.floor((wire * P) / N);
  if (stage === 3 && opt === 'nvme') {
    const optimizerStates = Math.floor(((b.master + b.moments * b.moment) * T) / N);
    traffic.nvmeOptimizerIn = optimizerStates;
    traffic.nvmeOptimizerOut = optimizerStates;
  }
  if (param === 'nvme') {
    traffic.nvmeParamsIn = 2 * Math.floor((wire * P) / N);
    traffic.nvmeParamsOut = Math.floor((wire * T) / N);
  }
  traffic.nvme = traffic.nvmeOptimizerIn + traffic.nvmeOptimizerOut + traffic.nvmeParamsIn + traffic.nvmeParamsOut;
  return { placement, states, traffic };
}

/** One piece of the model states for the ZeRO picture. */
export interface PicturePiece {
  kind: 'params' | 'grads' | 'master' | 'momentum' | 'variance';
  bytesPerParam: number;
  totalBytes: number;
  home: 'gpu' | 'cpu' | 'nvme';
  sharded: boolean;
  /** Bytes per GPU (home gpu) or per node (home cpu or nvme). */
  bytes: number;
}

/** One flow of bytes per GPU per step for the picture. */
export interface PictureFlow {
  kind: 'all-reduce' | 'reduce-scatter' | 'all-gather' | 'pcie' | 'nvme';
  what: PicturePiece['kind'];
  bytesPerStep: number;
  direction?: 'in' | 'out';
  when?: string;
}

/** The per-mode split the ZeRO picture draws, from the layout. */
export interface PictureBreakdown {
  label: string;
  gpusPerNode: number;
  nodes: number;
  pieces: PicturePiece[];
  traffic: PictureFlow[];
  /** The peak's buffers item: gathered layers, buckets, staging. */
  gpuBufferBytes: number;
  /** DDP's traffic per GPU per step (a ring all-reduce of the trainable gradients): the "1x" of the table. */
  ddpBytesPerStep: number;
}

/**
 * The layout as the ZeRO picture draws it: one piece per state (the fp32 gradients are a second `grads`
 * piece of 4 bytes per parameter), its home and bytes, and the step's flows by kind; the same numbers as
 * the peak's params, grads and optimizer items.
 */
export function pictureBreakdown(label: string, placement: PeakPlacement, n: PeakInput): PictureBreakdown {
  const layout = memoryLayout(placement, n);
  const pieces = layout.states.map(
    (s): PicturePiece => ({
      kind: s.state === 'gradsFp32' ? 'grads' : s.state,
      bytesPerParam: s.bytesPerElement,
      totalBytes: s.elements * s.bytesPerElement,
      home: s.where,
      sharded: s.sharded,
      bytes: s.gpuBytes + s.cpuBytesPerNode + s.nvmeBytesPerNode,
    }),
  );
  const t = layout.traffic;
  const flows: PictureFlow[] = [
    { kind: 'reduce-scatter', what: 'grads', bytesPerStep: t.reduceScatter, when: 'backward' },
    {
      kind: 'all-gather',
      what: 'params',
      bytesPerStep: t.allGather,
      when: placement.stage === 3 ? 'forward and backward' : 'after the step',
    },
    { kind: 'pcie', what: 'grads', bytesPerStep: t.pcieToCpu, direction: 'out' },
    { kind: 'pcie', what: 'params', bytesPerStep: t.pcieToGpu, direction: 'in' },
    { kind: 'nvme', what: 'master', bytesPerStep: t.nvmeOptimizerIn, direction: 'in', when: 'step' },
    { kind: 'nvme', what: 'master', bytesPerStep: t.nvmeOptimizerOut, direction: 'out', when: 'step' },
    { kind: 'nvme', what: 'params', bytesPerStep: t.nvmeParamsIn, direction: 'in', when: 'forward and backward' },
    { kind: 'nvme', what: 'params', bytesPerStep: t.nvmeParamsOut, direction: 'out', when: 'step' },
  ];
  return {
    label,
    gpusPerNode: n.gpusPerNode,
    nodes: n.nodes,
    pieces,
    traffic: flows.filter((f) => f.bytesPerStep > 0),
    gpuBufferBytes: buffersItem(placement, n),
    ddpBytesPerStep: 2 * ring(n.trainable, weightBytes(n.precision), n.totalGpus),
  };
}

/**
 * CUDA context and NCCL per process: the documented constants, or the override. NCCL counts for one GPU
 * too: DeepSpeed initializes torch.distributed with the NCCL backend for a single process as well.
 */
export function cudaContextItem(n: Pick<PeakInput, 'cudaContextBytes'>): number {
  if (n.cudaContextBytes !== null) return n.cudaContextBytes;
  return CUDA_CONTEXT_BYTES + NCCL_INIT_BYTES;
}

/**
 * Communication and gather buffers on one GPU, as DeepSpeed allocates them (see the file comment):
 * - stage 0 (DDP over N > 1 GPUs): the reducer's gradient buckets, a second copy of the gradients
 *   (torch DDP's gradient_as_bucket_view defaults to False); none on one GPU.
 * - stages 1-2: the contiguous-gradient bucket, reduce_bucket_size elements in 16-bit, twice with
 *   overlap_comm (only with contiguous_gradients, which offload forces on); with the optimizer offloaded,
 *   the GPU staging buffer of the largest trainable parameter; allgather_bucket_size costs nothing.
 * - stage 3: one reduce bucket (overlap_comm adds no second one); the gathered parameters, at most the
 *   largest module plus max(prefetch bucket, max live parameters), never more than the model; the full
 *   16-bit gradient of the largest trainable module before it is reduced.
 */
export function buffersItem(placement: PeakPlacement, n: PeakInput): number {
  const w = weightBytes(n.precision);
  const k = n.knobs;
  if (placement.stage === 0) return n.totalGpus > 1 ? stateBytes(placement, n).grads * n.trainable : 0;
  if (placement.stage !== 3) {
    const contiguous = k.contiguousGradients || placement.optimizer !== 'none';
    const bucket = contiguous ? w * k.reduceBucketElems * (k.overlapComm ? 2 : 1) : 0;
    const staging = placement.optimizer !== 'none' ? w * n.largestTrainable : 0;
    return bucket + staging;
  }
  const bucket = k.contiguousGradients ? w * k.reduceBucketElems : 0;
  const gathered = w * Math.min(n.params, n.largestLayer + Math.max(k.prefetchBucketElems, k.maxLiveParams));
  return bucket + gathered + w * n.largestTrainable;
}

/**
 * What the optimizer step allocates and frees on the GPU: torch's foreach AdamW makes a copy of the second
 * moment over the group it steps at once (the whole model without ZeRO; DeepSpeed's flat T/N partition at
 * stages 1-2; one sub-group at stage 3); Adafactor an fp32 update and its square per tensor (the largest);
 * a fused or 8-bit optimizer and SGD update in place. Nothing on the GPU when the optimizer is offloaded.
 */
export function optimizerStepBytes(placement: PeakPlacement, n: PeakInput): number {
  if (placement.stage !== 0 && placement.optimizer !== 'none') return 0;
  const b = stateBytes(placement, n);
  if (n.optimizer === 'adafactor' && !n.fusedOptimizer) return 2 * 4 * n.largestTrainable;
  if (b.stepTemp === 0) return 0;
  const partition = Math.ceil(n.trainable / n.totalGpus);
  const group =
    placement.stage === 0
      ? n.trainable
      : placement.stage === 3
        ? Math.min(n.knobs.subGroupElems, partition)
        : partition;
  return b.stepTemp * group;
}

/** Frozen models beside the trained one, whole on every GPU (not prepared, so not sharded), in the training precision. */
export function extraModelsItem(n: Pick<PeakInput, 'extraGpuParams' | 'precision' | 'frozenGpuBytes'>): number {
  return n.extraGpuParams * weightBytes(n.precision) + n.frozenGpuBytes;
}

/** The allocator margin: FRAGMENTATION_MARGIN_FRACTION of the memory a step allocates and frees. */
export function marginItem(transientBytes: number): number {
  return Math.round(transientBytes * FRAGMENTATION_MARGIN_FRACTION);
}

/**
 * CPU memory per node, the larger of two moments:
 * - loading: without ZeRO-Init every rank of the node loads the whole model on the CPU before DeepSpeed
 *   shards it (LOAD_BYTES_PER_PARAM x P per rank); with ZeRO-Init (stage 3 and zero3_init) a rank builds
 *   its slice directly and holds one module at a time (4L, DeepSpeed's estimator);
 * - training: the offloaded states (layout), the pinned 16-bit partition copy and staging buffer of stages
 *   1-2 offload, and the NVMe swap buffers (offload_optimizer.buffer_count fp32 sub-groups,
 *   offload_param.buffer_count x buffer_size 16-bit elements), per rank.
 */
export function cpuPerNode(placement: PeakPlacement, n: PeakInput, layout: MemoryLayout): CpuItems {
  const g = n.gpusPerNode;
  const w = weightBytes(n.precision);
  const zeroInit = placement.stage === 3 && n.zeroInit;
  const loadWeights = Math.ceil(g * n.loadBytesPerParam * (zeroInit ? n.largestLayer : n.params));
  const loadEncoders = g * n.loadExtraBytes;
  const states = layout.states.reduce((s, x) => s + x.cpuBytesPerNode, 0);
  const partition = Math.ceil(n.trainable / n.totalGpus);
  let pinned = 0;
  let swap = 0;
  if (placement.stage !== 0 && placement.stage !== 3 && placement.optimizer !== 'none') {
    // The pinned 16-bit partition copy and the pinned staging buffer of the largest parameter.
    pinned += g * (w * partition + w * n.largestTrainable);
  }
  if (placement.stage === 3 && placement.optimizer === 'nvme') {
    swap += g * 4 * OPTIMIZER_SWAP_BUFFER_COUNT * Math.min(n.knobs.subGroupElems, partition);
  }
  if (placement.stage === 3 && placement.param === 'nvme') swap += g * w * PARAM_SWAP_BUFFER_ELEMS;
  // Loading and training do not overlap: the load copies are freed once DeepSpeed holds the shards.
  return {
    loadWeights,
    loadEncoders,
    loadBytes: loadWeights + loadEncoders,
    states,
    pinned,
    swap,
    steadyBytes: states + pinned + swap,
  };
}

/**
 * The peak of one placement: GPU line items, CPU per node, NVMe per node and the layout.
 * What a step allocates and frees does not all live at once: the frozen encoders run (when not
 * precomputed) before the forward, the activations live through backward, the optimizer step's
 * temporaries after it; the caching allocator reuses the same memory, so the peak counts the largest of
 * the three, as activations plus what the step and the encoders need beyond them.
 */
export function peakOf(placement: PeakPlacement, n: PeakInput): Peak {
  const layout = memoryLayout(placement, n);
  const gpuOf = (...names: StateSlice['state'][]) =>
    layout.states.filter((s) => names.includes(s.state)).reduce((a, s) => a + s.gpuBytes, 0);
  const params = gpuOf('params');
  const grads = gpuOf('grads');
  const optimizer = gpuOf('master', 'momentum', 'variance', 'gradsFp32');
  const activations = n.activations?.totalBytes ?? 0;
  const step = optimizerStepBytes(placement, n);
  const optimizerStep = Math.max(0, step - activations);
  const encoders = Math.max(0, n.encoderTransientBytes - Math.max(activations, step));
  const buffers = buffersItem(placement, n);
  const extraModels = extraModelsItem(n);
  const margin = marginItem(activations + optimizerStep + encoders + buffers + (placement.stage <= 1 ? grads : 0));
  const items: PeakItems = {
    cudaContext: cudaContextItem(n),
    params,
    grads,
    optimizer,
    activations,
    optimizerStep,
    encoders,
    buffers,
    extraModels,
    margin,
  };
  const gpuBytes = Object.values(items).reduce((a, b) => a + b, 0);
  const cpu = cpuPerNode(placement, n, layout);
  const nvmeBytes = layout.states.reduce((s, x) => s + x.nvmeBytesPerNode, 0);
  return {
    gpuBytes,
    cpuBytes: Math.max(cpu.loadBytes, cpu.steadyBytes),
    items,
    bytes: stateBytes(placement, n),
    cpu,
    nvmeBytes,
    layout,
  };
}
