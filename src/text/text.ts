/**
 * Fixed-width text helpers for the screens (the views in components/ and the pure screen models in src/: the
 * glossary, the ZeRO picture, the steps editor's rows). Every character they handle is one terminal column wide.
 */

/**
 * Whether colour is allowed at all (https://no-color.org: NO_COLOR set to anything but empty turns it off, and a
 * `dumb` terminal has none): the one rule for the wizard, the plain commands and the log pane.
 */
export function colorAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return !(env.NO_COLOR !== undefined && env.NO_COLOR !== '') && env.TERM !== 'dumb';
}

/** Word-wraps `text` to `width` columns (long words are cut). Always at least one line. */
export function wrap(text: string, width: number): string[] {
  const w = Math.max(8, width);
  const out: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of para.split(/\s+/).filter((x) => x !== '')) {
      let rest = word;
      while (rest.length > w) {
        if (line !== '') {
          out.push(line);
          line = '';
        }
        out.push(rest.slice(0, w));
        rest = rest.slice(w);
      }
      if (line === '') line = rest;
      else if (line.length + 1 + rest.length <= w) line += ` ${rest}`;
      else {
        out.push(line);
        line = rest;
      }
    }
    out.push(line);
  }
  return out.length === 0 ? [''] : out;
}

/** Cuts `text` to `width` columns with an ellipsis. */
export function clip(text: string, width: number): string {
  if (width <= 0) return '';
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** A horizontal bar of `width` cells filled to `fraction` (0..1) in eighths of a cell, padded with spaces. */
export function bar(fraction: number, width: number): string {
  const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const eighths = Math.round(f * width * 8);
  const full = Math.floor(eighths / 8);
  const part = EIGHTHS[eighths % 8] ?? '';
  const s = '█'.repeat(full) + part;
  return s + ' '.repeat(Math.max(0, width - s.length));
}

/**
 * `line` cut into pieces of at most `width` columns, at the last space that fits when there is one; the
 * pieces joined give `line` back exactly (the commands tab wraps commands this way, never clipping them).
 */
export function softWrap(line: string, width: number): string[] {
  const w = Math.max(1, width);
  const out: string[] = [];
  let rest = line;
  while (rest.length > w) {
    // The space stays at the end of its piece, so it must fall within the width too.
    const space = rest.lastIndexOf(' ', w - 1);
    const cut = space > 0 ? space + 1 : w;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}

/** A hint of a key row: its text and how long it stays when the row is short of room (higher stays longer). */
export interface FitHint {
  text: string;
  keep: number;
}

/**
 * Hints joined with ` · ` into at most `maxLines` lines of `width` columns, never breaking a hint: every hint
 * when they fit, else the least important ones left out first (the lowest `keep`; of equals, the last one).
 * Hints whose `keep` is `always` or more are never left out; lines past `maxLines` are then cut off.
 */
export function fitHints(items: readonly FitHint[], width: number, maxLines = 1, always = Infinity): string[] {
  let shown = items;
  for (;;) {
    const lines = packHints(
      shown.map((x) => x.text),
      width,
    );
    if (lines.length <= maxLines) return lines;
    const lowest = Math.min(...shown.map((x) => x.keep));
    if (lowest >= always) return lines.slice(0, maxLines);
    const drop = shown.map((x) => x.keep).lastIndexOf(lowest);
    shown = shown.filter((_, i) => i !== drop);
  }
}

/** Joins hints with ` · ` into lines of at most `width` columns, never breaking a hint. */
function packHints(items: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const item of items) {
    const next = line === '' ? item : `${line} · ${item}`;
    if (next.length <= width || line === '') line = next;
    else {
      lines.push(line);
      line = item;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Pads on the right to `n` columns. */
export function padEnd(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** Pads on the left to `n` columns. */
export function padStart(s: string, n: number): string {
  return s.length >= n ? s : ' '.repeat(n - s.length) + s;
}
