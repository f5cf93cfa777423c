/**
 * The wizard's layout arithmetic, pure: a header row, the body, the hint rows; in the body the screen's own
 * box and the live preview, below it or (from SIDE_BY_SIDE_MIN_COLUMNS) beside it, with the questions
 * keeping the 80 columns the ZeRO table needs. Overlays (help, the picture, the glossary, the overwrite
 * diff) take the whole body. Every height is counted so nothing is cut at 80x24.
 */
import { softWrap } from '../text.js';

/** The rows the explain view's own title takes. */
export const EXPLAIN_TITLE_ROWS = 1;

/** The lines shown, where they start, how far they can scroll, and the position text. */
export interface ExplainWindow {
  lines: string[];
  top: number;
  maxTop: number;
  position: string;
}

/** The window of `lines` (wrapped to `width`, never cut) that starts at `top`, `height` rows tall. */
export function explainWindow(lines: readonly string[], width: number, height: number, top: number): ExplainWindow {
  const all = lines.flatMap((l) => softWrap(l, Math.max(10, width)));
  const rows = Math.max(1, height);
  const maxTop = Math.max(0, all.length - rows);
  const start = Math.min(maxTop, Math.max(0, top));
  const shown = all.slice(start, start + rows);
  return { lines: shown, top: start, maxTop, position: `lines ${start + 1}-${start + shown.length} of ${all.length}` };
}

/** The rows the glossary's own title takes. */
export const GLOSSARY_TITLE_ROWS = 1;

/** Rows the diff's title and key line take: the diff gets the rest. */
export const DIFF_CHROME_ROWS = 2;

/** The header's detection part until detection answers. */
export const DETECTING = 'detecting GPUs…';

/** Rows kept free below the frame, so Ink never has to clear the whole screen. */
export const SPARE_ROWS = 1;
/** The header row. */
export const HEADER_ROWS = 1;
/** The body never gets fewer rows than this, however small the terminal. */
export const MIN_BODY_ROWS = 4;
/** The questions' own width, at least: the ZeRO table is 78 columns wide. */
export const MIN_MAIN_COLUMNS = 80;
/** A side preview is at most this wide... */
export const SIDE_PREVIEW_MAX_COLUMNS = 72;
/** ...and this share of the terminal. */
export const SIDE_PREVIEW_FRACTION = 0.45;
/** Columns between the questions and a side preview. */
export const PREVIEW_GAP_COLUMNS = 2;
/** A preview below keeps at least this many rows, its separator included (separator, tab line, one of text). */
export const MIN_PREVIEW_BELOW_ROWS = 3;
/** The screen's own box gets at least this many rows when the preview is below. */
export const MIN_MAIN_ROWS = 3;
/** The finish screen's box: at least this many rows, else half the body. */
export const FINISH_MIN_ROWS = 9;

/** The side preview's width for a terminal `columns` wide. */
export function sidePreviewColumns(columns: number): number {
  return Math.min(SIDE_PREVIEW_MAX_COLUMNS, Math.floor(columns * SIDE_PREVIEW_FRACTION));
}

/** True when the preview fits beside the questions with the questions keeping MIN_MAIN_COLUMNS. */
export function sideBySide(columns: number): boolean {
  return columns - sidePreviewColumns(columns) - PREVIEW_GAP_COLUMNS >= MIN_MAIN_COLUMNS;
}

/** The narrowest terminal with the preview beside the questions (148 with the constants above). */
export const SIDE_BY_SIDE_MIN_COLUMNS: number = (() => {
  let c = MIN_MAIN_COLUMNS;
  while (!sideBySide(c)) c++;
  return c;
})();

/** Rows of the body between the header and the hint rows. */
export function bodyRows(rows: number, hintRows: number): number {
  return Math.max(MIN_BODY_ROWS, rows - HEADER_ROWS - hintRows - SPARE_ROWS);
}

/** What the layout needs to know. */
export interface LayoutInput {
  columns: number;
  rows: number;
  /** Rows of the hint row (1 or 2, see keytable.hintLines). */
  hintRows: number;
  /** The preview is shown: not on the start screen, and no overlay has the body. */
  preview: boolean;
  /** Rows the screen's own box would like (the question with its list, the review list, ...). */
  needed: number;
}

/** Where everything goes. */
export interface Layout {
  body: number;
  /** The preview sits beside the screen's box. */
  wide: boolean;
  mainWidth: number;
  mainHeight: number;
  /** 0 when there is no preview. */
  previewWidth: number;
  previewHeight: number;
  /** A separator row between the box and a preview below it. */
  separator: boolean;
}

/** The layout for a terminal and a screen. */
export function layoutOf(i: LayoutInput): Layout {
  const body = bodyRows(i.rows, i.hintRows);
  if (!i.preview)
    return {
      body,
      wide: false,
      mainWidth: i.columns,
      mainHeight: body,
      previewWidth: 0,
      previewHeight: 0,
      separator: false,
    };
  if (sideBySide(i.columns)) {
    const previewWidth = sidePreviewColumns(i.columns);
    return {
      body,
      wide: true,
      mainWidth: i.columns - previewWidth - PREVIEW_GAP_COLUMNS,
      mainHeight: body,
      previewWidth,
      previewHeight: body,
      separator: false,
    };
  }
  const mainHeight = Math.max(MIN_MAIN_ROWS, Math.min(i.needed, body - MIN_PREVIEW_BELOW_ROWS));
  return {
    body,
    wide: false,
    mainWidth: i.columns,
    mainHeight,
    previewWidth: i.columns,
    previewHeight: Math.max(0, body - mainHeight - 1),
    separator: true,
  };
}

/** The finish screen's box for a body of `body` rows. */
export function finishRows(body: number): number {
  return Math.max(FINISH_MIN_ROWS, Math.floor(body / 2));
}

/** Whether a box needing `needed` rows shows whole in this layout (else it scrolls or is cut). */
export function fitsWhole(l: Layout, needed: number): boolean {
  return needed <= l.mainHeight;
}
