/**
 * THE output of the plain commands (as Shopify's cli-kit has one): commands never write to stdout or stderr
 * themselves. This module decides, once, for every command:
 *
 * - where things go: data (YAML, JSON, tables, written paths) on stdout; what zerowiz says beside it
 *   (`zerowiz: ...`: warnings, notes, hints, errors) on stderr;
 * - colour: only on a terminal, never under NO_COLOR (src/text/text.ts colorAllowed, the wizard's rule too), and only
 *   on the words that carry a level (`warning`, `error`, `fix`, `hint`, `note`);
 * - width: a table's free-text column is cut to the terminal (`…`); a pipe or a file gets every character;
 * - quiet (`zerowiz --quiet`): notes and hints are left out, never data, warnings or errors;
 * - JSON: pretty, two spaces, one document per command, and nothing else on stdout;
 * - failures of the output itself: a plain command's stdout that cannot be written (a full disk) ends it in
 *   main.ts (one line, exit 2; a reader that left, quietly), while a run's viewer (`launch`, `attach`) writes
 *   through the terminal module's guarded writes, so a run never stops because its output went away.
 */
import type { TextSink } from '../launch/index.js';
import { formatFinding, type Finding } from '../config/index.js';
import { printableLines, printableText } from '../text/index.js';
import { stdoutBacklog, writeErr, writeOut } from '../proc/index.js';
import { clip, colorAllowed } from '../text/index.js';

/** How the output looks, decided once per process (see `configureOutput`). */
export interface OutputStyle {
  /** Colour on stdout / on stderr (each only when it is a terminal and colour is allowed). */
  color: { stdout: boolean; stderr: boolean };
  /** stdout's columns when it is a terminal; null for a pipe or a file (nothing is cut). */
  width: number | null;
  /** `--quiet`: notes and hints are left out. */
  quiet: boolean;
}

/** The style for this process's streams and environment. */
export function styleFor(
  env: NodeJS.ProcessEnv = process.env,
  streams: { stdout: { isTTY?: boolean; columns?: number }; stderr: { isTTY?: boolean } } = process,
  quiet = false,
): OutputStyle {
  const allowed = colorAllowed(env);
  return {
    color: { stdout: allowed && streams.stdout.isTTY === true, stderr: allowed && streams.stderr.isTTY === true },
    width: streams.stdout.isTTY === true && (streams.stdout.columns ?? 0) > 0 ? streams.stdout.columns! : null,
    quiet,
  };
}

let style: OutputStyle | null = null;

/** Sets the style (the CLI does, once its global flags are read); later calls replace it. */
export function configureOutput(opts: { quiet?: boolean } = {}): OutputStyle {
  style = styleFor(process.env, process, opts.quiet === true);
  return style;
}

/** The style in force. */
export function outputStyle(): OutputStyle {
  return style ?? configureOutput();
}

/** SGR colours of the levels. */
const SGR = { yellow: 33, red: 31, cyan: 36, gray: 90 } as const;

function paint(text: string, color: keyof typeof SGR, on: boolean): string {
  return on ? `\x1b[${SGR[color]}m${text}\x1b[39m` : text;
}

/** The colour of each level word that starts a message (`warning: ...`) or a line of it (`  fix: ...`). */
const LEVELS: Record<string, keyof typeof SGR> = {
  error: 'red',
  warning: 'yellow',
  fix: 'cyan',
  hint: 'gray',
  note: 'gray',
};
const LEVEL_RE = /^(zerowiz: |\s*)(error|warning|fix|hint|note)(:)/gm;

/** `text` with the level words at the start of its lines coloured (when `on`). */
export function colorLevels(text: string, on: boolean): string {
  return on
    ? text.replace(LEVEL_RE, (_m, sp: string, w: string, c: string) => `${sp}${paint(w, LEVELS[w]!, true)}${c}`)
    : text;
}

/** A line that only informs (a note or a hint): left out under --quiet. */
const QUIET_DROPS = /^zerowiz: (note|hint): /;

function toStderr(text: string): void {
  const s = outputStyle();
  if (s.quiet && QUIET_DROPS.test(text)) return;
  process.stderr.write(colorLevels(text, s.color.stderr));
}

/**
 * Data on stdout (a file's text, a table, written paths), as given but for control characters: what a table
 * shows may come from a file (a step name, an alert of a record), so only line breaks and tabs pass raw.
 */
export function data(text: string): void {
  process.stdout.write(printableText(text));
}

/** Lines of data on stdout (control characters escaped, as `data`). */
export function lines(ls: readonly string[]): void {
  if (ls.length > 0) process.stdout.write(printableText(`${ls.join('\n')}\n`));
}

/** One JSON document on stdout (two-space indent). */
export function json(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `zerowiz: LINE` on stderr: what zerowiz says beside the data (text from files is shown escaped). */
export function say(line: string): void {
  toStderr(`zerowiz: ${printableLines(line)}\n`);
}

/** `zerowiz: note: LINE` (left out with --quiet). */
export function note(line: string): void {
  say(`note: ${line}`);
}

/** `zerowiz: hint: LINE` (left out with --quiet). */
export function hint(line: string): void {
  say(`hint: ${line}`);
}

/** `zerowiz: warning: LINE`. */
export function warn(line: string): void {
  say(`warning: ${line}`);
}

/** A validation finding: `zerowiz: warning: ...` and its `  fix: ...` line. */
export function finding(f: Finding): void {
  say(formatFinding(f));
}

/** An error that ends the command (main.ts): its line and, when given, its `  hint:` line. Never left out. */
export function error(text: string): void {
  process.stderr.write(colorLevels(`zerowiz: ${printableLines(text)}\n`, outputStyle().color.stderr));
}

/** A table cell of free text cut to the columns stdout has left after `used` (whole on a pipe or a file). */
export function fit(text: string, used: number): string {
  const w = outputStyle().width;
  return w === null ? text : clip(text, Math.max(8, w - used));
}

/**
 * Where a run's viewer writes (stream mode's lines, the dry run, the launch's messages): the terminal module's
 * guarded writes, which never stop a run when the reader goes away; quiet and colour as everywhere.
 */
export function runSinks(): { out: TextSink; err: TextSink } {
  return {
    out: { write: writeOut, backlog: stdoutBacklog },
    err: {
      write: (text: string) => {
        const s = outputStyle();
        if (s.quiet && QUIET_DROPS.test(text)) return;
        writeErr(colorLevels(text, s.color.stderr));
      },
    },
  };
}
