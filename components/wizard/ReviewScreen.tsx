import type React from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/List.js';
import { clip } from '../../src/text.js';
import { tint } from '../common/theme.js';
import { Indicator, PlainItem } from './parts.js';
import type { ReviewItem } from '../../src/wizard/review.js';

/** The review: every answer; choosing one opens it, and answering it returns here (the cursor on its row). */
export function ReviewScreen(p: {
  items: ReviewItem[];
  /** The row the cursor starts on (the row edited last). */
  initialIndex?: number;
  width: number;
  height: number;
  /** Lines about an import (see `importLines`), shown under the title. */
  notes?: string[];
  isActive: boolean;
  onChoose: (item: ReviewItem) => void;
}): React.JSX.Element {
  const notes = p.notes ?? [];
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate">
        {clip('Review: choose an answer to change it (you come back here), or Finish.', p.width)}
      </Text>
      {notes.map((l, i) => (
        <Text key={`n${i}`} color={tint('dim')} wrap="truncate">
          {clip(l, p.width)}
        </Text>
      ))}
      <List
        items={p.items}
        initialIndex={p.initialIndex ?? 0}
        limit={Math.max(3, Math.min(p.items.length, p.height - 1 - notes.length))}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(item) => {
          const it = p.items.find((x) => x.value === item.value);
          if (it) p.onChoose(it);
        }}
      />
    </Box>
  );
}
