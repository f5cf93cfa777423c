import type React from 'react';
import { memo } from 'react';
import { Text } from 'ink';
import { tint } from '../common/index.js';

/** The two markers, made once: the same element every frame, so React does not even compare them. */
const MARKER_ON = <Text color={tint('accent')}>{'❯ '}</Text>;
const MARKER_OFF = <Text>{'  '}</Text>;

/** The list highlight marker (no colour under NO_COLOR; the marker itself carries it). */
export function Indicator({ isSelected }: { isSelected?: boolean }): React.JSX.Element {
  return isSelected ? MARKER_ON : MARKER_OFF;
}

/**
 * One line of text, memoised on its props: a keypress re-renders the whole wizard (its state is one reducer), and
 * the lines that did not change (the header, the hints, the rows the highlight did not touch) skip React's work.
 */
export const TextLine = memo(function TextLine({
  text,
  color,
  bold,
  truncate,
}: {
  text: string;
  color?: string | undefined;
  bold?: boolean | undefined;
  /** Cut at the box's width (Ink's wrap="truncate") rather than wrapped. */
  truncate?: boolean | undefined;
}): React.JSX.Element {
  return (
    <Text color={color} bold={bold} wrap={truncate ? 'truncate' : 'wrap'}>
      {text}
    </Text>
  );
});

/** A list item: its label, highlighted in bold. */
export function PlainItem({ isSelected, label }: { isSelected?: boolean; label: string }): React.JSX.Element {
  return (
    <Text bold={isSelected} wrap="truncate">
      {label}
    </Text>
  );
}
