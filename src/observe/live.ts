/**
 * The run.json additions for live metrics (read back through record.ts's schema): per step a `live` block
 * with the metrics, the per-GPU memory peaks of that step and its alerts (saved at the step's end and every
 * LIVE_SAVE_INTERVAL_MS while it runs); per run the estimate the peaks are compared with. Only additions,
 * all optional, so a version-1 reader is unaffected:
 *
 *   "estimate": {"mode": "3-offload", "gpuBytesPerGpu": 62277025792, "step": {"seconds": 11.2, "low": 9.1,
 *                "high": 14.6, "bound": "hostOptimizer", "terms": {...}, "accumulation": 1, "gpu": "h100-sxm",
 *                "link": "NVLink x18"} | null} | null,
 *   "steps": [{ ..., "live": {
 *      "metrics": {"lossSource": "csv", "lastLoss": 0.0123 | "nan" | "inf" | "-inf" | null, "minLoss": 0.0101,
 *                  "lossCount": 4000, "nonFiniteLosses": 0, "learningRate": 0.0001, "ratePerS": 0.52,
 *                  "skippedSteps": 0, "lossScale": null, "dsPeakAllocatedBytes": null},
 *      "gpu": {"telemetry": "ok" | "unavailable" | "lost" | "off", "reason": null,
 *              "peaks": [{"index": 3, "usedBytes": 65712160768, "totalBytes": 85520809984, "at": "2026-..."}]},
 *      "alerts": [{"id": "cuda-oom", "step": 1, "line": "...", "at": "2026-...", "title": "...", "fix": "...", "fatal": true}]
 *   }}]
 *
 * These records are what will calibrate the estimator: measured peak per GPU per step next to the estimate.
 */
import * as z from 'zod/mini';
import '../text/zod.js';
import type { Alert } from './alerts.js';
import type { StepMetrics } from './metrics/step-metrics.js';
import type { GpuPeak, TelemetryState } from './telemetry.js';

const count = z.int().check(z.nonnegative());
const bytes = z.int().check(z.nonnegative());
const nullableNumber = z.nullable(z.number());
/** A loss in JSON: finite numbers as numbers, Python's spelling for the rest (JSON has no NaN). */
const lossValue = z.nullable(z.union([z.number(), z.enum(['nan', 'inf', '-inf'])]));

/** Schema of the per-step `live` block. */
export const liveStepSchema = z.object({
  metrics: z.object({
    lossSource: z.nullable(z.enum(['csv', 'hf', 'tqdm', 'log'])),
    lastLoss: lossValue,
    minLoss: nullableNumber,
    lossCount: count,
    nonFiniteLosses: count,
    learningRate: nullableNumber,
    ratePerS: nullableNumber,
    skippedSteps: count,
    lossScale: nullableNumber,
    dsPeakAllocatedBytes: z.nullable(bytes),
  }),
  gpu: z.object({
    telemetry: z.enum(['ok', 'unavailable', 'lost', 'off']),
    reason: z.nullable(z.string()),
    peaks: z.array(z.object({ index: count, usedBytes: bytes, totalBytes: z.nullable(bytes), at: z.string() })),
  }),
  alerts: z.array(
    z.object({
      id: z.string(),
      step: count,
      line: z.string(),
      at: z.string(),
      title: z.string(),
      fix: z.string(),
      fatal: z.boolean(),
    }),
  ),
});

const seconds = z.number().check(z.nonnegative());
/**
 * The predicted step time of the setup's mode (src/estimate/time.ts), per optimizer step: the figure, the band,
 * the bounding term, the terms, the gradient accumulation and what a progress bar's iteration is (a micro-batch
 * for DiffSynth's dataloader loop, an optimizer step for trainers that count those).
 */
export const runStepSchema = z.object({
  seconds,
  low: seconds,
  high: seconds,
  bound: z.enum(['compute', 'collectives', 'offload', 'hostOptimizer', 'nvme']),
  terms: z.object({
    compute: seconds,
    collectives: seconds,
    offload: seconds,
    hostOptimizer: seconds,
    nvme: seconds,
  }),
  accumulation: z.int().check(z.positive()),
  gpu: z.string(),
  link: z.string(),
});

/** Schema of the run-level `estimate`: the peak per GPU, and (since step times) the predicted step. */
export const runEstimateSchema = z.nullable(
  z.object({ mode: z.string(), gpuBytesPerGpu: bytes, step: z.optional(z.nullable(runStepSchema)) }),
);

/** The per-step `live` block of run.json. */
export type LiveStepJson = z.infer<typeof liveStepSchema>;
/** The run-level `estimate` of run.json. */
export type RunEstimateJson = z.infer<typeof runEstimateSchema>;
/** The predicted step of run.json's `estimate`. */
export type RunStepJson = z.infer<typeof runStepSchema>;

/** A loss for JSON. */
export function lossJson(v: number | null): number | 'nan' | 'inf' | '-inf' | null {
  if (v === null) return null;
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return v;
}

/** Telemetry as it ended for the record. */
export function telemetryJsonState(state: TelemetryState | null): LiveStepJson['gpu']['telemetry'] {
  if (state === null || state === 'idle') return 'off';
  if (state === 'unavailable') return 'unavailable';
  if (state === 'lost') return 'lost';
  return 'ok';
}

/** Builds a step's `live` block from what the watch kept. */
export function liveStepJson(opts: {
  metrics: StepMetrics;
  peaks: readonly GpuPeak[];
  telemetry: TelemetryState | null;
  telemetryReason: string | null;
  alerts: readonly Alert[];
}): LiveStepJson {
  const m = opts.metrics;
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    metrics: {
      lossSource: m.lossSource,
      lastLoss: lossJson(m.lastLoss),
      minLoss: m.minLoss,
      lossCount: m.lossCount,
      nonFiniteLosses: m.nonFiniteLosses,
      learningRate: m.learningRate,
      ratePerS: m.ratePerS,
      skippedSteps: m.skippedSteps,
      lossScale: m.lossScale,
      dsPeakAllocatedBytes: m.dsPeakAllocatedBytes,
    },
    gpu: {
      telemetry: telemetryJsonState(opts.telemetry),
      reason: opts.telemetryReason,
      peaks: opts.peaks.map((p) => ({
        index: p.index,
        usedBytes: p.usedBytes,
        totalBytes: p.totalBytes,
        at: iso(p.at),
      })),
    },
    alerts: opts.alerts.map((a) => ({
      id: a.id,
      step: a.step,
      line: a.line,
      at: iso(a.at),
      title: a.title,
      fix: a.fix,
      fatal: a.fatal,
    })),
  };
}

/** Reads a step's `live` block back (for `zerowiz runs`); null when absent or not valid. */
export function parseLiveStep(data: unknown): LiveStepJson | null {
  const r = liveStepSchema.safeParse(data);
  return r.success ? r.data : null;
}

/** The peaks of a `live` block as GpuPeak values (for formatPeakVsEstimate). */
export function peaksFromJson(live: LiveStepJson): GpuPeak[] {
  return live.gpu.peaks.map((p) => ({
    index: p.index,
    usedBytes: p.usedBytes,
    totalBytes: p.totalBytes,
    at: Date.parse(p.at),
  }));
}
