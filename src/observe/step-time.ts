/**
 * The run corrects the estimate: once a pass has run its first steady iterations, the step time its progress bar
 * measures beside the predicted band (run.json's `estimate.step`, src/estimate/time.ts), the ETA of the rest of the
 * pass at that pace, and which term of the prediction the measurement disagrees with. What the pane's progress
 * row and side panel and stream mode's progress lines show.
 */
import { formatDuration } from '../text/index.js';
import { TERM_WORDS, formatBand, stepSecondsOfRate } from '../estimate/index.js';
import { formatSeconds } from '../text/index.js';
import type { TimeTerm } from '../estimate/index.js';
import type { Progress } from './logparse.js';
import type { RunStepJson } from './live.js';

/** Iterations of a progress bar before its rate counts: the first ones load, compile and warm the allocator. */
export const STEADY_ITERATIONS = 5;

/** The measured step against the predicted one. */
export interface StepComparison {
  /** Seconds per optimizer step, measured. */
  measured: number;
  /** Measured against the prediction's figure, as a fraction (+0.08: 8% slower). */
  off: number;
  /** Within the predicted band. */
  within: boolean;
  /** Seconds the rest of the pass takes at the measured pace, or null when the bar has no total. */
  etaSeconds: number | null;
  /** The term the measurement disagrees with (the largest, which would have to change least), or null within the band. */
  term: TimeTerm | null;
  /** How much that term would have to change to explain the measurement (x its prediction). */
  termFactor: number | null;
}

/**
 * The comparison for a pass's progress, or null before STEADY_ITERATIONS or without a rate. `perIteration`: what
 * one iteration of the bar is (a micro-batch of DiffSynth's dataloader loop, or an optimizer step).
 */
export function compareStep(
  predicted: RunStepJson,
  p: Progress,
  perIteration: 'micro' | 'optimizer',
): StepComparison | null {
  if (p.n < STEADY_ITERATIONS) return null;
  const measured = stepSecondsOfRate(p.ratePerS, perIteration, predicted.accumulation);
  if (measured === null) return null;
  const off = predicted.seconds > 0 ? (measured - predicted.seconds) / predicted.seconds : 0;
  const within = measured >= predicted.low && measured <= predicted.high;
  const perIter = perIteration === 'micro' ? measured / predicted.accumulation : measured;
  const etaSeconds = p.total !== null && p.total >= p.n ? (p.total - p.n) * perIter : null;
  let term: TimeTerm | null = null;
  let termFactor: number | null = null;
  if (!within) {
    const terms = predicted.terms;
    term = (Object.keys(terms) as TimeTerm[]).reduce((a, b) => (terms[b] > terms[a] ? b : a), 'compute');
    const t = terms[term];
    termFactor = t > 0 ? Math.max(0, measured - (predicted.seconds - t)) / t : null;
  }
  return { measured, off, within, etaSeconds, term, termFactor };
}

/** The pane's and stream mode's short form: `11.2 s/step (est 9.1-12 s/step, +8%)`. */
export function stepShortText(c: StepComparison, predicted: RunStepJson): string {
  const pct = Math.round(c.off * 100);
  return `${formatSeconds(c.measured)}/step (est ${formatBand(predicted)}, ${pct >= 0 ? '+' : ''}${pct}%)`;
}

/**
 * The long form: the short one, the pass's ETA, and the term that disagrees: `11.2 s/step (est 9.1-12 s/step,
 * +8%) · pass ETA 3h12m · over the band: the CPU optimizer would take 1.4x its 8.1 s`.
 */
export function stepLongText(c: StepComparison, predicted: RunStepJson): string {
  const parts = [stepShortText(c, predicted)];
  if (c.etaSeconds !== null) parts.push(`pass ETA ${formatDuration(c.etaSeconds * 1000)}`);
  if (c.term !== null) {
    const side = c.measured > predicted.high ? 'over' : 'under';
    const factor =
      c.termFactor === null
        ? ''
        : ` would take ${c.termFactor.toFixed(1)}x its ${formatSeconds(predicted.terms[c.term])}`;
    parts.push(`${side} the band: ${TERM_WORDS[c.term]}${factor}`);
  } else parts.push('within the band');
  return parts.join(' · ');
}
