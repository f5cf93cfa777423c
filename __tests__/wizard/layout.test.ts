import { describe, expect, it } from 'vitest';
import {
  MIN_MAIN_COLUMNS,
  SIDE_BY_SIDE_MIN_COLUMNS,
  finishRows,
  fitsWhole,
  layoutOf,
  sideBySide,
} from '../../src/wizard/layout.js';
import { bodyRows } from '../../src/wizard/frame.js';

describe('the layout arithmetic', () => {
  it('puts the preview beside the questions from 136 columns, the questions keeping 80 and taking the rest', () => {
    expect(SIDE_BY_SIDE_MIN_COLUMNS).toBe(136);
    expect(sideBySide(135)).toBe(false);
    expect(sideBySide(136)).toBe(true);
    for (const columns of [136, 160, 200, 300]) {
      const l = layoutOf({ columns, rows: 40, hintRows: 1, preview: true, needed: 20 });
      expect(l.wide).toBe(true);
      expect(l.mainWidth).toBeGreaterThanOrEqual(MIN_MAIN_COLUMNS);
      expect(l.mainWidth + 2 + l.previewWidth).toBe(columns);
      expect(l.previewHeight).toBe(l.body);
    }
    // At 160 columns the questions use the width (98 columns: their help, findings and panel read whole), the
    // preview keeps what its JSON needs.
    expect(layoutOf({ columns: 160, rows: 40, hintRows: 1, preview: true, needed: 20 })).toMatchObject({
      previewWidth: 60,
      mainWidth: 98,
    });
  });

  it('at 80x24 with two hint rows: 20 body rows, the question box and the preview below share them', () => {
    expect(bodyRows(24, 2)).toBe(20);
    const l = layoutOf({ columns: 80, rows: 24, hintRows: 2, preview: true, needed: 16 });
    expect(l).toMatchObject({
      body: 20,
      wide: false,
      mainWidth: 80,
      mainHeight: 16,
      previewHeight: 3,
      separator: true,
    });
    expect(l.mainHeight + 1 + l.previewHeight).toBe(l.body);
    // A box that needs more than the body leaves the preview its separator, tab line and a line of text.
    const tall = layoutOf({ columns: 80, rows: 24, hintRows: 2, preview: true, needed: 40 });
    expect(tall.mainHeight).toBe(17);
    expect(tall.previewHeight).toBe(2);
    expect(fitsWhole(tall, 40)).toBe(false);
    expect(fitsWhole(l, 16)).toBe(true);
  });

  it('overlays and the start screen take the whole body and width', () => {
    for (const columns of [80, 160]) {
      const l = layoutOf({ columns, rows: 24, hintRows: 2, preview: false, needed: 5 });
      expect(l).toMatchObject({ mainWidth: columns, mainHeight: 20, previewHeight: 0, wide: false, separator: false });
    }
  });

  it('keeps a usable body in a tiny terminal, and the finish box at least 9 rows', () => {
    expect(bodyRows(6, 2)).toBe(4);
    const l = layoutOf({ columns: 60, rows: 8, hintRows: 2, preview: true, needed: 10 });
    expect(l.mainHeight).toBeGreaterThanOrEqual(3);
    expect(l.previewHeight).toBeGreaterThanOrEqual(0);
    expect(finishRows(20)).toBe(10);
    expect(finishRows(12)).toBe(9);
  });
});
