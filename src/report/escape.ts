/**
 * THE way text reaches the report's HTML: every string from a run (a step's name, a log line, an alert, a
 * config file, a path) goes through `esc`, which shows control characters as visible escapes (text/printable)
 * and turns `&`, `<`, `>`, `"` and `'` into entities, so that no text can become markup, an attribute or a
 * script, wherever it is put (element text or a quoted attribute).
 */
import { printable, printableLines } from '../text/index.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function entities(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** One line of text, safe in element text and in a quoted attribute. */
export function esc(text: string): string {
  return entities(printable(text));
}

/** Several lines (a log's tail, a config file): line breaks kept for a `<pre>`, all else as esc. */
export function escLines(text: string): string {
  return entities(printableLines(text));
}
