/**
 * The `slurm` object of run.json, as a schema: the record reader (src/launch/record.ts) checks it like the
 * rest of the record, and the type comes from it. Only zod here, so the launch module can import it without
 * an import cycle through src/slurm/record.ts.
 */
import * as z from 'zod/mini';
import { printable } from '../printable.js';

/**
 * What Slurm said (a state, a reason, a node list), read back escaped: a record written before zerowiz
 * escaped them, or edited since, never brings a raw control byte to the terminal (`zerowiz runs`, attach).
 */
const slurmSaid = z.string().check(z.overwrite((s) => printable(s)));

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
  script: z.string(),
  output: z.string(),
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
