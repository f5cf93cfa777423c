/**
 * A one-line text field (printable keys and pasted text insert, ←/→ move the cursor, Backspace/Delete
 * erase, Enter submits). The value and cursor live in a ref as well, so keys typed faster than a frame
 * build on each other; keys come through the app's key router (see keys.tsx).
 */
import type React from 'react';
import { useRef, useState } from 'react';
import { Text } from 'ink';
import { useSurface } from './keys.js';

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
}

/** The field. */
export function TextField(p: TextFieldProps): React.JSX.Element {
  const state = useRef({ value: p.value, cursor: p.value.length });
  const [, setTick] = useState(0);
  // The parent changed the value (or refused a change): follow it.
  if (state.current.value !== p.value)
    state.current = { value: p.value, cursor: Math.min(state.current.cursor, p.value.length) };
  const focus = p.focus !== false;

  // The field's keys (src/wizard/keytable.ts): Enter, the cursor keys, Backspace/Delete, printable text.
  useSurface(
    p.surface ?? 'textField',
    (command, input, key) => {
      const s = state.current;
      if (command === 'submit') {
        p.onSubmit?.(s.value);
        return 'handled';
      }
      let { value, cursor } = s;
      if (command === 'cursor') {
        if (key.leftArrow) cursor = Math.max(0, cursor - 1);
        else if (key.rightArrow) cursor = Math.min(value.length, cursor + 1);
        else if (key.home) cursor = 0;
        else if (key.end) cursor = value.length;
      } else if (command === 'erase') {
        if (cursor > 0) {
          value = value.slice(0, cursor - 1) + value.slice(cursor);
          cursor--;
        }
      } else if (command === 'type') {
        value = value.slice(0, cursor) + input + value.slice(cursor);
        cursor += input.length;
      } else return 'unhandled';
      const changed = value !== s.value;
      state.current = { value, cursor };
      setTick((t) => t + 1);
      if (changed) p.onChange(value);
      return 'handled';
    },
    { isActive: focus },
  );

  const { value, cursor } = state.current;
  if (!focus) return <Text>{value}</Text>;
  return (
    <Text>
      {value.slice(0, cursor)}
      <Text inverse>{value[cursor] ?? ' '}</Text>
      {value.slice(cursor + 1)}
    </Text>
  );
}
