/**
 * The review: every answer, the findings first; choosing a row opens its question (and comes back here), applies
 * a finding's fix or opens the steps. The highlighted finding reads whole under the list, with its fix (its row
 * has room for the start only). The entries and the lines are src/wizard/review.ts's; this view draws them.
 */
import type React from 'react';
import { useState } from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/index.js';
import { clip } from '../../src/text/index.js';
import { tint } from '../common/index.js';
import { Indicator, PlainItem } from './parts.js';
import { reviewDetailLines, type ReviewItem } from '../../src/wizard/index.js';

/** The review: every answer; choosing one opens it, and answering it returns here (the cursor on its row). */
export function ReviewScreen(p: {
  items: ReviewItem[];
  /** The row the cursor starts on (the row edited last). */
  initialIndex?: number;
  width: number;
  height: number;
  /** Lines about an import (see `importLines`), shown under the title. */
  notes?: string[];
  /** Rows under the list for the highlighted finding, whole (review.ts reviewDetailRows). */
  detailRows?: number;
  isActive: boolean;
  onChoose: (item: ReviewItem) => void;
}): React.JSX.Element {
  const notes = p.notes ?? [];
  const detailRows = p.detailRows ?? 0;
  const start = p.initialIndex ?? 0;
  const [highlighted, setHighlighted] = useState<string | undefined>(p.items[start]?.value);
  const item = p.items.find((x) => x.value === highlighted) ?? p.items[start];
  const detail = reviewDetailLines(item, p.items, p.width, detailRows);
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
        initialIndex={start}
        more
        limit={Math.max(3, Math.min(p.items.length, p.height - 1 - notes.length - detailRows))}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onHighlight={(x) => setHighlighted(x.value)}
        onSelect={(x) => {
          const it = p.items.find((y) => y.value === x.value);
          if (it) p.onChoose(it);
        }}
      />
      {detail.map((l, i) => (
        <Text
          key={`d${i}`}
          color={item?.finding ? (item.finding.level === 'error' ? tint('bad') : tint('warn')) : tint('dim')}
          wrap="truncate"
        >
          {l}
        </Text>
      ))}
    </Box>
  );
}
