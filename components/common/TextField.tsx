/**
 * A one-line text field (printable keys and pasted text insert, ←/→ move the cursor, Backspace/Delete
 * erase, Enter submits). The value and cursor live in a ref as well, so keys typed faster than a frame
 * build on each other; keys come through the app's key router (see keys.tsx).
 */
import type React from 'react';
import { useRef, useState } from 'react';
import { Text } from 'ink';
import { useKeys } from './keys.js';

/** Props of the field. */
export interface TextFieldProps {
  value: string;
  focus?: boolean;
  onChange: (value: string) => void;
  onSubmit?: (value: string) => void;
}

/** The field. */
export function TextField(p: TextFieldProps): React.JSX.Element {
  const state = useRef({ value: p.value, cursor: p.value.length });
  const [, setTick] = useState(0);
  // The parent changed the value (or refused a change): follow it.
  if (state.current.value !== p.value)
    state.current = { value: p.value, cursor: Math.min(state.current.cursor, p.value.length) };
  const focus = p.focus !== false;

  useKeys(
    (input, key) => {
      const s = state.current;
      if (
        key.upArrow ||
        key.downArrow ||
        key.tab ||
        key.escape ||
        key.pageUp ||
        key.pageDown ||
        (key.ctrl && input === 'c')
      )
        return;
      if (key.return) {
        p.onSubmit?.(s.value);
        return;
      }
      let { value, cursor } = s;
      if (key.leftArrow) cursor = Math.max(0, cursor - 1);
      else if (key.rightArrow) cursor = Math.min(value.length, cursor + 1);
      else if (key.home) cursor = 0;
      else if (key.end) cursor = value.length;
      else if (key.backspace || key.delete) {
        if (cursor > 0) {
          value = value.slice(0, cursor - 1) + value.slice(cursor);
          cursor--;
        }
      } else if (input !== '' && !key.ctrl && !key.meta) {
        value = value.slice(0, cursor) + input + value.slice(cursor);
        cursor += input.length;
      } else return;
      const changed = value !== s.value;
      state.current = { value, cursor };
      setTick((t) => t + 1);
      if (changed) p.onChange(value);
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
