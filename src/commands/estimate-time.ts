/**
 * `zerowiz estimate`'s step-time flags and what they add: the machine the step time divides by (--gpu,
 * --cpu-cores, --internode, or --detect), the run's length and price (--steps or --epochs with --dataset-size,
 * --gpu-hour-price) and the smallest box per catalog GPU (--min-box), as answers, --json fields and table lines.
 */
import { UsageError } from '../text/index.js';
import { formatBytesShort, formatCount, parseInteger } from '../text/index.js';
import { formatDuration } from '../text/index.js';
import {
  DEFAULT_HOST_CORES,
  GPU_CATALOG,
  TERM_WORDS,
  describeInternode,
  findGpu,
  formatBand,
  gpuOfSmiName,
  parseInternode,
} from '../estimate/index.js';
import type { EstimateInput, EstimateReport, GpuSpec, ModeEstimate, StepTimeBand } from '../estimate/index.js';
import { minBox, pipelineOf } from '../estimate/index.js';
import type { MinBoxRow, PipelineEstimate, StepCount } from '../estimate/index.js';
import type { HostDetection } from '../machine/index.js';
import type { Answers } from '../config/index.js';
import { rowLabel } from '../config/index.js';

/** The step-time flags as commander hands them over. */
export interface TimeFlags {
  gpu?: string;
  cpuCores?: string;
  internode?: string;
  gradientAccumulationSteps?: string;
  steps?: string;
  epochs?: string;
  datasetSize?: string;
  gpuHourPrice?: string;
  minBox?: boolean;
}

/** Where a machine fact came from, as --json says it. */
export type FactSource = 'flag' | 'detected' | 'preset' | 'default';

/** What the step-time flags resolve to. */
export interface TimeOptions {
  /** Answers the flags set (gpu_model, cpu_cores, internode, gradient_accumulation_steps). */
  answers: Partial<Answers>;
  count: StepCount | null;
  /** Samples per epoch (--dataset-size), for the pipeline and --min-box's epochs. */
  datasetSize: number | null;
  /** One price per GPU-hour, or a price per catalog GPU (`h100-sxm=2.99,a100-80=1.79`). */
  price: number | Record<string, number> | null;
  minBox: boolean;
  gpuSource: FactSource;
  coresSource: FactSource;
}

/** `--gpu-hour-price`: a number (`2.49`, `$2.49`) or `NAME=PRICE,...` per catalog GPU. */
export function parsePrice(text: string): number | Record<string, number> {
  const one = (t: string): number | null => {
    const v = t.trim().replace(/^\$/, '');
    return /^\d+(\.\d+)?$/.test(v) && Number(v) <= 1e6 ? Number(v) : null;
  };
  const plain = one(text);
  if (plain !== null) return plain;
  const out: Record<string, number> = {};
  for (const part of text.split(',')) {
    const [name, value] = part.split('=');
    const p = value === undefined ? null : one(value);
    if (name === undefined || p === null)
      throw new UsageError(
        `--gpu-hour-price '${text}' is not a price`,
        'give a price per GPU-hour (e.g. --gpu-hour-price 2.49), or one per GPU (h100-sxm=2.99,a100-80=1.79)',
      );
    out[findGpu(name.trim(), '--gpu-hour-price').id] = p;
  }
  return out;
}

/** The count of optimizer steps the flags give, or null; UsageError for a contradiction. */
function countOf(flags: TimeFlags): StepCount | null {
  if (flags.steps !== undefined && flags.epochs !== undefined)
    throw new UsageError(
      '--steps and --epochs cannot be used together',
      'give a step count, or epochs with --dataset-size',
    );
  if (flags.steps !== undefined) return { steps: parseInteger(flags.steps, '--steps', 1, 1e12) };
  if (flags.epochs !== undefined) {
    if (flags.datasetSize === undefined)
      throw new UsageError('--epochs needs --dataset-size', 'e.g. --epochs 5 --dataset-size 12000 (samples per epoch)');
    return {
      epochs: parseInteger(flags.epochs, '--epochs', 1, 1e9),
      datasetSize: parseInteger(flags.datasetSize, '--dataset-size', 1, 1e12),
    };
  }
  return null;
}

/**
 * The step-time flags (and, with --detect, this machine's GPU and cores) as answers and options. A flag wins over
 * detection, detection over a preset's answer, which wins over the stated defaults.
 */
export function timeOptions(
  flags: TimeFlags,
  detection: HostDetection | null,
  preset: Partial<Answers> = {},
): TimeOptions {
  const answers: Partial<Answers> = {};
  let gpuSource: FactSource = preset.gpu_model ? 'preset' : 'default';
  let coresSource: FactSource = preset.cpu_cores ? 'preset' : 'default';
  const detectedGpu = detection?.gpu.detected
    ? gpuOfSmiName(detection.gpu.gpus[0]!.name, detection.gpu.minMemoryBytes)
    : null;
  if (flags.gpu !== undefined) {
    answers.gpu_model = findGpu(flags.gpu).id;
    gpuSource = 'flag';
  } else if (detectedGpu) {
    answers.gpu_model = detectedGpu.id;
    gpuSource = 'detected';
  }
  if (flags.cpuCores !== undefined) {
    answers.cpu_cores = parseInteger(flags.cpuCores, '--cpu-cores', 1, 100_000);
    coresSource = 'flag';
  } else if (detection) {
    answers.cpu_cores = detection.cpuCores;
    coresSource = 'detected';
  }
  if (flags.internode !== undefined) answers.internode = parseInternode(flags.internode).spec;
  if (flags.gradientAccumulationSteps !== undefined)
    answers.gradient_accumulation_steps = parseInteger(
      flags.gradientAccumulationSteps,
      '--gradient-accumulation-steps',
      1,
      1_000_000,
    );
  if (flags.datasetSize !== undefined && flags.epochs === undefined && !flags.minBox)
    throw new UsageError('--dataset-size needs --epochs (or --min-box)', 'e.g. --epochs 5 --dataset-size 12000');
  const price = flags.gpuHourPrice !== undefined ? parsePrice(flags.gpuHourPrice) : (preset.gpu_hour_price ?? null);
  const datasetSize =
    flags.datasetSize !== undefined ? parseInteger(flags.datasetSize, '--dataset-size', 1, 1e12) : null;
  return { answers, count: countOf(flags), datasetSize, price, minBox: flags.minBox === true, gpuSource, coresSource };
}

/** Seconds for --json: rounded to the millisecond. */
export const sec = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/** A row's step time for --json, the issue's shape (seconds). */
export function timeJson(t: StepTimeBand): unknown {
  return {
    stepSeconds: sec(t.stepSeconds),
    low: sec(t.low),
    high: sec(t.high),
    bound: t.bound,
    terms: {
      compute: sec(t.terms.compute),
      collectives: sec(t.terms.collectives),
      offload: sec(t.terms.offload),
      hostOptimizer: sec(t.terms.hostOptimizer),
      nvme: sec(t.terms.nvme),
    },
    link: t.link,
    hostThreads: t.hostThreads,
  };
}

/** What `input` says of the machine the step time divides by, for --json. */
export function machineJson(report: EstimateReport, opts: TimeOptions): unknown {
  const t = report.input.timing;
  const gpu = t.gpu;
  const dense =
    report.input.precision === 'fp32'
      ? gpu.fp32Tflops
      : report.input.precision === 'fp16'
        ? gpu.fp16Tflops
        : (gpu.bf16Tflops ?? gpu.fp32Tflops);
  return {
    gpu: { id: gpu.id, name: gpu.name, peakTflops: dense, source: opts.gpuSource, catalogSource: gpu.source },
    links: {
      intraNode: report.modes[0]?.time.link.startsWith('the network') ? null : (report.modes[0]?.time.link ?? null),
      internode: report.input.nodes > 1 ? describeInternode(t.internode) : null,
    },
    hostCores: { count: t.hostCores, source: opts.coresSource },
    nvme: { bytesPerS: Math.round(t.nvmeBytesPerS), source: t.nvmeMeasured ? 'measured' : 'assumed' },
    ompThreads: t.ompThreads,
    gradientAccumulationSteps: t.accumulation,
  };
}

/** The recommended row of a report, or null. */
export function recommendedRow(report: EstimateReport): ModeEstimate | null {
  return (
    report.modes.find((m) => m.mode === report.recommended && m.offloadDevice === report.recommendedOffloadDevice) ??
    null
  );
}

/** The pipeline for the flags' count (null without one), on the recommended row, else on the baseline's time. */
export function pipelineFor(
  report: EstimateReport,
  opts: TimeOptions,
  dataSeconds: number | null = null,
): PipelineEstimate | null {
  if (!opts.count) return null;
  const row = recommendedRow(report) ?? report.baseline;
  const price = typeof opts.price === 'number' ? opts.price : (opts.price?.[report.input.timing.gpu.id] ?? null);
  return pipelineOf(report, row, opts.count, price, dataSeconds);
}

/** The pipeline for --json. */
export function pipelineJson(p: PipelineEstimate): unknown {
  return {
    steps: p.steps,
    globalBatch: p.globalBatch,
    stepsPerEpoch: p.stepsPerEpoch,
    trainSeconds: sec(p.trainSeconds),
    low: sec(p.trainLow),
    high: sec(p.trainHigh),
    dataSeconds: p.dataSeconds === null ? null : sec(p.dataSeconds),
    gpuHours: sec(p.gpuHours),
    price: p.price === null ? null : Math.round(p.price * 100) / 100,
    gpuHourPrice: p.gpuHourPrice,
  };
}

/** The pipeline in words: `1000 steps: 3h12m (2h40m-4h05m) of training, 25.6 GPU-hours, 2.5 per GPU-hour: 64.00`. */
export function pipelineText(p: PipelineEstimate, mode: string): string {
  const span = `${formatDuration(p.trainSeconds * 1000)} (${formatDuration(p.trainLow * 1000)}-${formatDuration(p.trainHigh * 1000)})`;
  const epochs =
    p.stepsPerEpoch !== null ? ` (${formatCount(p.stepsPerEpoch)} an epoch of ${p.globalBatch} samples a step)` : '';
  const data =
    p.dataSeconds === null ? '' : `, + the data pass ${formatDuration(p.dataSeconds * 1000)} (as last measured here)`;
  const price = p.price === null ? '' : `, ${p.gpuHourPrice} per GPU-hour: ${p.price.toFixed(2)}`;
  return `${p.steps} steps${epochs}: ${span} of training in ${mode}${data}; ${p.gpuHours.toFixed(1)} GPU-hours${price}`;
}

/** --min-box's rows for the flags (empty without --min-box). */
export function minBoxFor(input: EstimateInput, opts: TimeOptions): MinBoxRow[] {
  if (!opts.minBox) return [];
  return minBox(input, opts.datasetSize, opts.price);
}

/** --min-box for --json. */
export function minBoxJson(rows: MinBoxRow[]): unknown {
  return rows.map((r) => ({
    gpu: r.gpu.id,
    gpus: r.gpusPerNode * r.nodes,
    nodes: r.nodes,
    mode: r.row.mode,
    offloadDevice: r.row.offloadDevice,
    peak: r.row.peak.gpuBytes,
    hostBytes: r.row.peak.cpuBytes,
    stepSeconds: sec(r.row.time.stepSeconds),
    epochSeconds: r.epochSeconds === null ? null : sec(r.epochSeconds),
    price: r.price === null ? null : Math.round(r.price * 100) / 100,
    withoutOffload: r.withoutOffload
      ? {
          gpus: r.withoutOffload.gpusPerNode * r.withoutOffload.nodes,
          nodes: r.withoutOffload.nodes,
          mode: r.withoutOffload.row.mode,
          peak: r.withoutOffload.row.peak.gpuBytes,
          stepSeconds: sec(r.withoutOffload.row.time.stepSeconds),
          epochSeconds: r.withoutOffload.epochSeconds === null ? null : sec(r.withoutOffload.epochSeconds),
          price: r.withoutOffload.price === null ? null : Math.round(r.withoutOffload.price * 100) / 100,
        }
      : null,
  }));
}

/** --min-box as a table. */
export function minBoxTable(rows: MinBoxRow[], pad: (cells: string[][], left?: number[]) => string): string {
  const box = (b: { gpusPerNode: number; nodes: number }) =>
    b.nodes > 1 ? `${b.nodes} x ${b.gpusPerNode}` : `${b.gpusPerNode}`;
  const cells = [
    ['GPU', 'box', 'mode', 'GPU peak', 'host RAM/node', 'step time', 'epoch', 'price/epoch', 'without offload'],
  ];
  for (const r of rows) {
    const w = r.withoutOffload;
    const alt =
      w === null
        ? 'none up to 64 x 8'
        : w === null || (w.gpusPerNode === r.gpusPerNode && w.nodes === r.nodes)
          ? 'the same'
          : `${box(w)}: ${rowLabel(w.row.mode, w.row.offloadDevice)} ${formatBand(w.row.time)}${w.epochSeconds === null ? '' : `, epoch ${formatDuration(w.epochSeconds * 1000)}`}${w.price === null ? '' : `, ${w.price.toFixed(2)}`}`;
    cells.push([
      r.gpu.id,
      box(r),
      rowLabel(r.row.mode, r.row.offloadDevice),
      formatBytesShort(r.row.peak.gpuBytes),
      formatBytesShort(r.row.peak.cpuBytes),
      formatBand(r.row.time),
      r.epochSeconds === null ? '-' : formatDuration(r.epochSeconds * 1000),
      r.price === null ? '-' : r.price.toFixed(2),
      alt,
    ]);
  }
  return pad(cells, [2, 8]);
}

/** The bound term in a table cell: `CPU optimizer`, `compute`, `collectives`. */
export function boundCell(t: StepTimeBand): string {
  return TERM_WORDS[t.bound].replace(/^the /, '');
}

/** The catalog for --list-gpus (text or JSON). */
export function gpuCatalogText(json: boolean, pad: (cells: string[][], left?: number[]) => string): string {
  if (json) return `${JSON.stringify(GPU_CATALOG, null, 2)}\n`;
  const rows = [['id', 'bf16 TFLOPS', 'memory', 'links', 'name']];
  for (const g of GPU_CATALOG)
    rows.push([
      g.id,
      g.bf16Tflops === null ? `- (fp16 ${g.fp16Tflops})` : String(g.bf16Tflops),
      `${(g.memoryMiB / 1024).toFixed(0)} GiB`,
      linksCell(g),
      g.name,
    ]);
  return `${pad(rows, [3, 4])}\nDense tensor-core peaks (no sparsity); each figure's source: zerowiz estimate --list-gpus --json. Host cores default: ${DEFAULT_HOST_CORES}.\n`;
}

function linksCell(g: GpuSpec): string {
  if (g.nvlinks === 0) return `PCIe ${g.pcieGen}.0`;
  return `NVLink x${g.nvlinks}${g.nvlinkBoard ? ' (board)' : ' (bridge)'}`;
}
