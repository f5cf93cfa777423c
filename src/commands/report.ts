/** Printing findings and write results the same way in every plain command. */
import { formatFinding, type Finding } from '../validate.js';
import type { WriteResult } from '../write.js';

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
  for (const f of findings) stream.write(`zerowiz: ${formatFinding(f)}\n`);
  return undefined;
}

/** `wrote PATH` / `unchanged PATH` / `updated PATH (previous kept as BACKUP)`. */
export function formatWrite(r: WriteResult): string {
  if (r.status === 'unchanged') return `unchanged ${r.path}`;
  if (r.backup) return `updated ${r.path} (previous content kept as ${r.backup})`;
  return `${r.status === 'created' ? 'wrote' : 'updated'} ${r.path}`;
}
