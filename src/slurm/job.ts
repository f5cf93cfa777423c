/**
 * A Slurm job's state, as zerowiz shows it: from `scontrol show job` while slurmctld remembers the job
 * (MinJobAge after it ends), else from `sacct` when the cluster keeps accounting, else "unknown".
 * Parsing is pure; `queryJob` asks Slurm.
 */
import { printable } from '../text/index.js';
import { clusterArgs, slurm, type SlurmAnswer, type SlurmContext } from './tools.js';

/** The most of one of Slurm's text fields zerowiz keeps (a Reason, a NodeList). */
const SLURM_FIELD_MAX_CHARS = 200;

/**
 * One of Slurm's text fields (JobState, Reason, NodeList, a time limit) as zerowiz shows and records it:
 * untrusted text, so every control character is shown escaped (a value holding an escape sequence or a
 * newline stays one inert line) and it is cut at SLURM_FIELD_MAX_CHARS.
 */
export function slurmText(v: string): string {
  const t = printable(v);
  return t.length > SLURM_FIELD_MAX_CHARS ? `${t.slice(0, SLURM_FIELD_MAX_CHARS - 1)}…` : t;
}

/** How zerowiz names a job's state (the issue's words; Slurm's own name is kept beside it). */
export type JobPhase = 'pending' | 'running' | 'completing' | 'done' | 'failed' | 'cancelled' | 'timeout';

/** A job as Slurm reports it. */
export interface JobInfo {
  jobId: string;
  /** Slurm's state name, e.g. PENDING, RUNNING, COMPLETED, OUT_OF_MEMORY. */
  state: string;
  phase: JobPhase;
  /** True once the job has ended for good (and is no longer completing). */
  final: boolean;
  /** Why it waits (pending) or why it ended, when Slurm says; null for `None`. */
  reason: string | null;
  /** The nodes it runs on (Slurm's compressed form, e.g. `n[1-2]`), null while pending. */
  nodeList: string | null;
  /** The batch script's exit code and the signal that ended it, once known. */
  exitCode: number | null;
  signal: number | null;
  /** Slurm's time limit for the job (`00:30:00`, `1-00:00:00`, `UNLIMITED`), when it says. */
  timeLimit?: string | null;
  /** Where the answer came from. */
  source: 'scontrol' | 'sacct';
}

const PHASE: Record<string, JobPhase> = {
  PENDING: 'pending',
  REQUEUED: 'pending',
  REQUEUE_HOLD: 'pending',
  REQUEUE_FED: 'pending',
  SPECIAL_EXIT: 'pending',
  RESV_DEL_HOLD: 'pending',
  CONFIGURING: 'running',
  RUNNING: 'running',
  RESIZING: 'running',
  SUSPENDED: 'running',
  SIGNALING: 'running',
  STAGE_OUT: 'completing',
  COMPLETING: 'completing',
  COMPLETED: 'done',
  CANCELLED: 'cancelled',
  REVOKED: 'cancelled',
  TIMEOUT: 'timeout',
  DEADLINE: 'timeout',
  FAILED: 'failed',
  NODE_FAIL: 'failed',
  BOOT_FAIL: 'failed',
  OUT_OF_MEMORY: 'failed',
  PREEMPTED: 'failed',
  STOPPED: 'running',
};

/** The phase of a Slurm state name (`CANCELLED by 0` and `CANCELLED+` read as CANCELLED). */
export function phaseOf(state: string): JobPhase {
  const base = state.split(/[\s+]/)[0]!.toUpperCase();
  return PHASE[base] ?? 'running';
}

/** Whether a phase means the job is over. */
export function isFinalPhase(p: JobPhase): boolean {
  return p === 'done' || p === 'failed' || p === 'cancelled' || p === 'timeout';
}

function field(text: string, key: string): string | null {
  const m = new RegExp(`(?:^|\\s)${key}=(\\S*)`).exec(text);
  return m ? slurmText(m[1]!) : null;
}

function exitPair(v: string | null): { exitCode: number | null; signal: number | null } {
  const m = v ? /^(\d+):(\d+)$/.exec(v) : null;
  return m ? { exitCode: Number(m[1]), signal: Number(m[2]) } : { exitCode: null, signal: null };
}

/** Parses `scontrol -o show job ID` (one line of Key=Value pairs); null when it names no job. */
export function parseScontrolJob(text: string): JobInfo | null {
  const line = text.split('\n').find((l) => /(?:^|\s)JobId=\d/.test(l));
  if (!line) return null;
  const state = field(line, 'JobState');
  if (!state) return null;
  const reason = field(line, 'Reason');
  const nodes = field(line, 'NodeList');
  const phase = phaseOf(state);
  return {
    jobId: /^\d+/.exec(field(line, 'JobId')!)![0],
    state,
    phase,
    final: isFinalPhase(phase),
    reason: reason && reason !== 'None' && reason !== '(null)' ? reason : null,
    nodeList: nodes && nodes !== '(null)' && nodes !== '' ? nodes : null,
    ...exitPair(field(line, 'ExitCode')),
    timeLimit: field(line, 'TimeLimit') ?? null,
    source: 'scontrol',
  };
}

/** Parses `sacct -n -P -X -j ID -o JobID,State,ExitCode,NodeList,Reason,Timelimit`; null when it lists no job. */
export function parseSacct(text: string, jobId: string): JobInfo | null {
  for (const raw of text.split('\n')) {
    const [id, rawState, exit, rawNodes, rawReason, rawLimit] = raw.trim().split('|');
    if (id !== jobId || !rawState) continue;
    const [state, nodes, reason, limit] = [rawState, rawNodes, rawReason, rawLimit].map((v) =>
      v === undefined ? undefined : slurmText(v),
    ) as [string, string | undefined, string | undefined, string | undefined];
    const phase = phaseOf(state);
    return {
      jobId,
      state: state.split(/\s/)[0]!,
      phase,
      final: isFinalPhase(phase),
      reason: reason && reason !== 'None' ? reason : null,
      nodeList: nodes && nodes !== 'None assigned' ? nodes : null,
      ...exitPair(exit ?? null),
      timeLimit: limit ? limit : null,
      source: 'sacct',
    };
  }
  return null;
}

/** What asking Slurm about a job gave: the job, or why there is none. */
export type JobLookup =
  | { found: true; job: JobInfo }
  | { found: false; gone: boolean; message: string; answers: SlurmAnswer[] };

/**
 * Asks Slurm about a job: scontrol first (it knows jobs until MinJobAge after their end), then sacct.
 * `gone` is true when Slurm answered and does not know the job (as opposed to Slurm not answering).
 */
export async function queryJob(jobId: string, ctx: SlurmContext, cluster: string | null = null): Promise<JobLookup> {
  const m = clusterArgs(cluster);
  const sc = await slurm('scontrol', [...m, '-o', 'show', 'job', jobId], ctx);
  const fromScontrol = sc.code === 0 ? parseScontrolJob(sc.stdout) : null;
  if (fromScontrol) return { found: true, job: fromScontrol };
  const scGone = /invalid job id/i.test(sc.stderr + sc.stdout);
  const sa = await slurm(
    'sacct',
    [...m, '-n', '-P', '-X', '-j', jobId, '-o', 'JobID,State,ExitCode,NodeList,Reason,Timelimit'],
    ctx,
  );
  const fromSacct = sa.code === 0 ? parseSacct(sa.stdout, jobId) : null;
  if (fromSacct) return { found: true, job: fromSacct };
  const noAccounting = /accounting storage is disabled/i.test(sa.stderr + sa.stdout) || sa.error !== null;
  if (scGone)
    return {
      found: false,
      gone: true,
      message: `Slurm no longer knows job ${jobId}${noAccounting ? ' (it ended longer ago than the cluster remembers, and there is no accounting to ask)' : ''}`,
      answers: [sc, sa],
    };
  const why = printable(sc.error ?? (`${sc.stderr}`.trim().split('\n')[0] || `scontrol exit ${sc.code}`));
  return { found: false, gone: false, message: `could not ask Slurm about job ${jobId}: ${why}`, answers: [sc, sa] };
}

/**
 * Cancels a job with `scancel` (of its cluster, `-M`, on a multi-cluster site). Resolves with what scancel
 * answered; never throws.
 */
export function cancelJob(jobId: string, cluster: string | null, ctx: SlurmContext): Promise<SlurmAnswer> {
  return slurm('scancel', [...clusterArgs(cluster), jobId], ctx);
}

const PHASE_STATE: Record<JobPhase, string> = {
  pending: 'PENDING',
  running: 'RUNNING',
  completing: 'COMPLETING',
  done: 'COMPLETED',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
  timeout: 'TIMEOUT',
};

/**
 * The job as one short phrase: `pending (Resources)`, `running on n[1-2]`, `done`, `failed (exit 1)`,
 * with Slurm's own state name when it says more than the phase (`failed [OUT_OF_MEMORY]`).
 */
export function describeJob(j: JobInfo): string {
  const base = j.state.split(/[\s+]/)[0]!.toUpperCase();
  const own = base !== PHASE_STATE[j.phase] ? ` [${base}]` : '';
  let detail = '';
  if (j.phase === 'pending') detail = j.reason ? ` (${j.reason})` : '';
  else if (j.phase === 'running' || j.phase === 'completing') detail = j.nodeList ? ` on ${j.nodeList}` : '';
  else if (j.phase === 'failed') {
    // The exit code says what the reason NonZeroExitCode would; other reasons say more (e.g. OutOfMemory).
    const reason = j.reason && j.reason !== 'NonZeroExitCode' ? `: ${j.reason}` : '';
    detail = `${j.exitCode !== null && j.exitCode !== 0 ? ` (exit ${j.exitCode})` : ''}${reason}`;
  } else if (j.phase === 'timeout' && j.timeLimit) detail = ` (time limit ${j.timeLimit})`;
  return `${j.phase}${own}${detail}`;
}

/** Seconds in a time limit as scontrol and sacct print it (`[D-]HH:MM:SS`); null for `UNLIMITED` or anything else. */
export function slurmSeconds(text: string): number | null {
  const m = /^(?:(\d+)-)?(\d+):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1] ?? 0) * 86400 + Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]);
}

/** A Slurm time for `seconds`: `HH:MM:SS`, or `D-HH:MM:SS` from a day on. */
export function slurmTime(seconds: number): string {
  const s = Math.max(60, Math.round(seconds));
  const d = Math.floor(s / 86400);
  const hms = [Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60]
    .map((n) => String(n).padStart(2, '0'))
    .join(':');
  return d > 0 ? `${d}-${hms}` : hms;
}

/** What to do after a job ran into its time limit: submit again with twice the time. */
export function timeoutHint(j: JobInfo): string {
  const limit = j.timeLimit ? slurmSeconds(j.timeLimit) : null;
  const more = limit ? slurmTime(limit * 2) : 'HH:MM:SS';
  return `it ran out of time: submit it again with more, e.g. \`zerowiz launch --last --time ${more}\` (resuming from the last checkpoint is up to the training script)`;
}

/** What a pending reason means and what to do about it, for the common ones; null otherwise. */
export function pendingHint(reason: string | null): string | null {
  if (!reason) return null;
  const r = reason.replace(/^\(|\)$/g, '');
  if (r === 'Resources') return 'waiting for nodes with the GPUs asked for to become free';
  if (r === 'Priority') return 'other jobs come first; it starts when its priority is the highest';
  if (r === 'BeginTime') return 'it was asked to start later (--begin)';
  if (r === 'Dependency') return 'it waits for the jobs it depends on';
  if (r === 'DependencyNeverSatisfied')
    return 'a job it depends on failed, so it will never start: cancel it (`scancel`)';
  if (r.startsWith('JobHeld')) return 'it is held: `scontrol release JOBID` lets it start';
  if (r === 'PartitionTimeLimit')
    return "--time is above the partition's limit: cancel it and resubmit with a shorter --time (sinfo shows the limit)";
  if (r === 'PartitionNodeLimit')
    return 'more nodes than the partition allows: cancel it and resubmit with fewer --nodes (see `sinfo`)';
  if (r === 'PartitionDown' || r === 'PartitionInactive')
    return 'the partition is down; ask the admins or use another --partition';
  if (r.startsWith('ReqNodeNotAvail'))
    return 'the nodes it needs are down, drained or reserved; it may wait a long time (see `sinfo -R`)';
  if (r.startsWith('QOS') || r.startsWith('Assoc'))
    return 'a limit of your account or QOS holds it (e.g. GPUs per user); it starts when your other jobs free them';
  if (r === 'BadConstraints') return 'no node can ever satisfy the request: cancel it and ask for fewer GPUs or nodes';
  return null;
}
