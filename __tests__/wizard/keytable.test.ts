import { describe, expect, it } from 'vitest';
import {
  KEY_TABLES,
  dispatchKey,
  hintLines,
  hints,
  resolveKey,
  type Command,
  type Surface,
  type SurfaceHandler,
} from '../../src/wizard/keytable.js';
import { NO_KEY, pressesFor, type KeyPress } from '../../src/text/keytable.js';

const K: KeyPress = NO_KEY;
const key = (k: Partial<KeyPress>): KeyPress => ({ ...K, ...k });
/** Named presses as Ink reports them. */
const P = {
  esc: ['', key({ escape: true, meta: true })],
  left: ['', key({ leftArrow: true })],
  up: ['', key({ upArrow: true })],
  enter: ['\r', key({ return: true })],
  tab: ['', key({ tab: true })],
  ctrlC: ['c', key({ ctrl: true })],
  pgdn: ['', key({ pageDown: true })],
  ch: (c: string) => [c, K] as [string, KeyPress],
} as const;
const cmd = (stack: Surface[], [i, k]: readonly [string, KeyPress]) => {
  const r = resolveKey(stack, i, k);
  return r ? `${r.surface}:${r.binding.command}` : null;
};

const LIST_Q: Surface[] = ['list', 'question', 'app'];
const TEXT_Q: Surface[] = ['answerField', 'question', 'app'];
const MODE_Q: Surface[] = ['list', 'modeQuestion', 'question', 'app'];

describe('the key tables: the focused surface claims its keys', () => {
  it('in a text answer, q, r and ← are text or cursor; Esc goes back, Tab previews, ? opens the help', () => {
    expect(cmd(TEXT_Q, P.ch('q'))).toBe('answerField:type');
    expect(cmd(TEXT_Q, P.ch('r'))).toBe('answerField:type');
    expect(cmd(TEXT_Q, P.left)).toBe('answerField:cursor');
    expect(cmd(TEXT_Q, P.enter)).toBe('answerField:submit');
    expect(cmd(TEXT_Q, P.esc)).toBe('question:back');
    expect(cmd(TEXT_Q, P.tab)).toBe('app:nextTab');
    expect(cmd(TEXT_Q, P.ch('?'))).toBe('question:help');
    // In any other field (a path, a step's argument) ? is text too.
    expect(cmd(['textField', 'steps', 'app'], P.ch('?'))).toBe('textField:type');
  });

  it('on a list question, q quits, r reviews, ← goes back, 1-9 pick, Enter chooses', () => {
    expect(cmd(LIST_Q, P.ch('q'))).toBe('app:quit');
    expect(cmd(LIST_Q, P.ch('r'))).toBe('question:review');
    expect(cmd(LIST_Q, P.left)).toBe('question:back');
    expect(cmd(LIST_Q, P.ch('3'))).toBe('list:pick');
    expect(cmd(LIST_Q, P.ch('k'))).toBe('list:up');
    expect(cmd(LIST_Q, P.enter)).toBe('list:choose');
    expect(cmd(MODE_Q, P.ch('p'))).toBe('modeQuestion:picture');
    expect(cmd(LIST_Q, P.ch('p'))).toBeNull();
  });

  it('Ctrl+C aborts from every surface, the modal ones included', () => {
    for (const s of Object.keys(KEY_TABLES) as Surface[]) expect(cmd([s, 'app'], P.ctrlC)).toBe('always:abort');
  });

  it('a modal dialog takes every other key', () => {
    const stack: Surface[] = ['dialog', 'list', 'question', 'app'];
    expect(cmd(stack, P.ch('y'))).toBe('dialog:yes');
    expect(cmd(stack, P.esc)).toBe('dialog:no');
    for (const k of [P.ch('q'), P.ch('r'), P.up, P.enter, P.tab]) expect(cmd(stack, k)).toBe('dialog:swallow');
  });

  it('the picture follows the highlight (↑↓ reach the list) and closes on p, Esc or q', () => {
    const stack: Surface[] = ['picture', ...MODE_Q];
    expect(cmd(stack, P.up)).toBe('list:up');
    expect(cmd(stack, P.ch('p'))).toBe('picture:close');
    expect(cmd(stack, P.ch('q'))).toBe('picture:close');
    expect(cmd(stack, P.ch('g'))).toBe('picture:glossary');
  });

  it('the glossary is reachable from every help: g on lists, Ctrl+G under a text field', () => {
    expect(cmd(['help', ...LIST_Q], P.ch('g'))).toBe('help:glossary');
    expect(cmd(['answerField', 'help', 'question', 'app'], P.ch('g'))).toBe('answerField:type');
    expect(cmd(['answerField', 'help', 'question', 'app'], ['g', key({ ctrl: true })])).toBe('help:glossary');
    expect(cmd(['answerField', 'help', 'question', 'app'], P.ch('?'))).toBe('help:close');
  });
});

describe('dispatchKey: handlers say whether they handled the key', () => {
  it('stops at the first surface that handles it, passes on when it does not', () => {
    const calls: string[] = [];
    const h =
      (name: string, result: 'handled' | 'unhandled'): SurfaceHandler =>
      (c: Command) => {
        calls.push(`${name}:${c}`);
        return result;
      };
    // The list does not know ←; the question goes back.
    expect(dispatchKey(LIST_Q, ...P.left, { list: h('list', 'handled'), question: h('q', 'handled') })).toEqual({
      surface: 'question',
      command: 'back',
    });
    // A field that lets Enter pass (say it is refused elsewhere) hands it to the next surface with a binding.
    calls.length = 0;
    const r = dispatchKey(['textField', 'list', 'app'], ...P.enter, {
      textField: h('field', 'unhandled'),
      list: h('list', 'handled'),
    });
    expect(calls).toEqual(['field:submit', 'list:choose']);
    expect(r).toEqual({ surface: 'list', command: 'choose' });
    // Nobody handles it: null. A modal swallow needs no handler.
    expect(dispatchKey(LIST_Q, ...P.ch('x'), {})).toBeNull();
    expect(dispatchKey(['dialog', 'app'], ...P.ch('x'), {})).toEqual({ surface: 'dialog', command: 'swallow' });
    expect(dispatchKey(['dialog', 'app'], ...P.ctrlC, { always: () => 'handled' })).toEqual({
      surface: 'always',
      command: 'abort',
    });
  });
});

describe('the hint row is built from the same tables', () => {
  const texts = (stack: Surface[]) => hints(stack).map((h) => `${h.keys} ${h.binding.label}`);

  it('on a list question: the list keys, back, help, review, preview, quit, abort', () => {
    expect(texts(LIST_Q)).toEqual([
      '↑↓ move',
      'Enter choose',
      'Esc/← back',
      '? help',
      'r review',
      'Tab preview',
      'PgUp/Dn scroll',
      'e explain',
      'q quit',
      '^C abort',
    ]);
  });

  it('e opens the explain view from any screen with the preview; in a text field it is text; the view takes every key', () => {
    expect(resolveKey(LIST_Q, ...P.ch('e'))).toMatchObject({ surface: 'app', binding: { command: 'explain' } });
    expect(resolveKey(['list', 'review', 'app'], ...P.ch('e'))).toMatchObject({ binding: { command: 'explain' } });
    expect(resolveKey(TEXT_Q, ...P.ch('e'))).toMatchObject({ surface: 'answerField', binding: { command: 'type' } });
    expect(texts(['explain', 'app'])).toEqual([
      'Esc/e close',
      '↑↓ scroll',
      'PgUp/Dn page',
      'Home/End ends',
      '^C abort',
    ]);
    expect(dispatchKey(['explain', 'app'], ...P.ch('x'), {})).toEqual({ surface: 'explain', command: 'swallow' });
  });

  it('in a text answer: no q, no r, and ← is not offered as back', () => {
    expect(texts(TEXT_Q)).toEqual(['Enter accept', 'Esc back', '? help', 'Tab preview', 'PgUp/Dn scroll', '^C abort']);
  });

  it('a modal surface hints only itself (and abort)', () => {
    expect(texts(['dialog', ...LIST_Q])).toEqual(['y quit without writing', 'n/Esc stay', '^C abort']);
    expect(texts(['answerField', 'help', 'question', 'app'])).toContain('^G glossary');
    expect(texts(['answerField', 'help', 'question', 'app'])).not.toContain('g glossary');
    expect(texts(['help', ...LIST_Q])).toContain('g glossary');
    expect(texts(['picture', ...MODE_Q])).not.toContain('q quit');
  });

  it.each([
    ['list question', LIST_Q],
    ['mode question', MODE_Q],
    ['text answer', TEXT_Q],
    ['steps editor', ['steps', 'app'] as Surface[]],
    ['glossary', ['glossary', 'app'] as Surface[]],
    ['overwrite diff', ['diff', 'finish', 'app'] as Surface[]],
  ])('fits two lines of 80 columns: %s', (_n, stack) => {
    const lines = hintLines(stack, 80);
    expect(lines.length).toBeLessThanOrEqual(2);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    // The essential keys survive the trimming.
    for (const h of hints(stack).filter((x) => x.binding.priority === 3))
      expect(lines.join(' · ')).toContain(`${h.keys} ${h.binding.label}`);
  });

  it('names keys the way the presses are written', () => {
    expect(pressesFor('Esc/←').map(([, k]) => [k.escape, k.leftArrow])).toEqual([
      [true, false],
      [false, true],
    ]);
    expect(pressesFor('1-9')).toEqual([['1', K]]);
    expect(pressesFor('^C')).toEqual([['c', key({ ctrl: true })]]);
  });
});
