/** The checks in the short form the wizard's finish screen shows: the count, and what to fix first. */
import type { Setup } from '../config/index.js';
import { countLine, shortLines } from './format.js';
import { type CheckOptions, runChecks } from './run.js';

/** The count of a setup's checks and one line per FAIL and WARN, in the fix order. */
export async function checkSummary(
  setup: Setup,
  opts: CheckOptions = {},
): Promise<{ summary: string; lines: string[] }> {
  const { results } = await runChecks(setup, opts);
  return {
    summary: `Checks: ${countLine(results)}`,
    lines: shortLines(results.filter((r) => r.status === 'fail' || r.status === 'warn')),
  };
}
