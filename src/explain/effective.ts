/**
 * The DeepSpeed config a training run really gets: the JSON zerowiz writes, after accelerate 1.15.0 has
 * filled it. Pure: the dict of the provenance model (provenance.ts, which also says where each value came
 * from), for the files a setup writes. The real accelerate tier (__tests__/real) checks it against the dict the
 * real accelerate hands to `deepspeed.initialize`, case by case; the preview's "at launch" lines are drawn from
 * it, so what the preview says is what the tier proves.
 */
import { compileSetup } from '../config/index.js';
import { DEEPSPEED_DEFAULTS, isPlainObject } from '../config/index.js';
import { explainStep, type Origin } from './provenance.js';
import type { Setup } from '../config/index.js';
import { type LaunchPrecision, launchMixedPrecision } from '../config/index.js';

export type { LaunchPrecision } from '../config/index.js';

/** What the run supplies that accelerate fills the "auto"s from. */
export interface RunContext {
  /** Processes actually running (torchrun's world size): num_processes unless overridden at launch. */
  worldSize: number;
  /** The DataLoader's batch size: train_micro_batch_size_per_gpu "auto". */
  microBatchSize: number;
  /** The script's Accelerator(gradient_accumulation_steps=N); 1 when the script does not say. */
  scriptAccumulationSteps: number;
  /** `accelerate launch --mixed_precision`; null when not given (accelerate then uses 'no'). */
  launchMixedPrecision: LaunchPrecision | null;
  /** model.config.hidden_size (or max(hidden_sizes)); null when the model has no such config. */
  hiddenSize: number | null;
  /** The script passes a torch optimizer to prepare() (accelerate then sets zero_allow_untested_optimizer). */
  torchOptimizer: boolean;
}

/** The effective config, and what accelerate would say on the way. */
export interface EffectiveConfig {
  /** The dict handed to deepspeed.initialize (steps_per_print is Infinity, as accelerate sets it). */
  config: Record<string, unknown>;
  /** What makes accelerate raise instead (the config is then as far as it got). */
  errors: string[];
  /** What accelerate warns about (e.g. the JSON's accumulation overriding the script's). */
  warnings: string[];
  /** Whether deepspeed.zero.Init is on (zero3_init_flag, which accelerate turns off below stage 3). */
  zeroInit: boolean;
  /** The Accelerator's gradient accumulation after prepare() (the JSON's value wins over the script's). */
  accumulationSteps: number;
}

/** The run the preview assumes: every GPU of the setup, the script's defaults, the steps' --mixed_precision. */
export function defaultRun(setup: Setup): RunContext {
  return {
    worldSize: setup.answers.num_processes,
    microBatchSize: 1,
    scriptAccumulationSteps: 1,
    launchMixedPrecision: launchMixedPrecision(setup),
    hiddenSize: null,
    torchOptimizer: true,
  };
}

function get(cfg: Record<string, unknown>, path: string): unknown {
  let cur: unknown = cfg;
  for (const p of path.split('.')) cur = isPlainObject(cur) ? cur[p] : undefined;
  return cur;
}

/**
 * The config accelerate hands to deepspeed.initialize for this setup and run: the provenance model
 * (provenance.ts explainStep) on the files the setup writes, a step that runs with them, the environment
 * without ACCELERATE_* variables and the script the run describes.
 */
export function effectiveDeepSpeedConfig(setup: Setup, run: RunContext): EffectiveConfig {
  const { accelerateConfig: yaml, deepSpeedJson: json } = compileSetup(setup);
  const origin = (): Origin => ({ source: 'preset', where: setup.name });
  const e = explainStep({
    name: setup.name,
    args: [
      '--config_file',
      setup.files.accelerateConfig,
      ...(run.launchMixedPrecision ? ['--mixed_precision', run.launchMixedPrecision] : []),
      'train.py',
    ],
    defaultConfig: null,
    readConfig: () => ({ data: yaml, origin }),
    readJson: () => ({ data: json, origin }),
    env: {},
    script: {
      batchSize: run.microBatchSize,
      accumulation: run.scriptAccumulationSteps,
      mixedPrecision: null,
      hiddenSize: run.hiddenSize ?? 'none',
      torchOptimizer: run.torchOptimizer,
    },
    worldSize: run.worldSize,
  });
  return {
    config: e.dict ?? {},
    errors: e.errors,
    warnings: e.warnings,
    zeroInit: e.zeroInit,
    accumulationSteps: e.accumulation ?? run.scriptAccumulationSteps,
  };
}

/** The effective values people ask about, read from an effective config. */
export interface EffectiveSummary {
  precision: 'fp16' | 'bf16' | 'fp32';
  stage: number;
  offloadOptimizer: string;
  offloadParam: string;
  accumulationSteps: number;
  clipping: number;
  /** train_batch_size / (micro batch x accumulation x world size): 1 when DeepSpeed's identity holds. */
  batchIdentityHolds: boolean;
}

/** What an effective config (zerowiz's prediction or the dict the real accelerate recorded) means. */
export function summarizeEffective(cfg: Record<string, unknown>, worldSize: number): EffectiveSummary {
  const on = (k: string) => get(cfg, `${k}.enabled`) === true;
  const zero = isPlainObject(cfg.zero_optimization) ? cfg.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : 0;
  const dev = (block: string) => {
    const b = zero[block];
    return isPlainObject(b) && typeof b.device === 'string' ? b.device : 'none';
  };
  const tbs = cfg.train_batch_size;
  const micro = cfg.train_micro_batch_size_per_gpu;
  const gas = cfg.gradient_accumulation_steps;
  return {
    precision: on('fp16') ? 'fp16' : on('bf16') ? 'bf16' : 'fp32',
    stage,
    offloadOptimizer: dev('offload_optimizer'),
    // DeepSpeed reads offload_param only at stage 3.
    offloadParam: stage === 3 ? dev('offload_param') : 'none',
    accumulationSteps: typeof gas === 'number' ? gas : Number.NaN,
    // Absent: DeepSpeed's own default (the key table's).
    clipping: typeof cfg.gradient_clipping === 'number' ? cfg.gradient_clipping : DEEPSPEED_DEFAULTS.gradient_clipping,
    batchIdentityHolds:
      typeof tbs === 'number' &&
      typeof micro === 'number' &&
      typeof gas === 'number' &&
      tbs === micro * gas * worldSize,
  };
}

/** The preview's "at launch" lines: what accelerate will hand DeepSpeed, for the run the preview assumes. */
export function effectiveLines(setup: Setup, run: RunContext = defaultRun(setup)): string[] {
  const eff = effectiveDeepSpeedConfig(setup, run);
  const s = summarizeEffective(eff.config, run.worldSize);
  const gasText =
    setup.answers.gradient_accumulation_steps === 'auto'
      ? `${s.accumulationSteps} (your Accelerator(gradient_accumulation_steps=...), ${run.scriptAccumulationSteps} assumed)`
      : `${s.accumulationSteps} (the JSON's; it overrides the script's)`;
  const lines = [
    `# at launch, accelerate fills the JSON's "auto"s (--mixed_precision ${run.launchMixedPrecision ?? 'not given'}):`,
    `#   precision ${s.precision} · ZeRO stage ${s.stage} · offload: optimizer ${s.offloadOptimizer}, parameters ${s.offloadParam}${s.stage === 3 ? ` · zero.Init ${eff.zeroInit ? 'on' : 'off'}` : ''}`,
    `#   gradient accumulation ${gasText} · clipping ${s.clipping === 0 ? 'off' : s.clipping}`,
    `#   train_batch_size = micro batch x ${s.accumulationSteps} x ${run.worldSize} GPU(s) (DeepSpeed checks this)`,
  ];
  for (const e of eff.errors) lines.push(`#   accelerate would raise: ${e}`);
  return lines;
}

/**
 * What a DeepSpeed config means to DeepSpeed for the settings zerowiz models: every key read with DeepSpeed's
 * own default where it is absent (an offload block with device none is no offload; offload_param counts at
 * stage 3 only). Two configs that DeepSpeed treats the same have equal meanings.
 */
export function deepSpeedMeaning(cfg: Record<string, unknown>): Record<string, unknown> {
  const D = DEEPSPEED_DEFAULTS;
  const zero = isPlainObject(cfg.zero_optimization) ? cfg.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : D.stage;
  const pick = (...keys: string[]) => keys.map((k) => zero[k]).find((v) => v !== undefined && v !== null);
  const block = (name: string) => {
    const b = isPlainObject(zero[name]) ? zero[name] : {};
    const device = b.device === 'cpu' || b.device === 'nvme' ? b.device : 'none';
    if (device === 'none') return { device };
    return {
      device,
      ...(device === 'nvme' ? { nvme_path: b.nvme_path ?? null } : {}),
      pin_memory: b.pin_memory ?? D.pin_memory,
    };
  };
  const enabled = (k: string) => isPlainObject(cfg[k]) && (cfg[k] as Record<string, unknown>).enabled === true;
  return {
    stage,
    offload_optimizer: block('offload_optimizer'),
    offload_param: stage === 3 ? block('offload_param') : { device: 'none' },
    overlap_comm: pick('overlap_comm') ?? D.overlapComm(stage),
    contiguous_gradients: pick('contiguous_gradients') ?? D.contiguous_gradients,
    reduce_bucket_size: pick('reduce_bucket_size') ?? D.reduce_bucket_size,
    ...(stage === 3
      ? {
          sub_group_size: pick('sub_group_size') ?? D.sub_group_size,
          prefetch_bucket_size:
            pick('stage3_prefetch_bucket_size', 'prefetch_bucket_size') ?? D.stage3_prefetch_bucket_size,
          param_persistence_threshold:
            pick('stage3_param_persistence_threshold', 'param_persistence_threshold') ??
            D.stage3_param_persistence_threshold,
          max_live_parameters:
            pick('stage3_max_live_parameters', 'max_live_parameters') ?? D.stage3_max_live_parameters,
          max_reuse_distance: pick('stage3_max_reuse_distance', 'max_reuse_distance') ?? D.stage3_max_reuse_distance,
          gather_16bit_weights_on_model_save:
            pick('stage3_gather_16bit_weights_on_model_save', 'gather_16bit_weights_on_model_save') ??
            D.stage3_gather_16bit_weights_on_model_save,
        }
      : {}),
    fp16: enabled('fp16'),
    bf16: enabled('bf16'),
    activation_checkpointing: isPlainObject(cfg.activation_checkpointing),
    gradient_accumulation_steps: cfg.gradient_accumulation_steps ?? 1,
    gradient_clipping: cfg.gradient_clipping ?? D.gradient_clipping,
    train_batch_size: cfg.train_batch_size ?? null,
    train_micro_batch_size_per_gpu: cfg.train_micro_batch_size_per_gpu ?? null,
  };
}
