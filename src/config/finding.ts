/**
 * What a rule says: a finding, an error or a warning with the reason and the fix (and the questions that change
 * it), and the one way every command prints it. The acceptance rules of the files (./accept.ts) and the setup's
 * rules (src/rules/) make them; the wizard, the plain commands and the launch show them.
 */
import type { QuestionId } from './questions.js';

/** One finding of a rule. */
export interface Finding {
  level: 'error' | 'warning';
  /** A stable rule id, e.g. `offload-param-needs-stage-3`. */
  rule: string;
  /** What is wrong and why. */
  message: string;
  /** How to fix it. */
  fix: string;
  /** The questions that change it, for the wizard to jump to. */
  questions?: QuestionId[];
}

/** An error finding. */
export const err = (rule: string, message: string, fix: string, questions?: QuestionId[]): Finding => ({
  level: 'error',
  rule,
  message,
  fix,
  ...(questions ? { questions } : {}),
});
/** A warning finding. */
export const warn = (rule: string, message: string, fix: string, questions?: QuestionId[]): Finding => ({
  level: 'warning',
  rule,
  message,
  fix,
  ...(questions ? { questions } : {}),
});

/** A finding as printed by every command: `warning: message` and an indented `fix:` line. */
export function formatFinding(f: Finding): string {
  return `${f.level}: ${f.message}\n  fix: ${f.fix}`;
}
