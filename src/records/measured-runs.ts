/**
 * The run records of a directory read back as measurements (src/estimate/measured.ts judges them): each local
 * run's setup and, per step that used its config, the highest GPU peak it measured and whether it ran out of
 * memory.
 */
import type { Answers } from '../config/index.js';
import { isDiffSynthStep } from '../config/index.js';
import type { MeasuredRun } from '../estimate/index.js';
import { listRunRecords, readRecordSetup } from './record.js';

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
        passes: rec.json.steps.map((s) => ({
          name: s.name,
          usesConfig: s.usesConfig,
          done: s.status === 'done',
          seconds: s.durationMs === null ? null : s.durationMs / 1000,
          ratePerS: s.live?.metrics.ratePerS ?? null,
          perIteration: isDiffSynthStep(s.argv) ? 'micro' : 'optimizer',
        })),
      });
    }
    return out;
  } catch {
    return [];
  }
}
