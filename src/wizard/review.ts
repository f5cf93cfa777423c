/**
 * The review's entries and notes, pure: Finish, the findings (each opens its question, applies its fix or opens
 * the steps), the steps, every answer in human units, and what an import kept, moved and changed. The view
 * (components/wizard/ReviewScreen.tsx) lists them; the layout (./layout.ts) counts them.
 */
import { activeQuestions, movedTo, type Answers, type QuestionId } from '../config/index.js';
import type { LaunchStep } from '../config/index.js';
import type { StepFix } from '../rules/index.js';
import type { Finding } from '../config/index.js';
import { clip, padEnd, wrap } from '../text/index.js';
import { idleGpusNote } from '../rules/index.js';
import { humanAnswer } from './display.js';
import { findingLines } from './finding-text.js';
import { STEPS_ROW, type ImportNotes } from './shell.js';

/** A finding as the review lists it: validate's, or a step's (with the fix zerowiz can make). */
export type ReviewFinding = Finding & { fixAction?: StepFix; stepName?: string };

/** What choosing a review row does. */
export type ReviewChoice =
  | { kind: 'finish' }
  | { kind: 'question'; id: QuestionId }
  | { kind: 'fix'; fix: StepFix }
  | { kind: 'steps' };

/** One entry of the review list: `key` names the row (the cursor comes back to it), `choice` what it opens. */
export interface ReviewItem {
  key: string;
  label: string;
  value: string;
  choice: ReviewChoice;
  /** The finding a finding's row stands for (shown whole under the list while it is highlighted). */
  finding?: ReviewFinding;
}

function stepsSummary(steps: readonly LaunchStep[]): string {
  if (steps.length === 0) return '(none: zerowiz launch has nothing to run)';
  return steps.map((s) => s.name).join(', ');
}

/**
 * The review entries: finish, the findings (each opens its question, applies its fix, or opens the steps),
 * the steps, then every answer in order, in human units (`20.43B`, `1 TiB`), paths as written (absolute).
 */
export function reviewItems(
  a: Answers,
  given: Partial<Answers>,
  findings: readonly ReviewFinding[],
  width: number,
  steps: readonly LaunchStep[] = [],
): ReviewItem[] {
  const items: ReviewItem[] = [
    {
      key: 'finish',
      value: 'finish',
      choice: { kind: 'finish' },
      label: '→ Finish: write the files, save a preset or launch…',
    },
  ];
  findings.forEach((f, i) => {
    const mark = f.level === 'error' ? '✗' : '!';
    const target = f.questions?.[0];
    let choice: ReviewChoice;
    let tail: string;
    // What Enter does comes first: a long message is cut at the end, never the action.
    if (f.fixAction) {
      choice = { kind: 'fix', fix: f.fixAction };
      tail = 'Enter fixes';
    } else if (target) {
      choice = { kind: 'question', id: target };
      tail = `→ ${target}`;
    } else if (f.stepName !== undefined) {
      choice = { kind: 'steps' };
      tail = '→ steps';
    } else return;
    items.push({
      key: `f${i}`,
      value: `f${i}`,
      choice,
      label: clip(`${mark} [${tail}] ${f.message}`, width - 2),
      finding: f,
    });
  });
  items.push({
    key: STEPS_ROW,
    value: STEPS_ROW,
    choice: { kind: 'steps' },
    label: clip(`${padEnd('steps', 28)} ${stepsSummary(steps)}  → edit`, width - 2),
  });
  for (const q of activeQuestions(a, true)) {
    const shown = humanAnswer(q.id, a);
    // zerowiz's default where accelerate config's differs says so: the user may expect accelerate's.
    const theirs = q.accelerateDefault?.value;
    const mark =
      q.id in given
        ? ''
        : theirs !== undefined && theirs !== q.format(a[q.id] as never)
          ? `  · default (accelerate's: ${theirs})`
          : '  · default';
    items.push({
      key: `q:${q.id}`,
      value: `q:${q.id}`,
      choice: { kind: 'question', id: q.id },
      label: clip(`${padEnd(q.id, 28)} ${shown === '' ? '(empty)' : shown}${mark}`, width - 2),
    });
  }
  return items;
}

/**
 * The review's lines about an import: the kept keys and, for each moved key, where in the DeepSpeed JSON it
 * went, wrapped to `width`, in at most `maxLines` rows (the last one then says how many keys are not shown).
 */
export function importLines(n: ImportNotes | null, width: number, maxLines: number): string[] {
  const changed = n?.notes ?? [];
  if (!n || (n.kept.length === 0 && n.moved.length === 0 && changed.length === 0)) return [];
  const groups: [string, string[]][] = [];
  if (n.kept.length)
    groups.push([`Kept as imported (zerowiz does not model them; written back unchanged), ${n.kept.length}:`, n.kept]);
  if (n.moved.length)
    groups.push([
      `Moved into the DeepSpeed JSON (accelerate refuses them beside a JSON file), ${n.moved.length}:`,
      n.moved.map((k) => `${k} → ${movedTo(k)}`),
    ]);
  if (changed.length) groups.push([`Changed or kept on import, ${changed.length}:`, changed]);
  const all = groups.flatMap(([title, keys]) =>
    keys === changed
      ? [title, ...keys.flatMap((k) => wrap(`· ${k}`, width))]
      : wrap(`${title} ${keys.join(', ')}`, width),
  );
  const max = Math.max(1, maxLines);
  if (all.length <= max) return all;
  const shown = all.slice(0, max - 1);
  const named = new Set(shown.join(' ').split(/[\s,]+/));
  const hidden = [...n.kept, ...n.moved].filter((k) => !named.has(k)).length;
  return [...shown, clip(`… ${hidden} more key(s) not shown (a taller terminal shows them)`, width)];
}

/**
 * The rows under the review's list for the highlighted finding, whole (its message and fix: the row above it
 * has room for the start only): the most any finding needs, at most `max`; 0 without findings.
 */
export function reviewDetailRows(items: readonly ReviewItem[], width: number, max: number): number {
  const need = items.map((i) => (i.finding ? findingLines(i.finding, width).length : 0));
  return need.some((n) => n > 0) ? Math.min(max, Math.max(...need)) : 0;
}

/**
 * What those rows say: the highlighted finding whole (cut to `rows`, its end marked), or, on any other row, how
 * to read the findings; always `rows` lines.
 */
export function reviewDetailLines(
  item: ReviewItem | undefined,
  items: readonly ReviewItem[],
  width: number,
  rows: number,
): string[] {
  if (rows <= 0) return [];
  let lines: string[];
  if (item?.finding) {
    lines = findingLines(item.finding, width);
    if (lines.length > rows) lines = [...lines.slice(0, rows - 1), clip(`${lines[rows - 1]} …`, width)];
  } else {
    const n = items.filter((i) => i.finding).length;
    lines = [clip(`${n} finding${n === 1 ? '' : 's'} above: highlight one to read it whole, with its fix.`, width)];
  }
  return [...lines, ...Array<string>(Math.max(0, rows - lines.length)).fill('')];
}

/**
 * The review's note when the answers start fewer processes per machine than this machine has GPUs (a preset for
 * one GPU on an 8-GPU box): what stays idle and where to change it, wrapped to `width`; none otherwise.
 */
export function idleGpusLines(a: Answers, gpuCount: number | null, width: number): string[] {
  const note = idleGpusNote(a.num_processes, a.num_machines, gpuCount);
  return note ? wrap(`Note: ${note} (num_processes below changes it).`, width) : [];
}
