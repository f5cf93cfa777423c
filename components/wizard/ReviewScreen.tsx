import type React from 'react';
import { Box, Text } from 'ink';
import { List } from '../common/List.js';
import { activeQuestions, type Answers, type QuestionId } from '../../src/questions.js';
import type { Finding } from '../../src/validate.js';
import { clip, padEnd, wrap } from '../common/text.js';
import { tint } from '../common/theme.js';
import { Indicator, PlainItem } from './parts.js';

/** One entry of the review list. */
export interface ReviewItem {
  key: string;
  label: string;
  value: string;
}

/** The review entries: finish, the findings that point at a question, then every answer in order. */
export function reviewItems(a: Answers, given: Partial<Answers>, findings: Finding[], width: number): ReviewItem[] {
  const items: ReviewItem[] = [
    { key: 'finish', value: 'finish', label: '→ Finish: write the files, save a preset or launch…' },
  ];
  findings.forEach((f, i) => {
    const target = f.questions?.[0];
    if (!target) return;
    items.push({
      key: `f${i}`,
      value: `q:${target}`,
      label: clip(`${f.level === 'error' ? '✗' : '!'} ${f.message} → ${target}`, width - 2),
    });
  });
  for (const q of activeQuestions(a, true)) {
    const shown = q.format(a[q.id] as never);
    // zerowiz's default where accelerate config's differs says so: the user may expect accelerate's.
    const theirs = q.accelerateDefault?.value;
    const mark =
      q.id in given
        ? ''
        : theirs !== undefined && theirs !== shown
          ? `  · default (accelerate's: ${theirs})`
          : '  · default';
    items.push({
      key: q.id,
      value: `q:${q.id}`,
      label: clip(`${padEnd(q.id, 28)} ${shown === '' ? '(empty)' : shown}${mark}`, width - 2),
    });
  }
  return items;
}

/** What an import did with keys zerowiz does not ask about (from the import result). */
export interface ImportNotes {
  path: string;
  /** Dotted keys zerowiz does not model, written back as they were. */
  kept: string[];
  /** Keys moved from the YAML into the DeepSpeed JSON. */
  moved: string[];
}

/**
 * The review's lines about an import: the kept keys and the moved keys, named, wrapped to `width`, in
 * at most `maxLines` rows (the last one then says how many keys are not shown).
 */
export function importLines(n: ImportNotes | null, width: number, maxLines: number): string[] {
  if (!n || (n.kept.length === 0 && n.moved.length === 0)) return [];
  const groups: [string, string[]][] = [];
  if (n.kept.length)
    groups.push([`Kept as imported (zerowiz does not model them; written back unchanged), ${n.kept.length}:`, n.kept]);
  if (n.moved.length)
    groups.push([
      `Moved into the DeepSpeed JSON (accelerate refuses them beside a JSON file), ${n.moved.length}:`,
      n.moved,
    ]);
  const all = groups.flatMap(([title, keys]) => wrap(`${title} ${keys.join(', ')}`, width));
  const max = Math.max(1, maxLines);
  if (all.length <= max) return all;
  const shown = all.slice(0, max - 1);
  const named = new Set(shown.join(' ').split(/[\s,]+/));
  const hidden = [...n.kept, ...n.moved].filter((k) => !named.has(k)).length;
  return [...shown, clip(`… ${hidden} more key(s) not shown (a taller terminal shows them)`, width)];
}

/** The review: every answer; choosing one opens it, and answering it returns here. */
export function ReviewScreen(p: {
  answers: Answers;
  given: Partial<Answers>;
  findings: Finding[];
  width: number;
  height: number;
  /** Lines about an import (see `importLines`), shown under the title. */
  notes?: string[];
  isActive: boolean;
  onJump: (id: QuestionId) => void;
  onFinish: () => void;
}): React.JSX.Element {
  const items = reviewItems(p.answers, p.given, p.findings, p.width);
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
        items={items}
        limit={Math.max(3, Math.min(items.length, p.height - 1 - notes.length))}
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
