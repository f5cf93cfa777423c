import type React from 'react';
import { Box, Text } from 'ink';
import { tint } from '../common/theme.js';
import { wrap } from '../../src/text.js';

/** The list highlight marker (no colour under NO_COLOR; the marker itself carries it). */
export function Indicator({ isSelected }: { isSelected?: boolean }): React.JSX.Element {
  return <Text color={isSelected ? tint('accent') : undefined}>{isSelected ? '❯ ' : '  '}</Text>;
}

/** A list item: its label, highlighted in bold. */
export function PlainItem({ isSelected, label }: { isSelected?: boolean; label: string }): React.JSX.Element {
  return (
    <Text bold={isSelected} wrap="truncate">
      {label}
    </Text>
  );
}

/** Wrapped lines of text. */
export function Para({
  text,
  width,
  color,
  bold,
}: {
  text: string;
  width: number;
  color?: string | undefined;
  bold?: boolean;
}): React.JSX.Element {
  return (
    <Box flexDirection="column">
      {wrap(text, width).map((l, i) => (
        <Text key={i} color={color} bold={bold}>
          {l}
        </Text>
      ))}
    </Box>
  );
}
