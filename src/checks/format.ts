/**
 * The checks as text: the report `zerowiz check` prints (each check's status, what it measured, what is
 * needed and the fix; then what to fix, in order), the short lines the wizard's finish screen shows, and the
 * one-line form a Slurm node prints into its pass log (`zerowiz-check HOST STATUS ID: ...`), which the pane
 * parses back with parseNodeCheckLine.
 */
import { printable } from '../text/index.js';
import type { CheckPlan } from './plan.js';
import { CHECK_IDS, type CheckId, type CheckResult, type CheckStatus, isCheckId } from './types.js';

/** How a status is printed. */
export const STATUS_WORDS: Readonly<Record<CheckStatus, string>> = {
  pass: 'PASS',
  warn: 'WARN',
  fail: 'FAIL',
  skip: 'SKIP',
};

const ID_WIDTH = Math.max(...CHECK_IDS.map((id) => id.length));

/** One line counting the statuses: `2 FAIL, 1 WARN, 9 PASS, 1 SKIP`. */
export function countLine(results: readonly CheckResult[]): string {
  const order: CheckStatus[] = ['fail', 'warn', 'pass', 'skip'];
  return order
    .map((s) => [s, results.filter((r) => r.status === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${STATUS_WORDS[s]}`)
    .join(', ');
}

/** What the checks cover, for the report's first line. */
export function planLine(plan: CheckPlan): string {
  const passes =
    plan.steps.length === plan.totalSteps
      ? `${plan.totalSteps} pass(es)`
      : `pass ${plan.steps.map((s) => `${s.index + 1} (${s.name})`).join(', ')} of ${plan.totalSteps}`;
  return `${plan.setupName}: ${passes}, ${plan.modeLabel}, ${plan.processesPerNode} process(es) per node x ${plan.numMachines} node(s)`;
}

/** The full report: per check its status and id, then measured / need / fix lines (control characters escaped). */
export function reportLines(plan: CheckPlan, results: readonly CheckResult[]): string[] {
  const out = [`zerowiz check ${planLine(plan)}: ${countLine(results)}`];
  for (const r of results) {
    out.push(`${STATUS_WORDS[r.status]} ${r.id.padEnd(ID_WIDTH)}${r.ms !== undefined ? `  (${r.ms} ms)` : ''}`);
    out.push(`     measured: ${printable(r.measured)}`);
    if (r.need !== '') out.push(`     need:     ${printable(r.need)}`);
    if (r.fix !== null) out.push(`     fix:      ${printable(r.fix)}`);
  }
  const todo = results.filter((r) => r.status === 'fail' || r.status === 'warn');
  if (todo.length > 0)
    out.push(
      `fix in this order: ${todo.map((r, i) => `${i + 1}. ${r.id}${r.status === 'warn' ? ' (warning)' : ''}`).join('  ')}`,
    );
  return out;
}

/** One short line per check for a narrow screen (the wizard's finish screen): `FAIL shm  64 MiB ...`. */
export function shortLines(results: readonly CheckResult[]): string[] {
  return results.map(
    (r) =>
      `${STATUS_WORDS[r.status]} ${r.id.padEnd(ID_WIDTH)} ${printable(r.status === 'pass' || r.status === 'skip' ? r.measured : (r.fix ?? r.measured))}`,
  );
}

/** The marker of a node's check lines in a pass log. */
export const NODE_CHECK_MARK = 'zerowiz-check';

/** One line of a node's report: `zerowiz-check HOST STATUS ID: MEASURED | need: NEED | fix: FIX`. */
export function nodeCheckLine(host: string, r: CheckResult): string {
  const one = (t: string) => printable(t).replace(/\s*\n\s*/g, ' ');
  return `${NODE_CHECK_MARK} ${host} ${STATUS_WORDS[r.status]} ${r.id}: ${one(r.measured)}${r.need !== '' ? ` | need: ${one(r.need)}` : ''}${r.fix !== null ? ` | fix: ${one(r.fix)}` : ''}`;
}

/** The closing line of a node's report: `zerowiz-check HOST done: 1 FAIL, 12 PASS`. */
export function nodeDoneLine(host: string, results: readonly CheckResult[]): string {
  return `${NODE_CHECK_MARK} ${host} done: ${countLine(results)}`;
}

/** A node's check line, parsed back (the pane's side); null for any other line. */
export type NodeCheckLine =
  | {
      kind: 'check';
      host: string;
      id: CheckId;
      status: CheckStatus;
      measured: string;
      need: string;
      fix: string | null;
    }
  | { kind: 'done'; host: string; counts: string };

/** Parses a line written by nodeCheckLine or nodeDoneLine. */
export function parseNodeCheckLine(line: string): NodeCheckLine | null {
  const done = /^zerowiz-check (\S+) done: (.*)$/.exec(line);
  if (done) return { kind: 'done', host: done[1]!, counts: done[2]! };
  const m = /^zerowiz-check (\S+) (PASS|WARN|FAIL|SKIP) ([a-z-]+): (.*)$/.exec(line);
  if (!m || !isCheckId(m[3]!)) return null;
  let rest = m[4]!;
  let fix: string | null = null;
  const f = rest.lastIndexOf(' | fix: ');
  if (f >= 0) {
    fix = rest.slice(f + ' | fix: '.length);
    rest = rest.slice(0, f);
  }
  let need = '';
  const n = rest.lastIndexOf(' | need: ');
  if (n >= 0) {
    need = rest.slice(n + ' | need: '.length);
    rest = rest.slice(0, n);
  }
  const status = Object.entries(STATUS_WORDS).find(([, w]) => w === m[2])![0] as CheckStatus;
  return { kind: 'check', host: m[1]!, id: m[3]! as CheckId, status, measured: rest, need, fix };
}
