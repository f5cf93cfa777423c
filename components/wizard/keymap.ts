/**
 * Every key of the wizard as a named command, in one place. Views ask `commandFor(input, key, ctx)`
 * and the footer prints `footerKeys(ctx)`, so the footer and the behaviour cannot drift apart.
 */
import type { Key } from 'ink';

/** A named command. */
export type Command = 'forceQuit' | 'quit' | 'back' | 'help' | 'nextTab' | 'review' | 'scrollUp' | 'scrollDown';

/** Where the keys are pressed: text fields take printable keys (q, r, ←) for themselves. */
export interface KeyContext {
  textInput: boolean;
  screen: 'start' | 'question' | 'review' | 'finish';
}

interface Binding {
  command: Command;
  /** How the footer names the key(s). */
  keys: string;
  /** What the footer says it does. */
  label: string;
  matches(input: string, key: Key, ctx: KeyContext): boolean;
}

/** The bindings, in footer order. Enter and ↑/↓ belong to the lists and fields themselves. */
export const KEYMAP: readonly Binding[] = [
  { command: 'back', keys: 'Esc/←', label: 'back', matches: (_i, k, c) => k.escape || (k.leftArrow && !c.textInput) },
  { command: 'help', keys: '?', label: 'help', matches: (i) => i === '?' },
  { command: 'nextTab', keys: 'Tab', label: 'preview', matches: (_i, k) => k.tab && !k.shift },
  { command: 'scrollUp', keys: 'PgUp', label: '', matches: (_i, k) => k.pageUp },
  { command: 'scrollDown', keys: 'PgDn', label: 'scroll preview', matches: (_i, k) => k.pageDown },
  {
    command: 'review',
    keys: 'r',
    label: 'review',
    matches: (i, k, c) => i === 'r' && !k.ctrl && !k.meta && !c.textInput && c.screen === 'question',
  },
  { command: 'quit', keys: 'q', label: 'quit', matches: (i, k, c) => i === 'q' && !k.ctrl && !k.meta && !c.textInput },
  { command: 'forceQuit', keys: '^C', label: 'abort', matches: (i, k) => k.ctrl && i === 'c' },
];

/** The command a key press means here, or null. */
export function commandFor(input: string, key: Key, ctx: KeyContext): Command | null {
  for (const b of KEYMAP) if (b.matches(input, key, ctx)) return b.command;
  return null;
}

/** The footer's key list for a context: `↑↓ move · Enter choose · Esc/← back · ...`. */
export function footerKeys(ctx: KeyContext): string {
  const parts: string[] = [ctx.textInput ? 'Enter accept' : '↑↓ Enter'];
  for (const b of KEYMAP) {
    if (b.command === 'back' && ctx.screen === 'start') continue;
    if (b.command === 'back' && ctx.textInput) {
      parts.push('Esc back');
      continue;
    }
    if (b.command === 'review' && (ctx.textInput || ctx.screen !== 'question')) continue;
    if (b.command === 'quit' && ctx.textInput) continue;
    if (b.command === 'help' && ctx.screen !== 'question') continue;
    if ((b.command === 'nextTab' || b.command === 'scrollUp' || b.command === 'scrollDown') && ctx.screen === 'start')
      continue;
    if (b.command === 'scrollUp') {
      parts.push('PgUp/Dn scroll');
      continue;
    }
    if (b.command === 'scrollDown') continue;
    parts.push(`${b.keys} ${b.label}`);
  }
  return parts.join(' · ');
}

/** The footer while the overwrite diff asks for confirmation (the finish screen handles these keys). */
export const OVERWRITE_KEYS = 'y write · n/Esc cancel · ↑↓ PgUp/PgDn scroll the diff · ^C abort';

/** Every key, for the README and `?`: [keys, what it does]. */
export const ALL_KEYS: readonly [string, string][] = [
  ['↑/↓ (or k/j)', 'move the highlight; on the ZeRO question the panel follows'],
  ['1-9', 'choose the n-th entry of a list'],
  ['Enter', 'choose / accept the typed answer (refused while it is invalid)'],
  ['Esc, ← (lists)', 'back one question, every answer kept (from a question opened in the review: back to the review)'],
  ['?', 'help on the current question: what it does, the accelerate and DeepSpeed keys, the default'],
  ['Tab', 'preview: YAML -> JSON -> commands'],
  ['PgUp/PgDn', 'scroll the preview'],
  ['r', 'go to the review screen (on a list question)'],
  ['q', 'quit (asks first when answers changed); not in text fields'],
  ['Ctrl+C', 'abort at once; nothing is written'],
];
