/**
 * A one-line text field: printable keys and pasted text insert, ←/→ Home/End ^A/^E move the cursor,
 * Backspace/Delete, ^U, ^K and ^W erase as a shell's line editor does, Enter submits. A prefilled suggestion
 * (`selected`) is replaced by the first key typed. A value wider than the field scrolls with the cursor. The
 * editing is src/wizard/field.ts's; the value and cursor live in a ref as well, so keys typed faster than a
 * frame build on each other; keys come through the app's key router (see keys.tsx).
 */
import type React from 'react';
import { useRef, useState } from 'react';
import { Text } from 'ink';
import { editField, fieldOf, fieldWindow, type FieldState } from '../../src/wizard/index.js';
import { useSurface } from './keys.js';
import { tint } from './theme.js';

/** Props of the field. */
export interface TextFieldProps {
  value: string;
  focus?: boolean;
  onChange: (value: string) => void;
  onSubmit?: (value: string) => void;
  /**
   * Its key surface: `answerField` (a question's answer: `?` opens the help) or `textField` (every printable
   * key is text). Keys it does not claim (Esc, Tab, PgUp/PgDn) go on to the surfaces around it.
   */
  surface?: 'answerField' | 'textField';
  /** Cells the field has (default: the value's own length): a longer value scrolls with the cursor. */
  width?: number;
  /** The value is a suggestion: shown selected, and the first key typed replaces it. */
  selected?: boolean;
}

/** The field. */
export function TextField(p: TextFieldProps): React.JSX.Element {
  const state = useRef<FieldState & { offset: number }>({ ...fieldOf(p.value, p.selected), offset: 0 });
  const [, setTick] = useState(0);
  // The parent changed the value (or refused a change): follow it.
  if (state.current.value !== p.value)
    state.current = {
      value: p.value,
      cursor: Math.min(state.current.cursor, p.value.length),
      selected: false,
      offset: state.current.offset,
    };
  const focus = p.focus !== false;

  // The field's keys (src/wizard/keytable.ts): Enter, the cursor keys, the erasers, printable text.
  useSurface(
    p.surface ?? 'textField',
    (command, input, key) => {
      const s = state.current;
      if (command === 'submit') {
        p.onSubmit?.(s.value);
        return 'handled';
      }
      const next = editField(s, command, input, key);
      if (!next) return 'unhandled';
      state.current = { ...next, offset: s.offset };
      setTick((t) => t + 1);
      if (next.value !== s.value) p.onChange(next.value);
      return 'handled';
    },
    { isActive: focus },
  );

  const { value, cursor, selected, offset } = state.current;
  if (!focus) return <Text>{value}</Text>;
  if (selected)
    return (
      <Text>
        <Text inverse>{value}</Text>
        <Text color={tint('dim')}>{'  (type to replace)'}</Text>
      </Text>
    );
  const win = fieldWindow(value, cursor, p.width ?? value.length + 1, offset);
  state.current.offset = win.offset;
  return (
    <Text>
      {win.cutLeft ? '…' : ''}
      {win.before}
      <Text inverse>{win.at}</Text>
      {win.after}
      {win.cutRight ? '…' : ''}
    </Text>
  );
}
