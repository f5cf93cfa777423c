/**
 * The `slurm` object of run.json, as a schema: the record module knows no kind of run, so this module adds
 * the key to its RunJson type (module augmentation) and the Slurm code checks the block when it reads a
 * record (slurmBlockProblem).
 */
import * as z from 'zod/mini';
import { printable } from '../text/index.js';

/**
 * What Slurm said (a state, a reason, a node list), read back escaped: a record written before zerowiz
 * escaped them, or edited since, never brings a raw control byte to the terminal (`zerowiz runs`, attach).
 */
const slurmSaid = z.string().check(z.overwrite((s) => printable(s)));

/** A file of the record directory, by its name only: a path elsewhere is no file of the record. */
const fileName = z.string().check(z.regex(/^(?!\.\.?$)[^/\0]+$/, 'must be a file name in the record directory'));

/** The job states zerowiz tells apart (src/slurm/job.ts JobPhase), plus `unknown`. */
const PHASES = ['pending', 'running', 'completing', 'done', 'failed', 'cancelled', 'timeout', 'unknown'] as const;

export const slurmRunJsonSchema = z.object({
  /** The job id sbatch gave; null only between writing the record and sbatch answering. */
  jobId: z.nullable(z.string()),
  /** The cluster, when sbatch named one (`--parsable` prints `id;cluster` on federations). */
  cluster: z.nullable(slurmSaid),
  shape: z.object({ nodes: z.number(), gpusPerNode: z.number() }),
  options: z.object({
    partition: z.optional(z.string()),
    time: z.optional(z.string()),
    account: z.optional(z.string()),
    qos: z.optional(z.string()),
    extra: z.array(z.string()),
  }),
  /** The sbatch script, its output file pattern, in the record directory. */
  script: fileName,
  output: fileName,
  /** What zerowiz changed in the setup for the job's shape, as printed. */
  changes: z.array(z.string()),
  submittedAt: z.string(),
  /** The last state zerowiz saw, Slurm's name (PENDING, RUNNING, COMPLETED, ...), or UNKNOWN. */
  state: slurmSaid,
  phase: z.enum(PHASES),
  reason: z.nullable(slurmSaid),
  nodeList: z.nullable(slurmSaid),
  /** When the state was last read from Slurm. */
  checkedAt: z.string(),
});

/** The `slurm` object of run.json. */
export type SlurmRunJson = z.infer<typeof slurmRunJsonSchema>;

declare module '../records/record.js' {
  interface RunJsonKinds {
    /** A run submitted to Slurm (`launch --slurm`): the job, its options and its last known state. */
    slurm?: SlurmRunJson;
  }
}

/**
 * Why a record's `slurm` block is damaged (`slurm.<key>: problem`), or null when it is whole or absent. A
 * whole block is replaced by what the schema read (Slurm's words escaped), so no reader sees it raw.
 */
export function slurmBlockProblem(json: { slurm?: unknown }): string | null {
  if (json.slurm === undefined) return null;
  const r = z.safeParse(slurmRunJsonSchema, json.slurm);
  if (r.success) {
    json.slurm = r.data;
    return null;
  }
  const i = r.error.issues[0];
  return `slurm${i?.path.length ? `.${i.path.map(String).join('.')}` : ''}: ${i?.message ?? 'not a Slurm block'}`;
}
