/** Printing findings and write results the same way in every plain command. */
import { printableLines } from '../printable.js';
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

/** Prints what an import changed or kept (import.ts notes), one `zerowiz: import: ...` line each. */
export function reportImportNotes(notes: readonly string[], stream: NodeJS.WritableStream = process.stderr): void {
  for (const n of notes) stream.write(`zerowiz: import: ${printableLines(n)}\n`);
}
