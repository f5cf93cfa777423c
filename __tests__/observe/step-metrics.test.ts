import { describe, expect, it } from 'vitest';
import { parseProgress } from '../../src/observe/logparse.js';
import { LossSeries } from '../../src/observe/metrics/series.js';
import { type MetricSignal, StepMetrics } from '../../src/observe/metrics/step-metrics.js';

const bar = (n: number, postfix = '') =>
  parseProgress(
    `  ${String(Math.floor(n)).padStart(3)}%|█         | ${n}/100 [00:05<01:00,  2.00it/s${postfix ? `, ${postfix}` : ''}]`,
  )!;

describe('the loss series stays bounded whatever the run length', () => {
  it('keeps the last values as they came and an overview of the whole step', () => {
    const s = new LossSeries(8, 8);
    for (let i = 1; i <= 100; i++) s.push(i);
    expect(s.recent()).toEqual([93, 94, 95, 96, 97, 98, 99, 100]);
    const o = s.overview();
    expect(o.length).toBeLessThanOrEqual(9);
    // The overview spans the whole step: it starts near the first values and ends near the last.
    expect(o[0]!).toBeLessThan(10);
    expect(o[o.length - 1]!).toBeGreaterThan(90);
    for (let i = 1; i < o.length; i++) expect(o[i]!).toBeGreaterThan(o[i - 1]!);
  });

  it('holds a week at one value per second in the same memory as a minute', () => {
    const s = new LossSeries();
    for (let i = 0; i < 7 * 86_400; i++) s.push(1 + Math.sin(i / 1000));
    expect(s.total).toBe(7 * 86_400);
    expect(s.recent().length).toBe(512);
    expect(s.overview().length).toBeLessThanOrEqual(513);
    expect(s.valuesPerPoint).toBeGreaterThanOrEqual(1024);
  });

  it('averages finite values per bucket and leaves a gap where a bucket had none', () => {
    const s = new LossSeries(4, 4);
    for (const v of [1, 3, Number.NaN, Number.NaN, 5, 5, 7, Number.NaN]) s.push(v);
    // 8 values in 4 buckets of 1, halved to 2 buckets of 2 at the 5th value, then buckets of 2.
    const o = s.overview();
    expect(o[0]).toBe(2);
    expect(o[1]).toBeNaN();
    expect(o[2]).toBe(5);
    expect(o[3]).toBe(7);
  });
});

describe('one step, several metric sources', () => {
  it('follows the best source that has spoken: csv > HF dict > tqdm postfix > log line', () => {
    const m = new StepMetrics();
    expect(m.loss(0.9, 'log')).toBe('accepted');
    m.progress(bar(1, 'loss=0.8'));
    expect(m.lossSource).toBe('tqdm');
    expect(m.series.recent()).toEqual([0.8]); // the log line's value is not mixed in
    expect(m.loss(0.95, 'log')).toBe('ignored');
    expect(m.loss(0.5, 'csv')).toBe('switched');
    m.progress(bar(2, 'loss=0.1'));
    expect(m.lossSource).toBe('csv');
    expect(m.lastLoss).toBe(0.5);
    expect(m.minLoss).toBe(0.5);
    expect(m.series.recent()).toEqual([0.5]);
    m.csvRow(2, 'loss', 0.4);
    m.csvRow(3, 'loss', 0.45);
    expect(m.lastLoss).toBe(0.45);
    expect(m.minLoss).toBe(0.4);
    expect(m.minLossAt).toBe(2);
    expect(m.optimizerStep).toBe(3);
    expect(m.ratePerS).toBe(2);
    expect(m.rateText).toBe('2.00it/s');
  });

  it('reports a NaN from a source it otherwise ignores', () => {
    const signals: MetricSignal[] = [];
    const m = new StepMetrics({ onSignal: (s) => signals.push(s) });
    m.csvRow(1, 'loss', 0.3);
    expect(signals).toEqual([]); // finite values are not signalled (no work per line for the alerts)
    m.progress(bar(3, 'loss=nan'));
    expect(m.lastLoss).toBe(0.3);
    expect(m.nonFiniteLosses).toBe(1);
    expect(signals.some((s) => s.kind === 'loss' && Number.isNaN(s.value) && s.source === 'tqdm')).toBe(true);
  });

  it('keeps the HF summary out of the series and takes lr, grad norm and epoch from the dict', () => {
    const m = new StepMetrics();
    m.hfLog({ kind: 'train', loss: 1.2, gradNorm: 0.5, learningRate: 3e-5, epoch: 0.5, trainLoss: null });
    m.hfLog({ kind: 'summary', loss: null, gradNorm: null, learningRate: null, epoch: 1, trainLoss: 0.69 });
    expect(m.series.recent()).toEqual([1.2]);
    expect(m.trainLoss).toBe(0.69);
    expect([m.learningRate, m.gradNorm, m.epoch]).toEqual([3e-5, 0.5, 0.5]);
    // DeepSpeed's report does not override the Trainer's learning rate, but gives the skipped count.
    m.dsStep({ step: 10, skipped: 2, lr: 9e-5 });
    expect(m.learningRate).toBe(3e-5);
    expect(m.skippedSteps).toBe(2);
  });

  it('counts overflow skips without recovery, and ends the streak when the scale grew or DeepSpeed counted good steps', () => {
    const streaks: number[] = [];
    const m = new StepMetrics({ onSignal: (s) => s.kind === 'overflow' && streaks.push(s.streak) });
    const o = (attempted: number) => ({ attemptedScale: attempted, nextScale: attempted / 2, fp16: true });
    m.overflow(o(65536));
    m.progress(bar(9)); // tqdm's counter jumps (redraws are thinned): no evidence of a good step
    m.overflow(o(32768));
    m.overflow(o(16384));
    expect(m.overflowStreak).toBe(3);
    expect(m.lossScale).toBe(8192);
    // The scaler grew the scale again (after its window of good steps): a new streak.
    m.overflow(o(16384));
    expect(m.overflowStreak).toBe(1);
    m.overflow(o(8192));
    expect(m.overflowStreak).toBe(2);
    expect(streaks).toEqual([1, 2, 3, 1, 2]);
    expect(m.skippedSteps).toBe(5);
    // Without a printed scale (bf16), DeepSpeed's report decides: more good steps since, a new streak.
    const b = new StepMetrics();
    const skip = { attemptedScale: null, nextScale: null, fp16: false };
    b.dsStep({ step: 10, skipped: 0, lr: null });
    b.overflow(skip);
    b.overflow(skip);
    b.dsStep({ step: 20, skipped: 10, lr: null }); // 10 steps, all skipped: no good step
    b.overflow(skip);
    expect(b.overflowStreak).toBe(3);
    b.dsStep({ step: 30, skipped: 12, lr: null }); // 8 good steps in this window
    b.overflow(skip);
    expect(b.overflowStreak).toBe(1);
    expect(b.skippedSteps).toBe(12);
  });

  it('keeps the largest DeepSpeed Max_MA of the step', () => {
    const m = new StepMetrics();
    const mem = (max: number) => ({ allocatedBytes: 1, maxAllocatedBytes: max, reservedBytes: 2, maxReservedBytes: 3 });
    m.dsMemoryLine(mem(10));
    m.dsMemoryLine(mem(30));
    m.dsMemoryLine(mem(20));
    expect(m.dsPeakAllocatedBytes).toBe(30);
    expect(m.dsMemory?.maxAllocatedBytes).toBe(20);
  });
});
