/**
 * A setup's run, end to end, before it starts: how many optimizer steps its training pass takes (DiffSynth's
 * --num_epochs x the metadata's samples x --dataset_repeat over the global batch), how long at the predicted step
 * time, the data pass as last measured here, GPU-hours and the price at the setup's gpu_hour_price. What the
 * wizard's finish screen, `estimate --preset`, `launch --dry-run` and a launch's first lines say.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Setup } from '../config/index.js';
import { diffSynthSchedule, metadataRows, modeDevice, rowLabel } from '../config/index.js';
import { formatBytesShort, formatDuration } from '../text/index.js';
import {
  estimateInputFromSetup,
  formatBand,
  measuredSteps,
  modelCatalogOrNone,
  normalizeInput,
  pipelineOf,
} from '../estimate/index.js';
import type { MeasuredRun, ModelEntry, PipelineEstimate, StepCount } from '../estimate/index.js';
import type { RunEstimate } from './fit.js';

/** Where a setup's step count comes from, for the sentence. */
export interface SetupSchedule {
  count: StepCount | null;
  /** What it was read from, or why it is unknown. */
  why: string;
}

/**
 * The training pass's schedule: the first step that trains with the setup's config, read as DiffSynth's; the
 * samples from its --dataset_metadata_path, else an earlier step's (a data pass writes the cache the training
 * reads, keeping the samples its metadata lists). Reads the metadata file; never throws.
 */
export function setupSchedule(setup: Setup, cwd: string, read?: (path: string) => string): SetupSchedule {
  const train = setup.steps.findIndex((s) => s.usesConfig);
  const step = setup.steps[train];
  if (!step) return { count: null, why: 'no step trains with the setup' };
  const sched = diffSynthSchedule(step.args);
  if (!sched) return { count: null, why: `step ${step.name} is not a DiffSynth training step (its length is unknown)` };
  const earlier = setup.steps
    .slice(0, train)
    .map((s) => diffSynthSchedule(s.args)?.metadataPath ?? null)
    .filter((p): p is string => p !== null);
  const metadata = sched.metadataPath ?? earlier[earlier.length - 1] ?? null;
  if (metadata === null) return { count: null, why: `step ${step.name} names no --dataset_metadata_path` };
  const rows = metadataRows(isAbsolute(metadata) ? metadata : resolve(cwd, metadata), read);
  if (rows === null) return { count: null, why: `${metadata} cannot be read here (its samples are unknown)` };
  // Later training steps of the same schedule are more passes (Wan2.2-A14B: one per expert, split by timestep).
  const passes = setup.steps.slice(train).filter((s) => {
    if (!s.usesConfig) return false;
    const o = diffSynthSchedule(s.args);
    return (
      o !== null && o.epochs === sched.epochs && o.repeat === sched.repeat && (o.metadataPath ?? metadata) === metadata
    );
  });
  const experts = passes.every(
    (s) => s.args.includes('--max_timestep_boundary') || s.args.includes('--min_timestep_boundary'),
  );
  const many =
    passes.length > 1
      ? `${passes.length} passes (${experts ? 'one per expert, split by --max/--min_timestep_boundary' : passes.map((s) => s.name).join(', ')}) of `
      : '';
  return {
    count: {
      epochs: sched.epochs,
      datasetSize: rows * sched.repeat,
      ...(passes.length > 1 ? { passes: passes.length } : {}),
    },
    why: `${many}${sched.epochs} epoch${sched.epochs === 1 ? '' : 's'} of ${rows} samples${sched.repeat > 1 ? ` x ${sched.repeat} (--dataset_repeat)` : ''} in ${metadata}`,
  };
}

/** The run in one line: `ETA: 1,250 steps (5 epochs of ...): 3h12m (2h40m-4h05m), data pass 4m10s; 25.6 GPU-hours, 64.00`. */
export function etaLine(p: PipelineEstimate, schedule: SetupSchedule): string {
  const train = `${formatDuration(p.trainSeconds * 1000)} (${formatDuration(p.trainLow * 1000)}-${formatDuration(p.trainHigh * 1000)})`;
  const data =
    p.dataSeconds === null
      ? 'the data pass not measured here yet'
      : `the data pass ${formatDuration(p.dataSeconds * 1000)} as last measured here`;
  const price = p.price === null ? '' : `, ${p.price.toFixed(2)} at ${p.gpuHourPrice} per GPU-hour`;
  return `ETA: ${p.steps} steps (${schedule.why}, ${p.globalBatch} sample${p.globalBatch === 1 ? '' : 's'} a step): training ${train}, ${data}; ${p.gpuHours.toFixed(1)} GPU-hours${price}`;
}

/**
 * What is said of a setup's estimate before it runs (a launch's first lines, `--dry-run`, the wizard's finish
 * screen): its mode with the peak and the step time, then the run's ETA and price, or why its length is unknown.
 */
export function estimateLines(
  setup: Setup,
  e: RunEstimate,
  cwd: string,
  measured: readonly MeasuredRun[] = [],
  opts: { unknownLength?: boolean } = {},
): string[] {
  const a = setup.answers;
  const label = rowLabel(a.mode, modeDevice(a.mode, a.offload_device));
  const step = e.step
    ? `, ${formatBand(e.step)} (${e.step.bound === 'hostOptimizer' ? 'the CPU optimizer' : e.step.bound} bounds it; ${e.step.gpu}, ${e.step.link})`
    : '';
  const out = [`estimate: ${label}: peak ${formatBytesShort(e.gpuBytesPerGpu)} per GPU${step}`];
  if (!e.step) return out;
  const { pipeline, schedule } = setupRun(setup, e.step, cwd, measured);
  if (pipeline) out.push(etaLine(pipeline, schedule));
  else if (opts.unknownLength) out.push(`ETA unknown: ${schedule.why}`);
  return out;
}

/**
 * A setup's run at its predicted step: the schedule (or why its length is unknown) and the pipeline (null when
 * the length is unknown or the setup cannot be estimated). Reads the metadata file; never throws.
 */
export function setupRun(
  setup: Setup,
  step: NonNullable<RunEstimate['step']>,
  cwd: string,
  measured: readonly MeasuredRun[] = [],
  /** The model catalog when the caller has it loaded (else read here). */
  models?: readonly ModelEntry[],
): { pipeline: PipelineEstimate | null; schedule: SetupSchedule } {
  const schedule = setupSchedule(setup, cwd);
  if (!schedule.count) return { pipeline: null, schedule };
  try {
    const { input } = estimateInputFromSetup(setup.answers, { models: models ?? modelCatalogOrNone() });
    if (!input) return { pipeline: null, schedule };
    const n = normalizeInput(input);
    const time = { stepSeconds: step.seconds, low: step.low, high: step.high };
    const data = measuredSteps(measured, setup.answers).dataSeconds;
    const p = pipelineOf({ input: n }, { time }, schedule.count, setup.answers.gpu_hour_price, data);
    return { pipeline: p, schedule };
  } catch {
    return { pipeline: null, schedule };
  }
}
