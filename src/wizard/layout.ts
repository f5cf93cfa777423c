/**
 * The wizard's layout arithmetic, pure: a header row, the body, the hint rows; in the body the screen's own
 * box and the live preview, below it or (from SIDE_BY_SIDE_MIN_COLUMNS) beside it, with the questions
 * keeping the 80 columns the ZeRO table needs. Overlays (help, the picture, the glossary, the overwrite
 * diff) take the whole body. Every height is counted so nothing is cut at 80x24.
 */
import type { Answers, DetectedEnv, Question } from '../config/index.js';
import type { Finding } from '../config/index.js';
import { softWrap } from '../text/index.js';
import { bodyRows } from './frame.js';
import { modeHeight } from './mode-table.js';
import { LIST_LIMIT, helpLines, promptLines } from './question-text.js';
import { stepsChromeRows } from './steps-text.js';
import { stepRows, type StepsEditorState } from './steps.js';

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

/** The questions' own width, at least: the ZeRO table is 78 columns wide. */
export const MIN_MAIN_COLUMNS = 80;
/**
 * A side preview is at most this wide (the DeepSpeed JSON's longest key line is 53 columns; the commands
 * soft-wrap)... The questions take the rest of a wide terminal: their help, findings and panel read whole there.
 */
export const SIDE_PREVIEW_MAX_COLUMNS = 60;
/** ...and this share of the terminal. */
export const SIDE_PREVIEW_FRACTION = 0.4;
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

/** The narrowest terminal with the preview beside the questions (136 with the constants above). */
export const SIDE_BY_SIDE_MIN_COLUMNS: number = (() => {
  let c = MIN_MAIN_COLUMNS;
  while (!sideBySide(c)) c++;
  return c;
})();

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

/** The most rows the finish screen's note takes (a refused launch's reason and fix). */
export const FINISH_NOTE_MAX_ROWS = 8;

/**
 * The finish screen's box for a body of `body` rows: half of it at least, and what its menu shows (the title,
 * the entries, where a Launch writes the config files, the note), `width` columns wide.
 */
export function finishRows(
  body: number,
  menu?: {
    items: number;
    launchNote: string | null;
    estimateNote?: string | null;
    note: string | null;
    width: number;
    checkRows?: number;
  },
): number {
  const floor = Math.max(FINISH_MIN_ROWS, Math.floor(body / 2));
  if (!menu) return floor;
  const rowsOf = (t: string | null | undefined, max = Number.POSITIVE_INFINITY) =>
    t
      ? Math.min(
          max,
          t.split('\n').reduce((n, l) => n + softWrap(l, menu.width).length, 0),
        )
      : 0;
  // The estimate's lines are cut to one row each (what the last action said comes first, whole).
  const estimateRows = menu.estimateNote ? menu.estimateNote.split('\n').length : 0;
  return Math.max(
    floor,
    (menu.checkRows ?? 0) +
      1 +
      menu.items +
      estimateRows +
      rowsOf(menu.launchNote) +
      rowsOf(menu.note, FINISH_NOTE_MAX_ROWS),
  );
}

/** Whether a box needing `needed` rows shows whole in this layout (else it scrolls or is cut). */
export function fitsWhole(l: Layout, needed: number): boolean {
  return needed <= l.mainHeight;
}

/** The layout for a screen whose own box needs `needed(width, body)` rows at the width and body it gets. */
export function wizardLayout(
  base: Omit<LayoutInput, 'needed'>,
  needed: (width: number, body: number) => number,
): Layout {
  const probe = layoutOf({ ...base, needed: 0 });
  return layoutOf({ ...base, needed: needed(probe.mainWidth, probe.body) });
}

/** Rows a PgUp/PgDn moves a window `rows` tall: all but one, which stays in view. */
export function pageOf(rows: number): number {
  return Math.max(1, rows - 1);
}

/** The preview's finding rows: one per finding, a third of it at most. */
export function previewFindingRows(height: number, findings: number): number {
  return Math.max(0, Math.min(findings, Math.floor((height - 1) / 3)));
}

/** The preview's rows of text: its height less the tab line, a note and the finding rows. */
export function previewTextRows(height: number, findings: number, note: boolean): number {
  return Math.max(0, height - 1 - (note ? 1 : 0) - previewFindingRows(height, findings));
}

/** What the question screen shows, for its rows. */
export interface QuestionBox {
  q: Question;
  answers: Answers;
  env: DetectedEnv;
  /** The help (`?`) is open. */
  help: boolean;
  /** What Enter chooses (the help's "Default"). */
  enter: string | undefined;
  glossaryKey: string;
  /** The findings that point at this question (the help shows them whole). */
  findings: readonly Finding[];
  /** The ZeRO table, on the ZeRO question. */
  tradeoff: import('./tradeoff.js').Tradeoff | null;
  /** The catalog's models when the model question shows them as a list, else null. */
  modelList: number | null;
}

/** The question's rows: the prompt, its list (or field, or the ZeRO table and panel), the help when open. */
export function questionRows(b: QuestionBox, width: number): number {
  const { q } = b;
  let body: number;
  if (q.id === 'mode' && b.tradeoff) body = modeHeight(b.tradeoff, width, !b.help);
  else if (b.modelList !== null) body = Math.min(LIST_LIMIT, b.modelList + 2);
  else if (q.kind === 'text') body = 2;
  else body = Math.min(LIST_LIMIT, q.choices?.length ?? 2);
  const help = b.help ? helpLines(q, b.answers, b.env, width, b.enter, b.glossaryKey, b.findings).length : 0;
  return promptLines(q, width).length + body + help;
}

/** The rows of the template list, its title and the templates' descriptions (steps screen, picking). */
export const STEP_TEMPLATE_ROWS = 16;

/** The steps editor's rows: its chrome, the step's rows and findings; half the body at most (the commands below show the edits). */
export function stepsRows(e: StepsEditorState, findingRows: number, body: number): number {
  const step = e.steps[e.step];
  const full = e.picking
    ? STEP_TEMPLATE_ROWS
    : stepsChromeRows(e, findingRows) + (step ? stepRows(step).length + 1 : 0);
  return Math.min(full, Math.max(10, Math.floor(body / 2)));
}

/** The review's rows: its title, the import notes, the list and the highlighted finding's lines under it. */
export function reviewRows(notes: number, items: number, detail: number): number {
  return 1 + notes + items + detail;
}

/** The most rows the review gives the highlighted finding, whole: a third of the body (at least 3). */
export function reviewDetailMaxRows(body: number): number {
  return Math.max(3, Math.floor(body / 3));
}

/** How far each scrolled window moves a page, and where the overwrite diff ends, for this layout. */
export function scrollPages(
  l: Layout,
  p: { previewFindings: number; previewNote: boolean; diffLines: number },
): { preview: number; glossary: number; explain: number; diff: number; diffMaxTop: number } {
  const diffShown = Math.max(3, l.mainHeight - DIFF_CHROME_ROWS);
  return {
    preview: pageOf(previewTextRows(l.previewHeight, p.previewFindings, p.previewNote)),
    glossary: pageOf(l.body - GLOSSARY_TITLE_ROWS),
    explain: pageOf(l.body - EXPLAIN_TITLE_ROWS),
    diff: pageOf(diffShown),
    diffMaxTop: Math.max(0, p.diffLines - diffShown),
  };
}
