/**
 * The log pane's view state and its pure reducer (no rendering): which step is shown, where the view is
 * scrolled, follow/wrap, search, the sparkline's span, the alert list, the stop confirmation. Key bindings
 * are named commands in one keymap.
 */

/** Search state: typing a query, or a committed query with its current match. */
export interface SearchState {
  mode: 'off' | 'input' | 'active';
  draft: string;
  query: string;
  /** Absolute line index of the current match, if any. */
  match: number | null;
  /** A message such as "no match" for the status line. */
  note: string;
}

/** Everything the pane view needs besides the run model. */
export interface PaneState {
  selected: number;
  /** Show the running step automatically (until the user picks one with Tab). */
  autoSelect: boolean;
  follow: boolean;
  /** Absolute index of the first visible line when not following. */
  top: number;
  wrap: boolean;
  search: SearchState;
  confirmStop: boolean;
  /** The sparkline shows the whole step (its overview) instead of the recent values. */
  sparkAll: boolean;
  /** The alert list is shown in place of the log; `alertsTop` is its first row. */
  alertsOpen: boolean;
  alertsTop: number;
}

/** The lines of the shown step, as far as the reducer needs to know them. */
export interface LinesView {
  /** Absolute index of the oldest kept line. */
  first: number;
  /** Absolute index after the newest line. */
  end: number;
  /** Kept line at an absolute index. */
  at(abs: number): string | undefined;
  /** Rows of the log area. */
  height: number;
}

// The pane's keys are one table (./keytable.ts); these names stay importable from here.
export { commandFor, hintItems, type HintContext, type PaneCommand } from './keytable.js';

/** The initial state. */
export function initialPaneState(): PaneState {
  return {
    selected: 0,
    autoSelect: true,
    follow: true,
    top: 0,
    wrap: false,
    search: { mode: 'off', draft: '', query: '', match: null, note: '' },
    confirmStop: false,
    sparkAll: false,
    alertsOpen: false,
    alertsTop: 0,
  };
}

/** Actions of the reducer. */
export type PaneAction =
  | { type: 'scroll'; delta: number; view: LinesView }
  | { type: 'top'; view: LinesView }
  | { type: 'bottom' }
  | { type: 'toggleFollow'; view: LinesView }
  | { type: 'toggleWrap' }
  | { type: 'selectStep'; index: number }
  | { type: 'autoStep'; index: number }
  | { type: 'searchStart' }
  | { type: 'searchInput'; text: string }
  | { type: 'searchBackspace' }
  | { type: 'searchCancel' }
  | { type: 'searchCommit'; view: LinesView }
  | { type: 'searchMove'; dir: 1 | -1; view: LinesView }
  | { type: 'confirmStop'; on: boolean }
  | { type: 'toggleSpark' }
  | { type: 'toggleAlerts' }
  /** Scrolls the alert list; `rows` is how many rows it has, `height` how many show. */
  | { type: 'scrollAlerts'; delta: number; rows: number; height: number };

/** The first visible line's absolute index for a view (following = the last page). */
export function topLine(s: PaneState, v: LinesView): number {
  const lastPage = Math.max(v.first, v.end - v.height);
  if (s.follow) return lastPage;
  return Math.min(Math.max(s.top, v.first), lastPage);
}

/** Whether a line matches a query (smart case: case-sensitive only if the query has capitals). */
export function matcher(query: string): (line: string) => boolean {
  if (query === '') return () => false;
  if (query !== query.toLowerCase()) return (l) => l.includes(query);
  return (l) => l.toLowerCase().includes(query);
}

function findMatch(query: string, v: LinesView, from: number, dir: 1 | -1): number | null {
  const m = matcher(query);
  const n = v.end - v.first;
  if (n <= 0) return null;
  for (let k = 0; k < n; k++) {
    let abs = from + dir * k;
    // wrap around within [first, end)
    abs = v.first + ((((abs - v.first) % n) + n) % n);
    const line = v.at(abs);
    if (line !== undefined && m(line)) return abs;
  }
  return null;
}

/** "line k of n lines that match", counted over the kept lines (on a search action, never per frame). */
function matchCount(query: string, v: LinesView, hit: number): string {
  const m = matcher(query);
  let total = 0;
  let index = 0;
  for (let abs = v.first; abs < v.end; abs++) {
    const line = v.at(abs);
    if (line === undefined || !m(line)) continue;
    total++;
    if (abs <= hit) index = total;
  }
  return `match ${index} of ${total}`;
}

function centreOn(s: PaneState, v: LinesView, abs: number): PaneState {
  const top = Math.max(v.first, abs - Math.floor(v.height / 3));
  const lastPage = Math.max(v.first, v.end - v.height);
  return { ...s, follow: false, top: Math.min(top, lastPage) };
}

/** The reducer. */
export function paneReducer(s: PaneState, a: PaneAction): PaneState {
  switch (a.type) {
    case 'scroll': {
      const cur = topLine(s, a.view);
      const lastPage = Math.max(a.view.first, a.view.end - a.view.height);
      const top = Math.min(Math.max(cur + a.delta, a.view.first), lastPage);
      // Scrolling down onto the last page resumes following, as in `less +F`.
      if (a.delta > 0 && top >= lastPage) return { ...s, follow: true, top };
      return { ...s, follow: false, top };
    }
    case 'top':
      return { ...s, follow: false, top: a.view.first };
    case 'bottom':
      return { ...s, follow: true };
    case 'toggleFollow':
      return s.follow ? { ...s, follow: false, top: topLine(s, a.view) } : { ...s, follow: true };
    case 'toggleWrap':
      return { ...s, wrap: !s.wrap };
    case 'selectStep':
      return {
        ...s,
        selected: a.index,
        autoSelect: false,
        follow: true,
        search: { ...s.search, match: null, note: '' },
      };
    case 'autoStep':
      return s.autoSelect && s.selected !== a.index ? { ...s, selected: a.index, follow: true } : s;
    case 'searchStart':
      return { ...s, search: { ...s.search, mode: 'input', draft: '', note: '' } };
    case 'searchInput':
      return { ...s, search: { ...s.search, draft: s.search.draft + a.text } };
    case 'searchBackspace':
      return { ...s, search: { ...s.search, draft: s.search.draft.slice(0, -1) } };
    case 'searchCancel':
      return {
        ...s,
        search: {
          mode: 'off',
          draft: '',
          query: s.search.mode === 'input' ? s.search.query : '',
          match: null,
          note: '',
        },
      };
    case 'searchCommit': {
      const query = s.search.draft;
      if (query === '') return { ...s, search: { mode: 'off', draft: '', query: '', match: null, note: '' } };
      // From the bottom of what is on screen, backwards: the most recent occurrence the user can reach.
      const bottom = Math.min(a.view.end, topLine(s, a.view) + a.view.height) - 1;
      const hit = findMatch(query, a.view, bottom, -1);
      const search: SearchState = {
        mode: 'active',
        draft: '',
        query,
        match: hit,
        note: hit === null ? `no match for "${query}"` : matchCount(query, a.view, hit),
      };
      return hit === null ? { ...s, search } : { ...centreOn(s, a.view, hit), search };
    }
    case 'searchMove': {
      const q = s.search.query;
      if (q === '') return s;
      const from = s.search.match ?? (a.dir > 0 ? topLine(s, a.view) - 1 : topLine(s, a.view) + a.view.height);
      const hit = findMatch(q, a.view, from + a.dir, a.dir);
      if (hit === null)
        return { ...s, search: { ...s.search, mode: 'active', match: null, note: `no match for "${q}"` } };
      const wrapped = (a.dir > 0 && hit <= from) || (a.dir < 0 && hit >= from);
      const count = matchCount(q, a.view, hit);
      return {
        ...centreOn(s, a.view, hit),
        search: { ...s.search, mode: 'active', match: hit, note: wrapped ? `${count}, search wrapped` : count },
      };
    }
    case 'confirmStop':
      return { ...s, confirmStop: a.on };
    case 'toggleSpark':
      return { ...s, sparkAll: !s.sparkAll };
    case 'toggleAlerts':
      return { ...s, alertsOpen: !s.alertsOpen, alertsTop: 0 };
    case 'scrollAlerts':
      return { ...s, alertsTop: Math.max(0, Math.min(s.alertsTop + a.delta, Math.max(0, a.rows - a.height))) };
  }
}

/** One row of the log area, with its source line (for highlights). */
export interface Row {
  text: string;
  abs: number;
}

/**
 * The rows to draw: the visible lines (plus the open `\r` line when following), cut to `cols` or wrapped
 * into rows of `cols` characters, exactly `height` rows or fewer.
 */
export function visibleRows(s: PaneState, v: LinesView, open: string, cols: number): Row[] {
  const width = Math.max(1, cols);
  const withOpen = s.follow && open !== '';
  const rows: Row[] = [];
  if (!s.wrap) {
    const h = withOpen ? Math.max(0, v.height - 1) : v.height;
    const lastPage = Math.max(v.first, v.end - h);
    const top = s.follow ? lastPage : Math.min(Math.max(s.top, v.first), Math.max(v.first, v.end - v.height));
    for (let abs = top; abs < v.end && rows.length < h; abs++) rows.push({ text: cut(v.at(abs) ?? '', width), abs });
    if (withOpen) rows.push({ text: cut(open, width), abs: v.end });
    return rows;
  }
  const split = (text: string, abs: number): Row[] => {
    if (text.length <= width) return [{ text, abs }];
    const out: Row[] = [];
    for (let i = 0; i < text.length; i += width) out.push({ text: text.slice(i, i + width), abs });
    return out;
  };
  if (s.follow) {
    const acc: Row[][] = [];
    let count = 0;
    if (withOpen) {
      const r = split(open, v.end);
      acc.push(r);
      count += r.length;
    }
    for (let abs = v.end - 1; abs >= v.first && count < v.height; abs--) {
      const r = split(v.at(abs) ?? '', abs);
      acc.push(r);
      count += r.length;
    }
    const flat = acc.reverse().flat();
    return flat.slice(Math.max(0, flat.length - v.height));
  }
  const top = Math.min(Math.max(s.top, v.first), Math.max(v.first, v.end - 1));
  for (let abs = top; abs < v.end && rows.length < v.height; abs++) rows.push(...split(v.at(abs) ?? '', abs));
  return rows.slice(0, v.height);
}

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text;
}

/** Splits a row into plain and highlighted parts for a query (smart case). */
export function highlightParts(text: string, query: string): { text: string; hit: boolean }[] {
  if (query === '') return [{ text, hit: false }];
  const sensitive = query !== query.toLowerCase();
  const hay = sensitive ? text : text.toLowerCase();
  const out: { text: string; hit: boolean }[] = [];
  let i = 0;
  for (;;) {
    const j = hay.indexOf(sensitive ? query : query.toLowerCase(), i);
    if (j === -1) break;
    if (j > i) out.push({ text: text.slice(i, j), hit: false });
    out.push({ text: text.slice(j, j + query.length), hit: true });
    i = j + query.length;
  }
  if (i < text.length || out.length === 0) out.push({ text: text.slice(i), hit: false });
  return out;
}
