/**
 * The work of `zerowiz attach [RUN]` and `zerowiz stop RUN`: a run of this directory, whatever its kind,
 * followed again in the pane or stream mode, or stopped from any terminal.
 */
import { UsageError } from '../text/index.js';
import { followRun } from '../launch/index.js';
import { kindBlockProblem } from './record-kinds.js';
import { preparedOfRecord, type PreparedLaunch, type RunKind } from '../launch/index.js';
import { localKind, localRunOpen, localRunState, processList, stopLocalRun } from '../launch/index.js';
import { findRunRecord, setupOfRecord } from '../records/index.js';
import type { CommandContext } from './context.js';
import { paneFor } from './launch-run.js';
import * as output from './output.js';

const say = output.say;

/** `zerowiz attach [RUN]`: follows a run (running or finished) to its end, with `launch`'s exit code. */
export async function attachCommand(
  ref: string | undefined,
  flags: { tui?: boolean },
  ctx: CommandContext,
): Promise<number> {
  const rec = findRunRecord(ref, process.cwd(), kindBlockProblem);
  let kind: RunKind;
  let prepared: PreparedLaunch;
  let over: boolean;
  if (rec.json.slurm) {
    const s = await import('./launch-slurm-run.js');
    const { slurmAttachKind, recordJobSetup } = await import('../slurm/kind.js');
    over = await s.settleSlurmRun(rec);
    kind = slurmAttachKind(rec, s.slurmContext());
    prepared = preparedOfRecord(rec, recordJobSetup(rec));
    say(`attaching to Slurm job ${rec.json.slurm.jobId} (run ${rec.json.id})${over ? ', which has ended' : ''}`);
  } else {
    const state = localRunState(rec);
    over = !localRunOpen(rec);
    kind = localKind();
    prepared = preparedOfRecord(rec, setupOfRecord(rec));
    say(
      state.kind === 'orphaned'
        ? `attaching to run ${rec.json.id}, which is orphaned: its supervisor and its watchdog are gone, but its steps still run (${processList(state.processes)}); \`zerowiz stop ${rec.json.id}\` stops them`
        : `attaching to run ${rec.json.id}${over ? ', which has ended' : ''}`,
    );
  }
  return followRun({ record: rec, writes: [] }, prepared, kind, {
    pane: paneFor(flags, ctx),
    closeOnEnd: false,
    ...output.runSinks(),
  });
}

/**
 * `zerowiz stop RUN`: stops a run from any terminal (a local run: the ladder, joined by a second stop; a Slurm
 * job: scancel) and returns once it has ended: 0 stopped (or already over), 2 no such run or it cannot be
 * stopped from here. The local part is src/launch/stop.ts.
 */
export async function stopCommand(ref: string | undefined, flags: { now?: boolean }): Promise<number> {
  if (ref === undefined)
    throw new UsageError('which run? give a run id', 'see `zerowiz runs` for the ids of the runs still going');
  const rec = findRunRecord(ref, process.cwd(), kindBlockProblem);
  if (rec.json.slurm) {
    const s = await import('./launch-slurm-run.js');
    if (await s.settleSlurmRun(rec)) {
      say(`run ${rec.json.id} has already ended (${rec.json.ended})`);
      return 0;
    }
    const { stopSlurmJob } = await import('../slurm/stop.js');
    return stopSlurmJob(rec, s.slurmContext(), say);
  }
  return stopLocalRun(rec, { now: flags.now === true, say });
}
