/**
 * Issue 23 (and issue 22's items) in the wizard's ZeRO screen: every number in a sentence comes from the
 * table's figure, DeepSpeed's estimator says why it differs where it is shown, the measured peak of the same
 * setup sits beside the estimate (and a contradicted recommendation says so), the glossary counts a LoRA
 * job's frozen parameters as frozen, and the picture names what NVMe moves.
 */
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/config/questions.js';
import type { Answers } from '../../src/config/questions.js';
import type { MeasuredRun } from '../../src/estimate/measured.js';
import { loadModelCatalog } from '../../src/estimate/models.js';
import { glossaryLines } from '../../src/wizard/glossary.js';
import { drawPicture } from '../../src/wizard/picture.js';
import { explainRow, glossaryContext, pictureOf, tradeoffOf } from '../../src/wizard/tradeoff.js';

const GiB = 2 ** 30;
const models = loadModelCatalog();
/** The seed's workload (Qwen-Image LoRA r32, checkpointing) on 8 x 24 GiB. */
const seedLora = (over: Partial<Answers> = {}): Answers =>
  withDefaults({
    model_name: 'Qwen-Image DiT',
    model_params: 20430401088,
    largest_layer_params: 56641536,
    model_kind: 'dit',
    fine_tuning: 'lora',
    lora_rank: 32,
    gradient_checkpointing: true,
    num_processes: 8,
    gpu_memory: 24 * GiB,
    cpu_memory: 1024 * GiB,
    ...over,
  });

describe('the recommendation and the panel, word for word', () => {
  it("the star sentence's multiple of DDP is the table's comm figure (LoRA: far more than 1.5x)", () => {
    const t = tradeoffOf(seedLora(), undefined, { models });
    const rec = t.rows.find((r) => r.recommended)!;
    expect(rec.mode).toBe('3');
    expect(rec.comm).not.toBe('1.5x');
    expect(t.reason).toContain(`moves ${rec.comm} the communication of DDP`);
    expect(t.reason).not.toMatch(/\b1\.5x\b/);
  });
  it("DeepSpeed's estimator figure comes with why it differs", () => {
    const t = tradeoffOf(seedLora(), undefined, { models });
    expect(explainRow(t, '3')[0]).toMatch(
      /DeepSpeed's estimator: [\d.]+ GiB \(every parameter trained, model states only\)\./,
    );
  });
  it('the line items show the optimizer step beyond the activations when it is what sets the peak', () => {
    const a = withDefaults({
      model_params: 2e9,
      largest_layer_params: 30e6,
      num_processes: 1,
      gpu_memory: 80 * GiB,
      micro_batch: 1,
      seq_len: 128,
    });
    const t = tradeoffOf(a);
    expect(explainRow(t, '1')[1]).toMatch(/acts [\d.]+, step [\d.]+, buf/);
  });
});

describe('measured beats modelled in the ZeRO table', () => {
  const run = (answers: Answers, peakGiB: number, oom = false): MeasuredRun => ({
    id: '20261201-101500-seed',
    startedAt: '2026-12-01T10:15:00.000Z',
    answers,
    steps: [{ peakBytes: Math.round(peakGiB * GiB), gpu: 0, oom }],
  });
  it("the row of the run's mode shows its last measured peak in the panel; other rows and other setups show none", () => {
    const a = seedLora({ mode: '3' });
    const other = seedLora({ mode: '3', lora_rank: 64 });
    const t = tradeoffOf(a, undefined, { models, measured: [run(a, 12.3), run(other, 20)] });
    const z3 = t.rows.find((r) => r.key === '3')!;
    expect(z3.measured).toMatchObject({ day: '2026-12-01', oom: false });
    expect(explainRow(t, '3').at(-1)).toMatch(
      /^Here: measured 12\.3 GiB on 2026-12-01, [+-]\d+% (over|under) the estimate\.$/,
    );
    expect(t.rows.find((r) => r.key === '2')!.measured).toBeNull();
  });
  it('a recommendation the measurement contradicts says so in its sentence', () => {
    const a = seedLora({ mode: '3' });
    const t = tradeoffOf(a, undefined, { models, measured: [run(a, 23.5, true)] });
    expect(t.rows.find((r) => r.recommended)!.key).toBe('3');
    expect(t.reason).toMatch(
      /, but ZeRO-3 ran out of GPU memory here on 2026-12-01: the measurement says it does not fit\.$/,
    );
  });
});

describe("the glossary's figures (issue 22)", () => {
  it('counts a LoRA job as LoRA: 2 bytes for every parameter, the rest only for the trained ones', () => {
    const a = seedLora();
    const ctx = glossaryContext(tradeoffOf(a, undefined, { models }), a);
    expect(ctx.trained).toBe('235.93M');
    expect(ctx.bytesPerTrained).toBe('18 bytes');
    const text = glossaryLines(120, ctx)
      .map((l) => l.text.trim())
      .join(' ');
    expect(text).toContain(`(for 20.67B params of which 235.93M are trained: 2 bytes for every one, 18 bytes more`);
    // The modes' traffic entry gives this job's ZeRO-3 multiple, the table's.
    expect(text).toContain(`${ctx.zero3Multiple} for ZeRO-3 here`);
    expect(ctx.zero3Multiple).not.toBe('1.5x');
  });
});

describe('the picture names what NVMe moves (issue 22)', () => {
  it('optimizer states NVMe→CPU and CPU→NVMe, parameters NVMe→CPU, apart', () => {
    const a = seedLora({ mode: '3-offload', offload_device: 'nvme' });
    const t = tradeoffOf(a, undefined, { models });
    const b = pictureOf(t, '3-offload:nvme')!;
    const nvme = b.traffic.filter((f) => f.kind === 'nvme');
    expect(nvme.map((f) => `${f.what}/${f.direction}`)).toEqual(['master/in', 'master/out', 'params/in', 'params/out']);
    const text = drawPicture(b, { width: 160, height: 40, color: false })
      .lines.map((l) => l.map((s) => s.text).join(''))
      .join('\n');
    expect(text).toMatch(/optimizer states NVMe→CPU \(step\)/);
    expect(text).toMatch(/optimizer states CPU→NVMe \(step\)/);
    expect(text).toMatch(/params NVMe→CPU \(forward and backward\)/);
    expect(text).not.toContain('master CPU→NVMe');
  });
});
