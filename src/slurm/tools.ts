/**
 * The Slurm client commands zerowiz runs (sbatch, squeue, scontrol, sacct, sinfo, scancel): argument
 * arrays, no shell, a timeout each, never a stack trace. What each answers is parsed in ./job.ts and
 * ./partitions.ts; this file only runs them.
 */
import { runBounded } from '../proc/index.js';
import { UsageError, envNumber } from '../text/index.js';
import { whichSync } from '../proc/index.js';
import { printable } from '../text/index.js';

/** How long one Slurm client command may take (a busy slurmctld answers slowly, never this slowly). */
export const SLURM_COMMAND_TIMEOUT_MS = 30_000;

/** The timeout in effect: ZEROWIZ_SLURM_TIMEOUT_MS when set (tests, a site whose slurmctld is slower). */
export function slurmTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return envNumber(env, 'ZEROWIZ_SLURM_TIMEOUT_MS', SLURM_COMMAND_TIMEOUT_MS);
}

/** A Slurm cluster name as `-M` takes it (slurm.conf's ClusterName: letters, digits, `_`, `-`, `.`). */
export const CLUSTER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The `-M CLUSTER` arguments for a job of a named cluster (a multi-cluster site), else none. */
export function clusterArgs(cluster: string | null | undefined): string[] {
  return cluster && CLUSTER_NAME_RE.test(cluster) ? ['-M', cluster] : [];
}

/** What a Slurm command answered. */
export interface SlurmAnswer {
  /** Exit code; null when it could not run or timed out. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the command could not be run at all (missing, timed out): why. */
  error: string | null;
}

/** Where and how the Slurm commands run. */
export interface SlurmContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** The context of this process. */
export function processContext(): SlurmContext {
  return { env: process.env, cwd: process.cwd() };
}

/** Runs one Slurm client command. Never throws. */
export async function slurm(cmd: string, args: string[], ctx: SlurmContext): Promise<SlurmAnswer> {
  const timeoutMs = slurmTimeoutMs(ctx.env);
  // Bounded in time and in its own process group (../proc/bounded.ts).
  const r = await runBounded(cmd, args, { env: ctx.env, cwd: ctx.cwd, timeoutMs });
  const error =
    r.error?.code === 'ENOENT'
      ? `${cmd} is not on PATH`
      : r.error
        ? `${cmd} could not be run: ${r.error.message}`
        : r.timedOut
          ? `${cmd} did not answer within ${timeoutMs / 1000} s`
          : null;
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, error };
}

/**
 * What a failed command said (stderr first), its lines joined with ` / ` on one line, every control
 * character shown escaped (Slurm's messages are untrusted text).
 */
export function firstMessage(a: SlurmAnswer): string {
  const text = `${a.stderr}\n${a.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return printable(a.error ?? text.join(' / '));
}

/** Hint for every "Slurm is not here" error. */
export const NO_SLURM_HINT =
  'run zerowiz on the cluster login node, where `sbatch` works (or load Slurm first, e.g. `module load slurm`); `zerowiz export slurm NAME --out DIR` writes the sbatch script without submitting';

/** Throws UsageError (exit 2) unless `cmd` (default sbatch) is on PATH. */
export function requireSlurm(env: NodeJS.ProcessEnv, cmd = 'sbatch'): string {
  const found = whichSync(cmd, env);
  if (!found)
    throw new UsageError(
      `Slurm's ${cmd} is not on PATH, so there is no Slurm cluster to submit to here`,
      NO_SLURM_HINT,
    );
  return found;
}
