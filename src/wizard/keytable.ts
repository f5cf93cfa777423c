/**
 * The wizard's keys as data: one table of bindings per surface (a list, a text field, the question, the
 * review, the finish menu, the overwrite diff, the quit dialog, the help, the picture, the glossary, the
 * steps editor and its offer), a pure dispatcher that walks the focused surfaces from the innermost out and
 * stops at the first handler that says "handled", and the hint row built from the same tables, so the
 * hints and the behaviour cannot drift apart.
 *
 * A focused text field is the innermost surface and claims printable keys, ←/→, Backspace and Enter:
 * `q`, `r` and `←` reach the outer surfaces only when no field has the focus, with no upward "I am
 * typing" state. Ctrl+C is checked before any surface and always aborts.
 */
import {
  type KeyBinding,
  type KeyPress,
  fitHints,
  firstBinding,
  keyTableMarkdown,
  type KeyRow,
  plainKey as plain,
  pressesFor,
} from '../text/index.js';

/** Where keys are pressed. A screen focuses several at once, innermost first (see `stackFor`). */
export type Surface =
  | 'app'
  | 'question'
  | 'modeQuestion'
  | 'list'
  | 'answerField'
  | 'textField'
  | 'review'
  | 'finish'
  | 'diff'
  | 'launchAsk'
  | 'dialog'
  | 'help'
  | 'picture'
  | 'glossary'
  | 'explain'
  | 'steps'
  | 'editing'
  | 'offer'
  | 'templates'
  | 'paste'
  | 'start'
  | 'startSub';

/** What a key means. */
export type Command =
  | 'abort'
  | 'quit'
  | 'back'
  | 'help'
  | 'glossary'
  | 'picture'
  | 'explain'
  | 'nextTab'
  | 'scrollUp'
  | 'scrollDown'
  | 'review'
  | 'up'
  | 'down'
  | 'pick'
  | 'choose'
  | 'type'
  | 'cursor'
  | 'erase'
  | 'eraseToStart'
  | 'eraseToEnd'
  | 'eraseWord'
  | 'submit'
  | 'yes'
  | 'no'
  | 'close'
  | 'top'
  | 'bottom'
  | 'edit'
  | 'editFlag'
  | 'addArg'
  | 'removeArg'
  | 'moveArgUp'
  | 'moveArgDown'
  | 'prevStep'
  | 'nextStep'
  | 'addStep'
  | 'removeStep'
  | 'config'
  | 'templates'
  | 'launchDir'
  | 'paste'
  | 'done'
  | 'swallow';

/** One binding (src/text/keytable.ts), with how the hint row names the key and the action. */
export interface Binding extends KeyBinding<Command> {
  /** What the hint row says it does (empty: not in the hint row). */
  label: string;
  /** In the hint row: kept first when the row is short of room (3 always, 1 first to go); 0: never shown. */
  priority: 0 | 1 | 2 | 3;
}
const printable = (input: string, key: KeyPress) =>
  input !== '' &&
  !key.ctrl &&
  !key.meta &&
  !key.return &&
  !key.tab &&
  !key.escape &&
  !key.backspace &&
  !key.delete &&
  !/[\x00-\x1f\x7f]/.test(input);
const arrowsOrPaging = (k: KeyPress) =>
  k.upArrow || k.downArrow || k.leftArrow || k.rightArrow || k.pageUp || k.pageDown;

const b = (
  command: Command,
  keys: string,
  label: string,
  priority: Binding['priority'],
  match: Binding['match'],
): Binding => ({ command, keys, label, priority, match });

/** Checked before every surface: Ctrl+C aborts at once, wherever the focus is. */
export const ALWAYS: readonly Binding[] = [b('abort', '^C', 'abort', 1, (i, k) => k.ctrl && i === 'c')];

const SWALLOW = b('swallow', '', '', 0, () => true);
const fieldKeys = (allowHelpKey: boolean): Binding[] => [
  b('submit', 'Enter', 'accept', 3, (_i, k) => k.return),
  // ↑↓ too: a one-line field has nowhere to go, and they must not move the list or the rows around it.
  b(
    'cursor',
    '←→ Home/End ^A/^E',
    'move the cursor (to the start or the end)',
    0,
    (i, k) =>
      k.leftArrow ||
      k.rightArrow ||
      k.home ||
      k.end ||
      k.upArrow ||
      k.downArrow ||
      (k.ctrl && (i === 'a' || i === 'e')),
  ),
  b('erase', 'Bksp', '', 0, (_i, k) => k.backspace || k.delete),
  // As in a shell's line editor.
  b('eraseToStart', '^U', 'erase to the start of the field', 0, (i, k) => k.ctrl && i === 'u'),
  b('eraseToEnd', '^K', 'erase to the end of the field', 0, (i, k) => k.ctrl && i === 'k'),
  b('eraseWord', '^W', 'erase the word before the cursor', 0, (i, k) => k.ctrl && i === 'w'),
  b('type', '', '', 0, (i, k) => printable(i, k) && !(allowHelpKey && i === '?') && !arrowsOrPaging(k)),
];

/** The tables. Within a table the first matching binding wins; hints keep table order. */
export const KEY_TABLES: Record<Surface, readonly Binding[]> = {
  app: [
    b('nextTab', 'Tab', 'preview', 2, (_i, k) => k.tab && !k.shift),
    b('scrollUp', 'PgUp/Dn', 'scroll', 1, (_i, k) => k.pageUp),
    b('scrollDown', 'PgDn', '', 0, (_i, k) => k.pageDown),
    b('explain', 'e', 'explain', 1, (i, k) => plain(i, k, 'e')),
    b('quit', 'q', 'quit', 2, (i, k) => plain(i, k, 'q')),
  ],
  question: [
    b('back', 'Esc/←', 'back', 3, (_i, k) => k.escape || k.leftArrow),
    b('help', '?', 'help', 2, (i) => i === '?'),
    b('review', 'r', 'review', 2, (i, k) => plain(i, k, 'r')),
  ],
  modeQuestion: [b('picture', 'p', 'picture', 3, (i, k) => plain(i, k, 'p'))],
  list: [
    b('up', '↑↓', 'move', 2, (i, k) => k.upArrow || plain(i, k, 'k')),
    b('down', '', '', 0, (i, k) => k.downArrow || plain(i, k, 'j')),
    b('pick', '1-9', '', 0, (i, k) => /^[1-9]$/.test(i) && !k.ctrl && !k.meta),
    b('choose', 'Enter', 'choose', 3, (_i, k) => k.return),
  ],
  // A question's typed answer: `?` still opens the help (no answer needs a question mark).
  answerField: fieldKeys(true),
  // Any other field (a path, a preset name, a step's argument): every printable key is text.
  textField: fieldKeys(false),
  review: [b('back', 'Esc/←', 'back', 3, (_i, k) => k.escape || k.leftArrow)],
  finish: [b('back', 'Esc/←', 'back to the review', 3, (_i, k) => k.escape || k.leftArrow)],
  diff: [
    b('yes', 'y', 'write (backups kept)', 3, (i) => i === 'y' || i === 'Y'),
    b('no', 'n/Esc', 'cancel', 3, (i, k) => i === 'n' || i === 'N' || k.escape),
    b('up', '↑↓ PgUp/PgDn', 'scroll the diff', 2, (_i, k) => k.upArrow || k.pageUp),
    b('down', '', '', 0, (_i, k) => k.downArrow || k.pageDown),
    SWALLOW,
  ],
  // Launch chosen on the finish menu: it starts training (GPU hours), so it asks first.
  launchAsk: [
    b('yes', 'y/Enter', 'launch now', 3, (i, k) => i === 'y' || i === 'Y' || k.return),
    b('no', 'n/Esc', 'not now', 3, (i, k) => i === 'n' || i === 'N' || k.escape),
    SWALLOW,
  ],
  dialog: [
    b('yes', 'y', 'quit without writing', 3, (i) => i === 'y' || i === 'Y'),
    b('no', 'n/Esc', 'stay', 3, (i, k) => i === 'n' || i === 'N' || k.escape),
    SWALLOW,
  ],
  help: [
    b('close', '?/Esc', 'close help', 3, (i, k) => i === '?' || k.escape),
    b('glossary', 'g', 'glossary', 3, (i, k) => plain(i, k, 'g')),
    // Under a text field `g` is text: Ctrl+G reaches the glossary there.
    b('glossary', '^G', 'glossary', 3, (i, k) => k.ctrl && i === 'g'),
  ],
  picture: [
    b('close', 'p/Esc', 'close', 3, (i, k) => plain(i, k, 'p') || k.escape || plain(i, k, 'q')),
    b('glossary', 'g', 'glossary', 3, (i, k) => plain(i, k, 'g')),
  ],
  glossary: [
    b('close', 'Esc/q', 'close', 3, (i, k) => k.escape || plain(i, k, 'q') || plain(i, k, 'g') || k.leftArrow),
    b('up', '↑↓', 'scroll', 2, (i, k) => k.upArrow || plain(i, k, 'k')),
    b('down', '', '', 0, (i, k) => k.downArrow || plain(i, k, 'j')),
    b('scrollUp', 'PgUp/Dn', 'page', 2, (_i, k) => k.pageUp),
    b('scrollDown', '', '', 0, (i, k) => k.pageDown || plain(i, k, ' ')),
    b('top', 'Home/End', 'ends', 1, (_i, k) => k.home),
    b('bottom', '', '', 0, (_i, k) => k.end),
    SWALLOW,
  ],
  explain: [
    b('close', 'Esc/e', 'close', 3, (i, k) => k.escape || plain(i, k, 'e') || plain(i, k, 'q') || k.leftArrow),
    b('up', '↑↓', 'scroll', 2, (i, k) => k.upArrow || plain(i, k, 'k')),
    b('down', '', '', 0, (i, k) => k.downArrow || plain(i, k, 'j')),
    b('scrollUp', 'PgUp/Dn', 'page', 2, (_i, k) => k.pageUp),
    b('scrollDown', '', '', 0, (i, k) => k.pageDown || plain(i, k, ' ')),
    b('top', 'Home/End', 'ends', 1, (_i, k) => k.home),
    b('bottom', '', '', 0, (_i, k) => k.end),
    SWALLOW,
  ],
  steps: [
    b('up', '↑↓', 'move', 2, (i, k) => (k.upArrow && !k.shift) || plain(i, k, 'k')),
    b('down', '', '', 0, (i, k) => (k.downArrow && !k.shift) || plain(i, k, 'j')),
    b('edit', 'Enter', 'edit', 3, (_i, k) => k.return),
    b('prevStep', '←→', 'step', 2, (_i, k) => k.leftArrow),
    b('nextStep', '', '', 0, (_i, k) => k.rightArrow),
    b('addArg', 'a', 'add arg', 2, (i, k) => plain(i, k, 'a')),
    b('removeArg', 'd', 'delete arg', 2, (i, k) => plain(i, k, 'd') || k.delete),
    b('moveArgUp', 'K/J', 'reorder', 1, (i, k) => plain(i, k, 'K') || (k.upArrow && k.shift)),
    b('moveArgDown', '', '', 0, (i, k) => plain(i, k, 'J') || (k.downArrow && k.shift)),
    b('editFlag', 'f', 'edit flag', 1, (i, k) => plain(i, k, 'f')),
    b('config', 'c', 'config', 2, (i, k) => plain(i, k, 'c')),
    b('addStep', 'N', 'new step', 1, (i, k) => plain(i, k, 'N')),
    b('removeStep', 'D', 'delete step', 1, (i, k) => plain(i, k, 'D')),
    b('templates', 't', 'template', 1, (i, k) => plain(i, k, 't')),
    b('launchDir', 'L', 'launch dir', 1, (i, k) => plain(i, k, 'L')),
    b('paste', 'P', 'paste', 1, (i, k) => plain(i, k, 'P')),
    b('review', 'r', 'review', 3, (i, k) => plain(i, k, 'r')),
    b('back', 'Esc', 'back', 3, (_i, k) => k.escape),
    b('help', '?', 'keys', 2, (i) => i === '?'),
  ],
  // Around a field being edited (a step's argument, a directory, a preset name): Esc cancels the edit.
  editing: [b('no', 'Esc', 'cancel', 3, (_i, k) => k.escape)],
  offer: [
    b('yes', 'y', 'change everywhere', 3, (i) => i === 'y' || i === 'Y'),
    b('no', 'n/Esc', 'only here', 3, (i, k) => i === 'n' || i === 'N' || k.escape),
    SWALLOW,
  ],
  templates: [
    b('back', 'Esc', 'back', 3, (_i, k) => k.escape),
    b('paste', 'P', 'paste a command or script', 3, (i, k) => plain(i, k, 'P')),
  ],
  // The paste box takes the text whole (a paste arrives as one chunk); only these keys are not text.
  paste: [
    b('done', '^D', 'read the steps', 3, (i, k) => k.ctrl && i === 'd'),
    b('no', 'Esc', 'cancel', 3, (_i, k) => k.escape),
  ],
  // The start screen: no preview yet, so only quitting; its sub-views (the preset list) go back with Esc or ←.
  start: [b('quit', 'q', 'quit', 2, (i, k) => plain(i, k, 'q'))],
  startSub: [b('back', 'Esc/←', 'back', 3, (_i, k) => k.escape || k.leftArrow)],
};

/** The start menu's key surfaces (also what the first frame, painted before Ink loads, shows as hints). */
export const START_STACK: readonly Surface[] = ['list', 'start'];

/** Surfaces that take every key (besides Ctrl+C): nothing outside them is reachable, nor hinted. */
const MODAL: ReadonlySet<Surface> = new Set<Surface>([
  'diff',
  'launchAsk',
  'dialog',
  'glossary',
  'explain',
  'offer',
  'paste',
]);

/** The binding a key meets first, innermost surface first (Ctrl+C before any), or null. */
export function resolveKey(
  stack: readonly Surface[],
  input: string,
  key: KeyPress,
): { surface: Surface | 'always'; binding: Binding } | null {
  for (const binding of ALWAYS) if (binding.match(input, key)) return { surface: 'always', binding };
  return firstBinding(KEY_TABLES, stack, input, key);
}

/** What a surface's handler says about a command: it acted on it, or it lets the next surface try. */
export type Handled = 'handled' | 'unhandled';
/** A surface's handler. */
export type SurfaceHandler = (command: Command, input: string, key: KeyPress) => Handled;

/**
 * Delivers a key: Ctrl+C to `handlers.always`; then each surface from the innermost out whose table has a
 * binding for the key, until a handler says "handled" (a modal surface's catch-all swallows the key). A
 * surface without a handler lets the key pass. Returns what handled the key, or null.
 */
export function dispatchKey(
  stack: readonly Surface[],
  input: string,
  key: KeyPress,
  handlers: Partial<Record<Surface | 'always', SurfaceHandler>>,
): { surface: Surface | 'always'; command: Command } | null {
  for (const binding of ALWAYS) {
    if (binding.match(input, key) && handlers.always?.(binding.command, input, key) === 'handled')
      return { surface: 'always', command: binding.command };
  }
  for (const surface of stack) {
    const binding = firstBinding(KEY_TABLES, [surface], input, key)?.binding;
    if (!binding) continue;
    if (binding.command === 'swallow') return { surface, command: 'swallow' };
    if (handlers[surface]?.(binding.command, input, key) === 'handled') return { surface, command: binding.command };
  }
  return null;
}

/** A hint as shown: its binding, and only those of its keys that reach it on this stack. */
export interface Hint {
  binding: Binding;
  keys: string;
}

/**
 * The hints a stack shows, in order: innermost surface first, each command once, and only bindings that
 * one of their own keys reaches (a key an inner surface takes, such as `q` or `←` in a text field, is
 * left out of the hint, and a binding no key reaches is not hinted).
 */
export function hints(stack: readonly Surface[]): Hint[] {
  const out: Hint[] = [];
  const seen = new Set<Command>();
  // A hint names its silent partners' keys too (`↑↓ move` covers the `down` binding after `up`).
  const partners = (x: Binding) => {
    const table = Object.values(KEY_TABLES).find((t) => t.includes(x)) ?? ALWAYS;
    const out = [x];
    for (const y of table.slice(table.indexOf(x) + 1)) {
      if (y.priority !== 0 || y.label !== '' || y.command === 'swallow') break;
      out.push(y);
    }
    return out;
  };
  const reaches = (x: Binding, token: string) => {
    const mine = partners(x);
    return pressesFor(token).some(([i, k]) => {
      const hit = resolveKey(stack, i, k)?.binding;
      return hit !== undefined && mine.includes(hit);
    });
  };
  const take = (x: Binding) => {
    if (x.priority === 0 || x.label === '' || seen.has(x.command)) return;
    const keys = x.keys.split('/').filter((t) => reaches(x, t));
    if (keys.length === 0) return;
    out.push({ binding: x, keys: keys.join('/') });
    seen.add(x.command);
  };
  for (const surface of stack) {
    for (const x of KEY_TABLES[surface]) take(x);
    if (MODAL.has(surface)) break;
  }
  for (const x of ALWAYS) take(x);
  return out;
}

/** The text of one hint: `Esc/← back`. */
export function hintText(h: Hint): string {
  return `${h.keys} ${h.binding.label}`;
}

/**
 * The hint row for a stack in at most `maxLines` lines of `width` columns: every hint when they fit, else
 * the least important ones left out (the help lists every key).
 */
export function hintLines(stack: readonly Surface[], width: number, maxLines = 2): string[] {
  return fitHints(
    hints(stack).map((h) => ({ text: hintText(h), keep: h.binding.priority })),
    width,
    maxLines,
    3,
  );
}

/** Where each surface's keys work, in the words of the key table of docs/wizard.md. */
const SURFACE_TITLES: Partial<Record<Surface, string>> = {
  start: 'start screen',
  list: 'any list',
  question: 'a question',
  modeQuestion: 'the ZeRO question',
  answerField: "a question's text field",
  textField: 'other text fields',
  editing: 'a field being edited',
  help: 'help (`?`)',
  picture: 'the ZeRO picture (`p`)',
  glossary: 'the glossary',
  explain: 'the explain view (`e`)',
  steps: 'the steps screen',
  offer: 'the "change everywhere?" offer',
  templates: 'the step templates',
  paste: 'the paste box (steps screen, `P`)',
  review: 'the review',
  finish: 'the finish menu',
  diff: 'the overwrite diff',
  launchAsk: 'the launch question',
  dialog: 'the quit dialog',
  app: 'everywhere but the start screen',
};

/** What a key does, in more words than the hint row has room for (the docs' table); else the hint's label. */
const LONG_LABELS: Partial<Record<Command, string>> = {
  quit: 'quit (asks first when answers changed; Ctrl+C never asks)',
  pick: 'choose the n-th entry shown',
  help: "help: what the question does, accelerate's wording, the YAML and JSON keys, what Enter chooses",
  review: 'go to the review',
  picture: 'the picture of the highlighted mode: what each GPU and the CPU (or NVMe) hold, and the traffic',
  submit: 'accept (refused while the text is invalid)',
  glossary: "the glossary, with your model's numbers",
  explain:
    'explain: every value accelerate and DeepSpeed will use for each step, where it comes from and why (as `zerowiz explain`)',
  nextTab: 'preview: YAML → JSON → commands',
  templates: 'start the steps again from a template',
  config:
    "which accelerate config the step runs with: this setup's, pinned to one without DeepSpeed, or accelerate's default",
};

/** Long labels that hold on one surface only (the same command does something else elsewhere). */
const SURFACE_LONG_LABELS: Partial<Record<Surface, Partial<Record<Command, string>>>> = {
  list: { up: 'move the highlight (also k/j); on the ZeRO question the panel, the preview and the picture follow' },
  app: { scrollUp: 'scroll the preview' },
  glossary: { up: 'scroll a line (also k/j)', scrollUp: 'scroll a page (also space)' },
  explain: { up: 'scroll a line (also k/j)', scrollUp: 'scroll a page (also space)' },
  steps: {
    up: 'move between the rows (also k/j)',
    edit: 'edit the highlighted row (on the config row: as c)',
    prevStep: 'the previous / next step',
    addArg: 'add an argument after the highlighted one (its flag, then its value)',
    removeArg: 'delete the highlighted argument (not the script)',
    moveArgUp: 'move the highlighted argument up / down',
    editFlag: "edit the highlighted argument's flag",
    config: "its config: this setup's, one without DeepSpeed, or accelerate's default",
    addStep: 'add a step after this one',
    removeStep: 'delete this step',
    templates: 'start again from a template',
    launchDir: "where the steps run: your trainer's checkout (type its path)",
    paste: 'paste an `accelerate launch` line or a .sh for steps',
    back: 'back to the last question (or to the review that opened the steps)',
    help: "this screen's keys, with what each does",
  },

  diff: { up: 'scroll the diff' },
};

/** What a binding does on a surface, in the docs' words (a longer text than the hint row's, when there is one). */
export function longLabel(surface: Surface, x: Binding): string {
  return SURFACE_LONG_LABELS[surface]?.[x.command] ?? LONG_LABELS[x.command] ?? x.label;
}

/** What Ctrl+C does, for the docs' first row. */
const ABORT_LONG_LABEL =
  'abort at once (exit 130): nothing more is written; files the finish step already wrote are listed';

/**
 * The key table of docs/wizard.md, from the tables themselves: one row per binding with words (those the hint rows show
 * and a field's editing keys) and the list's 1-9, Ctrl+C first. A test keeps the page equal to it.
 */
export function keysMarkdown(): string {
  const rows: KeyRow[] = [['anywhere', ALWAYS[0]!.keys, ABORT_LONG_LABEL]];
  for (const [surface, title] of Object.entries(SURFACE_TITLES) as [Surface, string][]) {
    const seen = new Set<Command>();
    for (const x of KEY_TABLES[surface]) {
      // Every binding with words (a hinted key, or one only the docs name: a field's editing keys), and 1-9.
      const shown = x.label !== '';
      if ((!shown && x.command !== 'pick') || seen.has(x.command)) continue;
      seen.add(x.command);
      const label = longLabel(surface, x);
      rows.push([title, x.keys, label]);
    }
  }
  return keyTableMarkdown(rows);
}
