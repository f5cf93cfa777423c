/**
 * A run computes its estimate once: the launch's (src/launch/prepare.ts) goes into the supervisor's plan, and the
 * supervisor writes that one into run.json instead of estimating again; the viewers read it from the record.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcess } from '../../src/launch/supervisor.js';
import { loadPreset } from '../../src/setups/presets.js';
import type { RunEstimate } from '../../src/rules/fit.js';
import { ROOT } from '../helpers/paths.js';
import { removeWorkDirs } from '../helpers/proc.js';

const HF = join(ROOT, '__tests__', 'fixtures', 'trainers', 'accelerate-hf');
const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

/** An estimate no model would give: 12345 bytes, a 42-second step. */
const SENTINEL: RunEstimate = {
  mode: '1',
  gpuBytesPerGpu: 12345,
  step: {
    seconds: 42,
    low: 40,
    high: 44,
    bound: 'compute',
    terms: { compute: 42, collectives: 0, offload: 0, hostOptimizer: 0, nvme: 0 },
    accumulation: 1,
    gpu: 'a100-80',
    link: 'NVLink x12',
  },
};

describe('the estimate travels in the plan', () => {
  it("the supervisor writes the plan's estimate into run.json, not one of its own", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'zw-est-'));
    dirs.push(cwd);
    writeFileSync(join(cwd, 'train.py'), '# stand-in\n');
    const setup = await loadPreset(join(ROOT, '__tests__', 'fixtures', 'launch', 'hf-eight.yaml'));
    const sup = startInProcess(
      {
        version: 1,
        cwd,
        source: { kind: 'preset', ref: 'travels' },
        setup,
        accelerate: { path: HF, display: 'accelerate' },
        commands: [
          { step: 'train', argv: ['launch', 'train.py'], usesConfig: true, text: 'accelerate launch train.py' },
        ],
        skipChecks: [],
        estimate: SENTINEL,
      },
      { ...process.env, FAKE_TRAIN_STEPS: '3', ZEROWIZ_SKIP_CHECKS: 'all' },
    );
    await sup.done;
    const j = JSON.parse(readFileSync(join(sup.dir, 'run.json'), 'utf8')) as { estimate: RunEstimate };
    expect(j.estimate).toEqual(SENTINEL);
  });
});
