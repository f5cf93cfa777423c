/**
 * One input, one set of defaults: the estimator's input for a setup's answers. The wizard's ZeRO table
 * (src/wizard/tradeoff.ts), the fit finding (src/rules/validate.ts) and `zerowiz estimate` (which turns its flags
 * into answers first) all call estimateInputFromSetup, so they agree on every figure.
 */
import { rememberedNvmeSpeed } from '../machine/index.js';
import type { ActivationInput } from './activations.js';
import { EstimateInputError } from './estimate.js';
import type { EstimateInput, LoraSpec, TokenShape } from './estimate.js';
import { DTYPE_BYTES, lookupModel } from './models.js';
import type { BlockKind, ModelEntry } from './models.js';
import { autoFill, numberDefault } from '../config/index.js';
import { placementOf } from '../config/index.js';
import type { Placement } from '../config/index.js';
import { DIFFSYNTH_LOAD_BYTES_PER_PARAM } from './peak.js';
import type { ZeroKnobs } from './peak.js';
import { DEFAULT_GPU_ID, DEFAULT_HOST_CORES, gpuIds, gpuMemoryBytes, lookupGpu, parseInternode } from './gpus.js';
import type { GpuSpec, Internode } from './gpus.js';
import { assumedBlocks } from './time.js';
import type { TimeContext, TimeInput } from './time.js';
import { formatBytesShort, formatCount } from '../text/index.js';
import { NearMiss } from '../text/index.js';
import type { Interconnect, MasterWeights, OptimizerKind, Precision } from '../config/index.js';
import type { Answers } from '../config/index.js';

/** The answers the estimate reads. */
export type EstimateAnswers = Pick<
  Answers,
  | 'model_name'
  | 'model_params'
  | 'largest_layer_params'
  | 'num_processes'
  | 'num_machines'
  | 'gpu_memory'
  | 'cpu_memory'
  | 'zero3_init'
  | 'mode'
  | 'offload_device'
  | 'mixed_precision'
  | 'gradient_checkpointing'
  | 'model_kind'
  | 'fine_tuning'
  | 'lora_rank'
  | 'lora_targets'
  | 'trainable_params'
  | 'micro_batch'
  | 'seq_len'
  | 'max_pixels'
  | 'frames'
  | 'optimizer'
  | 'master_weights'
  | 'encoders_on_gpu'
  | 'fp8_models'
  | 'extra_gpu_params'
  | 'headroom'
  | 'overlap_comm'
  | 'contiguous_gradients'
  | 'reduce_bucket_size'
  | 'prefetch_bucket_size'
  | 'max_live_parameters'
  | 'sub_group_size'
> &
  /** Where the parameters go when the answers split the devices (accelerate asks it apart); absent: the mode's. */
  Partial<
    Pick<
      Answers,
      | 'offload_param_device'
      | 'gpu_links'
      | 'gpu_model'
      | 'cpu_cores'
      | 'internode'
      | 'gradient_accumulation_steps'
      | 'nvme_path'
    >
  >;

/** Transformer shape values given explicitly (estimate's --hidden-size ...); they win over the catalog's. */
export interface ShapeOverrides {
  /** The block layout (estimate --block), instead of the catalog's or the model kind's. */
  block?: BlockKind;
  /** Text tokens attended beside the image (estimate --text-tokens). */
  textTokens?: number;
  /** The VAE's temporal compression (estimate --temporal-factor), for --frames without a catalog model. */
  temporalFactor?: number;
  /** Pixels per image token, (VAE downscale x patch)^2 (estimate --pixels-per-token), without a catalog model. */
  pixelsPerToken?: number;
  layers?: number;
  hidden?: number;
  heads?: number;
  kvHeads?: number;
  ffn?: number;
  vocab?: number;
}

/** What the answers alone do not say: the catalog, the machine, explicit shape values. */
export interface EstimateContext {
  /** The model catalog (the model is looked up by model_name); empty when not loaded. */
  models: readonly ModelEntry[];
  /** An explicit catalog model (estimate --model), instead of looking model_name up. */
  model?: ModelEntry | null;
  shape?: ShapeOverrides;
  /** Tokens per sample given directly (estimate --seq-len for an image model), instead of from max_pixels. */
  tokens?: number;
  interconnect?: Interconnect;
  nvmeFreeBytes?: number | null;
  cudaContextBytes?: number | null;
  includeNvme?: boolean;
  /** Step-time facts the answers do not hold (the launch's OMP_NUM_THREADS, a measured NVMe speed), or defaults for them. */
  timing?: Partial<TimeContext>;
}

/** The estimator's input for a setup, and what a user should know about it. */
export interface SetupEstimate {
  /** Null when the model size is not given (nothing to estimate). */
  input: EstimateInput | null;
  /** The catalog model the answers name, or null. */
  model: ModelEntry | null;
  /** The setup's own mode as stage + optimizer device + parameter device. */
  placement: Placement;
  /** The training precision assumed. */
  precision: Precision;
  /** The optimizer and master weights the estimate counts (before an offload row swaps them). */
  optimizer: OptimizerKind;
  masterWeights: MasterWeights;
  /** Sentences on what is assumed or left out (e.g. activations not estimated and why). */
  notes: string[];
}

/** GPUs per node and nodes from the answers (num_processes is the total over all machines). */
export function topology(a: Pick<Answers, 'num_processes' | 'num_machines'>): { gpusPerNode: number; nodes: number } {
  const nodes = Math.max(1, a.num_machines);
  return { gpusPerNode: Math.max(1, Math.floor(a.num_processes / nodes)), nodes };
}

/** The training precision of a mixed_precision answer: `auto` is assumed bf16 (what --mixed_precision bf16 gives). */
export function precisionOf(mixed: Answers['mixed_precision']): Precision {
  if (mixed === 'fp16') return 'fp16';
  if (mixed === 'no') return 'fp32';
  return 'bf16';
}

/**
 * DeepSpeed's buffer knobs from the answers. An "auto" is what accelerate fills at prepare() (the key table's rule,
 * from the model's hidden size); without a hidden size accelerate has nothing to fill it with and raises, so the
 * knob is estimated at the key's DeepSpeed default and `notes` says so.
 */
function knobsOf(a: EstimateAnswers, hidden: number | null, notes: string[]): ZeroKnobs {
  const unfilled: string[] = [];
  const knob = (v: number | 'auto', path: string): number => {
    if (v !== 'auto') return v;
    const filled = autoFill(path, { hiddenSize: hidden, microBatch: null, accumulation: null, worldSize: 1 });
    if (typeof filled === 'number') return filled;
    unfilled.push(path.replace(/^zero_optimization\./, ''));
    return numberDefault(path);
  };
  const knobs: ZeroKnobs = {
    reduceBucketElems: knob(a.reduce_bucket_size, 'zero_optimization.reduce_bucket_size'),
    overlapComm: a.overlap_comm,
    contiguousGradients: a.contiguous_gradients,
    prefetchBucketElems: knob(a.prefetch_bucket_size, 'zero_optimization.stage3_prefetch_bucket_size'),
    maxLiveParams: a.max_live_parameters,
    subGroupElems: a.sub_group_size,
  };
  if (unfilled.length > 0)
    notes.push(
      `${unfilled.join(', ')} "auto" with no hidden size known: accelerate fills them from model.config.hidden_size and raises when the model has none; estimated at DeepSpeed's defaults`,
    );
  return knobs;
}

/** The LoRA adapters: rank and the shapes of the named targets from the catalog; EstimateInputError otherwise. */
function loraOf(a: EstimateAnswers, model: ModelEntry | null): LoraSpec {
  const names = a.lora_targets
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  if (!model || Object.keys(model.modules).length === 0) {
    throw new EstimateInputError(
      `LoRA needs the module shapes of the model, and ${model ? `the catalog has none for ${model.id}` : 'the model is not in the catalog'}`,
      'pick a catalog model (zerowiz estimate --list-models), or give the adapters as a count (--trainable-params)',
    );
  }
  const targets = names.length > 0 ? names : model.loraTargets;
  const unknown = targets.filter((t) => model.modules[t] === undefined);
  if (unknown.length > 0) {
    throw new EstimateInputError(
      `LoRA target${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `'${u}'`).join(', ')} ${unknown.length > 1 ? 'are not modules' : 'is not a module'} of ${model.id}`,
      `known targets: ${Object.keys(model.modules).join(', ')}`,
    );
  }
  return { rank: a.lora_rank, shapes: targets.map((t) => model.modules[t]!) };
}

/** How the image or video tokens of the answers come from pixels and frames (for the advice); null otherwise. */
function tokenShapeOf(
  a: EstimateAnswers,
  model: ModelEntry | null,
  ctx: EstimateContext,
  activation: ActivationInput | null,
): TokenShape | null {
  const kind = kindOf(a, model);
  if (!activation || ctx.tokens !== undefined || activation.block === 'unet' || (kind !== 'dit' && kind !== 'video'))
    return null;
  const shape = ctx.shape ?? {};
  const tf = kind === 'video' ? (shape.temporalFactor ?? model?.temporalFactor ?? null) : null;
  return {
    pixels: a.max_pixels,
    pixelsPerToken: shape.pixelsPerToken ?? model?.pixelsPerToken ?? DEFAULT_PIXELS_PER_TOKEN,
    images: 1 + (model?.conditionImages ?? 0),
    frames: tf === null ? null : a.frames,
    temporalFactor: tf,
    textTokens: activation.block === 'mmdit' ? (shape.textTokens ?? model?.textTokens ?? 0) : 0,
  };
}

/** The LoRA a full fine-tune could train instead (the catalog's usual targets at the answers' rank), or null. */
function loraAlternativeOf(a: EstimateAnswers, model: ModelEntry | null): LoraSpec | null {
  if (a.fine_tuning === 'lora' || a.trainable_params !== null || !model || model.loraTargets.length === 0) return null;
  return { rank: a.lora_rank, shapes: model.loraTargets.map((t) => model.modules[t]!) };
}

/** Pixels per image token when neither the catalog nor a flag says: an 8x VAE and 2x2 patches (FLUX, Qwen-Image, Wan, CogVideoX). */
export const DEFAULT_PIXELS_PER_TOKEN = 256;

/** The kind of tokens: the catalog model's, else the answers'. */
function kindOf(a: EstimateAnswers, model: ModelEntry | null): ModelEntry['kind'] {
  return model ? model.kind : a.model_kind;
}

/** Latent frames of a clip of `frames` frames: 1 + ceil((frames - 1) / factor), the causal video VAEs' rule. */
export function latentFrames(frames: number, temporalFactor: number): number {
  return 1 + Math.ceil((frames - 1) / temporalFactor);
}

/** The temporal factor for the answers' frames; EstimateInputError when frames > 1 cannot be turned into tokens. */
function temporalOf(a: EstimateAnswers, model: ModelEntry | null, ctx: EstimateContext): number | null {
  const tf = ctx.shape?.temporalFactor ?? model?.temporalFactor ?? null;
  if (kindOf(a, model) !== 'video') return null;
  if (a.frames > 1 && tf === null) {
    throw new EstimateInputError(
      model
        ? `${model.id} is not a video model: it has no frames`
        : 'frames need the VAE temporal compression of the model',
      model
        ? 'leave --frames out (or 1) for an image model'
        : 'give --temporal-factor N (Wan and CogVideoX: 4, LTX-Video: 8)',
    );
  }
  return tf;
}

/** The activation shape, or null with the reason in `notes`. */
function activationOf(
  a: EstimateAnswers,
  model: ModelEntry | null,
  ctx: EstimateContext,
  precision: Precision,
  notes: string[],
): ActivationInput | null {
  const shape = ctx.shape ?? {};
  const kind = kindOf(a, model);
  const image = kind === 'dit' || kind === 'video' || kind === 'unet';
  const block: BlockKind = shape.block ?? model?.block ?? (kind === 'unet' ? 'unet' : image ? 'mmdit' : 'llama');
  if (block === 'unet') {
    if (!model?.unet) {
      notes.push(
        `activations not estimated: ${model?.name ?? 'the model'} has no UNet levels in the catalog (SDXL's UNet has)`,
      );
      return null;
    }
    const ppt = model.pixelsPerToken ?? 64;
    return {
      block,
      layers: 1,
      hidden: model.unet.channels[0]!,
      heads: 1,
      kvHeads: 1,
      ffn: 4 * model.unet.channels[0]!,
      vocab: 0,
      tokens: ctx.tokens ?? Math.ceil(a.max_pixels / ppt),
      microBatch: a.micro_batch,
      checkpointing: a.gradient_checkpointing ? 'full' : 'none',
      bytesPerValue: precision === 'fp32' ? 4 : 2,
      unet: model.unet,
    };
  }
  const layers = shape.layers ?? model?.layers ?? null;
  const hidden = shape.hidden ?? model?.hidden ?? null;
  const heads = shape.heads ?? model?.heads ?? null;
  const kvHeads = shape.kvHeads ?? (shape.heads !== undefined ? shape.heads : (model?.kvHeads ?? heads));
  const ffn = shape.ffn ?? model?.ffn ?? (hidden === null ? null : 4 * hidden);
  const missing = Object.entries({ layers, hidden, heads })
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  if (missing.length > 0) {
    notes.push(
      `activations not estimated: the model's ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} unknown (pick a catalog model, or give --layers --hidden-size --heads to zerowiz estimate)`,
    );
    return null;
  }
  const text = image ? (shape.textTokens ?? model?.textTokens ?? 0) : 0;
  let tokens: number;
  if (ctx.tokens !== undefined) {
    tokens = ctx.tokens;
  } else if (image) {
    let ppt = shape.pixelsPerToken ?? model?.pixelsPerToken ?? null;
    if (ppt === null) {
      ppt = DEFAULT_PIXELS_PER_TOKEN;
      notes.push(
        `image tokens assume ${DEFAULT_PIXELS_PER_TOKEN} pixels per token (a VAE that downscales 8x and 2x2 patches; give --pixels-per-token, or the tokens as --seq-len)`,
      );
    }
    const tf = temporalOf(a, model, ctx);
    const perFrame = Math.ceil(a.max_pixels / ppt);
    // An edit model's input images join the sequence at the same size (their latent tokens).
    const images = 1 + (model?.conditionImages ?? 0);
    tokens = perFrame * images * (tf === null ? 1 : latentFrames(a.frames, tf)) + (block === 'mmdit' ? text : 0);
  } else {
    tokens = a.seq_len;
  }
  const v = precision === 'fp32' ? 4 : 2;
  return {
    block,
    layers: layers!,
    hidden: hidden!,
    heads: heads!,
    kvHeads: kvHeads ?? heads!,
    ffn: ffn!,
    vocab: image ? 0 : (shape.vocab ?? model?.vocab ?? 0),
    tokens,
    microBatch: a.micro_batch,
    checkpointing: a.gradient_checkpointing ? 'full' : 'none',
    bytesPerValue: v,
    ...(block === 'dit' ? { crossTokens: text } : {}),
    ...(model?.residualFp32 ? { residualBytes: 4 } : {}),
  };
}

/**
 * The frozen encoders' working memory when they run on the GPU every step (nothing precomputed): the VAE
 * encoder at full resolution keeps about three tensors of its first block's width alive at once (input,
 * output, the residual) over the frames it encodes at once, in 16-bit; the text encoder's is far smaller.
 */
export function encoderTransientBytes(vaeChannels: number, pixels: number, frames: number, microBatch: number): number {
  return 3 * vaeChannels * pixels * frames * 2 * microBatch;
}

/**
 * Where the answers put the optimizer states and the parameters: the mode's placement, with the parameters'
 * device as the answers split it (offload_param_device, which DeepSpeed honours at stage 3 only).
 */
export function placementOfAnswers(
  a: Pick<EstimateAnswers, 'mode' | 'offload_device' | 'offload_param_device'>,
): Placement {
  const placement = placementOf(a.mode, a.offload_device);
  if (placement.stage === 3 && a.offload_param_device !== undefined)
    return { ...placement, param: a.offload_param_device };
  return placement;
}

/**
 * The estimator's input for these answers: the model (catalog entry by name, or the given one), the
 * topology, memory, zero.Init, the trainable parameters (full, a count, or LoRA from rank and targets), the
 * activation shape and workload, precision, DeepSpeed's buffer knobs, extra models and headroom. Throws
 * EstimateInputError for combinations that cannot be estimated (unknown LoRA targets, ...).
 */
export function estimateInputFromSetup(a: EstimateAnswers, ctx: EstimateContext): SetupEstimate {
  const notes: string[] = [];
  const model = ctx.model ?? (a.model_name ? lookupModel(a.model_name, ctx.models) : null);
  const precision = precisionOf(a.mixed_precision);
  const placement = placementOfAnswers(a);
  const optimizer = a.optimizer;
  const masterWeights = a.master_weights;
  const base = { model, placement, precision, optimizer, masterWeights, notes };
  if (a.model_params === null) return { input: null, ...base };
  if (a.mixed_precision === 'auto') notes.push('precision auto: assuming bf16, what --mixed_precision bf16 gives');
  const { gpusPerNode, nodes } = topology(a);
  let largestLayer = a.largest_layer_params ?? (model && model.params === a.model_params ? model.largestLayer : null);
  if (largestLayer === null) {
    largestLayer = 0;
    notes.push('largest layer not given: ZeRO-3 figures leave out the layer gathered whole on each GPU');
  }
  const shape = ctx.shape ?? {};
  const activation = activationOf(a, model, ctx, precision, notes);
  const extraGpuParams = a.extra_gpu_params;
  let encoderBytes = 0;
  let frozenGpuBytes = 0;
  let loadExtraBytes = 0;
  const fp8Encoders = a.fp8_models === 'encoders' || a.fp8_models === 'all';
  if (a.encoders_on_gpu) {
    const enc = model?.encoders ?? null;
    if (!enc) {
      notes.push(
        `encoders on the GPU: not counted: ${model ? `the catalog has no encoders for ${model.id}` : 'the model is not in the catalog'}; give their parameters as --extra-gpu-params (their working memory is not estimated)`,
      );
    } else {
      const parts = enc.parts.map((p) => ({ ...p, dtype: fp8Encoders ? ('fp8' as const) : p.dtype }));
      const bytes = parts.reduce((s, p) => s + Math.ceil(p.params * DTYPE_BYTES[p.dtype]), 0);
      if (extraGpuParams === 0) {
        frozenGpuBytes = bytes;
        notes.push(
          `encoders on the GPU: ${parts.map((p) => `${p.name} ${formatCount(p.params)} ${p.dtype}`).join(' + ')} = ${formatBytesShort(bytes)} per GPU, and each rank loads them on the CPU first`,
        );
      } else {
        notes.push(
          `encoders on the GPU: --extra-gpu-params ${formatCount(extraGpuParams)} in ${precision} instead of the catalog's ${formatBytesShort(bytes)}`,
        );
      }
      loadExtraBytes = extraGpuParams === 0 ? bytes : extraGpuParams * (precision === 'fp32' ? 4 : 2);
      const video = kindOf(a, model) === 'video';
      const frames = video ? Math.min(a.frames, enc.vaeFramesAtOnce ?? a.frames) : 1;
      encoderBytes = encoderTransientBytes(enc.vaeChannels, a.max_pixels, frames, a.micro_batch);
    }
  }
  // DiffSynth (the image and video models' trainer) loads every model in bf16, not the estimator's fp32.
  const diffsynth = kindOf(a, model) !== 'lm' && precision !== 'fp32';
  const frozenFp8 = (a.fp8_models === 'dit' || a.fp8_models === 'all') && a.fine_tuning === 'lora';
  if (frozenFp8) notes.push('LoRA base model in fp8 (--fp8_models): its frozen weights count 1 byte each');
  if (optimizer !== 'adamw' || masterWeights === 'none')
    notes.push(
      `offload rows count DeepSpeedCPUAdam: with the optimizer offloaded, accelerate swaps the ${optimizer === 'adamw' ? 'optimizer' : optimizer} for it (fp32 master weights and moments on the CPU)`,
    );
  if (masterWeights === 'none' && precision === 'fp16')
    notes.push(
      'master weights none: DeepSpeed keeps fp32 master weights with fp16 (bf16_master_weights_and_grads is a bf16 option)',
    );
  // The setup's own gpu_links answer (what the wizard detected, carried to the launch) wins over a context's.
  const interconnect =
    a.gpu_links !== undefined && a.gpu_links !== ''
      ? interconnectOfAnswer(a.gpu_links)
      : (ctx.interconnect ?? { kind: 'unknown', nvlinks: null });
  const timing = timingOfAnswers(a, ctx, notes);
  if (!activation)
    notes.push(
      `step times assume ${assumedBlocks(a.model_params)} blocks (a Llama-like shape for ${formatCount(a.model_params)} parameters) and count 2 FLOPs per parameter and token`,
    );
  const gpuMemory = a.gpu_memory ?? (timing.gpu && a.gpu_model ? gpuMemoryBytes(timing.gpu) : null);
  const input: EstimateInput = {
    params: a.model_params,
    largestLayer: Math.min(largestLayer, a.model_params),
    gpusPerNode,
    nodes,
    zeroInit: a.zero3_init,
    gpuMemoryBytes: gpuMemory,
    cpuMemoryBytes: a.cpu_memory,
    nvmeFreeBytes: ctx.nvmeFreeBytes ?? null,
    activation,
    precision,
    optimizer,
    masterWeights,
    encoderTransientBytes: encoderBytes,
    extraGpuParams,
    frozenGpuBytes,
    loadExtraBytes,
    ...(diffsynth ? { loadBytesPerParam: DIFFSYNTH_LOAD_BYTES_PER_PARAM } : {}),
    ...(frozenFp8 ? { frozenBytesPerParam: 1 } : {}),
    knobs: knobsOf(a, shape.hidden ?? model?.hidden ?? null, notes),
    cudaContextBytes: ctx.cudaContextBytes ?? null,
    interconnect,
    headroomPercent: a.headroom,
    includeNvme: ctx.includeNvme !== false,
    timing,
    workload: activation
      ? { tokens: activation.tokens, microBatch: a.micro_batch, checkpointing: a.gradient_checkpointing }
      : workloadOfAnswers(a, model, ctx),
    tokenShape: tokenShapeOf(a, model, ctx, activation),
    loraAlternative: loraAlternativeOf(a, model),
  };
  if (a.fine_tuning === 'lora') {
    if (a.trainable_params !== null) input.loraParams = a.trainable_params;
    else input.lora = loraOf(a, model);
  } else if (a.trainable_params !== null) {
    input.trainableParams = a.trainable_params;
  }
  return { input, ...base };
}

/**
 * The GPU links a setup carries (the gpu_links answer the wizard fills from `nvidia-smi topo -m`): `nvlink:N`,
 * `pcie`, or empty when they were not detected.
 */
export function interconnectOfAnswer(links: string | undefined): Interconnect {
  const m = /^nvlink:(\d+)$/.exec(links ?? '');
  if (m) return { kind: 'nvlink', nvlinks: Number(m[1]) };
  if (links === 'pcie') return { kind: 'pcie', nvlinks: null };
  return { kind: 'unknown', nvlinks: null };
}

/** The gpu_links answer for detected links (the inverse of interconnectOfAnswer); empty when unknown. */
export function gpuLinksAnswer(i: Interconnect | undefined): string {
  if (!i || i.kind === 'unknown') return '';
  return i.kind === 'nvlink' && i.nvlinks ? `nvlink:${i.nvlinks}` : 'pcie';
}

/** The GPU of the answers (gpu_model), else the context's; EstimateInputError with the near names for an unknown one. */
function gpuOfAnswers(a: EstimateAnswers, ctx: EstimateContext): GpuSpec | undefined {
  const name = a.gpu_model ?? '';
  if (name === '') return ctx.timing?.gpu;
  const hit = lookupGpu(name);
  if (hit) return hit;
  const near = new NearMiss(`unknown GPU '${name}' (gpu_model)`, name, gpuIds()).near;
  throw new EstimateInputError(
    `unknown GPU '${name}' (gpu_model)${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`,
    `the GPU catalog: ${gpuIds().join(', ')}`,
  );
}

/** The network the answers name (internode), else the context's; EstimateInputError for one zerowiz does not know. */
function internodeOfAnswers(a: EstimateAnswers, ctx: EstimateContext): Internode | undefined {
  if (!a.internode) return ctx.timing?.internode;
  try {
    return parseInternode(a.internode);
  } catch (err) {
    const hint = err instanceof NearMiss ? (err.near.length > 0 ? `did you mean ${err.near.join(' or ')}? ` : '') : '';
    throw new EstimateInputError(
      `${err instanceof Error ? err.message : String(err)} (internode)`,
      `${hint}${(err as NearMiss).hint ?? ''}`,
    );
  }
}

/**
 * The step time's facts from the answers (gpu_model, cpu_cores, internode, gradient_accumulation_steps) over the
 * context's, and a note for each one that falls back to its stated default.
 */
function timingOfAnswers(a: EstimateAnswers, ctx: EstimateContext, notes: string[]): Partial<TimeContext> {
  const gpu = gpuOfAnswers(a, ctx);
  const internode = internodeOfAnswers(a, ctx);
  const acc = a.gradient_accumulation_steps;
  const cores = a.cpu_cores ?? ctx.timing?.hostCores;
  if (!gpu)
    notes.push(
      `step times assume an ${lookupGpu(DEFAULT_GPU_ID)!.name} (the default; give --gpu NAME, the gpu_model answer, or --detect)`,
    );
  // The drive's speed `check` measured in the offload folder, when it did (src/machine/nvme-speed.ts).
  const nvme =
    ctx.timing?.nvmeBytesPerS === undefined && typeof a.nvme_path === 'string' && a.nvme_path !== ''
      ? rememberedNvmeSpeed(a.nvme_path)
      : null;
  return {
    ...ctx.timing,
    ...(nvme ? { nvmeBytesPerS: Math.min(nvme.readBytesPerS, nvme.writeBytesPerS), nvmeMeasured: true } : {}),
    ...(gpu ? { gpu, gpuSource: a.gpu_model ? 'given' : (ctx.timing?.gpuSource ?? 'given') } : {}),
    ...(cores !== undefined && cores !== null
      ? { hostCores: cores, hostCoresSource: a.cpu_cores ? 'given' : (ctx.timing?.hostCoresSource ?? 'given') }
      : { hostCores: DEFAULT_HOST_CORES, hostCoresSource: 'default' }),
    ...(internode ? { internode } : {}),
    accumulation: typeof acc === 'number' ? acc : 1,
  };
}

/** Tokens per sample from the answers when the shape is unknown (no activation estimate): the step time's workload. */
function workloadOfAnswers(a: EstimateAnswers, model: ModelEntry | null, ctx: EstimateContext): TimeInput['workload'] {
  const kind = kindOf(a, model);
  let tokens = a.seq_len;
  if (ctx.tokens !== undefined) tokens = ctx.tokens;
  else if (kind !== 'lm') {
    const ppt = ctx.shape?.pixelsPerToken ?? model?.pixelsPerToken ?? DEFAULT_PIXELS_PER_TOKEN;
    const tf = ctx.shape?.temporalFactor ?? model?.temporalFactor ?? null;
    tokens = Math.ceil(a.max_pixels / ppt) * (kind === 'video' && tf !== null ? latentFrames(a.frames, tf) : 1);
  }
  return { tokens, microBatch: a.micro_batch, checkpointing: a.gradient_checkpointing };
}
