/**
 * `zerowiz estimate`'s first job: its flags (or a preset, with the flags on top) resolved to the estimator's input,
 * every flag checked for its range. The second, the report as a table or JSON, is ./estimate-run.ts.
 */
import { pathFlag } from '../fs/index.js';
import { describeGpus, describeInterconnect, detectHost } from '../machine/index.js';
import type { HostDetection } from '../machine/index.js';
import { UsageError, decimalSizeNote } from '../text/index.js';
import { NearMiss } from '../text/index.js';
import {
  EstimateInputError,
  MAX_GPU_MEMORY_BYTES,
  MAX_HOST_BYTES,
  MAX_KNOB_ELEMS,
  MAX_PARAMS,
} from '../estimate/index.js';
import type { EstimateInput } from '../estimate/index.js';
import { estimateInputFromSetup, gpuLinksAnswer, interconnectOfAnswer } from '../estimate/index.js';
import type { ShapeOverrides } from '../estimate/index.js';
import { measuredPeaks, measuredSteps } from '../estimate/index.js';
import type { MeasuredStep } from '../estimate/index.js';
import { setupSchedule } from '../rules/index.js';
import type { SetupSchedule } from '../rules/index.js';
import type { MeasuredPeak } from '../estimate/index.js';
import { findModel, loadModelCatalog, lookupModel } from '../estimate/index.js';
import type { ModelEntry } from '../estimate/index.js';
import { OPTIMIZER_KINDS } from '../config/index.js';
import type { Interconnect, OptimizerKind } from '../config/index.js';
import type { BlockKind } from '../estimate/index.js';
import { question, withDefaults } from '../config/index.js';
import type { Answers } from '../config/index.js';
import { formatBytes, formatCount, parseBytes, parseCount, parseInteger } from '../text/index.js';
import { timeOptions } from './estimate-time.js';
import type { TimeFlags, TimeOptions } from './estimate-time.js';

/** Raw flag values as commander hands them over. */
export interface EstimateFlags extends TimeFlags {
  listGpus?: boolean;
  params?: string;
  largestLayer?: string;
  gpusPerNode?: string;
  nodes?: string;
  gpuMemory?: string;
  cpuMemory?: string;
  zeroInit?: boolean;
  model?: string;
  detect?: boolean;
  nvmePath?: string;
  trainableParams?: string;
  loraRank?: string;
  loraTargets?: string;
  microBatch?: string;
  seqLen?: string;
  maxPixels?: string;
  imageTokens?: string;
  hiddenSize?: string;
  hidden?: string;
  layers?: string;
  heads?: string;
  kvHeads?: string;
  ffnSize?: string;
  vocab?: string;
  gradientCheckpointing?: boolean;
  checkpointing?: string;
  precision?: string;
  optimizer?: string;
  masterWeights?: string;
  block?: string;
  frames?: string;
  textTokens?: string;
  temporalFactor?: string;
  pixelsPerToken?: string;
  encodersOnGpu?: boolean;
  fp8Models?: string;
  gpuLinks?: string;
  preset?: string;
  extraGpuParams?: string;
  overlapComm?: boolean;
  reduceBucketSize?: string;
  headroom?: string;
  cudaContext?: string;
  nvme?: boolean;
  listModels?: boolean;
  json?: boolean;
}

/** What the flags resolve to, plus context for the output. */
export interface BuiltInput {
  /** The step-time flags resolved (machine facts, count, price, --min-box). */
  time: TimeOptions;
  input: EstimateInput;
  model: ModelEntry | null;
  detection: HostDetection | null;
  notes: string[];
  /** The answers estimated (the preset's with the flags on top, or the flags'). */
  answers: Answers;
  /** With --preset: its name, and the peaks its runs measured in this directory by placement. */
  preset: {
    name: string;
    measured: Map<string, MeasuredPeak>;
    /** The last measured step time per placement, and the last data pass, of this setup here. */
    steps: Map<string, MeasuredStep>;
    dataSeconds: number | null;
    /** The run's length as the preset's steps say it (DiffSynth's epochs x samples), or why it is unknown. */
    schedule: SetupSchedule;
  } | null;
}

/** A count flag within (min, max], as parseCount reads it; UsageError beyond the sane range. */
function countFlag(text: string, flag: string, max: number, min = 1): number {
  const v = parseCount(text, flag);
  if (v > max)
    throw new UsageError(
      `${flag} '${text}' is beyond ${formatCount(max)}`,
      `zerowiz sizes ${flag} up to ${formatCount(max)}`,
    );
  if (v < min) throw new UsageError(`${flag} '${text}' must be at least ${min}`, `give ${flag} ${min} or more`);
  if (!Number.isInteger(v)) throw new UsageError(`${flag} '${text}' is not a whole number`, `e.g. ${flag} 7B`);
  return v;
}

/** A memory flag within the sane range; UsageError beyond it. */
function bytesFlag(text: string, flag: string, max: number): number {
  const v = parseBytes(text, flag);
  if (v > max)
    throw new UsageError(
      `${flag} '${text}' is beyond ${formatBytes(max)}`,
      `zerowiz sizes ${flag} up to ${formatBytes(max)}`,
    );
  return v;
}

const contradiction = (a: string, b: string, hint: string) =>
  new UsageError(`${a} and ${b} cannot be used together`, hint);

export async function buildInput(flags: EstimateFlags): Promise<BuiltInput> {
  if (flags.preset !== undefined) return buildPresetInput(flags);
  const notes: string[] = [];
  const model = flags.model !== undefined ? findModel(flags.model) : null;
  if (model && (flags.params !== undefined || flags.largestLayer !== undefined)) {
    throw new UsageError(
      `--model ${model.id} already sets the parameter count and largest layer; --params/--largest-layer would contradict it`,
      'give either --model, or --params (with --largest-layer) for another model',
    );
  }
  if (flags.params === undefined && !model) {
    throw new UsageError(
      '--params is required (or --model NAME)',
      'e.g. zerowiz estimate --params 20.4B --largest-layer 57M --gpus-per-node 8 --gpu-memory 80GiB',
    );
  }
  let params: number;
  if (flags.params !== undefined) {
    params = parseCount(flags.params, '--params');
    if (params > MAX_PARAMS)
      throw new UsageError(
        `--params '${flags.params}' is beyond ${formatCount(MAX_PARAMS)}`,
        'the estimator works up to 100T parameters',
      );
    if (!Number.isInteger(params))
      throw new UsageError(`--params '${flags.params}' is not a whole number of parameters`, 'e.g. --params 7B');
  } else params = model!.params;
  if (params < 1e6)
    notes.push(
      `--params ${flags.params} means ${params} parameters; did you mean ${flags.params}B or ${flags.params}M?`,
    );
  let largestLayer: number | null = null;
  if (flags.largestLayer !== undefined) largestLayer = countFlag(flags.largestLayer, '--largest-layer', MAX_PARAMS, 0);
  else if (model) largestLayer = model.largestLayer;
  if (largestLayer !== null && largestLayer > params) {
    throw new UsageError(
      `--largest-layer (${formatCount(largestLayer)}) cannot exceed --params (${formatCount(params)})`,
      'the largest layer is one module of the model',
    );
  }
  const gpusPerNodeFlag =
    flags.gpusPerNode !== undefined ? parseInteger(flags.gpusPerNode, '--gpus-per-node', 1, 1024) : null;
  const nodes = flags.nodes !== undefined ? parseInteger(flags.nodes, '--nodes', 1, 100_000) : 1;
  let gpuMemoryBytes =
    flags.gpuMemory !== undefined ? bytesFlag(flags.gpuMemory, '--gpu-memory', MAX_GPU_MEMORY_BYTES) : null;
  let cpuMemoryBytes =
    flags.cpuMemory !== undefined ? bytesFlag(flags.cpuMemory, '--cpu-memory', MAX_HOST_BYTES) : null;
  // A size in decimal units is said in GiB, as `generate` says it: an "80 GB" card holds 80 GiB, not 74.5.
  for (const [flag, text] of [
    ['--gpu-memory', flags.gpuMemory],
    ['--cpu-memory', flags.cpuMemory],
  ] as const) {
    const note = text === undefined ? null : decimalSizeNote(text);
    if (note) notes.push(`${flag} ${note}.`);
  }
  const workload = workloadAnswers(flags, model);
  const shape = shapeOverrides(flags, workload.model_kind ?? 'lm', notes);
  let detection: HostDetection | null = null;
  let nvmeFreeBytes: number | null = null;
  let interconnect: Interconnect | undefined;
  let gpusPerNode = gpusPerNodeFlag;
  if (flags.nvmePath !== undefined && flags.nvme === false)
    notes.push('--nvme-path is not used with --no-nvme (no NVMe rows are shown).');
  if (flags.nvmePath !== undefined) {
    // As a shell would read it: `~`, `$VAR`, relative to the launch directory.
    flags = { ...flags, nvmePath: pathFlag('--nvme-path', flags.nvmePath) };
  }
  if (flags.detect || flags.nvmePath !== undefined) {
    detection = await detectHost({ nvmePath: flags.nvmePath ?? null, topology: flags.detect === true });
    if (flags.nvmePath !== undefined) {
      nvmeFreeBytes = detection.nvmeFreeBytes;
      if (nvmeFreeBytes === null) notes.push(`cannot read free space at ${flags.nvmePath}; NVMe space is not checked.`);
    }
    if (flags.detect) {
      const gpu = detection.gpu;
      notes.push(
        `detected: ${describeGpus(gpu)}; CPU memory ${formatBytes(detection.cpuMemoryBytes)}; ${describeInterconnect(detection.interconnect)}.`,
      );
      if (gpu.detected) {
        gpusPerNode ??= gpu.gpus.length;
        gpuMemoryBytes ??= gpu.minMemoryBytes;
      } else if (gpusPerNode === null || gpuMemoryBytes === null) {
        notes.push('give --gpus-per-node and --gpu-memory yourself.');
      }
      cpuMemoryBytes ??= detection.cpuMemoryBytes;
      interconnect = detection.interconnect;
    } else {
      detection = {
        ...detection,
        gpu: { detected: false, gpus: [], mixed: false, minMemoryBytes: null, reason: 'not asked (--detect)' },
      };
    }
  }
  const g = gpusPerNode ?? 1;
  const time = timeOptions(flags, flags.detect ? detection : null);
  const { tokens, ...given } = workload;
  const answers: Answers = withDefaults({
    model_name: model?.id ?? '',
    model_params: params,
    largest_layer_params: largestLayer,
    num_machines: nodes,
    num_processes: g * nodes,
    gpu_memory: gpuMemoryBytes,
    cpu_memory: cpuMemoryBytes,
    zero3_init: flags.zeroInit !== false,
    ...given,
    ...time.answers,
    ...(interconnect ? { gpu_links: gpuLinksAnswer(interconnect) } : {}),
    // The folder `check` may have measured the drive's speed in (the NVMe term then takes it).
    ...(flags.nvmePath !== undefined ? { nvme_path: flags.nvmePath } : {}),
  });
  const input = setupInput(flags, answers, model, shape, tokens, nvmeFreeBytes, notes);
  return { input, model, detection, notes, answers, preset: null, time };
}

/** The estimator's input for the answers, with the flags' context (shape, tokens, CUDA context, NVMe). */
function setupInput(
  flags: EstimateFlags,
  answers: Answers,
  model: ModelEntry | null,
  shape: ShapeOverrides,
  tokens: number | undefined,
  nvmeFreeBytes: number | null,
  notes: string[],
): EstimateInput {
  const cudaContextBytes =
    flags.cudaContext !== undefined ? bytesFlag(flags.cudaContext, '--cuda-context', MAX_GPU_MEMORY_BYTES) : null;
  let setup: ReturnType<typeof estimateInputFromSetup>;
  try {
    setup = estimateInputFromSetup(answers, {
      models: [],
      model,
      shape,
      ...(tokens !== undefined ? { tokens } : {}),
      nvmeFreeBytes,
      cudaContextBytes,
      includeNvme: flags.nvme !== false,
      interconnect: interconnectOfAnswer(answers.gpu_links),
    });
  } catch (err) {
    if (err instanceof EstimateInputError) throw new UsageError(err.message, err.hint);
    throw err;
  }
  if (!setup.input)
    throw new UsageError(
      'the setup has no model size to estimate',
      'give the model (--params, or the preset answer model_params)',
    );
  notes.push(...setup.notes.filter((n) => !n.startsWith('precision auto')));
  return setup.input;
}

/** Flags that would contradict what a preset's setup says (its model and GPUs come from its answers). */
const PRESET_FIXED_FLAGS = ['params', 'largestLayer', 'model', 'detect'] as const;

/**
 * `estimate --preset NAME`: the preset's answers (flags on top: the workload, memory, GPUs), and the peaks the
 * runs of the same setup measured in this directory (src/rules/fit.ts loadMeasuredRuns).
 */
async function buildPresetInput(flags: EstimateFlags): Promise<BuiltInput> {
  const given = PRESET_FIXED_FLAGS.find((k) => flags[k] !== undefined);
  if (given)
    throw new UsageError(
      `--preset takes the model and machine from the preset; --${given.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} would contradict it`,
      'change the preset (zerowiz preset save NAME --preset NAME ...), or estimate without --preset',
    );
  const { loadPreset } = await import('../setups/presets.js');
  const setup = await loadPreset(flags.preset!);
  const notes: string[] = [];
  const catalog = loadModelCatalog();
  const model = setup.answers.model_name ? lookupModel(setup.answers.model_name, catalog) : null;
  const workload = workloadAnswers(flags, model);
  const { tokens, ...over } = workload;
  if (flags.maxPixels === undefined && flags.seqLen === undefined) delete over.model_kind;
  const shape = shapeOverrides(flags, over.model_kind ?? setup.answers.model_kind, notes);
  const machine: Partial<Answers> = {};
  if (flags.gpuMemory !== undefined)
    machine.gpu_memory = bytesFlag(flags.gpuMemory, '--gpu-memory', MAX_GPU_MEMORY_BYTES);
  if (flags.cpuMemory !== undefined) machine.cpu_memory = bytesFlag(flags.cpuMemory, '--cpu-memory', MAX_HOST_BYTES);
  if (flags.nodes !== undefined) machine.num_machines = parseInteger(flags.nodes, '--nodes', 1, 100_000);
  if (flags.gpusPerNode !== undefined)
    machine.num_processes =
      parseInteger(flags.gpusPerNode, '--gpus-per-node', 1, 1024) *
      (machine.num_machines ?? setup.answers.num_machines);
  const time = timeOptions(flags, null, setup.answers);
  const answers: Answers = { ...setup.answers, ...over, ...machine, ...time.answers };
  if (answers.model_params === null)
    throw new UsageError(
      `preset '${setup.name}' has no model size to estimate`,
      `save one: zerowiz preset save ${setup.name} --preset ${setup.name} --model-params 20.4B`,
    );
  const input = setupInput(flags, answers, model, shape, tokens, null, notes);
  const { loadMeasuredRuns } = await import('../records/measured-runs.js');
  const runs = loadMeasuredRuns(process.cwd());
  const measured = measuredPeaks(runs, answers);
  if (measured.size === 0) notes.push(`no run of this setup has measured a GPU peak in ${process.cwd()} yet.`);
  const { steps, dataSeconds } = measuredSteps(runs, answers);
  const schedule = setupSchedule({ ...setup, answers }, process.cwd());
  if (!time.count && !schedule.count)
    notes.push(`the run's length is unknown: ${schedule.why} (give --steps, or --epochs and --dataset-size).`);
  return {
    input,
    model,
    detection: null,
    notes,
    answers,
    preset: { name: setup.name, measured, steps, dataSeconds, schedule },
    time: time.count || !schedule.count ? time : { ...time, count: schedule.count },
  };
}

/** The workload flags as answers (the same ids the wizard asks), with the flag rules of item 16. */
function workloadAnswers(flags: EstimateFlags, model: ModelEntry | null): Partial<Answers> & { tokens?: number } {
  const out: Partial<Answers> & { tokens?: number } = {};
  const block = flags.block !== undefined ? blockFlag(flags.block) : undefined;
  const imageBlock = block === 'dit' || block === 'mmdit' || block === 'unet';
  const kind: Answers['model_kind'] = model
    ? model.kind === 'lm'
      ? 'lm'
      : model.kind === 'video'
        ? 'video'
        : 'dit'
    : flags.frames !== undefined
      ? 'video'
      : flags.maxPixels !== undefined || imageBlock
        ? 'dit'
        : 'lm';
  out.model_kind = kind;
  if (flags.optimizer !== undefined) {
    const o = flags.optimizer.trim().toLowerCase();
    if (!OPTIMIZER_KINDS.includes(o as OptimizerKind))
      throw new NearMiss(
        `--optimizer '${flags.optimizer}' is not one of ${OPTIMIZER_KINDS.join(', ')}`,
        flags.optimizer,
        OPTIMIZER_KINDS,
        'e.g. --optimizer adamw-8bit',
        '--optimizer',
      );
    out.optimizer = o as OptimizerKind;
  }
  if (flags.masterWeights !== undefined) {
    const m = flags.masterWeights.trim().toLowerCase();
    if (m !== 'fp32' && m !== 'none')
      throw new NearMiss(
        `--master-weights '${flags.masterWeights}' is not fp32 or none`,
        flags.masterWeights,
        ['fp32', 'none'],
        'e.g. --master-weights none',
        '--master-weights',
      );
    out.master_weights = m;
  }
  if (flags.frames !== undefined) {
    if (model && model.kind !== 'video')
      throw new UsageError(`--frames applies to video models, and ${model.id} is not one`, 'leave --frames out');
    out.frames = parseInteger(flags.frames, '--frames', 1, 100_000);
  }
  if (flags.encodersOnGpu !== undefined) out.encoders_on_gpu = flags.encodersOnGpu;
  if (flags.fp8Models !== undefined) {
    const choices = ['none', 'encoders', 'dit', 'all'];
    const v = flags.fp8Models.trim().toLowerCase();
    if (!choices.includes(v))
      throw new NearMiss(
        `--fp8-models '${flags.fp8Models}' is not one of ${choices.join(', ')}`,
        flags.fp8Models,
        choices,
        'e.g. --fp8-models encoders',
        '--fp8-models',
      );
    out.fp8_models = v as Answers['fp8_models'];
  }
  if (flags.gpuLinks !== undefined) {
    const parsed = question('gpu_links').parse(flags.gpuLinks, withDefaults({}));
    if (!parsed.ok)
      throw new UsageError(`--gpu-links: ${parsed.error}`, 'e.g. --gpu-links nvlink:18 or --gpu-links pcie');
    out.gpu_links = parsed.value;
  }
  if (flags.loraTargets !== undefined && flags.loraRank === undefined)
    throw new UsageError('--lora-targets needs --lora-rank', 'e.g. --lora-rank 32 --lora-targets to_q,to_k,to_v');
  if (flags.loraRank !== undefined && flags.trainableParams !== undefined)
    throw contradiction(
      '--lora-rank',
      '--trainable-params',
      'the LoRA rank and targets decide the trainable parameters; give one or the other',
    );
  if (flags.loraRank !== undefined) {
    out.fine_tuning = 'lora';
    out.lora_rank = parseInteger(flags.loraRank, '--lora-rank', 1, 65_536);
    if (flags.loraTargets !== undefined) out.lora_targets = flags.loraTargets;
  }
  if (flags.trainableParams !== undefined)
    out.trainable_params = countFlag(flags.trainableParams, '--trainable-params', MAX_PARAMS, 0);
  if (flags.microBatch !== undefined) out.micro_batch = parseInteger(flags.microBatch, '--micro-batch', 1, 100_000);
  const seqFlag = flags.seqLen !== undefined ? '--seq-len' : flags.imageTokens !== undefined ? '--image-tokens' : null;
  if (flags.seqLen !== undefined && flags.imageTokens !== undefined)
    throw contradiction('--seq-len', '--image-tokens', 'they say the same thing; give --seq-len');
  if (seqFlag && flags.maxPixels !== undefined)
    throw contradiction(
      seqFlag,
      '--max-pixels',
      'give the tokens per sample (--seq-len) or the image size (--max-pixels)',
    );
  if (seqFlag) {
    const tokens = parseInteger((flags.seqLen ?? flags.imageTokens)!, seqFlag, 1, 100_000_000);
    if (kind !== 'lm') out.tokens = tokens;
    else out.seq_len = tokens;
  }
  if (flags.maxPixels !== undefined) {
    if (model && model.kind === 'lm')
      throw new UsageError(
        `--max-pixels applies to image models, and ${model.id} is not one`,
        'give the tokens per sample with --seq-len',
      );
    const parsed = question('max_pixels').parse(flags.maxPixels, withDefaults({}));
    if (!parsed.ok) throw new UsageError(`--max-pixels: ${parsed.error}`, 'e.g. --max-pixels 1048576 or 1024x1024');
    out.max_pixels = parsed.value;
  }
  if (flags.gradientCheckpointing !== undefined && flags.checkpointing !== undefined)
    throw contradiction('--gradient-checkpointing', '--checkpointing', 'give --gradient-checkpointing alone');
  if (flags.checkpointing !== undefined) {
    if (flags.checkpointing !== 'none' && flags.checkpointing !== 'full')
      throw new UsageError(
        `--checkpointing '${flags.checkpointing}' is not none or full`,
        'use --gradient-checkpointing or --no-gradient-checkpointing',
      );
    out.gradient_checkpointing = flags.checkpointing === 'full';
  }
  if (flags.gradientCheckpointing !== undefined) out.gradient_checkpointing = flags.gradientCheckpointing;
  if (flags.precision !== undefined) {
    const p = flags.precision.trim().toLowerCase();
    if (p !== 'bf16' && p !== 'fp16' && p !== 'fp32')
      throw new UsageError(`--precision '${flags.precision}' is not bf16, fp16 or fp32`, 'e.g. --precision bf16');
    out.mixed_precision = p === 'fp32' ? 'no' : p;
  }
  if (flags.extraGpuParams !== undefined)
    out.extra_gpu_params = countFlag(flags.extraGpuParams, '--extra-gpu-params', MAX_PARAMS, 0);
  if (flags.overlapComm !== undefined) out.overlap_comm = flags.overlapComm;
  if (flags.reduceBucketSize !== undefined)
    out.reduce_bucket_size = countFlag(flags.reduceBucketSize, '--reduce-bucket-size', MAX_KNOB_ELEMS, 0);
  if (flags.headroom !== undefined) out.headroom = parseInteger(flags.headroom.replace(/%$/, ''), '--headroom', 0, 90);
  return out;
}

/** Shape flags as overrides of the catalog's shape; --vocab on an image model is a note, --hidden an alias. */
function shapeOverrides(flags: EstimateFlags, kind: Answers['model_kind'], notes: string[]): ShapeOverrides {
  if (flags.hidden !== undefined && flags.hiddenSize !== undefined)
    throw contradiction('--hidden', '--hidden-size', 'give --hidden-size alone');
  const num = (text: string | undefined, flag: string, max: number) =>
    text === undefined ? undefined : parseInteger(text, flag, 1, max);
  const shape: ShapeOverrides = {};
  const set = <K extends Exclude<keyof ShapeOverrides, 'block'>>(k: K, v: number | undefined) => {
    if (v !== undefined) shape[k] = v;
  };
  if (flags.block !== undefined) shape.block = blockFlag(flags.block);
  set(
    'textTokens',
    flags.textTokens === undefined ? undefined : parseInteger(flags.textTokens, '--text-tokens', 0, 1_000_000),
  );
  set('temporalFactor', num(flags.temporalFactor, '--temporal-factor', 64));
  set('pixelsPerToken', num(flags.pixelsPerToken, '--pixels-per-token', 1_000_000));
  set(
    'hidden',
    num(flags.hiddenSize ?? flags.hidden, flags.hiddenSize !== undefined ? '--hidden-size' : '--hidden', 1_000_000),
  );
  set('layers', num(flags.layers, '--layers', 100_000));
  set('heads', num(flags.heads, '--heads', 100_000));
  set('kvHeads', num(flags.kvHeads, '--kv-heads', 100_000));
  set('ffn', num(flags.ffnSize, '--ffn-size', 10_000_000));
  set('vocab', num(flags.vocab, '--vocab', 100_000_000));
  if (shape.kvHeads !== undefined && shape.heads !== undefined && shape.kvHeads > shape.heads)
    throw new UsageError(
      `--kv-heads (${shape.kvHeads}) cannot exceed --heads (${shape.heads})`,
      'grouped-query attention shares each key/value head among several query heads',
    );
  if (shape.vocab !== undefined && kind !== 'lm') {
    notes.push('--vocab does not apply to an image model (it has no logits); ignored.');
    delete shape.vocab;
  }
  return shape;
}

/** --block: dit, mmdit, llm (a language model's SwiGLU block) or unet. */
function blockFlag(text: string): BlockKind {
  const b = text.trim().toLowerCase();
  if (b === 'llm') return 'llama';
  if (b === 'dit' || b === 'mmdit' || b === 'unet' || b === 'llama' || b === 'gpt') return b;
  throw new NearMiss(
    `--block '${text}' is not dit, mmdit, llm or unet`,
    text,
    ['dit', 'mmdit', 'llm', 'unet'],
    'dit: cross-attention to the text (Wan, LTX-Video); mmdit: joint attention (FLUX, Qwen-Image, CogVideoX)',
    '--block',
  );
}
