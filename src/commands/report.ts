/** Printing findings and write results the same way in every plain command. */
import { displayDir, type DamagedRecord } from '../launch/record.js';
import { printableLines } from '../printable.js';
import { writeErr } from '../terminal.js';
import { formatFinding, type Finding } from '../config/validate.js';

/**
 * Returns the first error, if any; otherwise prints the warnings to `stream`. (With an error the caller
 * fails with that one line, so the warnings would only bury it.)
 */
export function reportFindings(
  findings: Finding[],
  stream: NodeJS.WritableStream = process.stderr,
): Finding | undefined {
  const error = findings.find((f) => f.level === 'error');
  if (error) return error;
  for (const f of findings) stream.write(`zerowiz: ${printableLines(formatFinding(f))}\n`);
  return undefined;
}

/** Names the records that were skipped because their run.json is damaged. */
export function reportDamaged(damaged: DamagedRecord[]): void {
  for (const d of damaged) writeErr(`zerowiz: skipped a damaged run record: ${displayDir(d.path)}: ${d.problem}\n`);
}

/** Prints what an import changed or kept (import.ts notes), one `zerowiz: import: ...` line each. */
export function reportImportNotes(notes: readonly string[], stream: NodeJS.WritableStream = process.stderr): void {
  for (const n of notes) stream.write(`zerowiz: import: ${printableLines(n)}\n`);
}
