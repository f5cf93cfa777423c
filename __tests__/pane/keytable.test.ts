/**
 * The log pane's keys are one table (src/pane/keytable.ts), as the wizard's are: every key the table
 * documents reaches its command on its surface, the hints come from it, and the pane table of docs/log-pane.md
 * is generated from it (`ZEROWIZ_WRITE_DOCS=1` rewrites it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PANE_KEYS,
  hintItems,
  paneCommand,
  paneKeysMarkdown,
  paneStack,
  type PaneSurface,
} from '../../src/pane/keytable.js';
import { pressesFor, type KeyPress } from '../../src/text/keytable.js';
import { ROOT } from '../helpers/paths.js';

/** The presses a documented key name stands for: the machinery's own reading (the wizard's too), and a sample of "any other key". */
function pressesOf(name: string): [string, KeyPress][] {
  if (name === 'any other key')
    return [
      ['x', {}],
      ['', { downArrow: true }],
    ];
  return pressesFor(name);
}

/** The stack a surface is focused on. */
const STACKS: Record<PaneSurface, PaneSurface[]> = {
  log: paneStack({ searchMode: 'off', confirmStop: false, alertsOpen: false }),
  search: paneStack({ searchMode: 'active', confirmStop: false, alertsOpen: false }),
  searchInput: paneStack({ searchMode: 'input', confirmStop: false, alertsOpen: false }),
  confirmStop: paneStack({ searchMode: 'off', confirmStop: true, alertsOpen: false }),
  alerts: paneStack({ searchMode: 'off', confirmStop: false, alertsOpen: true }),
};

describe("the pane's key table", () => {
  it('every documented key reaches its command where the table says it works', () => {
    for (const [surface, table] of Object.entries(PANE_KEYS) as [PaneSurface, (typeof PANE_KEYS)['log']][]) {
      for (const b of table) {
        if (b.keys === '') continue;
        for (const [input, key] of pressesOf(b.keys))
          expect(paneCommand(STACKS[surface], input, key)?.command, `${surface} ${b.keys}`).toBe(b.command);
      }
    }
  });

  it('a committed search leaves the log its keys; typing a search takes every key; the stop question any', () => {
    expect(paneCommand(STACKS.search, 'n', {})?.command).toBe('searchNext');
    expect(paneCommand(STACKS.searchInput, 'q', {})?.command).toBe('searchType');
    expect(paneCommand(STACKS.searchInput, '', { upArrow: true })?.command).toBe('swallow');
    expect(paneCommand(STACKS.confirmStop, 'n', {})?.command).toBe('stopNo');
    expect(paneCommand(STACKS.alerts, 'w', {})?.command).toBe('swallow');
  });

  it('the hints come from the same table', () => {
    const texts = hintItems({ ended: false, live: true, alerts: true, canDetach: true }).map(([t]) => t);
    expect(texts).toEqual([
      '↑↓ PgUp/PgDn g/G scroll',
      'f follow',
      '/ search n/N',
      'w wrap',
      's sparkline',
      'a alerts',
      'Tab step',
      'q stop',
      'd leave running',
    ]);
  });

  it("docs/log-pane.md's pane table is the table", () => {
    const BEGIN = '<!-- pane keys: generated from src/pane/keytable.ts (paneKeysMarkdown); a test checks it -->';
    const END = '<!-- /pane keys -->';
    const path = join(ROOT, 'docs', 'log-pane.md');
    const text = readFileSync(path, 'utf8');
    const a = text.indexOf(BEGIN);
    const b = text.indexOf(END);
    expect(a, 'docs/log-pane.md has the generated pane key table').toBeGreaterThan(0);
    const want = `${BEGIN}\n${paneKeysMarkdown()}\n${END}`;
    if (process.env.ZEROWIZ_WRITE_DOCS === '1')
      writeFileSync(path, text.slice(0, a) + want + text.slice(b + END.length));
    else expect(text.slice(a, b + END.length)).toBe(want);
  });
});
