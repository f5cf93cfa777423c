/**
 * The step time the launch predicted for a run, when its record holds one (run.json's `estimate.step`, the band
 * src/estimate/time.ts made for the setup's own mode): the first-step notification and the report show the measured
 * time beside it. The record is read through its schema (./record.ts); a band that is not low <= high gives null.
 */
import { isDiffSynthStep } from '../config/index.js';
import type { RunJson } from './record.js';

/** A predicted step time band, in seconds per iteration of the training pass's progress bar. */
export interface PredictedStepTime {
  seconds: number | null;
  low: number;
  high: number;
}

/**
 * The predicted time of one iteration of the training pass's progress bar, or null when the record has none (made
 * before step times, or without a model size). The estimate is per optimizer step; DiffSynth-Studio's bar counts
 * micro-batches, so there an iteration is the step over the gradient accumulation (`--gradient_accumulation_steps`).
 */
export function predictedStepTime(json: RunJson): PredictedStepTime | null {
  const s = json.estimate?.step;
  if (!s || !(s.low > 0) || !(s.high >= s.low)) return null;
  const training = json.steps.find((x) => x.usesConfig);
  // argv is what follows the accelerate executable: its `launch`, then the step's arguments.
  const args = training ? (training.argv[0] === 'launch' ? training.argv.slice(1) : training.argv) : [];
  const per = isDiffSynthStep(args) ? s.accumulation : 1;
  return { seconds: s.seconds > 0 ? s.seconds / per : null, low: s.low / per, high: s.high / per };
}
