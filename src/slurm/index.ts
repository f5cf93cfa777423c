/** The face of src/slurm/: what other folders may use of it (an architecture test holds every import to it). */
export { describeJob, queryJob } from './job.js';
export { slurmLaunchKind } from './kind.js';
export { checkOptions, jobName, planSlurmLaunch } from './launch.js';
export type { SlurmRequest } from './launch.js';
export { settleRecord, slurmRunOpen } from './record.js';
export { slurmBlockProblem } from './schema.js';
export { hostfileText, perNodeCommands, sbatchOptionsOf, sbatchScript } from './script.js';
export type { SbatchOptions } from './script.js';
export { formatChange, parseShapeFlag, shapeOfSetup } from './shape.js';
export type { SlurmShape } from './shape.js';
export { NO_SLURM_HINT, slurm } from './tools.js';
export type { SlurmContext } from './tools.js';
export { requirePartition } from './preflight.js';
export { listPartitions } from './preflight.js';
export { slurmAttachKind } from './kind.js';
export { recordJobSetup } from './kind.js';
export { stopSlurmJob } from './stop.js';
export { jobOutcome, jobWatchMain, parseJobEnd } from './job-watch.js';
