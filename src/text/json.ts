/**
 * JSON from a file zerowiz did not write (a DeepSpeed config, a run record read back), parsed with two limits
 * JSON.parse does not have: a nesting depth (a config nested 100,000 deep parses, then every recursive walk over
 * it, structuredClone and JSON.stringify included, overflows the stack) and exact numbers (a whole number past
 * 2^53 would be read as the nearest float, and written back as another number, without a word). Both are
 * found by one pass over the text, which also knows where each value sits (`zero_optimization.stage`), so a
 * refusal names the key.
 */

/** How deep a JSON file zerowiz reads may nest (DeepSpeed's configs nest four levels; records about six). */
export const MAX_JSON_DEPTH = 64;

/** A parsed JSON value, or why it cannot be used (one line, naming the key where there is one). */
export type BoundedJson = { ok: true; data: unknown } | { ok: false; problem: string; syntax: boolean };

/** What the scan found: the deepest nesting, and the first whole number that a float cannot hold exactly. */
interface Scan {
  depth: number;
  inexact: { path: string; literal: string } | null;
}

/** One open container of the scan: an object (with the key being read) or an array (with its index). */
type Frame = { kind: 'object'; key: string | null } | { kind: 'array'; index: number };

function pathOf(stack: readonly Frame[]): string {
  return stack
    .map((f) => (f.kind === 'object' ? (f.key ?? '') : `[${f.index}]`))
    .join('.')
    .replace(/\.\[/g, '[');
}

/** Reads a JSON string starting at the quote at `i`; returns its value and the index after it. */
function readString(text: string, i: number): { value: string; end: number } {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
  let value: string;
  try {
    value = JSON.parse(text.slice(i, j + 1)) as string;
  } catch {
    value = text.slice(i + 1, j);
  }
  return { value, end: j + 1 };
}

/** A whole-number literal (no fraction, no exponent) past what a float holds exactly. */
function inexactInteger(literal: string): boolean {
  if (!/^-?[0-9]+$/.test(literal)) return false;
  return !Number.isSafeInteger(Number(literal));
}

/** One pass over the text: nesting depth and the first inexact whole number, stopping early past `maxDepth`. */
function scan(text: string, maxDepth: number): Scan {
  const stack: Frame[] = [];
  let depth = 0;
  let inexact: Scan['inexact'] = null;
  let expectKey = false;
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === '"') {
      const s = readString(text, i);
      const top = stack[stack.length - 1];
      if (top?.kind === 'object' && expectKey) top.key = s.value;
      i = s.end;
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push(c === '{' ? { kind: 'object', key: null } : { kind: 'array', index: 0 });
      depth = Math.max(depth, stack.length);
      if (depth > maxDepth) return { depth, inexact };
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ':') expectKey = false;
    else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'array') top.index++;
      expectKey = top?.kind === 'object';
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9eE.+-]/.test(text[j]!)) j++;
      const literal = text.slice(i, j);
      if (inexact === null && inexactInteger(literal)) inexact = { path: pathOf(stack), literal };
      i = j;
      continue;
    }
    i++;
  }
  return { depth, inexact };
}

/**
 * Parses JSON read from a file: refused (one line) when it nests deeper than `maxDepth` or holds a whole
 * number a float cannot keep exactly, as well as when it is not JSON (`syntax`: JSON.parse's own message).
 */
export function parseJsonBounded(text: string, maxDepth = MAX_JSON_DEPTH): BoundedJson {
  const s = scan(text, maxDepth);
  if (s.depth > maxDepth)
    return { ok: false, syntax: false, problem: `it nests deeper than the ${maxDepth} levels zerowiz reads` };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return { ok: false, syntax: true, problem: (e as Error).message };
  }
  if (s.inexact)
    return {
      ok: false,
      syntax: false,
      problem: `${s.inexact.path ? `${s.inexact.path}: ` : ''}the whole number ${s.inexact.literal} is larger than a JSON reader keeps exactly (2^53); it would be read as ${Number(s.inexact.literal)}`,
    };
  return { ok: true, data };
}
