/**
 * A selectable list (↑/↓ or k/j move and wrap around, 1-9 choose the n-th shown entry, Enter chooses).
 * Its highlight lives in a ref as well as in state, so keys typed faster than a frame each see the one
 * before; keys come through the app's key router (see keys.tsx).
 */
import type React from 'react';
import { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import { useSurface } from './keys.js';

/** One entry. */
export interface ListItem {
  key: string;
  label: string;
  value: string;
}

/** Props of an entry's view. */
export interface ListItemProps {
  label: string;
  value: string;
  isSelected: boolean;
}

/** Props of the list. */
export interface ListProps {
  items: ListItem[];
  initialIndex?: number;
  /** Most rows shown at once; the window follows the highlight. */
  limit?: number;
  /**
   * When the entries do not all fit, the last of the `limit` rows says how many more there are above and below
   * (so a list that scrolls says so), instead of one more entry.
   */
  more?: boolean;
  isFocused?: boolean;
  /** Draws the highlight marker; called as a plain function (no hooks), so it never remounts. */
  renderIndicator: (p: { isSelected: boolean }) => React.JSX.Element;
  /** Draws an entry; called as a plain function (no hooks), so a new closure per frame costs nothing. */
  renderItem: (p: ListItemProps) => React.JSX.Element;
  onHighlight?: (item: ListItem) => void;
  onSelect: (item: ListItem) => void;
}

/** The first shown entry so that `index` is visible, moving the window as little as possible. */
export function windowTop(index: number, top: number, limit: number, count: number): number {
  if (count <= limit) return 0;
  if (index < top) return index;
  if (index >= top + limit) return index - limit + 1;
  return Math.min(top, count - limit);
}

/** The row that says a list goes on: `  ↑ 2 more · ↓ 5 more (↑↓ scroll)`. */
export function moreMark(above: number, below: number): string {
  const parts = [...(above > 0 ? [`↑ ${above} more`] : []), ...(below > 0 ? [`↓ ${below} more`] : [])];
  return `  ${parts.join(' · ')} (↑↓ scroll)`;
}

/** The list. */
export function List(p: ListProps): React.JSX.Element {
  const count = p.items.length;
  const rows = Math.max(1, Math.min(p.limit ?? count, count));
  const marked = p.more === true && count > rows && rows >= 2;
  const limit = marked ? rows - 1 : rows;
  const start = Math.max(0, Math.min(p.initialIndex ?? 0, count - 1));
  const state = useRef({
    index: start,
    top: windowTop(start, 0, limit, count),
    values: p.items.map((i) => i.value).join('\0'),
  });
  const [, setTick] = useState(0);
  // New entries (another question's list in the same place): back to the initial highlight.
  const values = p.items.map((i) => i.value).join('\0');
  if (state.current.values !== values) state.current = { index: start, top: windowTop(start, 0, limit, count), values };
  const s = state.current;
  if (s.index >= count) s.index = Math.max(0, count - 1);
  s.top = windowTop(s.index, s.top, limit, count);

  // The list's keys (src/wizard/keytable.ts, surface `list`): ↑/k, ↓/j, 1-9, Enter.
  useSurface(
    'list',
    (command, input) => {
      const cur = state.current;
      if (count === 0) return 'unhandled';
      let next: number | null = null;
      if (command === 'up') next = (cur.index - 1 + count) % count;
      else if (command === 'down') next = (cur.index + 1) % count;
      if (next !== null) {
        cur.index = next;
        cur.top = windowTop(next, cur.top, limit, count);
        setTick((t) => t + 1);
        const item = p.items[next];
        if (item) p.onHighlight?.(item);
        return 'handled';
      }
      if (command === 'pick') {
        const item = p.items[cur.top + Number(input) - 1];
        if (!item || Number(input) > limit) return 'unhandled';
        p.onSelect(item);
        return 'handled';
      }
      if (command === 'choose') {
        const item = p.items[cur.index];
        if (item) p.onSelect(item);
        return 'handled';
      }
      return 'unhandled';
    },
    { isActive: p.isFocused !== false },
  );

  return (
    <Box flexDirection="column">
      {p.items.slice(s.top, s.top + limit).map((item, i) => {
        const selected = s.top + i === s.index;
        return (
          <Box key={item.key}>
            {p.renderIndicator({ isSelected: selected })}
            {p.renderItem({ label: item.label, value: item.value, isSelected: selected })}
          </Box>
        );
      })}
      {marked ? <Text dimColor>{moreMark(s.top, count - s.top - limit)}</Text> : null}
    </Box>
  );
}
