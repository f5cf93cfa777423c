/**
 * The command line's question before a relaunch over DeepSpeed checkpoints written with another topology
 * (src/checkpoints/relaunch.ts): the warning, then the ways forward. `--on-topology-change` answers it;
 * on a terminal zerowiz asks; without one it goes on and the run record keeps the warning. `fresh` moves the
 * old states aside here, once the launch is known to be able to start (never in a dry run).
 */
import { RunError } from '../text/index.js';
import type { Setup } from '../config/index.js';
import { UsageError } from '../text/index.js';
import {
  applyTopologyChoice,
  isTopologyChoice,
  relaunchChecks,
  TOPOLOGY_CHOICE_TEXT,
  TOPOLOGY_CHOICES,
  type TopologyChoice,
  type TopologyPlan,
} from '../checkpoints/index.js';
import { setAside } from '../checkpoints/index.js';
import { displayDir } from '../records/index.js';
import { askLine } from '../proc/index.js';
import { recordKinds } from './run-kinds.js';
import * as output from './output.js';

/** The letters of the question, one per choice. */
const KEYS: Record<string, TopologyChoice> = { c: 'convert', w: 'weights', f: 'fresh', g: 'go-on' };

/** Reads `--on-topology-change`; throws UsageError for a value it does not take. */
function choiceOf(flag: string | undefined): TopologyChoice | undefined {
  if (flag === undefined) return undefined;
  if (isTopologyChoice(flag)) return flag;
  throw new UsageError(
    `--on-topology-change: '${flag}' is not a way forward`,
    `give one of ${TOPOLOGY_CHOICES.join(', ')}`,
  );
}

/**
 * The launch after the question (or the flag): the setup to run, what to move aside, the warnings to keep.
 * Asks only on a terminal and outside a dry run; says what it chose.
 */
export async function offerTopology(
  setup: Setup,
  flags: { onTopologyChange?: string; dryRun?: boolean },
  opts: { cwd: string; interactive: boolean; accelerate: string | null },
): Promise<TopologyPlan> {
  const given = choiceOf(flags.onTopologyChange);
  const checks = relaunchChecks(setup, opts.cwd, opts.accelerate, (await recordKinds()).check);
  if (checks.length === 0) return applyTopologyChoice(setup, checks, 'go-on');
  for (const c of checks) output.warn(c.warning);
  let choice: TopologyChoice = given ?? 'go-on';
  if (given === undefined && opts.interactive && !flags.dryRun) {
    const q = askLine(
      `zerowiz: ${TOPOLOGY_CHOICES.map((c) => `[${c[0]}] ${c}: ${TOPOLOGY_CHOICE_TEXT[c]}`).join('; ')}. Which? [C/w/f/g] `,
    );
    const typed = await q.answer;
    if (q.interrupted()) throw new RunError('Ctrl+C at the question: nothing was started', 130);
    const a = (typed ?? 'g').trim().toLowerCase();
    choice = a === '' ? 'convert' : (KEYS[a[0]!] ?? (isTopologyChoice(a) ? a : 'go-on'));
  } else if (given === undefined)
    output.hint(
      `--on-topology-change ${TOPOLOGY_CHOICES.join('|')} chooses the way forward; without a terminal the launch goes on as it is`,
    );
  const plan = applyTopologyChoice(setup, checks, choice);
  for (const l of plan.said) output.say(l);
  return plan;
}

/** Moves aside what a `fresh` choice named (a real launch, just before it starts); says what moved where. */
export function setAsideNow(plan: TopologyPlan, cwd: string): void {
  for (const m of setAside(plan.setAside)) output.say(`moved ${displayDir(m.from, cwd)} to ${displayDir(m.to, cwd)}`);
}
