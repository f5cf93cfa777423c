/** Printing findings, damaged records and import notes the same way in every plain command. */
import { displayDir, type DamagedRecord } from '../records/index.js';
import type { Finding } from '../config/index.js';
import * as output from './output.js';

/**
 * Returns the first error, if any; otherwise says the warnings. (With an error the caller fails with that one
 * line, so the warnings would only bury it.)
 */
export function reportFindings(findings: Finding[]): Finding | undefined {
  const error = findings.find((f) => f.level === 'error');
  if (error) return error;
  for (const f of findings) output.finding(f);
  return undefined;
}

/** Names the records that were skipped because their run.json is damaged. */
export function reportDamaged(damaged: DamagedRecord[]): void {
  for (const d of damaged) output.say(`skipped a damaged run record: ${displayDir(d.path)}: ${d.problem}`);
}

/** Says what an import changed or kept (import.ts notes), one `zerowiz: import: ...` line each. */
export function reportImportNotes(notes: readonly string[]): void {
  for (const n of notes) output.say(`import: ${n}`);
}
