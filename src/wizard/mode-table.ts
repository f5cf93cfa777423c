/**
 * The ZeRO question's table as text, pure: the column widths, the header, a row's fit mark, the rows, the
 * recommendation's sentence and the panel under the highlighted row, and the answers a row stands for. The view
 * (components/wizard/ModeQuestion.tsx) draws them; the layout (./layout.ts) counts their rows.
 */
import type { Answers } from '../config/index.js';
import { modeOffloads, rowFromKey } from '../config/index.js';
import { padEnd, padStart, wrap } from '../text/index.js';
import { SPLIT_ROW_KEY, explainRow, keyLabel, modeKeys, type Tradeoff, type TradeoffRow } from './tradeoff.js';

/** The table's column widths: the mode's label, a GiB figure, the comm multiple, the step time. */
export const LABEL_W = 19;

export const NUM_W = 8;

export const COMM_W = 5;

export const TIME_W = 7;

/** Bar width for a terminal width: 5 cells at 80 columns, 10 from 110. */
export function barWidth(width: number): number {
  return width >= 110 ? 10 : 5;
}

/** The table header, aligned with the rows. */
export function headerText(width: number): string {
  const b = barWidth(width);
  return `  ${padEnd('mode', LABEL_W)} ${padStart('GPU peak', NUM_W)} ${' '.repeat(b)}  ${padStart('CPU/node', NUM_W)} ${' '.repeat(b)}  ${padStart('comm', COMM_W)}  ${padStart('s/step', TIME_W)}  fit`;
}

/** ✓, ✗, or ✗ with what fails when it is not the GPU (the GPU bar is then not red). */
export function fitMark(r: Pick<TradeoffRow, 'fits' | 'failsOn'>): string {
  if (r.fits === null) return '?';
  if (r.fits) return '✓';
  return r.failsOn.length > 0 && !r.failsOn.includes('GPU') ? `✗ ${r.failsOn.join('+')}` : '✗';
}

/** The items of the mode list: the tradeoff rows, or the five modes without a model size. */
export function modeItems(t: Tradeoff): { key: string; label: string; value: string }[] {
  return modeKeys(t).map((key) => ({ key, label: key, value: key }));
}

/** Rows of text the mode question needs (without the prompt and progress lines). */
export function modeHeight(t: Tradeoff, width: number, withPanel = true): number {
  const items = modeItems(t);
  // With the help open, the help takes the rows of the reason and the panel.
  const reason = withPanel ? wrap(reasonText(t), width).length : 0;
  const panel = !withPanel ? 0 : Math.max(...items.map((i) => panelLines(t, i.key, width).length));
  return 1 + (t.available ? 1 : 0) + items.length + reason + panel;
}

/** Panels already wrapped, per table (a new table is a new object: its entries go with it) and row and width. */
const panels = new WeakMap<Tradeoff, Map<string, readonly string[]>>();

/**
 * The panel under the table for one row: its label and figures, its line items, what it shards and costs.
 * Memoised: a keypress on the ZeRO question asks for every row's panel (the layout's height) and the highlighted
 * one (the view), and a table never changes once made.
 */
export function panelLines(t: Tradeoff, key: string, width: number): readonly string[] {
  let byRow = panels.get(t);
  if (!byRow) {
    byRow = new Map();
    panels.set(t, byRow);
  }
  const id = `${key}\0${width}`;
  let lines = byRow.get(id);
  if (!lines) {
    const [first, ...rest] = explainRow(t, key);
    lines = [...wrap(`▸ ${keyLabel(t, key)}: ${first}`, width), ...rest.flatMap((l) => wrap(l, width))];
    byRow.set(id, lines);
  }
  return lines;
}

export function reasonText(t: Tradeoff): string {
  if (!t.available) return t.reason;
  const rec = t.rows.find((r) => r.recommended);
  return rec ? `★ ${t.reason}` : `✗ ${t.reason}`;
}

/**
 * The answers a row key stands for: the mode, the offload device of offload modes, and the parameters'
 * device back to the mode's own (undefined: its default), so a plain row ends a split; the split row keeps
 * the answers' own devices.
 */
export function draftFor(key: string, a: Pick<Answers, 'mode' | 'offload_device'>): Partial<Answers> {
  if (key === SPLIT_ROW_KEY) return { mode: a.mode, offload_device: a.offload_device };
  const row = rowFromKey(key);
  if (!row) return {};
  const end: Partial<Answers> = { offload_param_device: undefined };
  return modeOffloads(row.mode)
    ? { mode: row.mode, offload_device: row.device ?? 'cpu', ...end }
    : { mode: row.mode, ...end };
}
