/**
 * The wizard's frame: a header row, the body, the hint rows, and a spare row below. What the start screen, painted
 * before Ink loads (components/wizard/startText.ts), needs of the layout, in a module that imports nothing: the
 * layout arithmetic of every other screen (./layout.ts) loads after the first frame.
 */

/** The header's detection part until detection answers. */
export const DETECTING = 'detecting GPUs…';

/** Rows kept free below the frame, so Ink never has to clear the whole screen. */
export const SPARE_ROWS = 1;
/** The header row. */
export const HEADER_ROWS = 1;
/** The body never gets fewer rows than this, however small the terminal. */
export const MIN_BODY_ROWS = 4;
/** Rows of the body between the header and the hint rows. */
export function bodyRows(rows: number, hintRows: number): number {
  return Math.max(MIN_BODY_ROWS, rows - HEADER_ROWS - hintRows - SPARE_ROWS);
}
