/** The run corrects the estimate (src/observe/step-time.ts): the measured step against the predicted band. */
import { describe, expect, it } from 'vitest';
import { STEADY_ITERATIONS, compareStep, stepLongText, stepShortText } from '../../src/observe/step-time.js';
import type { Progress } from '../../src/observe/logparse.js';
import type { RunStepJson } from '../../src/observe/live.js';

const predicted: RunStepJson = {
  seconds: 10,
  low: 8,
  high: 13,
  bound: 'hostOptimizer',
  terms: { compute: 3, collectives: 0.5, offload: 0.5, hostOptimizer: 6, nvme: 0 },
  accumulation: 4,
  gpu: 'h100-sxm',
  link: 'NVLink x18',
};
const bar = (over: Partial<Progress>): Progress => ({
  desc: '',
  percent: 10,
  n: 100,
  total: 1000,
  elapsedS: 100,
  remainingS: 900,
  ratePerS: 1,
  rateText: '1.00it/s',
  postfix: '',
  loss: null,
  text: '',
  ...over,
});

describe('the measured step against the predicted band', () => {
  it('waits for the first steady iterations', () => {
    expect(compareStep(predicted, bar({ n: STEADY_ITERATIONS - 1 }), 'optimizer')).toBeNull();
    expect(compareStep(predicted, bar({ ratePerS: null }), 'optimizer')).toBeNull();
  });
  it("a bar over micro-batches (DiffSynth's dataloader loop) counts the gradient accumulation into a step", () => {
    // 0.4 micro-batches a second, 4 a step: 10 s a step, as predicted.
    const c = compareStep(predicted, bar({ ratePerS: 0.4 }), 'micro')!;
    expect(c.measured).toBeCloseTo(10, 9);
    expect(c.within).toBe(true);
    expect(c.term).toBeNull();
    // 900 micro-batches left at 2.5 s each.
    expect(c.etaSeconds).toBeCloseTo(900 * 2.5, 6);
    expect(stepLongText(c, predicted)).toBe('10 s/step (est 8.0-13 s/step, +0%) · pass ETA 37m30s · within the band');
  });
  it('over the band: names the largest term and how much it would have to grow', () => {
    // 16 s a step: the CPU optimizer's 6 s would have to be 12 s (2x).
    const c = compareStep(predicted, bar({ ratePerS: 1 / 16 }), 'optimizer')!;
    expect(c.within).toBe(false);
    expect(c.term).toBe('hostOptimizer');
    expect(c.termFactor).toBeCloseTo(2, 9);
    expect(stepShortText(c, predicted)).toBe('16 s/step (est 8.0-13 s/step, +60%)');
    expect(stepLongText(c, predicted)).toContain('over the band: the CPU optimizer would take 2.0x its 6.0 s');
  });
  it('under the band, and a bar without a total has no ETA', () => {
    const c = compareStep(predicted, bar({ ratePerS: 1 / 5, total: null, percent: null }), 'optimizer')!;
    expect(c.etaSeconds).toBeNull();
    expect(stepLongText(c, predicted)).toMatch(/^5\.0 s\/step \(est 8\.0-13 s\/step, -50%\) · under the band: /);
  });
});
