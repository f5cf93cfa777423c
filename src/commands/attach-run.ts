/**
 * The work of `zerowiz attach [RUN]` and `zerowiz stop RUN`: a run of this directory, whatever its kind,
 * followed again in the pane or stream mode, or stopped from any terminal.
 */
import { UsageError } from '../text/index.js';
import { followRun } from '../launch/index.js';
import { recordKinds, type RunKindModule } from './run-kinds.js';
import { preparedOfRecord } from '../launch/index.js';
import { localKind, localRunControl, localRunOpen } from '../launch/index.js';
import { displayDir, findRunRecord, readRunRecord, setupOfRecord, type RunRecord } from '../records/index.js';
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
    const over = !localRunOpen(rec);
    return {
      kind: localKind(),
      prepared: preparedOfRecord(rec, setupOfRecord(rec)),
      intro: `attaching to run ${rec.json.id}${over ? ', which has ended' : ''}`,
    };
  },
};

/** How often `zerowiz stop` looks whether the run has ended. */
const STOP_POLL_MS = 200;

/**
 * `zerowiz stop RUN`: stops a run from any terminal (a local run: its supervisor's ladder; a Slurm job:
 * scancel) and returns once it has ended: 0 stopped (or already over), 2 no such run or it cannot be
 * stopped from here.
 */
export async function stopCommand(ref: string | undefined, flags: { now?: boolean }): Promise<number> {
  if (ref === undefined)
    throw new UsageError('which run? give a run id', 'see `zerowiz runs` for the ids of the runs still going');
  const kinds = await recordKinds();
  const rec = findRunRecord(ref, process.cwd(), kinds.check, kinds.aliases);
  const other = await kinds.of(rec.json);
  if (other) return other.stop(rec, flags, say);
  const control = localRunControl(rec);
  if (rec.json.ended !== 'running' || !control.alive()) {
    say(`run ${rec.json.id} has already ended (${rec.json.ended})`);
    return 0;
  }
  const why = flags.now ? control.killNow() : control.stop();
  if (why && localRunOpen(rec))
    throw new UsageError(`cannot stop run ${rec.json.id}: ${why}`, `its logs are in ${displayDir(rec.dir)}`);
  say(
    flags.now
      ? `killing run ${rec.json.id} (SIGKILL to its steps)`
      : `stopping run ${rec.json.id} (SIGINT to its steps, then SIGTERM, then SIGKILL); waiting for it to end`,
  );
  // Ctrl+C stops the waiting, not the stop: the supervisor goes on with its ladder.
  let interrupted = false;
  const onInterrupt = () => {
    interrupted = true;
  };
  process.on('SIGINT', onInterrupt);
  try {
    return await waitForEnd(rec, control, () => interrupted);
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

/** Waits until the run's record says it ended (or its supervisor is gone, or Ctrl+C); the exit code. */
async function waitForEnd(rec: RunRecord, control: { alive(): boolean }, interrupted: () => boolean): Promise<number> {
  for (;;) {
    if (interrupted()) {
      say(
        `stopped waiting (Ctrl+C); run ${rec.json.id} goes on stopping as asked (its supervisor ends it): \`zerowiz runs\` says when it has ended`,
      );
      return 130;
    }
    const r = readRunRecord(rec.dir);
    const json = 'record' in r ? r.record.json : rec.json;
    if (json.ended !== 'running') {
      say(`run ${rec.json.id} ${json.ended}${json.exitCode !== null ? ` (exit ${json.exitCode})` : ''}`);
      return 0;
    }
    if (!control.alive()) {
      say(`run ${rec.json.id}: its supervisor ended without finishing the record`);
      return 0;
    }
    await new Promise((res) => setTimeout(res, STOP_POLL_MS));
  }
}
