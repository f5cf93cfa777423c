/**
 * Learning ZeRO on the screen, as pure models: the picture's numbers are the estimator's (the same peak model
 * as the table, row for row, split devices included), each bar is red only for the memory that fails, the
 * comm column says what 1x is, and the help's "Default" is what Enter chooses.
 */
import { describe, expect, it } from 'vitest';
import { loadModelCatalog } from '../../src/estimate/models.js';
import { withDefaults, type Answers } from '../../src/config/questions.js';
import { fitMark } from '../../src/wizard/mode-table.js';
import { enterChoice } from '../../src/wizard/display.js';
import { drawPicture, pictureText } from '../../src/wizard/picture.js';
import {
  SPLIT_ROW_KEY,
  explainRow,
  modeStart,
  pictureOf,
  selectedKey,
  startKey,
  splitPlacement,
  tradeoffOf,
  type Tradeoff,
} from '../../src/wizard/tradeoff.js';

const GiB = 2 ** 30;
const models = loadModelCatalog();
const qwen = models.find((m) => m.id === 'qwen-image')!;
/** Qwen-Image from the catalog on 8 x 80 GiB and 1 TiB of RAM, with these answers on top. */
const answers = (over: Partial<Answers> = {}) =>
  withDefaults({
    model_name: qwen.name,
    model_params: qwen.params,
    largest_layer_params: qwen.largestLayer,
    model_kind: 'dit',
    gpu_memory: 80 * GiB,
    cpu_memory: 1024 * GiB,
    num_processes: 8,
    ...over,
  });
const table = (a: Answers): Tradeoff => tradeoffOf(a, undefined, { models });

describe("the picture's numbers are the estimator's", () => {
  it('for every row: the GPU pieces are the peak items params + grads + optimizer, the total adds the buffers', () => {
    for (const t of [table(answers()), table(answers({ fine_tuning: 'lora', lora_rank: 32 }))]) {
      expect(t.available).toBe(true);
      for (const r of t.rows) {
        const b = pictureOf(t, r.key)!;
        const p = drawPicture(b, { width: 80, height: 20, color: false });
        const items = r.estimate.peak.items;
        const gpu = p.figures.filter((f) => f.row === 'gpu' && f.kind !== 'total' && f.kind !== 'peak');
        expect(
          gpu.reduce((s, f) => s + f.bytes, 0),
          r.key,
        ).toBe(items.params + items.grads + items.optimizer);
        const total = p.figures.find((f) => f.row === 'gpu' && f.kind === 'total')!.bytes;
        expect(total, r.key).toBe(items.params + items.grads + items.optimizer + items.buffers);
        // The table's GPU peak, which the picture names, is the same figure as the row's.
        expect(b.gpuPeakBytes).toBe(r.estimate.peak.gpuBytes);
        // Per node on the CPU and NVMe: the layout's own per-node bytes.
        const layout = r.estimate.peak.layout.states;
        for (const home of ['cpu', 'nvme'] as const) {
          const want = layout.reduce((s, x) => s + (home === 'cpu' ? x.cpuBytesPerNode : x.nvmeBytesPerNode), 0);
          const got = p.figures.find((f) => f.row === home && f.kind === 'total')?.bytes ?? 0;
          expect(got, `${r.key} ${home}`).toBe(want);
        }
        // The traffic: the layout's bytes by kind, and its collectives are the row's comm.
        const tr = r.estimate.peak.layout.traffic;
        const sum = (kind: string) =>
          p.figures.filter((f) => f.row === 'traffic' && f.kind === kind).reduce((s, f) => s + f.bytes, 0);
        expect(sum('reduce-scatter') + sum('all-gather')).toBe(r.estimate.commBytesPerStep);
        expect(sum('pcie')).toBe(tr.pcieToCpu + tr.pcieToGpu);
        expect(sum('pcie')).toBe(r.estimate.offloadBytesPerStep);
      }
    }
  });

  it("draws DeepSpeed's fp32 gradients as their own column, after the optimizer states", () => {
    const t = table(answers());
    const lines = pictureText(drawPicture(pictureOf(t, '2')!, { width: 160, height: 40, color: false }));
    const header = lines.find((l) => l.includes('parameters'))!;
    expect(header.indexOf('fp32 gradients')).toBeGreaterThan(header.indexOf('Adam variance'));
    expect(lines.find((l) => l.startsWith('each GPU'))!.split('│')).toHaveLength(8); // label, 6 pieces, total
  });
});

describe('split offload devices: a row of their own, and its picture', () => {
  it('ZeRO-3 offload with the parameters on the GPUs gets the split row, chosen, with its own figures and placement', () => {
    const a = answers({ mode: '3-offload', offload_param_device: 'none' });
    expect(splitPlacement(a)).toEqual({ stage: 3, optimizer: 'cpu', param: 'none' });
    expect(selectedKey(a)).toBe(SPLIT_ROW_KEY);
    const t = table(a);
    const keys = t.rows.map((r) => r.key);
    expect(keys.indexOf(SPLIT_ROW_KEY)).toBe(keys.indexOf('3-offload') + 1);
    const split = t.rows.find((r) => r.key === SPLIT_ROW_KEY)!;
    const both = t.rows.find((r) => r.key === '3-offload')!;
    expect(split.estimate.placement).toEqual({ stage: 3, optimizer: 'cpu', param: 'none' });
    // The parameters stay on the GPUs: more GPU memory than offloading both, no parameter traffic over PCIe.
    expect(split.estimate.peak.items.params).toBeGreaterThan(0);
    expect(both.estimate.peak.items.params).toBe(0);
    expect(explainRow(t, SPLIT_ROW_KEY).at(-1)).toBe(
      'ZeRO-3: optimizer states in CPU memory, parameters on the GPUs (your offload_param_device answer).',
    );
    const p = drawPicture(pictureOf(t, SPLIT_ROW_KEY)!, { width: 80, height: 20, color: false });
    const text = pictureText(p);
    expect(text[0]).toMatch(/^ZeRO-3 your split · 8 GPUs/);
    const each = text.find((l) => l.startsWith('each GPU'))!.split('│');
    expect(each[1]!.trim()).not.toBe('-'); // params on the GPU
    expect(text.some((l) => l.startsWith('CPU'))).toBe(true); // the optimizer states on the CPU
    // Answers without a split have no such row.
    expect(table(answers({ mode: '3-offload' })).rows.some((r) => r.key === SPLIT_ROW_KEY)).toBe(false);
  });
});

describe('what the table says', () => {
  it('a mode failing only on CPU memory is marked so, and its GPU bar is not the failing one', () => {
    const t = table(answers({ cpu_memory: 64 * GiB }));
    const offload = t.rows.find((r) => r.key === '3-offload')!;
    expect(offload.estimate.gpuFits).toBe(true);
    expect(offload.estimate.cpuFits).toBe(false);
    expect(offload.failsOn).toEqual(['CPU']);
    expect(fitMark(offload)).toBe('✗ CPU');
    const z1 = t.rows.find((r) => r.key === '1')!;
    expect(z1.failsOn).toContain('GPU');
    expect(fitMark(z1)).toBe('✗');
    expect(fitMark({ fits: true, failsOn: [] })).toBe('✓');
  });

  it('the panel says what 1x is: plain DDP per GPU per step, the same figure the comm column divides by', () => {
    const t = table(answers());
    expect(t.ddpBytesPerStep).toBe(t.rows.find((r) => r.key === '1')!.estimate.commBytesPerStep);
    for (const key of ['1', '3']) {
      const line = explainRow(t, key).find((l) => l.startsWith('Per GPU and step:'))!;
      expect(line).toMatch(/network \([\d.]+x DDP; 1x = [\d.]+ GiB\/step\)/);
    }
  });
});

describe("the help's Default is the recommendation, and says what Enter chooses", () => {
  it('the ZeRO question starts on the recommendation until a mode is given; then on the answer', () => {
    const a = answers();
    const t = table(a);
    const rec = t.rows.find((r) => r.recommended)!;
    expect(rec.key).not.toBe(selectedKey(a)); // the catalog default (ZeRO-2) is not what Enter takes
    expect(enterChoice('mode', a, {}, { modeStart: modeStart(t, a, false) })).toBe(
      `${rec.label} (the recommendation for your model)`,
    );
    // A mode given: the Default still names the recommendation, and what Enter keeps.
    expect(enterChoice('mode', a, { mode: '2' }, { modeStart: modeStart(t, a, true) })).toBe(
      `${rec.label} (the recommendation for your model); Enter keeps ZeRO-2`,
    );
  });

  it('a highlight left on another row (the picture moved it) is where the list starts and what Enter chooses', () => {
    const a = answers();
    const t = table(a);
    const rec = t.rows.find((r) => r.recommended)!;
    const other = t.rows.find((r) => !r.recommended && r.key !== selectedKey(a))!;
    expect(startKey(t, a, false, other.key)).toBe(other.key);
    expect(enterChoice('mode', a, {}, { modeStart: modeStart(t, a, false, other.key) })).toBe(
      `${rec.label} (the recommendation for your model); Enter chooses ${other.label}`,
    );
    // On the recommended row it says so; a key that names no row is no highlight.
    expect(enterChoice('mode', a, {}, { modeStart: modeStart(t, a, false, rec.key) })).toBe(
      `${rec.label} (the recommendation for your model)`,
    );
    expect(startKey(t, a, false, 'no-such-row')).toBe(rec.key);
    expect(startKey(t, a, true, 'no-such-row')).toBe(selectedKey(a));
  });

  it("the model question starts on the catalog's first model; others on their answer, in human units", () => {
    const none = withDefaults({});
    expect(enterChoice('model_params', none, {}, { firstModel: 'Qwen-Image DiT' })).toBe(
      "Qwen-Image DiT (the catalog's first model)",
    );
    expect(enterChoice('model_params', answers(), {}, { firstModel: 'Qwen-Image DiT' })).toBe('20.43B');
    expect(enterChoice('cpu_memory', answers(), {})).toBe('1 TiB');
    expect(enterChoice('ds_config_path', answers(), {})).toBe('(empty)');
  });
});
