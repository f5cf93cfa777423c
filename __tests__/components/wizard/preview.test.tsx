import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../../../components/wizard/App.js';
import { withDefaults } from '../../../src/config/questions.js';
import type { Setup } from '../../../src/config/setup.js';
import { previewOf } from '../../../src/wizard/preview.js';
import { configTexts } from '../../../src/config/files.js';
import { frame, listening, standInDeps } from '../../helpers/ink.js';

// previewOf as it is, counted: the wizard loads the module lazily, so the spy is the one it gets.
const counted = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../../src/wizard/preview.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/wizard/preview.js')>();
  return {
    ...real,
    previewOf: (...args: Parameters<typeof real.previewOf>) => {
      counted.calls++;
      return real.previewOf(...args);
    },
  };
});

describe('the preview is computed once per change of what it shows', () => {
  it('a key that changes no answer (Tab to the next preview tab) computes no preview', async () => {
    const r = render(<App deps={standInDeps()} onExit={vi.fn()} />);
    await frame(r, (f) => f.includes('8 GPUs (stand-in)') && f.includes('New setup'));
    await listening(r);
    r.stdin.write('\r');
    // The first question with its preview (the YAML tab).
    await frame(r, (f) => f.includes('How many machines') && f.includes('distributed_type'));
    const before = counted.calls;
    expect(before).toBeGreaterThan(0);
    r.stdin.write('\t');
    await frame(r, (f) => f.includes('How many machines') && f.includes('"zero_optimization"'));
    r.stdin.write('\t');
    await frame(r, (f) => f.includes('How many machines') && f.includes('# run your training script'));
    expect(counted.calls).toBe(before);
    r.unmount();
  });
});

describe("the preview's texts", () => {
  it('are the texts the files are written with, and the commands name the pinned config without DeepSpeed', () => {
    const setup: Setup = {
      name: 't',
      answers: withDefaults({ mode: '3-offload', num_processes: 8, mixed_precision: 'bf16' }),
      files: { accelerateConfig: 'cfg/accelerate_config.yaml', dsConfig: 'cfg/ds_config.json' },
      steps: [
        { name: 'prep', usesConfig: false, args: ['--config_file', 'cfg/accelerate_no_deepspeed.yaml', 'prep.py'] },
        { name: 'train', usesConfig: true, args: ['train.py'] },
      ],
    };
    const p = previewOf(setup, {
      cwd: '/w',
      gpuCount: 8,
      defaultConfig: {
        path: '/nowhere/default_config.yaml',
        exists: false,
        problem: null,
        distributedType: null,
        numProcesses: null,
        numMachines: null,
        mixedPrecision: null,
        deepspeed: null,
      },
    });
    const { yaml, json } = configTexts(setup);
    expect(p.yaml).toBe(yaml);
    expect(p.json).toBe(json.replace(/\n$/, ''));
    expect(p.commands).toContain(
      '# files: cfg/accelerate_config.yaml, cfg/ds_config.json, /w/cfg/accelerate_no_deepspeed.yaml',
    );
  });
});
