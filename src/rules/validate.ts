/**
 * The setup's rules: every finding about the answers themselves (validate), the emitted files through the
 * acceptance rules of src/config/accept.ts, the estimate's fit (fitFindings), the flags a user gave and the files
 * a setup names. Each finding has the reason and the fix.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { MODE_INFO, modeDevice, rowLabel, type OffloadDevice, type Placement } from '../config/index.js';
import { EstimateInputError, estimateModes, estimatePlacement, normalizeInput } from '../estimate/index.js';
import type { EstimateInput, EstimateReport, ModeEstimate } from '../estimate/index.js';
import { estimateInputFromSetup } from '../estimate/index.js';
import { modelCatalogOrNone } from '../estimate/index.js';
import type { ModelEntry } from '../estimate/index.js';
import { formatBytes, formatCount, memoLast } from '../text/index.js';
import {
  flagName,
  optimizerOffloadDevice,
  paramOffloadDevice,
  question,
  type Answers,
  type QuestionId,
} from '../config/index.js';
import { compileSetup, isPlainObject } from '../config/index.js';
import { launchMixedPrecision } from '../config/index.js';
import type { Setup } from '../config/index.js';

import { err, warn, type Finding } from '../config/index.js';
import { checkAccelerateConfig, checkDeepSpeedConfig } from '../config/index.js';

// ---------------------------------------------------------------------------------------------
// The setup

/** The flags by which DiffSynth-Studio and HF-style scripts turn on gradient checkpointing. */
export const GRAD_CKPT_FLAGS: readonly string[] = ['--use_gradient_checkpointing', '--gradient_checkpointing'];

/**
 * Whether the setup's own config is ZeRO-3 with offloaded parameters, a step that uses it asks for gradient
 * checkpointing, and the JSON gets no activation_checkpointing block (the seed's caveat): the condition of
 * validate's `zero3-offload-needs-activation-checkpointing`, which the step findings must not repeat.
 */
export function setupLacksCheckpointingBlock(setup: Setup): boolean {
  const a = setup.answers;
  const zero = compileSetup(setup).deepSpeedJson.zero_optimization;
  const stage = isPlainObject(zero) && typeof zero.stage === 'number' ? zero.stage : MODE_INFO[a.mode].stage;
  const usesCkpt = setup.steps.some((s) => s.usesConfig && s.args.some((x) => GRAD_CKPT_FLAGS.includes(x)));
  return stage === 3 && paramOffloadDevice(a) !== 'none' && usesCkpt && !a.gradient_checkpointing;
}

/** Every finding for a setup: its answers, then the emitted YAML and JSON. */
export function validate(setup: Setup): Finding[] {
  const a = setup.answers;
  const info = MODE_INFO[a.mode];
  const out: Finding[] = [];
  // The rules read the JSON as it will be written (kept keys of an import included), not just the answers.
  const { deepSpeedJson: json, accelerateConfig: yaml } = compileSetup(setup);
  const zero = isPlainObject(json.zero_optimization) ? json.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : info.stage;
  const optDevice = optimizerOffloadDevice(a);
  const paramDevice = paramOffloadDevice(a);
  const offload = optDevice !== 'none' || paramDevice !== 'none';
  if ((optDevice === 'nvme' || paramDevice === 'nvme') && a.nvme_path.trim() === '') {
    out.push(
      err('nvme-needs-path', 'NVMe offload needs a path on the NVMe drive', 'type a directory such as /nvme/zero', [
        'nvme_path',
      ]),
    );
  }
  if (!offload && a.offload_device === 'nvme') {
    out.push(
      warn(
        'offload-device-unused',
        `offload to NVMe was asked for, but ${info.label} offloads nothing, so it is ignored`,
        'pick 2-offload or 3-offload to offload, or leave --offload-device out',
        ['mode', 'offload_device'],
      ),
    );
  }
  if (info.stage !== 3 && a.offload_param_device !== 'none') {
    out.push(
      warn(
        'offload-param-below-stage-3',
        `parameters offloaded to ${a.offload_param_device} has no effect with ${info.label}: DeepSpeed offloads parameters only at stage 3, so zerowiz writes no offload_param`,
        'pick a ZeRO-3 mode, or leave --offload-param-device out',
        ['offload_param_device', 'mode'],
      ),
    );
  }
  if (a.zero3_init && stage !== 3) {
    out.push(
      warn(
        'zero3-init-below-stage-3',
        `zero3_init_flag has no effect at ZeRO stage ${stage}; accelerate turns it off with a warning`,
        'answer no, or pick a ZeRO-3 mode',
        ['zero3_init', 'mode'],
      ),
    );
  }
  if (setupLacksCheckpointingBlock(setup)) {
    out.push(
      err(
        'zero3-offload-needs-activation-checkpointing',
        "ZeRO-3 offload is incompatible with PyTorch's native gradient checkpointing, and the training step asks for checkpointing but the JSON has no activation_checkpointing block",
        "answer yes to gradient checkpointing so the block is written (scripts such as DiffSynth-Studio then use DeepSpeed's checkpointing)",
        ['gradient_checkpointing'],
      ),
    );
  }
  if (stage === 0) {
    out.push(
      warn(
        'zero-stage-0',
        'the DeepSpeed JSON keeps zero_optimization.stage 0 (imported): ZeRO is off, so nothing is sharded or offloaded',
        'choose a ZeRO mode to turn ZeRO on',
        ['mode'],
      ),
    );
  } else if (a.num_processes === 1 && !offload) {
    out.push(
      warn(
        'single-gpu-no-saving',
        `with one GPU, ZeRO stage ${stage} shards over a single device and saves no memory`,
        'use an offload mode (2-offload or 3-offload) to save GPU memory, or more GPUs',
        ['mode', 'num_processes'],
      ),
    );
  }
  const enabled = (k: string) => isPlainObject(json[k]) && (json[k] as Record<string, unknown>).enabled === true;
  const jsonPrecision = enabled('fp16') ? 'fp16' : enabled('bf16') ? 'bf16' : null;
  const lp = launchMixedPrecision(setup);
  if (lp !== null && lp !== 'no' && jsonPrecision !== null && (lp === 'fp8' ? 'bf16' : lp) !== jsonPrecision) {
    out.push(
      err(
        'precision-conflict',
        `a step passes --mixed_precision ${lp} but the JSON enables ${jsonPrecision}; accelerate refuses ("\`--mixed_precision\` arg cannot be set to \`${lp}\` when \`${jsonPrecision}\` is set in the DeepSpeed config file.")`,
        `answer ${lp === 'fp8' ? 'bf16' : lp} or auto to the mixed precision question (--mixed-precision in \`zerowiz preset save\`), or change the step's --mixed_precision`,
        ['mixed_precision'],
      ),
    );
  }
  if (a.mixed_precision === 'auto' && lp === null && jsonPrecision === null) {
    out.push(
      warn(
        'precision-auto-fp32',
        'fp16/bf16 are "auto" and no step passes --mixed_precision, so accelerate fills both with false: training runs in fp32 unless the script passes mixed_precision to Accelerator()',
        'answer bf16 or fp16 to the mixed precision question (--mixed-precision bf16 in `zerowiz preset save`), or pass --mixed_precision bf16 to accelerate launch in the step',
        ['mixed_precision'],
      ),
    );
  }
  out.push(...offloadedOptimizerFindings(a, optDevice !== 'none' && !isPlainObject(json.optimizer)));
  if (a.model_params !== null && a.largest_layer_params !== null && a.largest_layer_params > a.model_params) {
    out.push(
      err(
        'largest-layer-above-params',
        `the largest layer (${formatCount(a.largest_layer_params)} parameters) exceeds the model (${formatCount(a.model_params)}): it is one module of the model`,
        'give the parameters of the largest single layer (e.g. 120M), or leave it empty',
        ['largest_layer_params', 'model_params'],
      ),
    );
  }
  out.push(...fitFindings(setup));
  out.push(...encoderFindings(setup));
  const seen = new Set(out.map((f) => f.rule));
  for (const f of [...checkAccelerateConfig(yaml), ...checkDeepSpeedConfig(json, { worldSize: a.num_processes })]) {
    if (!seen.has(f.rule)) out.push(f);
  }
  return out;
}

/**
 * What an offloaded optimizer really runs (accelerate 1.15, utils/deepspeed.py map_pytorch_optim_to_deepspeed):
 * with the optimizer offloaded and no `optimizer` block in the JSON, accelerate replaces the script's torch
 * optimizer by DeepSpeedCPUAdam(lr, weight_decay) (AdamW mode only for torch.optim.AdamW and bitsandbytes'
 * 32-bit AdamW), with fp32 moments, over the script optimizer's own parameter groups. Adafactor's keep its lr
 * (None with relative_step, its default) and its eps (a pair), so the first step fails (the real tier's
 * __tests__/real/optimizers.test.ts: a TypeError); 8-bit Adam and SGD train as a CPU Adam with fp32 moments.
 */
function offloadedOptimizerFindings(a: Answers, swapped: boolean): Finding[] {
  if (!swapped || a.model_params === null) return [];
  if (a.optimizer === 'adafactor')
    return [
      err(
        'offload-adafactor',
        "with the optimizer offloaded, accelerate replaces the script's Adafactor by DeepSpeedCPUAdam over Adafactor's parameter groups, which keep Adafactor's own settings (lr None with relative_step, its default; eps a pair), so the first step fails",
        'use AdamW with an offload mode, or a mode that keeps the optimizer on the GPU (1, 2 or 3)',
        ['optimizer', 'mode'],
      ),
    ];
  if (a.optimizer === 'adamw-8bit' || a.optimizer === 'sgd')
    return [
      warn(
        'offload-optimizer-replaced',
        `with the optimizer offloaded, accelerate replaces the script's ${a.optimizer === 'sgd' ? 'SGD' : '8-bit AdamW'} by DeepSpeedCPUAdam in Adam mode (weight decay as L2, not decoupled) with fp32 moments on the CPU: the run trains with Adam${a.optimizer === 'sgd' ? ', not SGD' : ', not with 8-bit moments'}`,
        'choose AdamW to say what runs, or a mode that keeps the optimizer on the GPU (1, 2 or 3) to keep your optimizer',
        ['optimizer', 'mode'],
      ),
    ];
  return [];
}

/** The answers' own mode through the peak model (what fitFindings checks and a launch is compared with). */
export interface OwnModeEstimate {
  /** The estimator's input for the answers (src/estimate/input.ts). */
  input: EstimateInput;
  /** Where the answers put the optimizer state and the parameters. */
  placement: Placement;
  /** The offload device of the mode (null for a mode that offloads nothing). */
  device: OffloadDevice | null;
  /** The mode's row on `input`. */
  row: ModeEstimate;
  /** Micro-batches per optimizer step, and the GPU catalog's name the step time divides by. */
  accumulation: number;
  gpu: string;
  /**
   * The mode's row in an estimate of every mode (estimateModes, on `input` or a variant of it): the report's
   * own row when it has the same placement, else computed on the report's input.
   */
  rowIn(report: EstimateReport): ModeEstimate;
}

/**
 * The estimate of the answers' own mode (src/estimate/peak.ts, on the same input as the wizard's table and `zerowiz
 * estimate`); null without a model size. Throws EstimateInputError for answers it cannot estimate (unknown
 * LoRA targets, ...), and the estimator's errors for figures beyond its range.
 */
export function ownModeEstimate(
  a: Setup['answers'],
  models?: readonly ModelEntry[],
  /** Launch facts the answers do not hold (OMP_NUM_THREADS of the launch's environment). */
  launch: { ompThreads?: number | null } = {},
): OwnModeEstimate | null {
  // With the catalog's models, one estimate per answers however many rules and checks ask (a throw is not kept).
  if (models === undefined)
    return ownEstimates.get(JSON.stringify([a, launch.ompThreads ?? null]), () =>
      estimateOwnMode(a, modelCatalogOrNone(), launch),
    );
  return estimateOwnMode(a, models, launch);
}

/** How many answers' own-mode estimates are kept. */
const OWN_ESTIMATES_KEPT = 8;
const ownEstimates = memoLast<OwnModeEstimate | null>(OWN_ESTIMATES_KEPT);

function estimateOwnMode(
  a: Setup['answers'],
  models: readonly ModelEntry[],
  launch: { ompThreads?: number | null },
): OwnModeEstimate | null {
  const est = estimateInputFromSetup(a, {
    models,
    ...(launch.ompThreads ? { timing: { ompThreads: launch.ompThreads } } : {}),
  });
  if (!est.input) return null;
  const { placement } = est;
  const mode = a.mode;
  const device = modeDevice(mode, a.offload_device);
  const same = (p: Placement) =>
    p.stage === placement.stage && p.optimizer === placement.optimizer && p.param === placement.param;
  const n = normalizeInput(est.input);
  return {
    input: est.input,
    placement,
    device,
    accumulation: n.timing.accumulation,
    gpu: n.timing.gpu.id,
    row: estimatePlacement(placement, n, mode, device),
    rowIn: (report) =>
      report.modes.find((r) => r.mode === mode && r.offloadDevice === device && same(r.placement)) ??
      estimatePlacement(placement, report.input, mode, device),
  };
}

/**
 * When the model size and the GPU memory are known: does the chosen mode's peak fit (src/estimate/peak.ts, on the
 * same input as the wizard's table and `zerowiz estimate`: src/estimate/input.ts)? A warning, not an error:
 * the peak is an estimate. When the answers cannot be estimated (LoRA targets the catalog does not know,
 * ...), a warning says so.
 */
export function fitFindings(setup: Setup, models?: readonly ModelEntry[]): Finding[] {
  const a = setup.answers;
  if (a.model_params === null || a.gpu_memory === null) return [];
  let row: ModeEstimate;
  let report: EstimateReport | null = null;
  try {
    const own = ownModeEstimate(a, models);
    if (!own) return [];
    row = own.row;
    if (row.fits === false) report = estimateModes(own.input);
  } catch (err) {
    if (!(err instanceof EstimateInputError)) return [];
    return [
      warn('estimate-input', `the peak memory cannot be estimated: ${err.message}`, err.hint, [
        'fine_tuning',
        'lora_targets',
        'trainable_params',
        'model_params',
      ]),
    ];
  }
  if (row.fits !== false) return [];
  const where =
    row.gpuFits === false
      ? `peaks at ${formatBytes(row.gpuNeedBytes)} per GPU, over the ${formatBytes(a.gpu_memory * (1 - a.headroom / 100))} usable of ${formatBytes(a.gpu_memory)} (${a.headroom}% headroom)`
      : `needs ${formatBytes(row.peak.cpuBytes)} of CPU memory per node of ${formatBytes(a.cpu_memory ?? 0)}`;
  const better = report?.recommended ? `. Instead: ${report.reason}` : report ? `. ${report.reason}` : '';
  // The hint names only changes the answers allow (never what is already on).
  const changes = [
    report?.recommended ? 'pick a mode that fits' : null,
    a.gradient_checkpointing ? null : 'turn on gradient checkpointing',
    a.micro_batch > 1 ? 'lower the micro-batch' : null,
    report && !report.recommended && report.advice.length > 0 ? `what would fit: ${report.advice[0]}` : null,
  ].filter((x): x is string => x !== null);
  return [
    warn(
      'mode-does-not-fit',
      `${rowLabel(a.mode, modeDevice(a.mode, a.offload_device))} ${where}${better}`,
      changes.length > 0 ? orWords(changes) : 'the estimate finds no change of these answers that fits; a larger GPU',
      ['mode', 'gpu_memory', 'cpu_memory', 'micro_batch', 'gradient_checkpointing'],
    ),
  ];
}

/**
 * "The text encoder and VAE run on the GPU every step" for a model whose frozen models the catalog does not know:
 * the answer changes nothing the estimate can count, so a finding says so beside it (and how to give them).
 */
export function encoderFindings(setup: Setup, models?: readonly ModelEntry[]): Finding[] {
  const a = setup.answers;
  if (!a.encoders_on_gpu || a.model_params === null || a.extra_gpu_params > 0 || a.model_kind === 'lm') return [];
  const catalog = models ?? modelCatalogOrNone();
  const name = a.model_name.trim();
  const model = catalog.find((m) => m.id === name.toLowerCase() || m.name === name) ?? null;
  if (model?.encoders) return [];
  return [
    warn(
      'encoders-unknown',
      `the encoders on the GPU are not counted: ${model ? `the catalog has no encoders for ${model.id}` : `${name || 'the model'} is not in the catalog`}, so the peak leaves out their weights and working memory`,
      "give their parameters as extra_gpu_params (the text encoder's and the VAE's together)",
      ['extra_gpu_params', 'encoders_on_gpu'],
    ),
  ];
}

/** `a`, `a or b`, `a, b or c`. */
function orWords(xs: readonly string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} or ${xs.at(-1)}`;
}

/** How an answer is named in a finding: as its flag (`--nvme-path`) or its id (`nvme_path`, in presets). */
export type AnswerNaming = 'flag' | 'answer';

function answerName(id: QuestionId, as: AnswerNaming): string {
  return as === 'flag' ? `--${flagName(id)}` : id;
}

const MULTI_NODE_IDS: ReadonlySet<QuestionId> = new Set([
  'machine_rank',
  'main_process_ip',
  'main_process_port',
  'same_network',
  'rdzv_backend',
  'multinode_launcher',
  'hostfile',
  'exclusion_filter',
  'inclusion_filter',
]);

/** Why a question is not asked for these answers (its `when` is false), in words. */
function notAskedBecause(id: QuestionId, a: Answers): string {
  const info = MODE_INFO[a.mode];
  if (MULTI_NODE_IDS.has(id) && a.num_machines <= 1) return 'there is one machine (num_machines 1)';
  if (id === 'rdzv_backend') return 'the machines are on the same network (same_network yes)';
  if (id === 'hostfile' || id === 'exclusion_filter' || id === 'inclusion_filter')
    return `the ${a.multinode_launcher} launcher takes none`;
  if (id === 'largest_layer_params' || id === 'gpu_memory' || id === 'cpu_memory')
    return 'no model size is given (model_params)';
  if (id === 'nvme_path' && (info.offloadOptimizer || info.offloadParam))
    return `the offload device is ${a.offload_device}, not nvme`;
  if (id === 'offload_device' || id === 'nvme_path' || id === 'pin_memory')
    return `${info.label} offloads nothing (only 2-offload and 3-offload do)`;
  if (id === 'master_weights')
    return `the precision is ${a.mixed_precision}: the bf16 master-weight keys are written only with bf16 (or auto)`;
  if (info.stage !== 3) return `it is for ZeRO-3 only, and the mode is ${info.label}`;
  return 'it is not asked for these answers';
}

/**
 * Answers given (as flags or in a preset) for questions that these answers do not ask: each is a warning
 * naming it and saying why it does not apply (it is not written to the files).
 */
export function answerFindings(a: Answers, given: Iterable<QuestionId>, as: AnswerNaming): Finding[] {
  const out: Finding[] = [];
  for (const id of given) {
    if (question(id).when(a)) continue;
    const name = answerName(id, as);
    out.push(
      warn(
        'answer-not-applicable',
        `${name} does not apply: ${notAskedBecause(id, a)}; it is not written`,
        `leave ${name} out, or change the answer it depends on`,
        [id],
      ),
    );
  }
  return out;
}

/**
 * An NVMe offload whose nvme_path does not exist here (the NVMe presets write /nvme): DeepSpeed
 * creates its swap folder under it only if it can, and a missing mount means swapping to whatever disk
 * holds the path, or failing at the first step.
 */
function nvmePathFindings(setup: Setup, as: AnswerNaming, cwd: string): Finding[] {
  const a = setup.answers;
  if (optimizerOffloadDevice(a) !== 'nvme' && paramOffloadDevice(a) !== 'nvme') return [];
  const abs = resolve(cwd, a.nvme_path);
  if (existsSync(abs)) return [];
  const name = answerName('nvme_path', as);
  return [
    warn(
      'nvme-path-missing',
      `${name} ${a.nvme_path} does not exist on this machine: DeepSpeed would swap the offloaded states to a folder that is not there`,
      `give a directory on a local NVMe drive (${as === 'flag' ? '--nvme-path /mnt/nvme' : 'the NVMe path question'}), e.g. the mount point lsblk -o NAME,MOUNTPOINT shows for the drive`,
      ['nvme_path'],
    ),
  ];
}

/**
 * Checks that need the file system (not part of validate(), which is pure): an NVMe path that does not
 * exist (nvmePathFindings); a ds_config_path that names
 * neither an existing file (resolved from `cwd`, as accelerate resolves it from the launch directory) nor
 * the JSON zerowiz writes.
 */
export function fileFindings(setup: Setup, as: AnswerNaming, cwd = process.cwd()): Finding[] {
  const out = nvmePathFindings(setup, as, cwd);
  const ref = setup.answers.ds_config_path;
  if (ref === '') return out;
  const abs = resolve(cwd, ref);
  if (abs === resolve(cwd, setup.files.dsConfig) || existsSync(abs)) return out;
  const name = answerName('ds_config_path', as);
  return [
    ...out,
    warn(
      'ds-config-path-missing',
      `${name} ${ref} does not exist (resolved from ${cwd}): the YAML would point accelerate at a missing file, and zerowiz writes the JSON to ${setup.files.dsConfig}`,
      `give the path of an existing DeepSpeed JSON (relative paths are resolved from where you launch), or leave ${name} out`,
      ['ds_config_path'],
    ),
  ];
}
