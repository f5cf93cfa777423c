/**
 * A finding as the wizard shows it whole (the review's highlighted finding, a question's help, the steps' help):
 * its mark and message, then how to fix it, wrapped to the width, never cut.
 */
import type { Finding } from '../config/index.js';
import { wrap } from '../text/index.js';

/** `✗` for an error, `!` for a warning. */
export function findingMark(f: Pick<Finding, 'level'>): string {
  return f.level === 'error' ? '✗' : '!';
}

/** The finding whole: `✗ message` wrapped to `width`, then `  fix: ...` wrapped under it. */
export function findingLines(f: Pick<Finding, 'level' | 'message' | 'fix'>, width: number): string[] {
  return [
    ...wrap(`${findingMark(f)} ${f.message}`, width),
    ...wrap(`fix: ${f.fix}`, Math.max(8, width - 2)).map((l) => `  ${l}`),
  ];
}
