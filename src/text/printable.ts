/**
 * THE sanitizer for everything that reaches a terminal. One definition of a control character: C0 (U+0000-
 * U+001F), DEL (U+007F) and C1 (U+0080-U+009F, which a terminal may read as ESC sequences: U+009B is CSI,
 * U+009D OSC, U+0090 DCS). Two ways to make text safe, chosen by where it comes from:
 *
 * - printable / printableLines: text zerowiz quotes (a preset's description, a file name, a YAML error,
 *   Slurm's JobState/Reason/NodeList, sbatch's and nvidia-smi's messages, an error's value): every control
 *   character is shown as a visible escape (`\x1b`, `\n`), so it can neither move the cursor, set the title,
 *   write the clipboard nor ring the bell, and a value holding a newline stays on one line.
 * - displayLine: a child's output line for the log pane and stream mode (src/observe/lines.ts): ANSI sequences
 *   are stripped and the remaining control characters removed (the raw bytes stay in the log file).
 *
 * CONTROL_CHAR_RE / NEEDS_DISPLAY_CLEAN_RE are the one pattern both use (tab and newline aside).
 */
import stripAnsi from 'strip-ansi';

/** Every control character: C0, DEL, C1. */
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/g;
/** Every control character but the newline. */
const CONTROL_BUT_NEWLINE_RE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
/** Control characters a display line drops after ANSI sequences are stripped: all but tab (expanded later). */
const DISPLAY_DROP_RE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;
/**
 * Whether a child's line needs cleaning before it is shown: any control character but the tab (lines.ts
 * expands tabs itself). Newlines never occur inside a line; a block of lines joined by `\n` is tested with
 * BLOCK_NEEDS_DISPLAY_CLEAN_RE.
 */
export const NEEDS_DISPLAY_CLEAN_RE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;
/** The same test for several lines joined by `\n`. */
export const BLOCK_NEEDS_DISPLAY_CLEAN_RE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

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

/** Every control character but the newline and the tab. */
const CONTROL_BUT_LAYOUT_RE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Text for stdout (a table, a file's text): line breaks and tabs kept, every other control character escaped. */
export function printableText(text: string): string {
  return text.replace(CONTROL_BUT_LAYOUT_RE, visible);
}

/** True when `text` holds a control character (what printable() would escape). */
export function hasControl(text: string): boolean {
  CONTROL_RE.lastIndex = 0;
  return CONTROL_RE.test(text);
}

/**
 * A child's output line as it may be shown: ANSI sequences (ESC- and C1-introduced) stripped, every other
 * control character but the tab removed. Cheap when there is nothing to clean.
 */
export function displayLine(text: string): string {
  if (!NEEDS_DISPLAY_CLEAN_RE.test(text)) return text;
  return stripAnsi(text).replace(DISPLAY_DROP_RE, '');
}
