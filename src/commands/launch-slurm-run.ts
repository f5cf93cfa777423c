/**
 * The work of `zerowiz launch --slurm`, `zerowiz attach` and the Slurm part of `zerowiz runs`. The Slurm
 * logic lives in src/slurm/; a job is run and followed by the one launch lifecycle (src/launch/lifecycle.ts)
 * as a Slurm run kind (src/slurm/kind.ts): the pane or stream mode, the signals (a Slurm job outlives the
 * terminal: leaving never cancels it, only a confirmed stop does), the summary and the exit codes.
 */
import type { CommandContext } from './context.js';
import { UsageError } from '../errors.js';
import { launch, type LaunchRequest } from '../launch/lifecycle.js';
import { displayDir, listRunRecords, readRecordSetup, type RunRecord } from '../launch/record.js';
import { writeErr } from '../terminal.js';
import { loadPreset } from '../presets.js';
import type { Setup } from '../setup.js';
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

/** The setup and the request: from the preset and flags, or from the newest record (--last) and flags. */
async function resolveRequest(
  ref: string | undefined,
  flags: LaunchFlags & SlurmFlags,
): Promise<{ setup: Setup; source: string; req: SlurmRequest }> {
  const given = sbatchOptionsOf(flags);
  const nodes = flags.nodes !== undefined ? parseShapeFlag('--nodes', flags.nodes) : undefined;
  const gpus = flags.gpusPerNode !== undefined ? parseShapeFlag('--gpus-per-node', flags.gpusPerNode) : undefined;
  if (!flags.last) {
    if (ref === undefined)
      throw new UsageError(
        'which preset? give a preset name or file',
        'see `zerowiz preset list`, or `zerowiz launch --last` to submit the newest run again',
      );
    return { setup: await loadPreset(ref), source: ref, req: { nodes, gpusPerNode: gpus, options: given } };
  }
  if (ref !== undefined)
    throw new UsageError(
      'give either a preset or --last, not both',
      '`zerowiz launch --last` submits the newest record of `zerowiz runs` again',
    );
  const { records, damaged } = listRunRecords();
  const newest = records[0];
  for (const d of damaged) writeErr(`zerowiz: skipped a damaged run record: ${displayDir(d.path)}: ${d.problem}\n`);
  if (!newest)
    throw new UsageError('no run recorded in this directory', 'start one with `zerowiz launch NAME --slurm`');
  let setup: Setup;
  try {
    setup = readRecordSetup(newest);
  } catch (err) {
    throw new UsageError(
      `run record ${displayDir(newest.dir)} cannot be rerun: ${(err as Error).message}`,
      'launch the preset by name instead',
    );
  }
  const was = newest.json.slurm;
  const options: SbatchOptions = {
    partition: given.partition ?? was?.options.partition,
    time: given.time ?? was?.options.time,
    account: given.account ?? was?.options.account,
    qos: given.qos ?? was?.options.qos,
    extra: given.extra.length > 0 ? given.extra : (was?.options.extra ?? []),
  };
  return {
    setup,
    source: `--last (${newest.json.id})`,
    req: { nodes: nodes ?? was?.shape.nodes, gpusPerNode: gpus ?? was?.shape.gpusPerNode, options },
  };
}

/** `zerowiz launch NAME|FILE --slurm [...]` and `zerowiz launch --last` of a Slurm run. */
export async function slurmLaunchCommand(
  ref: string | undefined,
  flags: LaunchFlags & SlurmFlags,
  ctx: CommandContext,
): Promise<number> {
  const { setup, source, req } = await resolveRequest(ref, flags);
  return launchFromCli(setup, source, flags, ctx, { kind: slurmLaunchKind(req, ctxOf()), closeOnEnd: true });
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
