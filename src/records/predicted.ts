/**
 * The step time the launch predicted for a run, when its record holds one (the estimate's `time` block:
 * `{stepSeconds, low, high}` in seconds, as `estimate --json` shapes it): the first-step notification and the
 * report show the measured time beside it. Read as untrusted input: anything but positive finite numbers
 * with low <= high gives null.
 */
import type { RunJson } from './record.js';

/** A predicted step time band, seconds. */
export interface PredictedStepTime {
  seconds: number | null;
  low: number;
  high: number;
}

function positive(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

/** The predicted step time of a record, or null when it has none. */
export function predictedStepTime(json: RunJson): PredictedStepTime | null {
  const est = json.estimate as unknown as Record<string, unknown> | null | undefined;
  const t = (est?.time ?? est?.stepTime) as Record<string, unknown> | null | undefined;
  if (typeof t !== 'object' || t === null) return null;
  const low = positive(t.low);
  const high = positive(t.high);
  if (low === null || high === null || low > high) return null;
  return { seconds: positive(t.stepSeconds), low, high };
}
