/**
 * Answers as people read them: the review shows sizes and counts in human units (`1 TiB`, `20.43B`), and a
 * count or size field filled in from the catalog starts as `56.64M`, not `56641536`, while keeping the
 * exact value until the user types something else. Every other answer reads as the catalog formats it.
 */
import { question, type Answers, type Parsed, type QuestionId } from '../questions.js';
import { formatBytesShort, formatCount } from '../units.js';

/** Answers that are parameter counts, and answers that are memory sizes. */
const COUNTS: ReadonlySet<QuestionId> = new Set<QuestionId>(['model_params', 'largest_layer_params']);
const SIZES: ReadonlySet<QuestionId> = new Set<QuestionId>(['gpu_memory', 'cpu_memory']);

/** The review's text for an answer: `20.43B`, `56.64M`, `79.65 GiB`, `1 TiB`; the catalog's text otherwise. */
export function humanAnswer(id: QuestionId, a: Answers): string {
  const v = a[id];
  if (typeof v === 'number' && COUNTS.has(id)) return formatCount(v);
  if (typeof v === 'number' && SIZES.has(id)) return formatBytesShort(v, 2);
  return question(id).format(v as never);
}

/** What a text field starts with, and the exact value that text stands for. */
export interface FieldStart {
  text: string;
  value: unknown;
}

/** The start of the field for question `id`: the human text, standing for the exact current answer. */
export function fieldStart(id: QuestionId, a: Answers): FieldStart {
  return { text: humanAnswer(id, a), value: a[id] };
}

/**
 * The value of a field: its exact starting value while the text is what it started as (so `56.64M` keeps
 * 56641536), else what the catalog parses from the text.
 */
export function fieldValue(id: QuestionId, text: string, start: FieldStart, a: Answers): Parsed<unknown> {
  if (text.trim() === start.text.trim()) return { ok: true, value: start.value };
  return question(id).parse(text, a) as Parsed<unknown>;
}
