/**
 * The checks before a pass of a local launch (the run supervisor's hook): run the checks of that one pass,
 * give the lines to write at the top of its log (the pane shows them, and a FAIL line raises the
 * check-failed alert through the run's watch, as on a Slurm node), and say whether the pass may start.
 */
import { hostname } from 'node:os';
import type { Setup } from '../config/index.js';
import { nodeCheckLine, nodeDoneLine } from './format.js';
import { type CheckOptions, runChecks } from './run.js';
import { type CheckResult, failures } from './types.js';

/** What the checks before a pass decided. */
export interface PassGate {
  /** No check failed (skipped ones do not count): the pass may start. */
  start: boolean;
  /** Every check of the pass, in the fix order. */
  results: CheckResult[];
  /** The lines for the top of the pass's log (`zerowiz-check HOST STATUS ID: ...`, then `done:`). */
  logLines: string[];
  /** The first failure as one sentence (the step's reason in the summary and run.json), or null. */
  reason: string | null;
}

/**
 * Runs the checks of pass `index` (from 0) of `setup`. `opts` carries the launch's --skip-check set, its
 * accelerate, the port the pass will use and the directory the steps run in. Never throws but for a pass
 * that does not exist.
 */
export async function checkBeforePass(
  setup: Setup,
  index: number,
  opts: Omit<CheckOptions, 'filter'> & { host?: string } = {},
): Promise<PassGate> {
  const { results } = await runChecks(setup, { ...opts, filter: { kind: 'one', index } });
  const host = opts.host ?? (hostname().split('.')[0] || 'localhost');
  const bad = failures(results);
  const first = bad[0];
  return {
    start: bad.length === 0,
    results,
    logLines: [...results.map((r) => nodeCheckLine(host, r)), nodeDoneLine(host, results)],
    reason: first
      ? `check ${first.id} failed before the pass: ${first.measured}${first.fix ? `; fix: ${first.fix}` : ''}`
      : null,
  };
}
