import { describe, expect, it } from 'vitest';
import { predictedStepTime } from '../../src/records/predicted.js';
import type { RunJson } from '../../src/records/record.js';

/** A record's JSON with the fields predictedStepTime reads (the rest is not looked at). */
function json(step: unknown, argv: string[]): RunJson {
  return {
    estimate: { mode: '2', gpuBytesPerGpu: 2 ** 30, step },
    steps: [
      { name: 'data', usesConfig: false, argv: ['launch', 'prepare.py'] },
      { name: 'train', usesConfig: true, argv },
    ],
  } as unknown as RunJson;
}

const STEP = {
  seconds: 10,
  low: 8,
  high: 12,
  bound: 'compute',
  terms: { compute: 9, collectives: 1, offload: 0, hostOptimizer: 0, nvme: 0 },
  accumulation: 4,
  gpu: 'h100-sxm',
  link: 'NVLink',
};
const DIFFSYNTH = ['launch', 'examples/flux/model_training/train.py', '--gradient_accumulation_steps', '4'];

describe("the launch's predicted step time, read back from run.json", () => {
  it('is the estimate.step band the launch recorded, per optimizer step for a trainer whose bar counts steps', () => {
    expect(predictedStepTime(json(STEP, ['launch', 'train.py']))).toEqual({ seconds: 10, low: 8, high: 12 });
  });

  it('is per micro-batch for DiffSynth-Studio, whose bar counts micro-batches (the step over the accumulation)', () => {
    expect(predictedStepTime(json(STEP, DIFFSYNTH))).toEqual({ seconds: 2.5, low: 2, high: 3 });
  });

  it('is none for a record made before step times, and for a band that is not one', () => {
    expect(predictedStepTime(json(undefined, DIFFSYNTH))).toBeNull();
    expect(predictedStepTime(json(null, DIFFSYNTH))).toBeNull();
    expect(predictedStepTime(json({ ...STEP, low: 13 }, DIFFSYNTH))).toBeNull();
    expect(predictedStepTime(json({ ...STEP, low: 0 }, DIFFSYNTH))).toBeNull();
  });
});
