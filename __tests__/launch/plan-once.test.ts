/**
 * A command-line launch plans once: the setup's rules, its emitted files, its estimate and its steps' findings are
 * worked out one time between `zerowiz launch` and the first file written (they ran twice: launchFromCli planned
 * before its offers, and the launch entry planned again). Counted at each function, in-process through the CLI's
 * own entry (src/main.ts), with the stand-in accelerate.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { FAKE_ACCELERATE } from '../helpers/launch.js';

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

/** A checkout with the step's script and a preset of a 7B model (so that the estimate has something to do). */
function checkout(name: string): string {
  const d = tempDir('zw-plan-once-');
  mkdirSync(join(d, 'cfg'));
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  writeFileSync(
    join(d, 'p.yaml'),
    `name: ${name}\nanswers:\n  num_processes: 1\n  mode: 2-offload\n  mixed_precision: bf16\n  model_params: 7B\n  gpu_memory: 80GiB\nfiles:\n  accelerate_config: cfg/accelerate_config.yaml\n  ds_config: cfg/ds_config.json\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py, --task, "sft:train"]\n`,
  );
  return d;
}

describe('a command-line launch', () => {
  it('plans once: rules, emit, estimate and step findings run one time before anything runs (a dry run)', async () => {
    process.chdir(checkout(`plan-once-dry-${process.pid}`));
    const code = await main(['-q', 'launch', 'p.yaml', '--dry-run', '--no-tui', '--accelerate', FAKE_ACCELERATE], UI);
    expect(code).toBe(0);
    expect(calls).toEqual({ validate: 1, stepFindings: 1, deepSpeedConfigObject: 1, estimateInputFromSetup: 1 });
  });

  it('plans once when it runs: the files are written and the run recorded from the same plan', async () => {
    const d = checkout(`plan-once-run-${process.pid}`);
    process.chdir(d);
    const code = await main(['-q', 'launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE], UI);
    expect(code).toBe(0);
    expect(calls).toMatchObject({ validate: 1, stepFindings: 1, deepSpeedConfigObject: 1 });
  });
});
