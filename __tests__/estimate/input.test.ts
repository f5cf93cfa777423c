/**
 * One input, one set of mode facts: the wizard's table, the fit finding and `zerowiz estimate` build the
 * estimator's input with the same function, so they agree on every figure.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { EstimateInputError, estimateModes } from '../../src/estimate/estimate.js';
import { estimateInputFromSetup, precisionOf, topology } from '../../src/estimate/input.js';
import { loadModelCatalog } from '../../src/estimate/models.js';
import {
  MODES,
  modeDevice,
  modeOffloads,
  modeRows,
  placementOf,
  rowFromKey,
  rowKey,
  rowLabel,
} from '../../src/config/modes.js';
import { withDefaults } from '../../src/config/questions.js';
import type { Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES } from '../../src/config/setup.js';
import { fitFindings } from '../../src/rules/validate.js';
import { tradeoffOf } from '../../src/wizard/tradeoff.js';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(here, '..');
const GiB = 2 ** 30;
const models = loadModelCatalog();

beforeAll(() => {
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  expect(b.status, b.stderr).toBe(0);
});

/** The seed's training pass as answers (what the qwen-image-lora-lowvram preset holds), on 8 x 80 GiB. */
const seedLike = (over: Partial<Answers> = {}) =>
  withDefaults({
    model_name: 'Qwen-Image DiT',
    model_params: 20430401088,
    largest_layer_params: 56641536,
    model_kind: 'dit',
    fine_tuning: 'lora',
    lora_rank: 32,
    gradient_checkpointing: true,
    num_processes: 8,
    gpu_memory: 80 * GiB,
    cpu_memory: 512 * GiB,
    mixed_precision: 'bf16',
    ...over,
  });

describe('the mode facts, spelled once (src/config/modes.ts)', () => {
  it('which modes offload, their rows, keys and labels', () => {
    expect(MODES.filter(modeOffloads)).toEqual(['2-offload', '3-offload']);
    expect(modeRows().map((r) => rowKey(r.mode, r.device))).toEqual([
      '1',
      '2',
      '2-offload',
      '2-offload:nvme',
      '3',
      '3-offload',
      '3-offload:nvme',
    ]);
    expect(modeRows().map((r) => rowLabel(r.mode, r.device))).toEqual([
      'ZeRO-1',
      'ZeRO-2',
      'ZeRO-2 offload',
      'ZeRO-2 offload NVMe',
      'ZeRO-3',
      'ZeRO-3 offload',
      'ZeRO-3 offload NVMe',
    ]);
    for (const r of modeRows()) expect(rowFromKey(rowKey(r.mode, r.device))).toEqual(r);
    expect([rowFromKey('3:nvme'), rowFromKey('4'), rowFromKey('3-offload:nvme:x')]).toEqual([null, null, null]);
    expect(modeDevice('3', 'nvme')).toBeNull();
  });
  it('placements carry the optimizer and the parameter offload devices separately', () => {
    expect(placementOf('3-offload', 'nvme')).toEqual({ stage: 3, optimizer: 'nvme', param: 'nvme' });
    expect(placementOf('2-offload', 'cpu')).toEqual({ stage: 2, optimizer: 'cpu', param: 'none' });
    expect(placementOf('3', 'cpu')).toEqual({ stage: 3, optimizer: 'none', param: 'none' });
  });
});

describe('estimateInputFromSetup', () => {
  it('reads the model from the catalog by the name presets use, LoRA from rank and targets, tokens from pixels', () => {
    const s = estimateInputFromSetup(seedLike(), { models });
    expect(s.model?.id).toBe('qwen-image');
    expect(s.input!.lora).toEqual({ rank: 32, shapes: expect.any(Array) });
    expect(s.input!.lora!.shapes).toHaveLength(12);
    expect(s.input!.activation).toMatchObject({ tokens: 4096 + 512, checkpointing: 'full', bytesPerValue: 2 });
    expect(s.placement).toEqual({ stage: 2, optimizer: 'none', param: 'none' });
    expect(topology({ num_processes: 16, num_machines: 2 })).toEqual({ gpusPerNode: 8, nodes: 2 });
  });
  it('defaults a missing largest layer to 0 (what its question promises), with a note, everywhere', () => {
    const a = seedLike({ largest_layer_params: null, model_name: 'my model', fine_tuning: 'full' });
    const s = estimateInputFromSetup(a, { models });
    expect(s.input!.largestLayer).toBe(0);
    expect(s.notes).toContain('largest layer not given: ZeRO-3 figures leave out the layer gathered whole on each GPU');
  });
  it('precision: auto is assumed bf16 (with a note), no is fp32', () => {
    expect([precisionOf('auto'), precisionOf('bf16'), precisionOf('fp16'), precisionOf('no')]).toEqual([
      'bf16',
      'bf16',
      'fp16',
      'fp32',
    ]);
    expect(estimateInputFromSetup(seedLike({ mixed_precision: 'auto' }), { models }).notes[0]).toMatch(
      /^precision auto: assuming bf16/,
    );
  });
  it("DeepSpeed's knobs from the answers; 'auto' as accelerate fills it from the hidden size", () => {
    const k = estimateInputFromSetup(seedLike({ reduce_bucket_size: 'auto', prefetch_bucket_size: 'auto' }), { models })
      .input!.knobs!;
    expect([k.reduceBucketElems, k.prefetchBucketElems]).toEqual([3072 * 3072, Math.floor(0.9 * 3072 * 3072)]);
  });
  it('"auto" bucket sizes without a known hidden size: DeepSpeed\'s defaults, and a note that accelerate raises', () => {
    // The real accelerate (accelerator.py _prepare_deepspeed) raises "Can't find `model.config` entry" when
    // the model has no hidden size: there is no value to estimate with. The estimate takes the keys'
    // DeepSpeed defaults (5e8 and 5e7: what the run gets once "auto" is replaced by nothing) and says so.
    const r = estimateInputFromSetup(
      seedLike({ model_name: '', fine_tuning: 'full', reduce_bucket_size: 'auto', prefetch_bucket_size: 'auto' }),
      { models },
    );
    const k = r.input!.knobs!;
    expect([k.reduceBucketElems, k.prefetchBucketElems]).toEqual([5e8, 5e7]);
    expect(r.notes.join('\n')).toMatch(/reduce_bucket_size, stage3_prefetch_bucket_size "auto".*hidden_size.*raises/);
  });
  it('refuses LoRA targets the catalog does not know, naming the known ones', () => {
    expect(() => estimateInputFromSetup(seedLike({ lora_targets: 'to_q,bogus' }), { models })).toThrow(
      EstimateInputError,
    );
    try {
      estimateInputFromSetup(seedLike({ lora_targets: 'bogus' }), { models });
    } catch (err) {
      expect((err as EstimateInputError).hint).toContain('img_mod.1');
    }
    // A typed model: the adapters as a count instead.
    const typed = estimateInputFromSetup(seedLike({ model_name: '', trainable_params: 2e8 }), { models });
    expect(typed.input!.loraParams).toBe(2e8);
  });
});

describe('the table, the finding and the command agree', () => {
  const a = seedLike({ mode: '2', gpu_memory: 40 * GiB });
  const t = tradeoffOf(a, a.zero3_init, { models });
  const setup = { name: 't', answers: a, files: { ...DEFAULT_FILES }, steps: [] };

  it('the fit finding warns exactly when the table marks the chosen row as not fitting', () => {
    const row = t.rows.find((r) => r.key === '2')!;
    expect(row.fits).toBe(false);
    const f = fitFindings(setup, models);
    expect(f.map((x) => x.rule)).toEqual(['mode-does-not-fit']);
    expect(f[0]!.message).toContain(`peaks at ${(row.estimate.peak.gpuBytes / GiB).toFixed(2)} GiB per GPU`);
    for (const r of t.rows.filter((x) => x.fits)) {
      const answers = { ...a, mode: r.mode, offload_device: r.offloadDevice ?? 'cpu' };
      expect(fitFindings({ ...setup, answers }, models), r.key).toEqual([]);
    }
  });

  it('zerowiz estimate with the same workload as flags gives the same peaks', () => {
    const r = spawnSync(
      process.execPath,
      [
        join(root, 'dist', 'zerowiz.js'),
        'estimate',
        '--model',
        'qwen-image',
        '--lora-rank',
        '32',
        '--gradient-checkpointing',
        '--gpus-per-node',
        '8',
        '--gpu-memory',
        '40GiB',
        '--cpu-memory',
        '512GiB',
        '--json',
      ],
      { cwd: root, encoding: 'utf8', env: { PATH: '', HOME: process.env.HOME } },
    );
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as {
      modes: { mode: string; offloadDevice: string | null; peak: { gpuBytes: number } }[];
    };
    for (const row of t.rows) {
      const m = out.modes.find((x) => rowKey(x.mode as Answers['mode'], x.offloadDevice as 'cpu' | null) === row.key)!;
      expect(m.peak.gpuBytes, row.key).toBe(row.estimate.peak.gpuBytes);
    }
    expect(estimateModes(estimateInputFromSetup(a, { models }).input!).recommended).toBe(t.report!.recommended);
  });
});

describe('split offload devices (accelerate asks the optimizer and the parameter devices apart)', () => {
  const full = (over: Partial<Answers>) =>
    withDefaults({
      model_name: 'Llama-3.1-8B',
      model_params: 8.03e9,
      num_processes: 8,
      gpu_memory: 80 * GiB,
      cpu_memory: 1024 * GiB,
      mode: '3-offload',
      offload_device: 'cpu',
      ...over,
    });
  it('parameters kept on the GPUs raise the GPU peak and lower the CPU need against both offloaded', () => {
    const both = estimateInputFromSetup(full({}), { models });
    const paramsOnGpu = estimateInputFromSetup(full({ offload_param_device: 'none' }), { models });
    expect(both.placement).toEqual({ stage: 3, optimizer: 'cpu', param: 'cpu' });
    expect(paramsOnGpu.placement).toEqual({ stage: 3, optimizer: 'cpu', param: 'none' });
    const peakOf = (a: Answers) => {
      const f = fitFindings({ name: 't', answers: { ...a, gpu_memory: 1 * GiB }, files: DEFAULT_FILES, steps: [] });
      return f.map((x) => x.message).join(' ');
    };
    // Both do not fit in 1 GiB; the messages name the peaks the finding computed for each placement.
    const gib = (text: string) => Number(/peaks at ([\d.]+) GiB per GPU/.exec(text)?.[1]);
    expect(gib(peakOf(full({ offload_param_device: 'none' })))).toBeGreaterThan(gib(peakOf(full({}))));
  });
});
