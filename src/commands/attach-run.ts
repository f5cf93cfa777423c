/**
 * The work of `zerowiz attach [RUN]` and `zerowiz stop RUN`: a run of this directory, whatever its kind,
 * followed again in the pane or stream mode, or stopped from any terminal.
 */
import { UsageError } from '../text/index.js';
import { followRun } from '../launch/index.js';
import { recordKinds, type RunKindModule } from './run-kinds.js';
import { preparedOfRecord } from '../launch/index.js';
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
  const kinds = await recordKinds();
  const rec = findRunRecord(ref, process.cwd(), kinds.check, kinds.aliases);
  const { kind, prepared, intro } = await ((await kinds.of(rec.json)) ?? LOCAL_ATTACH).attach(rec);
  say(intro);
  return followRun({ record: rec, writes: [] }, prepared, kind, {
    pane: paneFor(flags, ctx),
    closeOnEnd: false,
    ...output.runSinks(),
  });
}

/** A local run, attached: its supervisor's files followed, as `launch` follows the run it started. */
const LOCAL_ATTACH: Pick<RunKindModule, 'attach'> = {
  async attach(rec) {
    const state = localRunState(rec);
    const over = !localRunOpen(rec);
    return {
      kind: localKind(),
      prepared: preparedOfRecord(rec, setupOfRecord(rec)),
      intro:
        state.kind === 'orphaned'
          ? `attaching to run ${rec.json.id}, which is orphaned: its supervisor and its watchdog are gone, but its steps still run (${processList(state.processes)}); \`zerowiz stop ${rec.json.id}\` stops them`
          : `attaching to run ${rec.json.id}${over ? ', which has ended' : ''}`,
    };
  },
};

/**
 * `zerowiz stop RUN`: stops a run from any terminal (a local run: the ladder, joined by a second stop; a Slurm
 * job: scancel) and returns once it has ended: 0 stopped (or already over), 2 no such run or it cannot be
 * stopped from here. The local part is src/launch/stop.ts.
 */
export async function stopCommand(ref: string | undefined, flags: { now?: boolean }): Promise<number> {
  if (ref === undefined)
    throw new UsageError('which run? give a run id', 'see `zerowiz runs` for the ids of the runs still going');
  const kinds = await recordKinds();
  const rec = findRunRecord(ref, process.cwd(), kinds.check, kinds.aliases);
  const other = await kinds.of(rec.json);
  if (other) return other.stop(rec, flags, say);
  return stopLocalRun(rec, { now: flags.now === true, say });
}
