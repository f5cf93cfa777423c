import { describe, expect, it } from 'vitest';
import { compactBytes, explainRow, selectedKey, tradeoffOf } from '../src/wizard/tradeoff.js';
import { withDefaults } from '../src/questions.js';

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

  it('explains the highlighted row with the user numbers', () => {
    const t = tradeoffOf(big);
    const row = t.rows.find((r) => r.key === '3-offload')!;
    const [what, cost] = explainRow(t, '3-offload');
    expect(what).toContain(row.gpu);
    expect(what).toContain(row.cpu);
    expect(cost).toContain('GPU<->CPU');
    expect(cost).toContain('1.5x DDP');
  });

  it('formats bytes compactly and finds the selected row', () => {
    expect(compactBytes(80 * GiB)).toBe('80 GiB');
    expect(compactBytes(312.4 * GiB)).toBe('312 GiB');
    expect(compactBytes(1.25 * 1024 * GiB)).toBe('1.3 TiB');
    expect(selectedKey({ mode: '3-offload', offload_device: 'nvme' })).toBe('3-offload:nvme');
    expect(selectedKey({ mode: '3', offload_device: 'nvme' })).toBe('3');
  });
});
