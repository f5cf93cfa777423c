/**
 * The checks of the first pass, before anything starts: a launch on this machine (`zerowiz launch`, the wizard's
 * Launch, a dry run) runs them before it writes a file, makes a record or opens the pane, so a machine that
 * cannot run the pass is said once, with each FAIL and the way to go on, instead of a pane that opens on a
 * refused pass. The supervisor then writes these lines at the top of the first pass's log and does not check
 * it again (the later passes are checked when they start: an earlier pass may make what they need).
 */
import { checkBeforePass, failures, shortLines, skipsAll, type CheckResult, type PassGate } from '../checks/index.js';
import { printable, UsageError } from '../text/index.js';
import type { PreparedLaunch } from './kind.js';

/** What the first pass's checks found; null when every check is left out. */
export type FirstPassCheck = { gate: PassGate; failed: CheckResult[] } | null;

/** Runs the checks of the first pass of a prepared local launch. */
export async function checkFirstPass(prepared: PreparedLaunch, signal?: AbortSignal): Promise<FirstPassCheck> {
  const skip = new Set(prepared.skipChecks);
  if (skipsAll(skip) || prepared.commands.length === 0) return null;
  const gate = await checkBeforePass(prepared.setup, 0, {
    cwd: prepared.cwd,
    env: prepared.env,
    ...(prepared.exe ? { accelerate: prepared.exe.path } : {}),
    skip,
    ...(prepared.skipWhy ? { skipWhy: prepared.skipWhy } : {}),
    ...(signal ? { signal } : {}),
  });
  return { gate, failed: failures(gate.results) };
}

/** `python,gpus`: the ids that failed, as --skip-check and ZEROWIZ_SKIP_CHECKS take them. */
function idList(failed: readonly CheckResult[]): string {
  return failed.map((r) => r.id).join(',');
}

/** The pass the checks were for, as people name it: `pass 1 (train)`. */
function passName(prepared: PreparedLaunch): string {
  return `pass 1${prepared.commands[0] ? ` (${prepared.commands[0].step})` : ''}`;
}

/** One line per failed check: `FAIL python  <what to do>` (what `zerowiz check` calls its fix). */
export function failLines(failed: readonly CheckResult[]): string[] {
  return shortLines(failed);
}

/**
 * The refusal of a launch whose first pass failed its checks, for the command line: the FAIL lines (said once,
 * by the caller) and one error whose hint is the way on (`--skip-check IDS`).
 */
export function cliRefusal(prepared: PreparedLaunch, failed: readonly CheckResult[]): UsageError {
  return new UsageError(
    `${failed.length === 1 ? 'a check' : `${failed.length} checks`} of ${passName(prepared)} failed (above): nothing was started, written or recorded`,
    `fix ${failed.length === 1 ? 'it' : 'them'} (\`zerowiz check\` shows each with what it measured), or go on without: add --skip-check ${idList(failed)}`,
  );
}

/**
 * The same refusal in the wizard's words: what failed, and a way on the wizard itself has (the variable the
 * launch reads, set before zerowiz starts), for the finish screen's note.
 */
export function wizardRefusal(
  prepared: PreparedLaunch,
  failed: readonly CheckResult[],
): { error: string; hint: string } {
  return {
    error: `the checks of ${passName(prepared)} failed: ${failed.map((r) => `${r.id}: ${printable(r.measured)}`).join('; ')}`,
    hint: `fix ${failed.length === 1 ? 'it' : 'them'} and choose Launch again (Check this machine says how), or quit and start zerowiz with ZEROWIZ_SKIP_CHECKS=${idList(failed)} to go on without`,
  };
}

/** What a dry run says about the first pass's checks: their count, the FAILs, and what a real launch would do. */
export function dryRunCheckLines(prepared: PreparedLaunch, check: FirstPassCheck): string[] {
  if (check === null) return ['the checks before each pass are left out (--skip-check all or ZEROWIZ_SKIP_CHECKS)'];
  const { gate, failed } = check;
  const counts = `the checks of ${passName(prepared)}: ${gate.results.length} run, ${failed.length} FAIL`;
  if (failed.length === 0)
    return [`${counts}: a real launch would start it (the later passes are checked when they start)`];
  return [
    counts,
    ...failLines(failed),
    `a real launch would stop here, before the pane; --skip-check ${idList(failed)} goes on without ${failed.length === 1 ? 'it' : 'them'}`,
  ];
}
