/**
 * The estimate a launch is compared with: the setup's own mode through the peak model (src/estimate/peak.ts, the same
 * input as the wizard's table and `zerowiz estimate`: src/estimate/input.ts), and, when the run fails for
 * memory, the next mode or setting that fits by the same estimate (the alerts' fixes: ./alerts.ts).
 */
import { compareRows, estimateModes } from '../estimate/estimate.js';
import type { ModelEntry } from '../estimate/models.js';
import { rowLabel } from '../config/modes.js';
import type { Setup } from '../config/setup.js';
import { formatBytesShort } from '../units.js';
import { ownModeEstimate, type OwnModeEstimate } from '../config/validate.js';
import type { OomFacts } from './alerts.js';
import type { RunEstimateJson } from './live-record.js';
import { listRunRecords, readRecordSetup } from './record.js';
import type { MeasuredRun } from '../estimate/measured.js';
import type { Answers } from '../config/questions.js';

/** What zerowiz predicted for a run, and what it would suggest when the run runs out of memory. */
export interface LaunchEstimate {
  /** run.json's `estimate`: the mode and its modelled peak per GPU. */
  json: NonNullable<RunEstimateJson>;
  /** The mode as people read it (`ZeRO-3 offload`). */
  label: string;
  /** After a CUDA OOM: the next mode or setting that fits by the estimate, as one phrase; null when none. */
  whatFits(oom: OomFacts): string | null;
  /** After the host ran out of memory: a mode that needs less CPU memory per node; null when none. */
  hostWhatFits(): string | null;
}

/**
 * The estimate of a setup's own mode, or null when there is nothing to estimate (no model size) or the
 * answers cannot be estimated. Never throws.
 */
export function launchEstimate(setup: Setup, models?: readonly ModelEntry[]): LaunchEstimate | null {
  const a = setup.answers;
  if (a.model_params === null) return null;
  let own: OwnModeEstimate | null;
  try {
    own = ownModeEstimate(a, models);
  } catch {
    return null;
  }
  if (!own) return null;
  const { input, row, device } = own;
  const mode = a.mode;
  return {
    json: { mode: a.mode, gpuBytesPerGpu: row.gpuNeedBytes },
    label: rowLabel(mode, device),
    whatFits: (oom) => {
      // The GPU's real size, when the message says it, over the one the setup assumed.
      const inp = oom.totalBytes !== null ? { ...input, gpuMemoryBytes: oom.totalBytes } : input;
      if (inp.gpuMemoryBytes === null || inp.gpuMemoryBytes === undefined) return null;
      try {
        const report = estimateModes(inp);
        const current = own.rowIn(report);
        const next = [...report.modes]
          .sort(compareRows)
          .find((r) => r.fits === true && r.gpuNeedBytes < current.gpuNeedBytes);
        if (next) {
          return `switch to ${rowLabel(next.mode, next.offloadDevice)} (--mode ${next.mode}${next.offloadDevice === 'nvme' ? ' --offload-device nvme' : ''}): it fits by the estimate, ${formatBytesShort(next.gpuNeedBytes)} per GPU against ${formatBytesShort(current.gpuNeedBytes)} for ${rowLabel(mode, device)}`;
        }
        if (report.advice.length > 0)
          return `by the estimate no mode fits as set up; what would: ${report.advice.slice(0, 2).join('; ')}`;
      } catch {
        return null;
      }
      return null;
    },
    hostWhatFits: () => {
      try {
        const report = estimateModes(input);
        const current = own.rowIn(report);
        const next = [...report.modes]
          .sort(compareRows)
          .find((r) => r.gpuFits !== false && r.peak.cpuBytes < current.peak.cpuBytes);
        if (!next) return null;
        return `${rowLabel(next.mode, next.offloadDevice)} (--mode ${next.mode}) needs ${formatBytesShort(next.peak.cpuBytes)} of CPU memory per node against ${formatBytesShort(current.peak.cpuBytes)} for ${rowLabel(mode, device)}${next.gpuFits === true ? ', and fits the GPU by the estimate' : ''}`;
      } catch {
        return null;
      }
    },
  };
}

/**
 * The local run records under `cwd` as MeasuredRun (Slurm jobs and records whose setup cannot be read are
 * left out); never throws.
 */
export function loadMeasuredRuns(cwd: string = process.cwd()): MeasuredRun[] {
  try {
    const out: MeasuredRun[] = [];
    for (const rec of listRunRecords(cwd).records) {
      if (rec.json.slurm) continue;
      let answers: Answers;
      try {
        answers = readRecordSetup(rec).answers;
      } catch {
        continue;
      }
      out.push({
        id: rec.json.id,
        startedAt: rec.json.startedAt,
        answers,
        steps: rec.json.steps
          .filter((s) => s.usesConfig)
          .map((s) => {
            const peaks = s.live?.gpu.peaks ?? [];
            const top = peaks.reduce<{ index: number; usedBytes: number } | null>(
              (a, p) => (a === null || p.usedBytes > a.usedBytes ? p : a),
              null,
            );
            return {
              peakBytes: top?.usedBytes ?? null,
              gpu: top?.index ?? null,
              oom: (s.live?.alerts ?? []).some((x) => x.id === 'cuda-oom'),
            };
          }),
      });
    }
    return out;
  } catch {
    return [];
  }
}
