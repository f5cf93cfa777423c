/**
 * What a setup needs from the box, worked out before anything is measured (pure, apart from the model
 * catalog the estimate reads): the passes to check and their scripts, datasets, models and outputs; the
 * processes per node; the port; the DeepSpeed config the launch writes and the ops it needs; the NVMe path
 * and how much lives there; the CPU memory per node of the estimate. Every check judges its measurement
 * against this plan.
 */
import { isAbsolute, resolve } from 'node:path';
import { compileSetup, isPlainObject } from '../config/index.js';
import { modeDevice, rowLabel } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { argValue, stepConfig } from '../config/index.js';
import { isDataPass } from '../config/index.js';
import { ownModeEstimate } from '../rules/index.js';
import { normalizeInput } from '../estimate/index.js';
import type { ModelEntry } from '../estimate/index.js';
import { diffSynthOutputPath, isDiffSynthStep } from '../config/index.js';
import { earlierOutputs, trainingScript } from '../config/index.js';
import { wholeGiBUp } from '../text/index.js';

/** accelerate's main process port when the setup gives none (`accelerate launch --help`). */
export const ACCELERATE_DEFAULT_PORT = 29500;
/** Bytes per value of a 16-bit save (what DiffSynth and a gathered ZeRO-3 save write per trained parameter). */
export const SAVE_BYTES_PER_PARAM = 2;
/** fp32 master weights and Adam's two moments per trainable parameter in a DeepSpeed checkpoint (save_state). */
export const DS_OPTIMIZER_BYTES_PER_PARAM = 12;
/** DiffSynth's own default for --data_file_keys (diffsynth/diffusion/parsers.py). */
export const DIFFSYNTH_DATA_FILE_KEYS = ['image', 'video'] as const;

/** A DeepSpeed op the setup needs, and why. */
export interface OpNeed {
  /** DeepSpeed's op name (ds_report's first column): cpu_adam, async_io, fused_adam. */
  name: string;
  /** Its builder class in deepspeed.ops.op_builder. */
  builder: string;
  /** Why the setup needs it. */
  why: string;
  /** Whether it is a CUDA op (compiled with nvcc when torch sees a GPU). */
  cuda: boolean;
}

/** A model a DiffSynth pass loads: `model_id:pattern` (downloaded into DiffSynth's models folder) or a path. */
export type ModelRef = { kind: 'hub'; spec: string; modelId: string; pattern: string } | { kind: 'path'; path: string };

/** What a DiffSynth-Studio pass reads and writes, from its arguments. */
export interface DiffSynthPlan {
  /** The data_process pass (writes the cache; trains nothing). */
  dataPass: boolean;
  /** --dataset_base_path, absolute (null when absent). */
  datasetBase: string | null;
  /** --dataset_metadata_path, absolute; null: DiffSynth then reads cached `.pth` files under the base path. */
  metadata: string | null;
  /** --data_file_keys (the metadata columns that name files). */
  dataFileKeys: string[];
  /** The models it loads (--model_id_with_origin_paths, --model_paths). */
  models: ModelRef[];
  /** --output_path, absolute. */
  outputPath: string;
  /** --num_epochs (DiffSynth's default 1). */
  epochs: number;
  /** --save_steps, or null (one save per epoch). */
  saveSteps: number | null;
}

/** What one pass needs room for. */
export interface OutputNeed {
  /** The folder it writes into (absolute). */
  path: string;
  /** Bytes it writes there, or null when that cannot be known before the run. */
  bytes: number | null;
  /** What those bytes are, in words. */
  what: string;
}

/** One pass to check. */
export interface StepPlan {
  index: number;
  name: string;
  /** Runs with the setup's config (DeepSpeed). */
  deepspeed: boolean;
  /** The training script as written, its absolute path, and whether an earlier pass makes it. */
  script: string | null;
  scriptPath: string | null;
  scriptMadeEarlier: boolean;
  /**
   * Paths earlier passes write (absolute): inputs under them may not exist yet when every pass is checked;
   * when one pass is checked (before it starts), the passes before it have run, so they must.
   */
  earlierOutputs: string[];
  diffsynth: DiffSynthPlan | null;
  outputs: OutputNeed[];
  /** --dataset_num_workers (or --num_workers), DataLoader workers per process (0 when absent). */
  dataloaderWorkers: number;
}

/** The estimate's figures the checks compare with (null without a model size). */
export interface PlanEstimate {
  /** The mode as people read it: `ZeRO-3 offload`. */
  label: string;
  /** CPU memory per node at the peak (loading or training, pinned buffers included). */
  cpuBytesPerNode: number;
  /** GPU memory per GPU at the peak. */
  gpuBytesPerGpu: number;
  /** Bytes offloaded to NVMe per node, and moved between host and NVMe per GPU per step. */
  nvmeBytesPerNode: number;
  nvmeBytesPerStep: number;
  /** All parameters and the trainable ones (LoRA adapters when LoRA). */
  params: number;
  trainableParams: number;
}

/** Everything the checks need to know about a setup. */
export interface CheckPlan {
  setupName: string;
  /** The directory the passes run in. */
  cwd: string;
  /** The passes checked (every pass, or the one a pass check names). */
  steps: StepPlan[];
  /** How many passes the setup has (the checked ones may be fewer). */
  totalSteps: number;
  processesPerNode: number;
  numMachines: number;
  machineRank: number;
  /** The main process port the passes use, and whether the setup gave it. */
  port: number;
  portFromSetup: boolean;
  /** Whether a checked pass runs the setup's DeepSpeed config. */
  deepspeed: boolean;
  /** The mode's label (`ZeRO-3 offload`) and stage. */
  modeLabel: string;
  stage: number;
  /** The setup's mixed precision answer. */
  precision: string;
  /** The DeepSpeed JSON the launch writes (plain values). */
  dsConfig: Record<string, unknown>;
  /** The ops DeepSpeed needs for it (empty when no checked pass runs DeepSpeed). */
  ops: OpNeed[];
  /** NVMe offload: the folder and what goes there (null without NVMe offload). */
  nvme: { path: string; bytes: number | null; what: string } | null;
  /** accelerate's multi-node launcher (deepspeed_multinode_launcher). */
  launcher: string;
  estimate: PlanEstimate | null;
}

/** Which passes a check covers: every pass, or one (1-based index or name). */
export type PassFilter = { kind: 'all' } | { kind: 'one'; index: number };

function abs(cwd: string, p: string): string {
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}

/** Whether `p` is `dir` or under it. */
export function underPath(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

function intArg(args: readonly string[], flag: string): number | null {
  const v = argValue(args, flag);
  if (typeof v !== 'string' || !/^\d+$/.test(v.trim())) return null;
  return Number(v.trim());
}

/** The models of a DiffSynth pass, as DiffSynth parses them (training_module.py parse_model_configs). */
export function diffSynthModels(args: readonly string[], cwd: string): ModelRef[] {
  const out: ModelRef[] = [];
  const paths = argValue(args, '--model_paths');
  if (typeof paths === 'string') {
    try {
      const list: unknown = JSON.parse(paths);
      if (Array.isArray(list))
        for (const p of list) if (typeof p === 'string') out.push({ kind: 'path', path: abs(cwd, p) });
    } catch {
      // DiffSynth would fail on it at start; the inputs check says so.
    }
  }
  const ids = argValue(args, '--model_id_with_origin_paths');
  if (typeof ids === 'string') {
    for (const spec of ids.split(',')) {
      const s = spec.trim();
      if (s === '') continue;
      // DiffSynth takes an existing path as a path, else splits at the last ':' (parse_path_or_model_id).
      const split = s.lastIndexOf(':');
      if (split < 0) out.push({ kind: 'path', path: abs(cwd, s) });
      else out.push({ kind: 'hub', spec: s, modelId: s.slice(0, split), pattern: s.slice(split + 1) });
    }
  }
  return out;
}

function diffSynthPlan(args: readonly string[], cwd: string): DiffSynthPlan | null {
  if (!isDiffSynthStep(args)) return null;
  const base = argValue(args, '--dataset_base_path');
  const meta = argValue(args, '--dataset_metadata_path');
  const keys = argValue(args, '--data_file_keys');
  return {
    dataPass: isDataPass(args),
    datasetBase: typeof base === 'string' && base !== '' ? abs(cwd, base) : null,
    metadata: typeof meta === 'string' && meta !== '' ? abs(cwd, meta) : null,
    dataFileKeys:
      typeof keys === 'string'
        ? keys
            .split(',')
            .map((k) => k.trim())
            .filter((k) => k !== '')
        : [...DIFFSYNTH_DATA_FILE_KEYS],
    models: diffSynthModels(args, cwd),
    outputPath: abs(cwd, diffSynthOutputPath(args) ?? '.'),
    epochs: intArg(args, '--num_epochs') ?? 1,
    saveSteps: intArg(args, '--save_steps'),
  };
}

/** The ops DeepSpeed builds for this config (what accelerate hands DeepSpeed at prepare()). */
export function opsNeeded(ds: Record<string, unknown>): OpNeed[] {
  const zero = isPlainObject(ds.zero_optimization) ? ds.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : 0;
  const dev = (v: unknown) => (isPlainObject(v) && typeof v.device === 'string' ? v.device : 'none');
  const opt = dev(zero.offload_optimizer);
  const param = stage === 3 ? dev(zero.offload_param) : 'none';
  const ops: OpNeed[] = [];
  if (stage >= 1 && (opt === 'cpu' || opt === 'nvme'))
    ops.push({
      name: 'cpu_adam',
      builder: 'CPUAdamBuilder',
      why: `the optimizer is offloaded (${opt}): accelerate swaps in DeepSpeedCPUAdam`,
      cuda: false,
    });
  // Stages 1-2 treat device nvme as plain CPU offload; only stage 3 swaps to NVMe through async_io.
  if (stage === 3 && (opt === 'nvme' || param === 'nvme'))
    ops.push({ name: 'async_io', builder: 'AsyncIOBuilder', why: 'NVMe offload swaps through libaio', cuda: false });
  const optimizer = isPlainObject(ds.optimizer) ? ds.optimizer : null;
  const type = optimizer && typeof optimizer.type === 'string' ? optimizer.type.toLowerCase() : null;
  if ((type === 'adam' || type === 'adamw') && opt === 'none')
    ops.push({
      name: 'fused_adam',
      builder: 'FusedAdamBuilder',
      why: `the JSON's optimizer ${optimizer?.type} runs on the GPU as FusedAdam`,
      cuda: true,
    });
  return ops;
}

/** The NVMe folder of a DeepSpeed config, when stage 3 swaps there (the parameters' path first). */
function nvmePathOf(ds: Record<string, unknown>): string | null {
  const zero = isPlainObject(ds.zero_optimization) ? ds.zero_optimization : {};
  if (zero.stage !== 3) return null;
  for (const key of ['offload_param', 'offload_optimizer']) {
    const b = zero[key];
    if (isPlainObject(b) && b.device === 'nvme' && typeof b.nvme_path === 'string') return b.nvme_path;
  }
  return null;
}

/** The estimate's figures for the setup's own mode, or null (no model size, or not estimable). */
export function planEstimate(setup: Setup, models?: readonly ModelEntry[]): PlanEstimate | null {
  const a = setup.answers;
  if (a.model_params === null) return null;
  try {
    const own = ownModeEstimate(a, models);
    if (!own) return null;
    const n = normalizeInput(own.input);
    return {
      label: rowLabel(a.mode, own.device),
      cpuBytesPerNode: own.row.peak.cpuBytes,
      gpuBytesPerGpu: own.row.gpuNeedBytes,
      nvmeBytesPerNode: own.row.nvmeBytes,
      nvmeBytesPerStep: own.row.nvmeBytesPerStep,
      params: n.params,
      trainableParams: n.trainable,
    };
  } catch {
    return null;
  }
}

function outputsOf(
  step: { name: string; deepspeed: boolean; diffsynth: DiffSynthPlan | null },
  cwd: string,
  est: PlanEstimate | null,
  stage: number,
): OutputNeed[] {
  const d = step.diffsynth;
  const save = est ? est.trainableParams * SAVE_BYTES_PER_PARAM : null;
  if (d?.dataPass)
    return [{ path: d.outputPath, bytes: null, what: "the data pass's cache (its size depends on the dataset)" }];
  if (d) {
    if (save === null)
      return [
        { path: d.outputPath, bytes: null, what: 'the trained weights (no model size in the setup to size them)' },
      ];
    const files = d.epochs;
    return [
      {
        path: d.outputPath,
        bytes: files * save,
        what: `${files} save(s) of the ${formatTrainable(est!)} trained weights in 16 bit (one per epoch${d.saveSteps !== null ? `, and one every ${d.saveSteps} steps on top: the step count is not known before the run` : ''})`,
      },
    ];
  }
  if (!step.deepspeed || save === null || est === null)
    return [{ path: cwd, bytes: null, what: 'what the script writes (not known to zerowiz)' }];
  const full = est.trainableParams * DS_OPTIMIZER_BYTES_PER_PARAM + est.params * SAVE_BYTES_PER_PARAM;
  return [
    {
      path: cwd,
      bytes: save,
      what: `one 16-bit save of the ${formatTrainable(est)} trained weights${stage === 3 ? ' (gathered on rank 0)' : ''}; a DeepSpeed checkpoint (save_state) would need about ${wholeGiBUp(full)} GiB each; the script's output folder is not known to zerowiz`,
    },
  ];
}

function formatTrainable(est: PlanEstimate): string {
  const n = est.trainableParams;
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : String(n);
}

/**
 * The plan of `setup` for the passes `filter` names, with paths resolved against `cwd`. Throws RangeError for
 * a pass that does not exist (the caller turns it into a usage error).
 */
export function checkPlan(
  setup: Setup,
  opts: { cwd: string; filter?: PassFilter; models?: readonly ModelEntry[] },
): CheckPlan {
  const { cwd } = opts;
  const a = setup.answers;
  const filter = opts.filter ?? { kind: 'all' };
  if (filter.kind === 'one' && (filter.index < 0 || filter.index >= setup.steps.length))
    throw new RangeError(`the setup has ${setup.steps.length} pass(es); there is no pass ${filter.index + 1}`);
  const ds = compileSetup(setup).deepSpeedJson;
  const zero = isPlainObject(ds.zero_optimization) ? ds.zero_optimization : {};
  const stage = typeof zero.stage === 'number' ? zero.stage : 0;
  const est = planEstimate(setup, opts.models);
  const steps: StepPlan[] = [];
  setup.steps.forEach((s, index) => {
    if (filter.kind === 'one' && filter.index !== index) return;
    const script = trainingScript(s.args);
    const scriptPath = script === null ? null : abs(cwd, script);
    const earlier = filter.kind === 'all' ? earlierOutputs(setup, index, cwd) : [];
    const deepspeed = stepConfig(s).kind === 'setup';
    const diffsynth = diffSynthPlan(s.args, cwd);
    const workers = intArg(s.args, '--dataset_num_workers') ?? intArg(s.args, '--num_workers') ?? 0;
    steps.push({
      index,
      name: s.name,
      deepspeed,
      script,
      scriptPath,
      scriptMadeEarlier: scriptPath !== null && earlier.some((o) => underPath(scriptPath, o)),
      earlierOutputs: earlier,
      diffsynth,
      outputs: outputsOf({ name: s.name, deepspeed, diffsynth }, cwd, est, stage),
      dataloaderWorkers: workers,
    });
  });
  const usesDs = steps.some((s) => s.deepspeed);
  const nvmePath = nvmePathOf(ds);
  const processes = Math.max(1, a.num_processes);
  const machines = Math.max(1, a.num_machines);
  return {
    setupName: setup.name,
    cwd,
    steps,
    totalSteps: setup.steps.length,
    processesPerNode: Math.max(1, Math.floor(processes / machines)),
    numMachines: machines,
    machineRank: a.machine_rank,
    port: a.main_process_port ?? ACCELERATE_DEFAULT_PORT,
    portFromSetup: a.main_process_port !== null,
    deepspeed: usesDs,
    modeLabel: est?.label ?? rowLabel(a.mode, modeDevice(a.mode, a.offload_device)),
    stage,
    precision: a.mixed_precision,
    dsConfig: ds,
    ops: usesDs ? opsNeeded(ds) : [],
    nvme:
      usesDs && nvmePath !== null
        ? {
            path: abs(cwd, nvmePath),
            bytes: est ? est.nvmeBytesPerNode : null,
            what: est ? `the ${est.label} states DeepSpeed swaps there, per node` : 'the offloaded states',
          }
        : null,
    launcher: a.multinode_launcher,
    estimate: est,
  };
}
