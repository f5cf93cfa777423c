/**
 * Learning ZeRO on the screen, in a real terminal: the picture of the highlighted mode (it follows the
 * highlight, fits 80x24 and uses 160 columns, re-lays out on a resize, plain without colour) and the glossary
 * (from the picture, from a list question's help with `g`, from a text question's help with Ctrl+G, back to
 * where it was opened).
 */
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, KEYS, ROOT, type PtySession } from '../helpers/pty.js';
import { at, settled, startWizard, walkToMode } from '../helpers/wizard-pty.js';

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

/** The picture's title row: `ZeRO-3 offload · 8 GPUs (1 node x 8) · per GPU and per node`. */
const title = (s: PtySession) => s.lines().find((l) => l.includes(' · 8 GPUs (1 node x 8) · per GPU and per node'));
/** Escape sequences that set a foreground colour. */
const COLOUR = /\x1b\[(3[0-7]|9[0-7])m/;

describe('the ZeRO picture', () => {
  it('follows the highlight, fits 80x24, uses 160 columns after a resize, has no colour under NO_COLOR; the glossary opens from it and returns', async () => {
    const { s } = startWizard({ cols: 80, rows: 24 });
    await walkToMode(s);
    const before = s.raw().length;
    s.write('p');
    await s.waitFor((x) => title(s) !== undefined && x.includes('each GPU'));
    const first = title(s)!;
    let lines = s.lines();
    expect(lines).toHaveLength(24);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines.filter((l) => /^GPU [0-7] +│/.test(l))).toHaveLength(8);
    expect(s.screen()).toMatch(/⇄ GPU↔GPU, per GPU per step: /);
    // It follows the highlight: ↓ draws the next mode.
    s.write(KEYS.down);
    await s.waitFor(() => title(s) !== undefined && title(s) !== first);
    const second = title(s)!;
    // A resize to 160x40 draws it again, with the full names and wider slices.
    s.resize(160, 40);
    await s.waitFor((x) => x.includes('fp32 master weights') && x.includes('Adam momentum'));
    lines = s.lines();
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(160);
    expect(Math.max(...lines.map((l) => l.length))).toBeGreaterThan(140);
    expect(title(s)).toBe(second);
    // NO_COLOR: the picture is glyphs alone.
    expect(COLOUR.test(s.raw().slice(before))).toBe(false);
    // The glossary from the picture, on the word it draws; PgDn reaches the last entry; Esc comes back.
    s.write('g');
    await s.waitFor((x) => x.includes('Glossary · lines') && x.includes('Sharding'));
    for (let i = 0; i < 10 && !s.screen().includes('ZeRO-Init (zero3_init_flag)'); i++) {
      const was = s.screen();
      s.write(KEYS.pageDown);
      await s.waitFor((x) => x !== was || x.includes('ZeRO-Init (zero3_init_flag)'));
    }
    expect(s.screen()).toContain('ZeRO-Init (zero3_init_flag)');
    s.write(KEYS.esc);
    await s.waitFor(() => title(s) === second);
    s.write(KEYS.esc);
    await s.waitFor((x) => x.includes('Which ZeRO mode') && title(s) === undefined);
  });

  it('is drawn in colour when colour is on (the states each their own)', async () => {
    const { s } = startWizard({ cols: 80, rows: 24, env: { NO_COLOR: undefined } });
    await walkToMode(s);
    const before = s.raw().length;
    s.write('p');
    await s.waitFor((x) => x.includes('each GPU'));
    const raw = s.raw().slice(before);
    expect(raw).toMatch(/\x1b\[36m█/); // parameters: cyan
    expect(raw).toMatch(/\x1b\[33m█/); // fp32 master weights: yellow
  });
});

describe('the glossary from every help', () => {
  it('g on a list question, Ctrl+G on a text question (where g is text), Esc back to the help', async () => {
    const { s } = startWizard({ cols: 80, rows: 24 });
    await walkToMode(s);
    // A list question (the ZeRO mode): ? then g opens the glossary on sharding.
    await at(s, 'Which ZeRO mode', '?');
    await s.waitFor('(? closes this help · g: glossary)');
    s.write('g');
    await s.waitFor((x) => x.includes('Glossary · lines') && x.includes('Sharding'));
    expect(s.screen()).toContain('here 1/8 of each sharded'); // this user's 8 GPUs
    s.write(KEYS.esc);
    await s.waitFor('(? closes this help · g: glossary)');
    s.write('?');
    await s.waitFor((x) => !x.includes('closes this help'));
    // Back to a text question: its help names Ctrl+G, and g types into the field.
    s.write(KEYS.esc);
    await at(s, 'Which optimizer', KEYS.esc);
    await at(s, 'Will training use gradient checkpointing', KEYS.esc);
    await at(s, 'Largest image in pixels', '?');
    await settled(s, '(? closes this help · ^G: glossary)');
    s.write('g');
    await s.waitFor(/❯ \S*g/); // typed, not the glossary
    expect(s.screen()).not.toContain('Glossary · lines');
    // Backspace and Ctrl+G in one read (a fast typist's two keys): each is its own key.
    s.write(`${KEYS.backspace}\x07`);
    await s.waitFor('Glossary · lines');
    s.write(KEYS.esc);
    await s.waitFor('(? closes this help · ^G: glossary)');
  });
});
