/**
 * How long a whole run takes and what it costs: the optimizer steps (a count, or epochs of a dataset over the
 * global batch), the training pass at the step time, the data pass when one was measured, GPU-hours and a price;
 * and the smallest box per catalog GPU that runs the job (`estimate --min-box`). Pure: the caller reads the
 * dataset and the records.
 */
import type { EstimateInput, EstimateReport, ModeEstimate } from './estimate.js';
import { estimateModes } from './estimate.js';
import { GPU_CATALOG, gpuMemoryBytes } from './gpus.js';
import type { GpuSpec } from './gpus.js';
import type { StepTimeBand } from './time.js';

/**
 * How many optimizer steps: a count, or epochs of a dataset (over `passes` training passes of the same schedule,
 * such as Wan2.2-A14B's two experts trained one after the other; default 1).
 */
export type StepCount = { steps: number } | { epochs: number; datasetSize: number; passes?: number };

/** The run's time and price. */
export interface PipelineEstimate {
  /** Optimizer steps of the training pass. */
  steps: number;
  /** Samples per optimizer step: micro-batch x gradient accumulation x GPUs. */
  globalBatch: number;
  /** Optimizer steps per epoch (null when a step count was given). */
  stepsPerEpoch: number | null;
  /** The training pass at the step time, and at the band's ends, seconds. */
  trainSeconds: number;
  trainLow: number;
  trainHigh: number;
  /** The data pass (latents and embeddings cached first) as last measured here, or null when unknown. */
  dataSeconds: number | null;
  /** GPU-hours of both passes (the data pass's when known). */
  gpuHours: number;
  /** The price at the given price per GPU-hour, or null without one. */
  price: number | null;
  gpuHourPrice: number | null;
}

/** Samples per optimizer step of an estimate's input. */
export function globalBatchOf(r: Pick<EstimateReport, 'input'>): number {
  const n = r.input;
  return n.workload.microBatch * n.timing.accumulation * n.totalGpus;
}

/** Optimizer steps for a count: the count, or epochs x ceil(dataset / global batch). */
export function stepsOf(count: StepCount, globalBatch: number): { steps: number; stepsPerEpoch: number | null } {
  if ('steps' in count) return { steps: count.steps, stepsPerEpoch: null };
  const perEpoch = Math.max(1, Math.ceil(count.datasetSize / Math.max(1, globalBatch)));
  return { steps: (count.passes ?? 1) * count.epochs * perEpoch, stepsPerEpoch: perEpoch };
}

/** The run's time and price for a row of a report (the recommended one, or the setup's own). */
export function pipelineOf(
  r: Pick<EstimateReport, 'input'>,
  row: { time: Pick<StepTimeBand, 'stepSeconds' | 'low' | 'high'> },
  count: StepCount,
  gpuHourPrice: number | null,
  dataSeconds: number | null = null,
): PipelineEstimate {
  const globalBatch = globalBatchOf(r);
  const { steps, stepsPerEpoch } = stepsOf(count, globalBatch);
  const t = row.time;
  const trainSeconds = steps * t.stepSeconds;
  const gpuHours = ((trainSeconds + (dataSeconds ?? 0)) * r.input.totalGpus) / 3600;
  return {
    steps,
    globalBatch,
    stepsPerEpoch,
    trainSeconds,
    trainLow: steps * t.low,
    trainHigh: steps * t.high,
    dataSeconds,
    gpuHours,
    price: gpuHourPrice === null ? null : gpuHours * gpuHourPrice,
    gpuHourPrice,
  };
}

/** One box: its size, the mode recommended there, the epoch's time and price. */
export interface BoxFit {
  gpusPerNode: number;
  nodes: number;
  row: ModeEstimate;
  /** The epoch's seconds (null without a dataset size), and its price at the given price (null without one). */
  epochSeconds: number | null;
  price: number | null;
}

/** One row of `--min-box`: the smallest box of one catalog GPU that runs the job, and the smallest without offload. */
export interface MinBoxRow extends BoxFit {
  gpu: GpuSpec;
  /** The smallest box where a mode without offload fits (null when none does up to 64 nodes). */
  withoutOffload: BoxFit | null;
}

/** The box sizes tried, smallest first: 1, 2, 4, 8 GPUs on a node, then nodes of 8 up to 64 nodes. */
export const MIN_BOX_SIZES: readonly { gpusPerNode: number; nodes: number }[] = [
  { gpusPerNode: 1, nodes: 1 },
  { gpusPerNode: 2, nodes: 1 },
  { gpusPerNode: 4, nodes: 1 },
  { gpusPerNode: 8, nodes: 1 },
  { gpusPerNode: 8, nodes: 2 },
  { gpusPerNode: 8, nodes: 4 },
  { gpusPerNode: 8, nodes: 8 },
  { gpusPerNode: 8, nodes: 16 },
  { gpusPerNode: 8, nodes: 32 },
  { gpusPerNode: 8, nodes: 64 },
];

/** The recommended fit of one GPU at one size, or null; `noOffload` keeps only modes that offload nothing. */
function fitAt(
  input: EstimateInput,
  gpu: GpuSpec,
  size: { gpusPerNode: number; nodes: number },
  datasetSize: number | null,
  price: number | null,
  noOffload: boolean,
): BoxFit | null {
  let report: EstimateReport;
  try {
    report = estimateModes({
      ...input,
      ...size,
      gpuMemoryBytes: gpuMemoryBytes(gpu),
      interconnect: { kind: 'unknown', nvlinks: null },
      timing: { ...input.timing, gpu, gpuSource: 'given' },
    });
  } catch {
    return null;
  }
  const row = noOffload
    ? ([...report.modes]
        .filter((m) => m.fits === true && m.offloadDevice === null)
        .sort((a, b) => a.time.stepSeconds - b.time.stepSeconds)[0] ?? null)
    : (report.modes.find((m) => m.mode === report.recommended && m.offloadDevice === report.recommendedOffloadDevice) ??
      null);
  if (!row) return null;
  const perEpoch = datasetSize === null ? null : stepsOf({ epochs: 1, datasetSize }, globalBatchOf(report)).steps;
  const epochSeconds = perEpoch === null ? null : perEpoch * row.time.stepSeconds;
  const gpus = size.gpusPerNode * size.nodes;
  return {
    ...size,
    row,
    epochSeconds,
    price: price === null || epochSeconds === null ? null : (epochSeconds * gpus * price) / 3600,
  };
}

/**
 * Per catalog GPU, the smallest box (MIN_BOX_SIZES) where a mode fits (the GPU's memory; the host's when given),
 * with the recommended mode there: its peak, step time, the epoch's time and price; and the smallest box where a
 * mode without offload fits. A GPU on which nothing fits up to 512 of them has no row. `price` is one price per
 * GPU-hour for every GPU, or a price per catalog id.
 */
export function minBox(
  input: EstimateInput,
  datasetSize: number | null,
  price: number | Readonly<Record<string, number>> | null,
): MinBoxRow[] {
  const out: MinBoxRow[] = [];
  for (const gpu of GPU_CATALOG) {
    const p = price === null ? null : typeof price === 'number' ? price : (price[gpu.id] ?? null);
    let smallest: BoxFit | null = null;
    let withoutOffload: BoxFit | null = null;
    for (const size of MIN_BOX_SIZES) {
      smallest ??= fitAt(input, gpu, size, datasetSize, p, false);
      if (smallest) withoutOffload = fitAt(input, gpu, size, datasetSize, p, true);
      if (withoutOffload) break;
    }
    if (smallest) out.push({ gpu, ...smallest, withoutOffload });
  }
  return out;
}
