import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/config/questions.js';
import { GLOSSARY, glossaryLines, glossaryTermFor, glossaryView } from '../../src/wizard/glossary.js';
import { glossaryContext, tradeoffOf } from '../../src/wizard/tradeoff.js';

describe('the glossary', () => {
  it('has every word the ZeRO screen uses, in order, each with the number it changes', () => {
    expect(GLOSSARY.map((e) => e.term)).toEqual([
      'DDP (distributed data parallel)',
      'Model states',
      'Optimizer states',
      'Sharding',
      'Offload (CPU or NVMe)',
      'All-gather, reduce-scatter',
      "ZeRO-3's traffic (1.5x DDP and more)",
      'Headroom',
      'Micro-batch',
      'Gradient accumulation',
      'Gradient checkpointing',
      'bf16 / fp16',
      'ZeRO-Init (zero3_init_flag)',
    ]);
    const lines = glossaryLines(80);
    for (const e of GLOSSARY) {
      const mine = lines.filter((l) => l.id === e.id);
      expect(mine[0]).toMatchObject({ role: 'term', text: e.term });
      expect(mine.some((l) => l.role === 'changes' && l.text.startsWith('  ▸ in the table: '))).toBe(true);
    }
  });

  it.each([80, 60, 160])('wraps to %d columns', (w) => {
    for (const l of glossaryLines(w)) expect(l.text.length).toBeLessThanOrEqual(w);
  });

  it("puts this user's numbers in when the estimator gives them", () => {
    const text = glossaryLines(80, { ddpPerStep: '66.6 GiB', params: '20.43B', modelStates: '304 GiB', gpus: '8' })
      .map((l) => l.text.trim())
      .join(' ');
    expect(text).toContain('1x = 66.6 GiB per GPU per step here');
    expect(text).toContain('(for 20.43B params: 304 GiB)');
    expect(text).toContain('here 1/8 of each sharded piece');
    expect(
      glossaryLines(80)
        .map((l) => l.text)
        .join(' '),
    ).not.toContain('here 1/');
  });

  it('scrolls in a window of the body (80x24 leaves 20 rows), clamped at both ends', () => {
    const all = glossaryLines(80).length;
    expect(all).toBeGreaterThan(20);
    const first = glossaryView(80, 20, -5);
    expect(first).toMatchObject({ top: 0, position: `lines 1-20 of ${all}` });
    expect(first.lines).toHaveLength(20);
    const last = glossaryView(80, 20, 10_000);
    expect(last.top).toBe(all - 20);
    expect(last.maxTop).toBe(all - 20);
    expect(last.lines.at(-1)?.id).toBe('zero-init');
  });

  it('opens at the word a help screen asks about', () => {
    const v = glossaryView(80, 20, 0, {}, '1.5x');
    expect(v.lines[0]).toMatchObject({ role: 'term', text: "ZeRO-3's traffic (1.5x DDP and more)" });
    expect(glossaryView(80, 20, 3, {}, 'no-such-word').top).toBe(3);
  });

  it("takes this user's numbers from the estimator: the model states of full bf16 fine-tuning (2 + 2 + 16 bytes a parameter), the headroom rule", () => {
    const a = withDefaults({
      model_params: 20.4e9,
      largest_layer_params: 56641536,
      gpu_memory: 80 * 2 ** 30,
      cpu_memory: 2 ** 40,
      num_processes: 8,
      mixed_precision: 'bf16',
    });
    const ctx = glossaryContext(tradeoffOf(a), a);
    expect(ctx).toMatchObject({
      gpus: '8',
      modelStates: '380 GiB',
      headroom: '10% of each GPU; 10% of the CPU memory',
    });
    expect(ctx.params).toBe('20.4B');
    expect(ctx.ddpPerStep).toBeDefined();
    // Without a model size: the GPUs and the headroom only.
    const none = withDefaults({ num_processes: 8, headroom: 15 });
    expect(glossaryContext(tradeoffOf(none), none)).toEqual({
      gpus: '8',
      headroom: '15% of each GPU; 10% of the CPU memory',
    });
  });

  it('opens from a help screen on the word that question uses', () => {
    expect(glossaryTermFor('mode')).toBe('sharding');
    expect(glossaryTermFor('nvme_path')).toBe('offload');
    expect(glossaryTermFor('model_params')).toBeUndefined();
    expect(glossaryTermFor(null)).toBeUndefined();
    const ids = new Set(GLOSSARY.map((e) => e.id));
    for (const id of [
      'offload_device',
      'micro_batch',
      'gradient_accumulation_steps',
      'gradient_checkpointing',
    ] as const)
      expect(ids.has(glossaryTermFor(id)!)).toBe(true);
  });
});
