/**
 * `zerowiz stop RUN` for a Slurm job: scancel, then wait until Slurm says the job is over and settle the
 * record from its output's marks, as a viewer would have.
 */
import type { RunRecord } from '../records/index.js';
import { cancelJob, describeJob, queryJob } from './job.js';
import { settleRecord, slurmRunOpen } from './record.js';
import { statePollMs } from './follow.js';
import type { SlurmContext } from './tools.js';

/** Cancels the record's job and waits for its end; resolves with the exit code of `zerowiz stop`. */
export async function stopSlurmJob(rec: RunRecord, ctx: SlurmContext, say: (line: string) => void): Promise<number> {
  const id = rec.json.slurm?.jobId;
  if (!id) return 0;
  const cluster = rec.json.slurm?.cluster ?? null;
  const r = await cancelJob(id, cluster, ctx);
  if (r.code !== 0) {
    say(`scancel ${id} failed: ${r.error ?? (r.stderr.trim() || `exit ${r.code}`)}`);
    return 2;
  }
  say(`cancelling Slurm job ${id} (scancel); waiting for it to end`);
  for (;;) {
    const q = await queryJob(id, ctx, cluster);
    if (!q.found) {
      settleRecord(rec, null, q.gone);
      if (q.gone) break;
    } else if (q.job.final) {
      settleRecord(rec, q.job, false);
      say(`Slurm job ${id}: ${describeJob(q.job)}`);
      break;
    }
    await new Promise((res) => setTimeout(res, statePollMs(ctx.env)));
  }
  say(`run ${rec.json.id} ${slurmRunOpen(rec) ? 'ended (its state is not known to Slurm any more)' : rec.json.ended}`);
  return 0;
}
