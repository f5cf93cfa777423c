/** The work of `zerowiz report [RUN] [--out FILE]`. */
import { pathFlag } from '../fs/index.js';
import { formatWrite } from '../fs/index.js';
import { displayDir, findRunRecord } from '../records/index.js';
import { writeReportTo, writeRunReport } from '../report/index.js';
import { describeWriteError, UsageError } from '../text/index.js';
import { recordKinds } from './run-kinds.js';
import * as output from './output.js';

/** Writes the report of a run; prints where it is. */
export async function reportCommand(ref: string | undefined, flags: { out?: string }): Promise<number> {
  const kinds = await recordKinds();
  const rec = findRunRecord(ref, process.cwd(), kinds.check, kinds.aliases);
  if (flags.out !== undefined) {
    const out = pathFlag('--out', flags.out);
    const r = await writeReportTo(rec.dir, out);
    output.note(formatWrite(r));
    output.lines([displayDir(r.path)]);
    return 0;
  }
  let path: string;
  try {
    path = writeRunReport(rec.dir);
  } catch (e) {
    throw new UsageError(
      `cannot write the report into ${displayDir(rec.dir)}: ${describeWriteError(e)}`,
      'write it elsewhere with --out FILE',
    );
  }
  if (rec.json.ended === 'running') output.note(`run ${rec.json.id} is still running: the report shows it so far`);
  output.lines([displayDir(path)]);
  return 0;
}
