/**
 * THE key-table machinery of both screens, the wizard's (src/wizard/keytable.ts) and the log pane's
 * (src/pane/keytable.ts): a key press, a binding (the command, the keys as the docs name them, which presses
 * match), a table of bindings per place the keys work, the first binding a press meets on a stack of focused
 * places (innermost first), the presses a documented key name stands for, and the rows of a generated key table.
 * Each screen keeps only its tables, its hints and its words. Plain TypeScript, no terminal.
 */

/**
 * A key press: the flags zerowiz reads, a subset of Ink's `Key` (so Ink's key object is passed as it is); a flag
 * absent is not pressed. The typed text goes beside it (`input`, empty for a special key).
 */
export interface KeyPress {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  home?: boolean;
  end?: boolean;
  return?: boolean;
  escape?: boolean;
  ctrl?: boolean;
  shift?: boolean;
  tab?: boolean;
  backspace?: boolean;
  delete?: boolean;
  meta?: boolean;
}

/** No key flag set: a plain character. */
export const NO_KEY: Readonly<Required<KeyPress>> = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageUp: false,
  pageDown: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
};

/** One binding: what a key means, the keys as the docs name them (`↑/k`, `PgDn/space/^F`), and which presses match. */
export interface KeyBinding<C extends string = string> {
  command: C;
  /** Empty: not documented (a catch-all, a partner another binding's keys name). */
  keys: string;
  match(input: string, key: KeyPress): boolean | undefined;
}

/** The character `ch` typed without Ctrl or Alt. */
export function plainKey(input: string, key: KeyPress, ch: string): boolean {
  return input === ch && !key.ctrl && !key.meta;
}

/** Ctrl+`ch`. */
export function ctrlKey(input: string, key: KeyPress, ch: string): boolean {
  return input === ch && key.ctrl === true;
}

/**
 * The binding a press meets first on a stack of places (innermost first; within a place the first binding that
 * matches wins), or null.
 */
export function firstBinding<S extends string, B extends KeyBinding>(
  tables: Readonly<Record<S, readonly B[]>>,
  stack: readonly S[],
  input: string,
  key: KeyPress,
): { surface: S; binding: B } | null {
  for (const surface of stack) {
    const binding = tables[surface].find((x) => x.match(input, key));
    if (binding) return { surface, binding };
  }
  return null;
}

/** What each documented special key name stands for. */
const NAMED: Record<string, KeyPress> = {
  Esc: { escape: true, meta: true },
  Enter: { return: true },
  Tab: { tab: true },
  'S-Tab': { tab: true, shift: true },
  PgUp: { pageUp: true },
  PgDn: { pageDown: true },
  Dn: { pageDown: true },
  Home: { home: true },
  End: { end: true },
  Bksp: { backspace: true },
  '←': { leftArrow: true },
  '→': { rightArrow: true },
  '↑': { upArrow: true },
  '↓': { downArrow: true },
};

/** The presses one documented key name stands for (none for a name it does not know). */
function pressesOfName(name: string): [string, KeyPress][] {
  const named = (n: string): [string, KeyPress] => ['', { ...NO_KEY, ...NAMED[n] }];
  if (name in NAMED) return [named(name)];
  if (name === 'space') return [[' ', NO_KEY]];
  if (name.startsWith('^') && name.length === 2) return [[name[1]!.toLowerCase(), { ...NO_KEY, ctrl: true }]];
  if (/^[0-9]-[0-9]$/.test(name)) return [[name[0]!, NO_KEY]];
  if ([...name].every((c) => c in NAMED)) return [...name].map(named);
  return name.length === 1 ? [[name, NO_KEY]] : [];
}

/**
 * The presses the documented key names stand for: `Esc/←`, `↑↓`, `1-9`, `^C`, `S-Tab`, `space`, `q`, `/`
 * (names split on `/` and spaces; `1-9` stands for its first digit).
 */
export function pressesFor(keys: string): [string, KeyPress][] {
  return (keys === '/' ? ['/'] : keys.split(/[\s/]+/).filter((x) => x !== '')).flatMap(pressesOfName);
}

/** One row of a generated key table: where the keys work, the keys as documented (one or several), what they do. */
export type KeyRow = readonly [where: string, keys: string | readonly string[], what: string];

/** A generated key table in Markdown (the docs' pages'): `| where | key | what it does |`, each key as code. */
export function keyTableMarkdown(rows: readonly KeyRow[]): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|');
  const code = (keys: KeyRow[1]) => (typeof keys === 'string' ? [keys] : keys).map((k) => `\`${cell(k)}\``).join(' ');
  return [
    '| where | key | what it does |',
    '|---|---|---|',
    ...rows.map(([where, keys, what]) => `| ${where} | ${code(keys)} | ${cell(what)} |`),
  ].join('\n');
}
