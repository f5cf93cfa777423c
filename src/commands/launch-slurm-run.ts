/**
 * The Slurm kind's behaviour at the command line's edges (./slurm-kind.ts is its entry): the job's request from the
 * flags (`launch --slurm`, `--last` of a Slurm run), what `attach` and `stop` check before following or cancelling a
 * job, and what `runs` shows of one. The Slurm logic lives in src/slurm/; a job is run and followed by the one launch
 * entry and viewer as a Slurm run kind (src/slurm/kind.ts).
 */
import type { RunRecord } from '../records/index.js';
import { preparedOfRecord, type RunKind } from '../launch/index.js';
import { displayDir } from '../records/index.js';
import { UsageError } from '../text/index.js';
import { whichSync } from '../proc/index.js';
import { awaitSubmission, describeJob, queryJob, slurmTimeoutMs, statePollMs } from '../slurm/index.js';
import { slurmLaunchKind } from '../slurm/index.js';
import type { SlurmRequest } from '../slurm/index.js';
import { settleRecord, slurmRunOpen } from '../slurm/index.js';
import { sbatchOptionsOf, type SbatchOptions } from '../slurm/index.js';
import { parseShapeFlag } from '../slurm/index.js';
import { NO_SLURM_HINT, type SlurmContext } from '../slurm/index.js';
import { recordJobSetup, slurmAttachKind, stopSlurmJob } from '../slurm/index.js';
import type { LaunchFrom, RunKindModule } from './kind-entry.js';
import type { LaunchFlags } from './launch-flags.js';

/** The Slurm flags of `launch` (./slurm-kind.ts declares them). */
interface SlurmFlags {
  slurm?: boolean;
  partition?: string;
  nodes?: string;
  gpusPerNode?: string;
  time?: string;
  account?: string;
  qos?: string;
  sbatchArg?: string[];
}

/** The Slurm context of this process: its environment and directory. */
export function slurmContext(): SlurmContext {
  return { env: process.env, cwd: process.cwd() };
}

/**
 * The job's request: the flags, and for --last what the newest record's job asked for where a flag does not
 * say (the setup itself comes from resolveLaunchSource, as for a local run).
 */
function requestOf(record: RunRecord | null, flags: SlurmFlags): SlurmRequest {
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

/** The Slurm kind of `zerowiz launch NAME|FILE --slurm [...]` and of `zerowiz launch --last` of a Slurm run. */
async function slurmKindFor(from: LaunchFrom, flags: LaunchFlags): Promise<RunKind> {
  return slurmLaunchKind(requestOf(from.record, flags as SlurmFlags), slurmContext());
}

/** What the edges do with a Slurm run (src/commands/run-kinds.ts). */
export const SLURM_KIND_MODULE: RunKindModule = {
  launchKind: slurmKindFor,
  async attach(rec) {
    const over = await settleSlurmRun(rec);
    return {
      kind: slurmAttachKind(rec, slurmContext()),
      prepared: preparedOfRecord(rec, recordJobSetup(rec)),
      intro: `attaching to Slurm job ${rec.json.slurm?.jobId} (run ${rec.json.id})${over ? ', which has ended' : ''}`,
    };
  },
  async stop(rec, _flags, say) {
    if (await settleSlurmRun(rec)) {
      say(`run ${rec.json.id} has already ended (${rec.json.ended})`);
      return 0;
    }
    return stopSlurmJob(rec, slurmContext(), say);
  },
  refresh: refreshSlurmRuns,
  column: (rec) => `  ${slurmColumn(rec)}`,
  summary(rec) {
    const s = rec.json.slurm!;
    return { slurm: { jobId: s.jobId, state: s.state, phase: s.phase, reason: s.reason, nodeList: s.nodeList } };
  },
};

/**
 * Brings a Slurm record up to date before it is followed (`attach`) or cancelled (`stop`); returns whether
 * the job is over. Throws UsageError when Slurm cannot be asked or has forgotten a job whose end is unknown.
 */
async function settleSlurmRun(rec: RunRecord, sctx: SlurmContext = slurmContext()): Promise<boolean> {
  if (!rec.json.slurm) return true;
  // A launch still waiting for sbatch's answer: its answer, within sbatch's own time.
  const jobId =
    rec.json.slurm.jobId ?? (await awaitSubmission(rec, slurmTimeoutMs(sctx.env) + 5_000, statePollMs(sctx.env)));
  if (!jobId)
    throw new UsageError(
      `run ${rec.json.id} was never submitted (sbatch did not answer)`,
      'submit it again with `zerowiz launch --last`',
    );
  const s = rec.json.slurm!;
  if (!slurmRunOpen(rec)) return true;
  if (!whichSync('scontrol', sctx.env))
    throw new UsageError(
      `Slurm's scontrol is not on PATH, so zerowiz cannot ask about job ${jobId}`,
      `${NO_SLURM_HINT.split(';')[0]}; its logs so far are in ${displayDir(rec.dir)}`,
    );
  const r = await queryJob(jobId, sctx, s.cluster ?? null);
  if (!r.found) {
    if (!r.gone) throw new UsageError(r.message, 'check that Slurm answers here (`squeue`), then try again');
    settleRecord(rec, null, true);
    if (slurmRunOpen(rec))
      throw new UsageError(
        `${r.message}; how it ended is not known (its output has no end mark)`,
        `its logs are in ${displayDir(rec.dir)}; \`zerowiz launch --last\` submits it again`,
      );
  } else if (r.job.final) settleRecord(rec, r.job, false);
  return !slurmRunOpen(rec);
}

/** Refreshes the open Slurm runs among `records` from Slurm; returns a note when Slurm cannot be asked. */
async function refreshSlurmRuns(records: RunRecord[]): Promise<string | null> {
  const open = records.filter((r) => slurmRunOpen(r) && r.json.slurm?.jobId);
  if (open.length === 0) return null;
  const sctx = slurmContext();
  if (!whichSync('scontrol', sctx.env))
    return "Slurm's scontrol is not on PATH here: Slurm runs show the last state zerowiz saw";
  for (const r of open) {
    const lookup = await queryJob(r.json.slurm!.jobId!, sctx, r.json.slurm!.cluster ?? null);
    if (lookup.found) settleRecord(r, lookup.job, false);
    else settleRecord(r, null, lookup.gone);
  }
  return null;
}

/** A Slurm run's state for `zerowiz runs`: `slurm job 12 pending (Resources)`. */
function slurmColumn(r: RunRecord): string {
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
