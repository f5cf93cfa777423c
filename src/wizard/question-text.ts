/**
 * The question screen's text, pure: the prompt, the help box, a select's entries, how a typed answer reads, and
 * whether the model question is a list. The view (components/wizard/QuestionScreen.tsx) draws these lines and the
 * layout (./layout.ts) counts them.
 */
import type { Answers, DetectedEnv, Parsed, Question } from '../config/index.js';
import type { ModelEntry } from '../estimate/index.js';
import { expandPathAnswer, type ExpandContext } from '../fs/index.js';
import { clip, padEnd, wrap } from '../text/index.js';
import type { Finding } from '../config/index.js';
import { type fieldStart, fieldValue } from './display.js';
import { findingLines } from './finding-text.js';

/**
 * Lines of the help box for a question. `enter` is what Enter chooses now (display.ts enterChoice): the
 * "Default" the help names is that, never a value Enter would not give. `findings` (those that point at this
 * question) follow, whole: the line under the preview has room for the start of one only.
 */
export function helpLines(
  q: Question,
  a: Answers,
  env: DetectedEnv,
  width: number,
  enter?: string,
  glossaryKey = 'g',
  findings: readonly Finding[] = [],
): string[] {
  const formatted = q.format(q.defaultValue(a, env) as never);
  const def = enter ?? (formatted === '' ? '(empty)' : formatted);
  const keys = [
    q.yamlKey ? `accelerate YAML: ${q.yamlKey}` : 'accelerate YAML: (none)',
    q.jsonKey ? `DeepSpeed JSON: ${compactKeys(q.jsonKey)}` : 'DeepSpeed JSON: (none)',
  ].join(' · ');
  const parts = [
    `? ${q.help}`,
    q.acceleratePrompt
      ? `accelerate config asks: ${q.acceleratePrompt.trim()}`
      : 'accelerate config does not ask this.',
    ...(q.accelerateDefault
      ? [`accelerate config's default is ${q.accelerateDefault.value}, zerowiz's ${def}: ${q.accelerateDefault.why}.`]
      : []),
    `Sets ${keys}`,
    `Default: ${def}   (? closes this help · ${glossaryKey}: glossary)`,
  ];
  return [...parts.flatMap((p) => wrap(p, width)), ...findings.flatMap((f) => findingLines(f, width))];
}

/** `a.x, a.y.z` as `a.{x, y.z}`: dotted keys that share their first part, written once. */
function compactKeys(keys: string): string {
  const list = keys.split(', ');
  const head = list[0]!.split('.')[0]!;
  if (list.length < 2 || !list.every((k) => k.startsWith(`${head}.`))) return keys;
  return `${head}.{${list.map((k) => k.slice(head.length + 1)).join(', ')}}`;
}

/** The list entries of a select or yes/no question, their ` — ` separators in one column. */
export function choiceItems(q: Question, width: number): { key: string; label: string; value: string }[] {
  const choices = q.choices ?? [];
  // The labels padded to the widest, so every ` — ` stands in one column.
  const w = Math.max(0, ...choices.map((c) => c.label.length));
  return choices.map((c) => ({
    key: String(c.value),
    value: String(c.value),
    label: clip(c.help ? `${padEnd(c.label, w)}  — ${c.help}` : c.label, width - 2),
  }));
}

/** The most list rows a plain select shows at once. */
export const LIST_LIMIT = 8;

/**
 * A typed answer as the question means it: a path question's text expanded as a shell would (`~`, `$VAR`,
 * relative to the launch directory), a count or size that still reads as it started keeps its exact value.
 */
export function parseTyped(
  q: Question,
  text: string,
  a: Answers,
  start: ReturnType<typeof fieldStart>,
  paths: ExpandContext,
): Parsed<unknown> & { expanded?: string } {
  if (q.path) {
    const x = expandPathAnswer(text, paths);
    if (!x.ok) return { ok: false, error: `${x.error}; ${x.hint}` };
    const p = q.parse(x.value, a) as Parsed<unknown>;
    return x.value !== text.trim() && p.ok ? { ...p, expanded: x.value } : p;
  }
  return fieldValue(q.id, text, start, a);
}

/**
 * Whether the model size question shows the catalog as a list (a list's keys: ←, q, r work) rather
 * than a text field: there is a catalog, the user did not choose to type, and the current answer is a
 * catalog model or empty.
 */
export function modelListShown(
  a: Pick<Answers, 'model_params'>,
  models: readonly ModelEntry[],
  typed: boolean,
): boolean {
  if (models.length === 0 || typed) return false;
  return a.model_params === null || models.some((m) => m.params === a.model_params);
}

/** The prompt line(s). */
export function promptLines(q: Question, width: number): string[] {
  return wrap(q.prompt, width);
}
