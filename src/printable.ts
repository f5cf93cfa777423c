/**
 * Text that came from a file (a preset's description, a key name, a file name, a YAML error) made safe to
 * print: control characters (C0, DEL, C1: ESC, BEL, CR, ...) are shown as visible escapes, so nothing a file
 * holds can move the cursor, clear the screen, set the title or ring the bell.
 */

const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROL_BUT_NEWLINE_RE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };

function visible(c: string): string {
  return NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

/** One line of text, every control character escaped (`\x1b`, `\n`, `\t`). */
export function printable(text: string): string {
  return text.replace(CONTROL_RE, visible);
}

/** Several lines: line breaks kept, every other control character escaped. */
export function printableLines(text: string): string {
  return text.replace(CONTROL_BUT_NEWLINE_RE, visible);
}

/** True when `text` holds a control character (what printable() would escape). */
export function hasControl(text: string): boolean {
  CONTROL_RE.lastIndex = 0;
  return CONTROL_RE.test(text);
}
