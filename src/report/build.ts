/**
 * Writing a run's report: `report.html` in its run directory (at the run's end, by its supervisor, and on
 * demand by `zerowiz report RUN`), or a file the user names (`--out FILE`, an existing one kept as a backup
 * first). Written whole or not at all, never through a link.
 */
import { join } from 'node:path';
import { writeFileSafely, type WriteResult } from '../fs/index.js';
import { writeRecordFile } from '../records/index.js';
import { gatherReport } from './data.js';
import { reportHtml } from './html.js';

/** The report's name in a run directory. */
export const REPORT_FILE = 'report.html';

/** Where a run directory's report is. */
export function reportPathOf(dir: string): string {
  return join(dir, REPORT_FILE);
}

/** The report of a run directory, as HTML. Throws UsageError when the directory holds no readable record. */
export function buildReport(dir: string, now = Date.now()): string {
  return reportHtml(gatherReport(dir, now));
}

/** Writes the report into the run directory; returns its path. Throws what the write throws. */
export function writeRunReport(dir: string): string {
  const path = reportPathOf(dir);
  writeRecordFile(path, buildReport(dir));
  return path;
}

/** Writes the report to a file of the user's (an existing one kept aside first). */
export async function writeReportTo(dir: string, out: string): Promise<WriteResult> {
  return writeFileSafely(out, buildReport(dir));
}
