/**
 * The last lines of a step's log as a person reads them after the run (a failure's notification, the report):
 * each tqdm redraw (`\r`) collapsed to its last state, ANSI sequences and other control characters removed,
 * blank lines dropped. Reads only the file's last bytes, so a log of any size costs the same.
 */
import { readLastBytes } from '../fs/index.js';
import { displayLine } from '../text/index.js';

/** Bytes read from the end of a log for its last lines. */
export const LOG_TAIL_BYTES = 64 * 1024;

/** The last `n` lines of the log at `path` ([] when it cannot be read). */
export function lastLogLines(path: string, n: number, maxBytes = LOG_TAIL_BYTES): string[] {
  const got = readLastBytes(path, maxBytes);
  if (!got) return [];
  const lines = got.bytes.toString('utf8').split('\n');
  // The first line is cut when reading began inside the file.
  if (got.from > 0) lines.shift();
  const out: string[] = [];
  for (let i = lines.length - 1; i >= 0 && out.length < n; i--) {
    const segments = lines[i]!.split('\r').filter((s) => s.trim() !== '');
    const last = segments.at(-1);
    if (last !== undefined) out.push(displayLine(last).trimEnd());
  }
  return out.reverse();
}
