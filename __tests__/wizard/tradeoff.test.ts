import { describe, expect, it } from 'vitest';
import { formatSeconds } from '../../src/text/format.js';
import { explainRow, selectedKey, tradeoffOf } from '../../src/wizard/tradeoff.js';
import { formatBytesCompact } from '../../src/text/format.js';
import { loadModelCatalog } from '../../src/estimate/models.js';
import { withDefaults } from '../../src/config/questions.js';

const GiB = 2 ** 30;
const big = withDefaults({
  model_params: 20.4e9,
  largest_layer_params: 56641536,
  gpu_memory: 80 * GiB,
  cpu_memory: 1024 * GiB,
  num_processes: 8,
});

describe('the ZeRO tradeoff view model', () => {
  it('gives one row per mode and NVMe variant with short figures', () => {
    const t = tradeoffOf(big);
    expect(t.available).toBe(true);
    expect(t.rows.map((r) => r.key)).toEqual([
      '1',
      '2',
      '2-offload',
      '2-offload:nvme',
      '3',
      '3-offload',
      '3-offload:nvme',
    ]);
    for (const r of t.rows) {
      expect(r.gpu.length).toBeLessThanOrEqual(8);
      expect(r.cpu.length).toBeLessThanOrEqual(8);
      expect(r.gpuBar).toBeGreaterThanOrEqual(0);
      expect(r.gpuBar).toBeLessThanOrEqual(1);
    }
    expect(t.rows.find((r) => r.key === '3')!.comm).toBe('1.5x');
    expect(t.rows.find((r) => r.key === '2')!.comm).toBe('1x');
    expect(t.context).toContain('20.4B params');
    expect(t.context).toContain('8 GPUs');
  });

  it('marks exactly the recommended row and gives its reason', () => {
    const t = tradeoffOf(big);
    const rec = t.rows.filter((r) => r.recommended);
    expect(rec).toHaveLength(1);
    expect(rec[0]!.key).toBe(t.recommendedKey);
    expect(t.reason.length).toBeGreaterThan(10);
  });

  it('needs no model size to explain a mode in the seed words', () => {
    const t = tradeoffOf(withDefaults({}));
    expect(t.available).toBe(false);
    expect(explainRow(t, '3')[0]).toContain('Shards the optimizer states, the gradients and the parameters');
  });

  it("explains the highlighted row: its peak beside DeepSpeed's figure, its line items, its traffic and time", () => {
    const t = tradeoffOf(big);
    const row = t.rows.find((r) => r.key === '3-offload')!;
    const [what, items, cost] = explainRow(t, '3-offload');
    expect(what).toContain(`peak ${row.gpu}/GPU, ${row.cpu} CPU/node`);
    expect(what).toContain(
      `DeepSpeed's estimator: ${formatBytesCompact(row.estimate.gpuBytes)} (every parameter trained, model states only).`,
    );
    expect(items).toMatch(
      /^GiB\/GPU: ctx [0-9.]+, params 0, grads 0, optim 0, acts [0-9.]+, buf [0-9.]+, margin [0-9.]+$/,
    );
    expect(cost).toContain('GPU<->CPU');
    expect(cost).toContain('1.5x DDP');
    expect(cost).toMatch(/; [0-9.]+-[0-9.]+ s\/step, bound by the CPU optimizer on \d+ threads? per node\.$/);
    // The CPU column's line items, like the GPU's: what loading holds, what training holds, the larger counts.
    const c = row.estimate.peak.cpu;
    expect(explainRow(t, '3-offload')[3]).toBe(
      `GiB/node (CPU, the larger of loading and training): load weights ${(c.loadWeights / 2 ** 30).toFixed(1)}; states ${(c.states / 2 ** 30).toFixed(1)}`,
    );
  });

  it('shows the peak (not model states) in the table, and the step time', () => {
    const t = tradeoffOf(big);
    for (const r of t.rows) expect(r.gpu).toBe(formatBytesCompact(r.estimate.peak.gpuBytes));
    // Seconds per optimizer step, at most seven characters: the table's column.
    for (const r of t.rows) {
      expect(r.time).toMatch(/^([0-9.]+s|<0\.01s|\d+m\d\ds)$/);
      expect(r.time.length).toBeLessThanOrEqual(7);
    }
    const z3 = t.rows.find((r) => r.key === '3')!;
    expect(z3.time).toBe(`${formatSeconds(z3.estimate.time.stepSeconds).replace(' s', 's')}`);
  });

  it('reads the workload: the catalog shape, LoRA from rank and targets, checkpointing', () => {
    const models = loadModelCatalog();
    const seedLike = withDefaults({
      ...big,
      model_name: 'Qwen-Image DiT',
      model_kind: 'dit',
      fine_tuning: 'lora',
      lora_rank: 32,
      gradient_checkpointing: true,
    });
    const t = tradeoffOf(seedLike, undefined, { models });
    expect(t.report!.input.trainable).toBe(32 * 122880 * 60);
    expect(t.report!.input.activation).toMatchObject({ tokens: 4096 + 512, checkpointing: 'full', block: 'mmdit' });
    expect(t.context).toContain('LoRA r32 · 4608 tok x1 ckpt');
    // Without the catalog the shape is unknown: no activations, and a note says so.
    const bare = tradeoffOf(seedLike, undefined, { models: [] });
    expect(bare.available).toBe(false);
    expect(bare.reason).toMatch(/^Cannot estimate: LoRA needs the module shapes of the model/);
  });

  it('formats bytes compactly and finds the selected row', () => {
    expect(formatBytesCompact(80 * GiB)).toBe('80 GiB');
    expect(formatBytesCompact(312.4 * GiB)).toBe('312 GiB');
    expect(formatBytesCompact(1.25 * 1024 * GiB)).toBe('1.3 TiB');
    expect(selectedKey({ mode: '3-offload', offload_device: 'nvme' })).toBe('3-offload:nvme');
    expect(selectedKey({ mode: '3', offload_device: 'nvme' })).toBe('3');
  });
});
