/**
 * The work of `zerowiz launch --slurm`, `zerowiz attach` and the Slurm part of `zerowiz runs`. The Slurm
 * logic lives in src/slurm/; a job is run and followed by the one launch lifecycle (src/launch/lifecycle.ts)
 * as a Slurm run kind (src/slurm/kind.ts): the pane or stream mode, the signals (a Slurm job outlives the
 * terminal: leaving never cancels it, only a confirmed stop does), the summary and the exit codes.
 */
import type { CommandContext } from './context.js';
import { UsageError } from '../errors.js';
import { launch, type LaunchRequest } from '../launch/lifecycle.js';
import { displayDir, type RunRecord } from '../launch/record.js';
import type { Setup } from '../config/setup.js';
import { describeJob, queryJob } from '../slurm/job.js';
import { recordJobSetup, slurmAttachKind, slurmLaunchKind } from '../slurm/kind.js';
import type { SlurmRequest } from '../slurm/launch.js';
import { launchFromCli, paneFor } from './launch-run.js';
import { findRunRecord, settleRecord, slurmRunOpen } from '../slurm/record.js';
import { sbatchOptionsOf, type SbatchOptions } from '../slurm/script.js';
import { parseShapeFlag } from '../slurm/shape.js';
import { NO_SLURM_HINT, type SlurmContext } from '../slurm/tools.js';
import { whichSync } from '../launch/preflight.js';
import type { LaunchFlags, SlurmFlags } from './launch.js';

function ctxOf(): SlurmContext {
  return { env: process.env, cwd: process.cwd() };
}

const err = (line: string) => process.stderr.write(`zerowiz: ${line}\n`);

/**
 * The job's request: the flags, and for --last what the newest record's job asked for where a flag does not
 * say (the setup itself comes from resolveLaunchSource, as for a local run).
 */
function requestOf(record: RunRecord | null, flags: LaunchFlags & SlurmFlags): SlurmRequest {
  const given = sbatchOptionsOf(flags);
  const nodes = flags.nodes !== undefined ? parseShapeFlag('--nodes', flags.nodes) : undefined;
  const gpus = flags.gpusPerNode !== undefined ? parseShapeFlag('--gpus-per-node', flags.gpusPerNode) : undefined;
  const was = record?.json.slurm;
  if (!was) return { nodes, gpusPerNode: gpus, options: given };
  const options: SbatchOptions = {
    partition: given.partition ?? was.options.partition,
    time: given.time ?? was.options.time,
    account: given.account ?? was.options.account,
    qos: given.qos ?? was.options.qos,
    extra: given.extra.length > 0 ? given.extra : was.options.extra,
  };
  return { nodes: nodes ?? was.shape.nodes, gpusPerNode: gpus ?? was.shape.gpusPerNode, options };
}

/** `zerowiz launch NAME|FILE --slurm [...]` and `zerowiz launch --last` of a Slurm run. */
export async function slurmLaunchCommand(
  from: { setup: Setup; source: string; record: RunRecord | null },
  flags: LaunchFlags & SlurmFlags,
  ctx: CommandContext,
): Promise<number> {
  const req = requestOf(from.record, flags);
  return launchFromCli(from.setup, from.source, flags, ctx, { kind: slurmLaunchKind(req, ctxOf()), closeOnEnd: true });
}

/** The wizard's "Submit to Slurm": the same run kind and lifecycle as `zerowiz launch --slurm`. */
export function slurmLaunchSetup(
  setup: Setup,
  source: string,
  req: SlurmRequest,
  pane: LaunchRequest['pane'],
): Promise<number> {
  return launch({ setup, source, kind: slurmLaunchKind(req, ctxOf()), pane, closeOnEnd: true });
}

/** `zerowiz attach [RUN]`: follows a running or finished Slurm job of a record. */
export async function attachCommand(
  ref: string | undefined,
  flags: { tui?: boolean },
  ctx: CommandContext,
): Promise<number> {
  const rec = findRunRecord(ref);
  const s = rec.json.slurm;
  if (!s)
    throw new UsageError(
      `run ${rec.json.id} ran here, not as a Slurm job; there is nothing to attach to`,
      `its logs are in ${displayDir(rec.dir)}`,
    );
  if (!s.jobId)
    throw new UsageError(
      `run ${rec.json.id} was never submitted (sbatch did not answer)`,
      'submit it again with `zerowiz launch --last`',
    );
  const sctx = ctxOf();
  let alreadyOver = !slurmRunOpen(rec);
  if (!alreadyOver) {
    if (!whichSync('scontrol', sctx.env))
      throw new UsageError(
        `Slurm's scontrol is not on PATH, so zerowiz cannot ask about job ${s.jobId}`,
        `${NO_SLURM_HINT.split(';')[0]}; its logs so far are in ${displayDir(rec.dir)}`,
      );
    const r = await queryJob(s.jobId, sctx);
    if (!r.found) {
      if (!r.gone) throw new UsageError(r.message, 'check that Slurm answers here (`squeue`), then attach again');
      settleRecord(rec, null, true);
      if (slurmRunOpen(rec))
        throw new UsageError(
          `${r.message}; how it ended is not known (its output has no end mark)`,
          `its logs are in ${displayDir(rec.dir)}; \`zerowiz launch --last\` submits it again`,
        );
    } else if (r.job.final) settleRecord(rec, r.job, false);
    alreadyOver = !slurmRunOpen(rec);
  }
  err(`attaching to Slurm job ${s.jobId} (run ${rec.json.id})${alreadyOver ? ', which has ended' : ''}`);
  return launch({
    setup: recordJobSetup(rec),
    source: rec.json.source,
    kind: slurmAttachKind(rec, sctx),
    pane: paneFor(flags, ctx),
    closeOnEnd: !alreadyOver,
  });
}

/** Refreshes the open Slurm runs among `records` from Slurm; returns a note when Slurm cannot be asked. */
export async function refreshSlurmRuns(records: RunRecord[]): Promise<string | null> {
  const open = records.filter((r) => slurmRunOpen(r) && r.json.slurm?.jobId);
  if (open.length === 0) return null;
  const sctx = ctxOf();
  if (!whichSync('scontrol', sctx.env))
    return "Slurm's scontrol is not on PATH here: Slurm runs show the last state zerowiz saw";
  for (const r of open) {
    const lookup = await queryJob(r.json.slurm!.jobId!, sctx);
    if (lookup.found) settleRecord(r, lookup.job, false);
    else settleRecord(r, null, lookup.gone);
  }
  return null;
}

/** A Slurm run's state for `zerowiz runs`: `slurm job 12 pending (Resources)`. */
export function slurmColumn(r: RunRecord): string {
  const s = r.json.slurm;
  if (!s) return '';
  if (!s.jobId) return 'slurm: not submitted';
  if (s.phase === 'unknown') return `slurm job ${s.jobId} unknown to Slurm now`;
  const job = {
    ...s,
    jobId: s.jobId,
    phase: s.phase,
    final: false,
    exitCode: null,
    signal: null,
    source: 'scontrol' as const,
  };
  return `slurm job ${s.jobId} ${describeJob(job)}`;
}
