/**
 * A one-line text field's editing and drawing, pure (components/common/TextField.tsx renders it): its value,
 * the cursor, and whether the whole value is selected (a prefilled suggestion: the first key typed replaces it,
 * as in a dialog's name field); the keys of a shell's line editor (^A ^E ^U ^K ^W); and the window of a value
 * wider than the field, which follows the cursor so it never leaves the screen.
 */
import type { KeyPress } from '../text/index.js';
import type { Command } from './keytable.js';

/** The field's state. */
export interface FieldState {
  value: string;
  /** 0..value.length. */
  cursor: number;
  /** The whole value is selected: typing replaces it, erasing clears it, a cursor key keeps it. */
  selected: boolean;
}

/** A field holding `value`, the cursor at its end; `selected`: the value is a suggestion typing replaces. */
export function fieldOf(value: string, selected = false): FieldState {
  return { value, cursor: value.length, selected: selected && value !== '' };
}

/** The start of the word before `cursor` (spaces, then the word, as ^W erases in a shell). */
function wordStart(value: string, cursor: number): number {
  let i = cursor;
  while (i > 0 && value[i - 1] === ' ') i--;
  while (i > 0 && value[i - 1] !== ' ') i--;
  return i;
}

/** A key the field claims (keytable.ts field bindings) applied to its state; null for a command it does not edit. */
export function editField(s: FieldState, command: Command, input: string, key: KeyPress): FieldState | null {
  const { value, cursor } = s;
  switch (command) {
    case 'cursor': {
      let c = cursor;
      if (key.leftArrow) c = s.selected ? 0 : Math.max(0, cursor - 1);
      else if (key.rightArrow) c = s.selected ? value.length : Math.min(value.length, cursor + 1);
      else if (key.home || (key.ctrl && input === 'a')) c = 0;
      else if (key.end || (key.ctrl && input === 'e')) c = value.length;
      return { value, cursor: c, selected: false };
    }
    case 'erase':
      if (s.selected) return fieldOf('');
      if (cursor === 0) return s;
      return { value: value.slice(0, cursor - 1) + value.slice(cursor), cursor: cursor - 1, selected: false };
    case 'eraseToStart':
      return { value: s.selected ? '' : value.slice(cursor), cursor: 0, selected: false };
    case 'eraseToEnd':
      return s.selected ? fieldOf('') : { value: value.slice(0, cursor), cursor, selected: false };
    case 'eraseWord': {
      if (s.selected) return fieldOf('');
      const at = wordStart(value, cursor);
      return { value: value.slice(0, at) + value.slice(cursor), cursor: at, selected: false };
    }
    case 'type':
      if (s.selected) return { value: input, cursor: input.length, selected: false };
      return {
        value: value.slice(0, cursor) + input + value.slice(cursor),
        cursor: cursor + input.length,
        selected: false,
      };
    default:
      return null;
  }
}

/** What the field draws in `width` cells: the text before the cursor, the cell under it, the text after, and whether each end is cut (`…`). */
export interface FieldWindow {
  offset: number;
  before: string;
  at: string;
  after: string;
  cutLeft: boolean;
  cutRight: boolean;
}

/**
 * The part of the value shown in `width` cells (the cursor's cell included) starting near `offset` (the last
 * window's start, so the text moves only when the cursor would leave it): the cursor always inside, a `…` where
 * the value goes on beyond either end.
 */
export function fieldWindow(value: string, cursor: number, width: number, offset = 0): FieldWindow {
  const w = Math.max(4, width);
  const total = value.length + 1; // the cell after the last character, where the cursor can stand
  let start = Math.max(0, Math.min(offset, total - w));
  if (total <= w) start = 0;
  else {
    // One cell at each cut end is the `…`: the cursor stays off those cells.
    const left = () => (start > 0 ? 1 : 0);
    const right = () => (start + w < total ? 1 : 0);
    if (cursor < start + left()) start = Math.max(0, cursor - 1);
    if (cursor > start + w - 1 - right()) start = Math.min(total - w, cursor - w + 2);
    if (cursor < start + left()) start = Math.max(0, cursor - 1);
  }
  const cutLeft = start > 0;
  const cutRight = start + w < total;
  const from = start + (cutLeft ? 1 : 0);
  const to = Math.min(value.length, start + w - (cutRight ? 1 : 0));
  return {
    offset: start,
    before: value.slice(from, Math.max(from, cursor)),
    at: value[cursor] ?? ' ',
    after: value.slice(cursor + 1, to),
    cutLeft,
    cutRight,
  };
}
