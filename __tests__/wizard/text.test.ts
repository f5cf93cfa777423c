/** The wizard's text, pure (src/wizard/question-text.ts, review.ts, steps-text.ts): what a newcomer reads. */
import { describe, expect, it } from 'vitest';
import { question, type Question } from '../../src/config/questions.js';
import { choiceItems } from '../../src/wizard/question-text.js';
import { softWrap } from '../../src/text/text.js';
import { editField, fieldOf, fieldWindow, type FieldState } from '../../src/wizard/field.js';
import { NO_KEY, type KeyPress } from '../../src/text/keytable.js';

describe("a select's entries", () => {
  it('line up their separators (the mixed-precision list: auto, bf16, fp16, no)', () => {
    for (const id of ['mixed_precision', 'offload_device', 'dynamo_backend', 'multinode_launcher'] as const) {
      const items = choiceItems(question(id) as Question, 200).filter((i) => i.label.includes(' — '));
      if (items.length < 2) continue;
      const at = new Set(items.map((i) => i.label.indexOf(' — ')));
      expect(at.size, `${id}: ${items.map((i) => i.label).join(' | ')}`).toBe(1);
    }
  });
});

describe('a text field (src/wizard/field.ts)', () => {
  const key = (k: Partial<KeyPress> = {}): KeyPress => ({ ...NO_KEY, ...k });
  const type = (s: FieldState, text: string) => [...text].reduce((x, ch) => editField(x, 'type', ch, key())!, s);

  it('a prefilled suggestion is replaced by the first key typed (the preset name, the directory)', () => {
    expect(type(fieldOf('my-setup', true), 'abc')).toEqual({ value: 'abc', cursor: 3, selected: false });
    expect(type(fieldOf('.', true), 'out')).toMatchObject({ value: 'out' });
    // A cursor key keeps it and edits it; Backspace clears it.
    const kept = editField(fieldOf('my-setup', true), 'cursor', '', key({ rightArrow: true }))!;
    expect(type(kept, '-2')).toMatchObject({ value: 'my-setup-2' });
    expect(editField(fieldOf('my-setup', true), 'erase', '', key({ backspace: true }))).toMatchObject({ value: '' });
    // Without the suggestion, typing appends at the cursor as before.
    expect(type(fieldOf('my-setup'), 'x')).toMatchObject({ value: 'my-setupx' });
  });

  it("takes a shell's line-editing keys: ^A ^E, ^U ^K, ^W", () => {
    const s = fieldOf('--output_path ./models/train');
    const home = editField(s, 'cursor', 'a', key({ ctrl: true }))!;
    expect(home.cursor).toBe(0);
    expect(editField(home, 'cursor', 'e', key({ ctrl: true }))!.cursor).toBe(s.value.length);
    expect(editField(s, 'eraseToStart', 'u', key({ ctrl: true }))).toMatchObject({ value: '', cursor: 0 });
    const mid = { ...s, cursor: 13 };
    expect(editField(mid, 'eraseToStart', 'u', key({ ctrl: true }))).toMatchObject({
      value: ' ./models/train',
      cursor: 0,
    });
    expect(editField(mid, 'eraseToEnd', 'k', key({ ctrl: true }))).toMatchObject({
      value: '--output_path',
      cursor: 13,
    });
    expect(editField(s, 'eraseWord', 'w', key({ ctrl: true }))).toMatchObject({ value: '--output_path ' });
  });

  it('a value wider than the field scrolls with the cursor, `…` where it goes on', () => {
    const value = `Qwen/Qwen-Image:${'x'.repeat(60)}:end`;
    const end = fieldWindow(value, value.length, 20);
    expect(end.cutLeft && !end.cutRight).toBe(true);
    expect(`…${end.before}${end.at}`).toHaveLength(20);
    expect(end.before.endsWith(':end')).toBe(true);
    const start = fieldWindow(value, 0, 20, end.offset);
    expect(!start.cutLeft && start.cutRight).toBe(true);
    expect(`${start.at}${start.after}…`).toHaveLength(20);
    // A short value is shown whole.
    expect(fieldWindow('abc', 1, 20)).toMatchObject({
      before: 'a',
      at: 'b',
      after: 'c',
      cutLeft: false,
      cutRight: false,
    });
    // Wherever the cursor goes, it is inside the window.
    for (let c = 0; c <= value.length; c++) {
      const w = fieldWindow(value, c, 20, 30);
      const cells = (w.cutLeft ? 1 : 0) + w.before.length + 1 + w.after.length + (w.cutRight ? 1 : 0);
      expect(cells).toBeLessThanOrEqual(20);
      expect(w.at).toBe(value[c] ?? ' ');
    }
  });
});

describe('softWrap (the commands tab: never cut)', () => {
  it('keeps every piece within the width, the space that ends a piece included', () => {
    const line = 'data/example_image_dataset/metadata.csv --max_pixels 1048576 --dataset_repeat 1';
    // The space after 1048576 is the 61st character: at 60 columns it must not make a 61-column piece.
    for (const w of [20, 40, 60, 61, 79]) {
      const pieces = softWrap(line, w);
      expect(pieces.join('')).toBe(line);
      for (const p of pieces) expect(p.length, `${w}: '${p}'`).toBeLessThanOrEqual(w);
    }
  });
});
