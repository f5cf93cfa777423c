/**
 * Measured beats modelled: the GPU peaks the run records of this directory measured (each step's nvidia-smi
 * peak, saved in run.json beside the estimate) for the same setup, by ZeRO placement, so the wizard's table,
 * the fit findings and `zerowiz estimate --preset NAME` can show the last one beside the estimate and say
 * when it contradicts a recommendation.
 *
 * "The same setup" is every answer the peak depends on except where the states go (mode and offload
 * devices, which pick the row): the model, the workload, the precision and optimizer, the GPU count and
 * memory, DeepSpeed's buffer knobs. "This machine" is the records under this directory that ran here (a
 * Slurm job's record measured another node, and is left out). A step counts when it ran with the setup's
 * DeepSpeed config (the training pass, not a cache pass without it); a step that hit a CUDA OOM measured
 * the GPU full, a lower bound of what it needed.
 *
 * Pure: src/rules/fit.ts loadMeasuredRuns reads the records.
 */
import { placementOfAnswers } from './input.js';
import { formatSeconds } from '../text/index.js';
import type { EstimateAnswers } from './input.js';
import type { Placement } from '../config/index.js';
import type { Answers } from '../config/index.js';
import { formatGiB } from '../text/index.js';

/** What one record says about one run, reduced to what the matching needs. */
export interface MeasuredRun {
  id: string;
  /** When it started (ISO). */
  startedAt: string;
  answers: Answers;
  /** Steps that ran with the setup's config: the highest GPU peak each measured, and whether it ran out of GPU memory. */
  steps: { peakBytes: number | null; gpu: number | null; oom: boolean }[];
  /**
   * Every step of the run: whether it trained with the config, ended done, how long it took, and its progress
   * bar's last rate (iterations per second) with what one iteration is (a micro-batch of DiffSynth's dataloader
   * loop, or an optimizer step). Absent in measurements made before step times.
   */
  passes?: {
    name: string;
    usesConfig: boolean;
    done: boolean;
    seconds: number | null;
    ratePerS: number | null;
    perIteration: 'micro' | 'optimizer';
  }[];
}

/** The last measured step time of a placement of the setup. */
export interface MeasuredStep {
  runId: string;
  day: string;
  startedAt: string;
  /** Seconds per optimizer step (the progress bar's rate, x the gradient accumulation for a micro-batch bar). */
  seconds: number;
}

/** Seconds per optimizer step from a progress bar's rate, or null without one. */
export function stepSecondsOfRate(
  ratePerS: number | null,
  perIteration: 'micro' | 'optimizer',
  accumulation: number,
): number | null {
  if (ratePerS === null || !(ratePerS > 0)) return null;
  return (perIteration === 'micro' ? accumulation : 1) / ratePerS;
}

/** Micro-batches per optimizer step of the answers (accelerate fills `auto` with 1). */
export function accumulationOf(a: Pick<Answers, 'gradient_accumulation_steps'>): number {
  return typeof a.gradient_accumulation_steps === 'number' ? a.gradient_accumulation_steps : 1;
}

/**
 * The last measured step time of each placement for these answers (the newest run of the same setup whose
 * training pass measured a rate) and the last data pass that ran to its end (a step without the config before
 * it), seconds.
 */
export function measuredSteps(
  runs: readonly MeasuredRun[],
  answers: Answers,
): { steps: Map<string, MeasuredStep>; dataSeconds: number | null } {
  const key = sameSetupKey(answers);
  const steps = new Map<string, MeasuredStep>();
  let dataSeconds: number | null = null;
  const newest = [...runs].sort((x, y) => (x.startedAt < y.startedAt ? 1 : x.startedAt > y.startedAt ? -1 : 0));
  for (const r of newest) {
    if (sameSetupKey(r.answers) !== key) continue;
    const passes = r.passes ?? [];
    const train = passes.find((p) => p.usesConfig && p.ratePerS !== null);
    const seconds = train ? stepSecondsOfRate(train.ratePerS, train.perIteration, accumulationOf(r.answers)) : null;
    const where = placementKey(placementOfAnswers(r.answers));
    if (seconds !== null && !steps.has(where))
      steps.set(where, { runId: r.id, day: r.startedAt.slice(0, 10), startedAt: r.startedAt, seconds });
    const trainAt = passes.findIndex((p) => p.usesConfig);
    const data = passes.slice(0, Math.max(0, trainAt)).find((p) => !p.usesConfig && p.done && p.seconds !== null);
    if (dataSeconds === null && data?.seconds != null) dataSeconds = data.seconds;
  }
  return { steps, dataSeconds };
}

/** `measured 11.2 s/step on 2026-12-05, +8% over the estimate`, for a placement's last measured step. */
export function measuredStepText(m: MeasuredStep, predictedSeconds: number): string {
  const pct = predictedSeconds > 0 ? Math.round(((m.seconds - predictedSeconds) / predictedSeconds) * 100) : 0;
  const how = pct === 0 ? 'as estimated' : `${pct > 0 ? '+' : ''}${pct}% ${pct > 0 ? 'over' : 'under'} the estimate`;
  return `measured ${formatSeconds(m.seconds)}/step on ${m.day}, ${how}`;
}

/** The last measured peak of a placement of the setup. */
export interface MeasuredPeak {
  runId: string;
  /** The day it ran (YYYY-MM-DD, from the record's start). */
  day: string;
  startedAt: string;
  /** The highest GPU memory any GPU used in a step run with the setup's config (nvidia-smi), bytes. */
  peakBytes: number;
  /** A step ran out of GPU memory: the peak is a lower bound. */
  oom: boolean;
}

/** The answers the peak depends on, besides where the states go (the rows of the table). */
const SAME_SETUP_KEYS = [
  'model_name',
  'model_params',
  'largest_layer_params',
  'num_processes',
  'num_machines',
  'gpu_memory',
  'model_kind',
  'fine_tuning',
  'lora_rank',
  'lora_targets',
  'trainable_params',
  'micro_batch',
  'seq_len',
  'max_pixels',
  'frames',
  'gradient_checkpointing',
  'optimizer',
  'master_weights',
  'encoders_on_gpu',
  'extra_gpu_params',
  'mixed_precision',
  'overlap_comm',
  'contiguous_gradients',
  'reduce_bucket_size',
  'prefetch_bucket_size',
  'max_live_parameters',
  'sub_group_size',
] as const satisfies readonly (keyof EstimateAnswers)[];

/** The identity of a setup for matching records: its answers that the peak depends on, besides the placement. */
export function sameSetupKey(a: Pick<Answers, (typeof SAME_SETUP_KEYS)[number]>): string {
  return JSON.stringify(SAME_SETUP_KEYS.map((k) => a[k] ?? null));
}

/** A placement as a key (stage, optimizer device, parameter device), the way rows of the table are matched. */
export function placementKey(p: Placement): string {
  // Below stage 3 DeepSpeed ignores offload_param and treats an NVMe optimizer as CPU offload.
  const optimizer = p.stage !== 3 && p.optimizer === 'nvme' ? 'cpu' : p.optimizer;
  return `${p.stage}/${optimizer}/${p.stage === 3 ? p.param : 'none'}`;
}

/**
 * The last measured peak of each placement for these answers, from the runs (any order): the newest run of
 * the same setup that measured a peak (or ran out of memory) wins.
 */
export function measuredPeaks(runs: readonly MeasuredRun[], answers: Answers): Map<string, MeasuredPeak> {
  const key = sameSetupKey(answers);
  const out = new Map<string, MeasuredPeak>();
  const newest = [...runs].sort((x, y) => (x.startedAt < y.startedAt ? 1 : x.startedAt > y.startedAt ? -1 : 0));
  for (const r of newest) {
    if (sameSetupKey(r.answers) !== key) continue;
    const peaks = r.steps.map((s) => s.peakBytes).filter((b): b is number => b !== null);
    const oom = r.steps.some((s) => s.oom);
    if (peaks.length === 0 && !oom) continue;
    const where = placementKey(placementOfAnswers(r.answers));
    if (out.has(where)) continue;
    out.set(where, {
      runId: r.id,
      day: r.startedAt.slice(0, 10),
      startedAt: r.startedAt,
      peakBytes: Math.max(0, ...peaks),
      oom,
    });
  }
  return out;
}

/**
 * `measured 61.2 GiB on 2026-12-01, +6% over the estimate`; for a run that ran out of memory `ran out of GPU
 * memory on 2026-12-01 (estimated 58.0 GiB)`.
 */
export function measuredText(m: MeasuredPeak, estimateBytes: number): string {
  if (m.oom) return `ran out of GPU memory on ${m.day} (estimated ${formatGiB(estimateBytes)})`;
  const pct = estimateBytes > 0 ? Math.round(((m.peakBytes - estimateBytes) / estimateBytes) * 100) : 0;
  const how = pct === 0 ? 'as estimated' : `${pct > 0 ? '+' : ''}${pct}% ${pct > 0 ? 'over' : 'under'} the estimate`;
  return `measured ${formatGiB(m.peakBytes)} on ${m.day}, ${how}`;
}

/**
 * Whether a measurement contradicts a fit the estimate claims: the run ran out of GPU memory, or measured
 * more than the usable memory. The sentence says so, or null when it agrees.
 */
export function measuredContradiction(
  label: string,
  m: MeasuredPeak,
  usableGpuBytes: number | null,
  fitsByEstimate: boolean | null,
): string | null {
  if (fitsByEstimate !== true) return null;
  if (m.oom) return `but ${label} ran out of GPU memory here on ${m.day}: the measurement says it does not fit`;
  if (usableGpuBytes !== null && m.peakBytes > usableGpuBytes)
    return `but ${label} measured ${formatGiB(m.peakBytes)} here on ${m.day}, over the ${formatGiB(usableGpuBytes)} usable: the measurement says it does not fit`;
  return null;
}
