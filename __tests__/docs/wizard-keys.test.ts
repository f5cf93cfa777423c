/**
 * The wizard's key table in docs/wizard.md is generated from the key tables (src/wizard/keytable.ts keysMarkdown),
 * so the documented keys cannot drift from the ones that work. `ZEROWIZ_WRITE_DOCS=1` rewrites it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keysMarkdown } from '../../src/wizard/keytable.js';
import { ROOT } from '../helpers/paths.js';

const BEGIN = '<!-- keys: generated from src/wizard/keytable.ts (keysMarkdown); a test checks it -->';
const END = '<!-- /keys -->';

describe("docs/wizard.md's keys", () => {
  it('are the key tables', () => {
    const path = join(ROOT, 'docs', 'wizard.md');
    const text = readFileSync(path, 'utf8');
    const a = text.indexOf(BEGIN);
    const b = text.indexOf(END);
    expect(a, 'docs/wizard.md has the generated key table').toBeGreaterThan(0);
    const want = `${BEGIN}\n${keysMarkdown()}\n${END}`;
    if (process.env.ZEROWIZ_WRITE_DOCS === '1')
      writeFileSync(path, text.slice(0, a) + want + text.slice(b + END.length));
    else expect(text.slice(a, b + END.length)).toBe(want);
  });
});
