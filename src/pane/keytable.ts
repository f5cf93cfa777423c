/**
 * The log pane's keys as data, as the wizard's are (src/wizard/keytable.ts): one table of bindings per place the
 * keys work (the log, a search being typed, the stop question, the alert list), each binding with the keys
 * it matches, what it does in the docs' words, and its key hint. The pane (./pane.ts) asks `paneCommand`
 * what a key means on the stack its state focuses; the hint row and the pane table of docs/log-pane.md come from the same
 * tables, so the keys documented, hinted and working cannot drift apart. The machinery (bindings, the first match
 * on a stack, the table's Markdown) is the wizard's too: src/text/keytable.ts. Plain TypeScript, no terminal.
 */
import {
  type KeyBinding,
  type KeyPress,
  type KeyRow,
  ctrlKey as ctrl,
  firstBinding,
  keyTableMarkdown,
  plainKey as plain,
} from '../text/index.js';

/** Where the pane's keys work; the state focuses several at once, innermost first (`paneStack`). */
export type PaneSurface = 'searchInput' | 'confirmStop' | 'alerts' | 'search' | 'log';

/** What a key means in the pane. */
export type PaneCommand =
  | 'up'
  | 'down'
  | 'pageUp'
  | 'pageDown'
  | 'top'
  | 'bottom'
  | 'follow'
  | 'wrap'
  | 'nextStep'
  | 'prevStep'
  | 'searchStart'
  | 'searchNext'
  | 'searchPrev'
  | 'quit'
  | 'detach'
  | 'spark'
  | 'alerts'
  | 'closeAlerts'
  | 'searchCancel'
  | 'searchCommit'
  | 'searchErase'
  | 'searchType'
  | 'stopYes'
  | 'stopLeave'
  | 'stopNo'
  | 'swallow';

/** What the key hints depend on besides the tables. */
export interface HintContext {
  /** The run has ended (q closes the pane). */
  ended: boolean;
  /** The live rows are shown (the sparkline). */
  live: boolean;
  /** The run has alerts (a lists them). */
  alerts: boolean;
  /** d leaves the pane with the run going on. */
  canDetach: boolean;
}

/** One binding (src/text/keytable.ts), with what it does and its hint. */
export interface PaneBinding extends KeyBinding<PaneCommand> {
  /** What it does, in the docs' words. */
  help: string;
  /**
   * In the key hints: the text (null: not now), and `rank`: 1 is kept longest when the row is short of
   * room. Absent: the binding has no hint of its own (another one's names its keys).
   */
  hint?: { text: string | ((c: HintContext) => string | null); rank: number };
}
const stroke = (
  command: PaneCommand,
  keys: string,
  help: string,
  match: PaneBinding['match'],
  hint?: PaneBinding['hint'],
): PaneBinding => ({ command, keys, help, match, ...(hint ? { hint } : {}) });

// The log's bindings, named once: the alert list reuses the ones that work there too.
const UP = stroke('up', '↑/k', 'scroll a line up (pauses follow)', (i, k) => k.upArrow === true || plain(i, k, 'k'), {
  text: '↑↓ PgUp/PgDn g/G scroll',
  rank: 6,
});
const DOWN = stroke('down', '↓/j', 'scroll a line down', (i, k) => k.downArrow === true || plain(i, k, 'j'));
const PAGE_UP = stroke('pageUp', 'PgUp/^B', 'scroll a page up', (i, k) => k.pageUp === true || ctrl(i, k, 'b'));
const PAGE_DOWN = stroke(
  'pageDown',
  'PgDn/space/^F',
  'scroll a page down',
  (i, k) => k.pageDown === true || plain(i, k, ' ') || ctrl(i, k, 'f'),
);
const TOP = stroke('top', 'g/Home', 'the oldest kept line', (i, k) => k.home === true || plain(i, k, 'g'));
const BOTTOM = stroke('bottom', 'G/End', 'the newest line (follow on)', (i, k) => k.end === true || plain(i, k, 'G'));
const QUIT = stroke(
  'quit',
  'q/^C',
  'stop the run (asks first while it runs; ^C again while it stops kills at once); close the pane once it has ended',
  (i, k) => plain(i, k, 'q') || ctrl(i, k, 'c'),
  { text: (c) => `q ${c.ended ? 'close' : 'stop'}`, rank: 1 },
);
const DETACH = stroke(
  'detach',
  'd',
  'leave the pane; the run goes on (`zerowiz attach RUN` follows it again, `zerowiz stop RUN` stops it)',
  (i, k) => plain(i, k, 'd'),
  { text: (c) => (c.canDetach && !c.ended ? 'd leave running' : null), rank: 1 },
);
const SPARK = stroke('spark', 's', 'sparkline: the recent values / the whole step', (i, k) => plain(i, k, 's'), {
  text: (c) => (c.live ? 's sparkline' : null),
  rank: 8,
});
const ALERTS = stroke(
  'alerts',
  'a',
  'the alert list: every alert of the run, its fix and the line that raised it',
  (i, k) => plain(i, k, 'a'),
  { text: (c) => (c.alerts ? 'a alerts' : null), rank: 3 },
);
const NEXT_STEP = stroke('nextStep', 'Tab', 'the next step', (_i, k) => k.tab === true && !k.shift, {
  text: 'Tab step',
  rank: 2,
});
const PREV_STEP = stroke('prevStep', 'S-Tab', 'the previous step', (_i, k) => k.tab === true && k.shift === true);
const SWALLOW = stroke('swallow', '', '', () => true);

/** The tables. Within a table the first matching binding wins; the hints keep table order. */
export const PANE_KEYS: Record<PaneSurface, readonly PaneBinding[]> = {
  log: [
    UP,
    DOWN,
    PAGE_UP,
    PAGE_DOWN,
    TOP,
    BOTTOM,
    stroke('follow', 'f', 'follow on/off', (i, k) => plain(i, k, 'f'), { text: 'f follow', rank: 5 }),
    stroke(
      'searchStart',
      '/',
      'search (Enter jumps to the newest match, the status says "match k of n"; capitals make it case-sensitive)',
      (i, k) => plain(i, k, '/'),
      { text: '/ search n/N', rank: 4 },
    ),
    stroke('searchNext', 'n', 'the next match', (i, k) => plain(i, k, 'n')),
    stroke('searchPrev', 'N', 'the previous match', (i, k) => plain(i, k, 'N')),
    stroke('wrap', 'w', 'wrap on/off', (i, k) => plain(i, k, 'w'), { text: 'w wrap', rank: 7 }),
    SPARK,
    ALERTS,
    NEXT_STEP,
    PREV_STEP,
    QUIT,
    DETACH,
  ],
  // A search that was committed: Esc clears it, every other key is the log's.
  search: [stroke('searchCancel', 'Esc', 'clear the search', (_i, k) => k.escape === true)],
  searchInput: [
    stroke('searchCancel', 'Esc/^C', 'cancel the search', (i, k) => k.escape === true || ctrl(i, k, 'c')),
    stroke('searchCommit', 'Enter', 'search', (_i, k) => k.return === true),
    stroke('searchErase', 'Bksp', 'erase a character', (_i, k) => k.backspace === true || k.delete === true),
    stroke('searchType', '', '', (i, k) => i !== '' && !k.ctrl && !k.meta),
    SWALLOW,
  ],
  confirmStop: [
    stroke(
      'stopYes',
      'y/q/^C',
      'stop the run',
      (i, k) => i === 'y' || i === 'Y' || plain(i, k, 'q') || ctrl(i, k, 'c'),
    ),
    stroke('stopLeave', 'd', 'leave the pane; the run goes on', (i, k) => plain(i, k, 'd')),
    stroke('stopNo', 'any other key', 'keep watching', () => true),
  ],
  alerts: [
    stroke('closeAlerts', 'Esc/a', 'back to the log', (i, k) => k.escape === true || plain(i, k, 'a')),
    UP,
    DOWN,
    PAGE_UP,
    PAGE_DOWN,
    TOP,
    BOTTOM,
    QUIT,
    DETACH,
    SPARK,
    NEXT_STEP,
    PREV_STEP,
    SWALLOW,
  ],
};

/** What focuses the keys: the pane state's parts the stack depends on. */
export interface PaneFocus {
  searchMode: 'off' | 'input' | 'active';
  confirmStop: boolean;
  /** The alert list is open (and there is a live watch to list from). */
  alertsOpen: boolean;
}

/** The surfaces that have the keys, innermost first. */
export function paneStack(f: PaneFocus): PaneSurface[] {
  if (f.searchMode === 'input') return ['searchInput'];
  if (f.confirmStop) return ['confirmStop'];
  if (f.alertsOpen) return ['alerts'];
  return f.searchMode === 'active' ? ['search', 'log'] : ['log'];
}

/** What a key means on a stack: the first binding that matches, innermost surface first; null: nothing. */
export function paneCommand(
  stack: readonly PaneSurface[],
  input: string,
  key: KeyPress,
): { surface: PaneSurface; command: PaneCommand } | null {
  const hit = firstBinding(PANE_KEYS, stack, input, key);
  return hit ? { surface: hit.surface, command: hit.binding.command } : null;
}

/** The log's command for a key press, or null (the log focused alone). */
export function commandFor(input: string, key: KeyPress): PaneCommand | null {
  return paneCommand(['log'], input, key)?.command ?? null;
}

/** The key hints of the log's table as `[text, rank]`, in its order. */
export function hintItems(c: HintContext): [string, number][] {
  const out: [string, number][] = [];
  for (const { hint } of PANE_KEYS.log) {
    if (!hint) continue;
    const text = typeof hint.text === 'string' ? hint.text : hint.text(c);
    if (text !== null) out.push([text, hint.rank]);
  }
  return out;
}

/** Where each surface's keys work, in the words of the pane table of docs/log-pane.md. */
const SURFACE_TITLES: Record<PaneSurface, string> = {
  log: 'the log',
  search: 'a search shown',
  searchInput: 'typing a search (`/`)',
  confirmStop: 'the stop question (`q` while the run goes)',
  alerts: 'the alert list (`a`)',
};

/**
 * The pane key table of docs/log-pane.md, from the tables themselves: one row per documented binding, in table order (the
 * alert list's rows that are the log's own are said once, as "the log's keys"). A test keeps the page equal.
 */
export function paneKeysMarkdown(): string {
  const rows: KeyRow[] = [];
  for (const surface of ['log', 'search', 'searchInput', 'confirmStop', 'alerts'] as const) {
    const shared: string[] = [];
    for (const b of PANE_KEYS[surface]) {
      if (b.keys === '') continue;
      if (surface === 'alerts' && PANE_KEYS.log.includes(b)) {
        shared.push(b.keys);
        continue;
      }
      rows.push([SURFACE_TITLES[surface], b.keys, b.help]);
    }
    if (shared.length > 0)
      rows.push([SURFACE_TITLES[surface], shared, 'as in the log (the scroll keys scroll the list)']);
  }
  return keyTableMarkdown(rows);
}
