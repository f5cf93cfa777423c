import React from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/List.js';
import { activeQuestions, type Answers, type QuestionId } from '../../src/questions.js';
import type { Finding } from '../../src/validate.js';
import { clip, padEnd } from '../common/text.js';
import { Indicator, PlainItem } from './parts.js';

/** One entry of the review list. */
export interface ReviewItem {
  key: string;
  label: string;
  value: string;
}

/** The review entries: finish, the findings that point at a question, then every answer in order. */
export function reviewItems(a: Answers, given: Partial<Answers>, findings: Finding[], width: number): ReviewItem[] {
  const items: ReviewItem[] = [{ key: 'finish', value: 'finish', label: '→ Finish: write the files, save a preset or launch…' }];
  findings.forEach((f, i) => {
    const target = f.questions?.[0];
    if (!target) return;
    items.push({ key: `f${i}`, value: `q:${target}`, label: clip(`${f.level === 'error' ? '✗' : '!'} ${f.message} → ${target}`, width - 2) });
  });
  for (const q of activeQuestions(a, true)) {
    const shown = q.format(a[q.id] as never);
    const mark = q.id in given ? '' : '  · default';
    items.push({ key: q.id, value: `q:${q.id}`, label: clip(`${padEnd(q.id, 28)} ${shown === '' ? '(empty)' : shown}${mark}`, width - 2) });
  }
  return items;
}

/** The review: every answer; choosing one opens it, and answering it returns here. */
export function ReviewScreen(p: {
  answers: Answers;
  given: Partial<Answers>;
  findings: Finding[];
  width: number;
  height: number;
  isActive: boolean;
  onJump: (id: QuestionId) => void;
  onFinish: () => void;
}): React.JSX.Element {
  const items = reviewItems(p.answers, p.given, p.findings, p.width);
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate">{clip('Review: choose an answer to change it (you come back here), or Finish.', p.width)}</Text>
      <List
        items={items}
        limit={Math.max(3, Math.min(items.length, p.height - 1))}
        isFocused={p.isActive}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(item) => {
          if (item.value === 'finish') p.onFinish();
          else p.onJump(item.value.slice(2) as QuestionId);
        }}
      />
    </Box>
  );
}
