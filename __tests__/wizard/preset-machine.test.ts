/**
 * A preset saved by the wizard keeps the machine facts the wizard detected and the step time uses (the GPU
 * links, the GPU, the host's cores), so the wizard and `zerowiz estimate --preset` give one step time.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type DetectedEnv, withDefaults } from '../../src/config/questions.js';
import { presetFileFor, renderPresetFile } from '../../src/setups/presets.js';
import { loadModelCatalog } from '../../src/estimate/models.js';
import { NEW_BASE, presetGiven } from '../../src/wizard/flow.js';
import { tradeoffOf } from '../../src/wizard/tradeoff.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GiB = 2 ** 30;
const env: DetectedEnv = {
  gpuCount: 8,
  gpuMemoryBytes: 80 * GiB,
  cpuMemoryBytes: 1024 * GiB,
  interconnect: { kind: 'nvlink', nvlinks: 18 },
  gpuModel: 'h100-sxm',
  cpuCores: 96,
};
const dir = mkdtempSync(join(tmpdir(), 'zw-preset-machine-'));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

describe('a preset keeps the detected machine facts', () => {
  const models = loadModelCatalog();
  const wan = models.find((m) => m.id === 'wan2.1-14b')!;
  // What the user answered (Enter on a detected default answers it too); the links, the GPU and the cores are
  // advanced answers the wizard fills from the machine and never asks.
  const given = {
    model_name: wan.id,
    model_params: wan.params,
    largest_layer_params: wan.largestLayer,
    num_processes: 8,
    gpu_memory: 80 * GiB,
    cpu_memory: 1024 * GiB,
  };
  const answers = withDefaults(given, env);

  it('saves the links, the GPU and the cores the wizard detected, not only what the user typed', () => {
    const file = presetFileFor({ ...NEW_BASE, name: 'wan', answers }, '', presetGiven({ given, env }, answers));
    expect(file.answers).toMatchObject({ gpu_links: 'nvlink:18', gpu_model: 'h100-sxm', cpu_cores: 96 });
  });

  it('gives the wizard and `estimate --preset` one step time per mode', () => {
    const wizard = tradeoffOf(answers, undefined, { models, interconnect: env.interconnect! }).report!;
    const file = presetFileFor({ ...NEW_BASE, name: 'wan', answers }, '', presetGiven({ given, env }, answers));
    const path = join(dir, 'wan.yaml');
    writeFileSync(path, renderPresetFile(file));
    const r = spawnSync(process.execPath, [join(root, 'dist', 'zerowiz.js'), 'estimate', '--preset', path, '--json'], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: join(root, '__tests__', 'fixtures', 'bin-empty'), HOME: dir },
      timeout: 30_000,
    });
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout) as {
      modes: { mode: string; offloadDevice: string | null; time: { stepSeconds: number } }[];
    };
    for (const m of wizard.modes) {
      const cli = doc.modes.find((x) => x.mode === m.mode && x.offloadDevice === m.offloadDevice);
      expect(cli?.time.stepSeconds, `${m.mode} ${m.offloadDevice ?? ''}`).toBeCloseTo(m.time!.stepSeconds, 2);
    }
  });
});
