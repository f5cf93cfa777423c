/**
 * Answers as people read them: the review shows sizes and counts in human units (`1 TiB`, `20.43B`), and a
 * count or size field filled in from the catalog starts as `56.64M`, not `56641536`, while keeping the
 * exact value until the user types something else. Every other answer reads as the catalog formats it.
 */
import { question, type Answers, type Parsed, type QuestionId } from '../config/index.js';
import { formatBytesShort, formatCount } from '../text/index.js';

/** Answers that are parameter counts, and answers that are memory sizes. */
const COUNTS: ReadonlySet<QuestionId> = new Set<QuestionId>([
  'model_params',
  'largest_layer_params',
  'trainable_params',
  'extra_gpu_params',
]);
const SIZES: ReadonlySet<QuestionId> = new Set<QuestionId>(['gpu_memory', 'cpu_memory']);
/** Answers whose number needs its unit to be read: what it counts. */
const UNITS: Partial<Record<QuestionId, string>> = {
  headroom: '% of each GPU',
  micro_batch: ' sample(s) per GPU per step',
  seq_len: ' tokens',
  max_pixels: ' pixels',
};

/**
 * The review's text for an answer: `20.43B`, `56.64M`, `79.65 GiB`, `1 TiB`, `10% of each GPU`; the catalog's
 * text otherwise.
 */
export function humanAnswer(id: QuestionId, a: Answers): string {
  const v = a[id];
  const text = fieldText(id, a);
  return typeof v === 'number' && UNITS[id] !== undefined ? `${text}${UNITS[id]}` : text;
}

/** An answer as a field shows it (and the catalog parses it back): counts and sizes short, no unit words. */
function fieldText(id: QuestionId, a: Answers): string {
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
  return { text: fieldText(id, a), value: a[id] };
}

/**
 * The value of a field: its exact starting value while the text is what it started as (so `56.64M` keeps
 * 56641536), else what the catalog parses from the text.
 */
export function fieldValue(id: QuestionId, text: string, start: FieldStart, a: Answers): Parsed<unknown> {
  if (text.trim() === start.text.trim()) return { ok: true, value: start.value };
  return question(id).parse(text, a) as Parsed<unknown>;
}

/** What the help needs to say what Enter chooses on a list question whose highlight is not the answer. */
export interface EnterContext {
  /**
   * The row the ZeRO question starts on (tradeoff.ts modeStart: the highlight, the answer's row once a mode is
   * given, else the recommendation).
   */
  modeStart?: { label: string; recommended: boolean; recommendedLabel?: string | null; given?: boolean } | null;
  /** The first model of the catalog (the model question starts on it while no size is given). */
  firstModel?: string | null;
}

/**
 * What Enter chooses on this question right now, in the words the screen uses: the row the list starts on
 * (the ZeRO table's start row, the catalog's first model), else the answer given, else the default. The
 * help's "Default" line shows this, so it never names a value Enter would not give; on the ZeRO question the
 * Default is the recommendation, and when Enter would choose another row the line says that one too.
 */
export function enterChoice(id: QuestionId, a: Answers, given: Partial<Answers>, ctx: EnterContext = {}): string {
  if (id === 'mode') {
    const start = ctx.modeStart;
    if (!start) return question('mode').format(a.mode);
    const rec = start.recommended ? start.label : (start.recommendedLabel ?? null);
    if (rec === null) return start.label;
    const recText = `${rec} (the recommendation for your model)`;
    if (start.recommended) return recText;
    return `${recText}; Enter ${start.given ? 'keeps' : 'chooses'} ${start.label}`;
  }
  if (id === 'model_params' && a.model_params === null && !('model_params' in given) && ctx.firstModel)
    return `${ctx.firstModel} (the catalog's first model)`;
  const text = humanAnswer(id, a);
  return text === '' ? '(empty)' : text;
}
