import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FAKE_ACCELERATE, oneStepCheckout } from '../helpers/launch.js';

const calls = vi.hoisted(() => ({}) as Record<string, number>);
const count = async () => (await import('../helpers/count.js')).counting;
vi.mock('../../src/rules/validate.js', async (load) => (await count())(await load(), ['validate'], calls));
vi.mock('../../src/rules/step-findings.js', async (load) => (await count())(await load(), ['stepFindings'], calls));
vi.mock('../../src/config/emit.js', async (load) => (await count())(await load(), ['deepSpeedConfigObject'], calls));
vi.mock('../../src/estimate/input.js', async (load) =>
  (await count())(await load(), ['estimateInputFromSetup'], calls),
);

const { main } = await import('../../src/main.js');

const UI = {
  runWizard: async () => 0,
  runLogPane: async () => 0,
};

let cwd0: string;
beforeEach(() => {
  cwd0 = process.cwd();
  for (const k of Object.keys(calls)) calls[k] = 0;
});
afterEach(() => process.chdir(cwd0));

/**
 * A checkout with the step's script and a preset of a 7B model (so that the estimate has something to do); each
 * test's setup its own (`accumulation`), so no compiled value is left from another.
 */
const checkout = (accumulation: number) =>
  oneStepCheckout('zw-plan-once-', [
    'mixed_precision: bf16',
    'model_params: 7B',
    'gpu_memory: 80GiB',
    `gradient_accumulation_steps: ${accumulation}`,
  ]);

describe('a command-line launch', () => {
  it('plans once: rules, emit, estimate and step findings run one time before anything runs (a dry run)', async () => {
    process.chdir(checkout(1));
    const code = await main(['-q', 'launch', 'p.yaml', '--dry-run', '--no-tui', '--accelerate', FAKE_ACCELERATE], UI);
    expect(code).toBe(0);
    expect(calls).toEqual({ validate: 1, stepFindings: 1, deepSpeedConfigObject: 1, estimateInputFromSetup: 1 });
  });

  it('plans once when it runs: the files are written and the run recorded from the same plan', async () => {
    process.chdir(checkout(2));
    const code = await main(['-q', 'launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE], UI);
    expect(code).toBe(0);
    expect(calls).toMatchObject({ validate: 1, stepFindings: 1, deepSpeedConfigObject: 1 });
  });
});
