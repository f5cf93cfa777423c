import { describe, expect, it } from 'vitest';
import { GLOSSARY, glossaryLines, glossaryView } from '../src/wizard/glossary.js';

describe('the glossary', () => {
  it('has every word the ZeRO screen uses, in order, each with the number it changes', () => {
    expect(GLOSSARY.map((e) => e.term)).toEqual([
      'DDP (distributed data parallel)',
      'Model states',
      'Optimizer states',
      'Sharding',
      'Offload (CPU or NVMe)',
      'All-gather, reduce-scatter',
      '"1.5x DDP"',
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
    expect(v.lines[0]).toMatchObject({ role: 'term', text: '"1.5x DDP"' });
    expect(glossaryView(80, 20, 3, {}, 'no-such-word').top).toBe(3);
  });
});
