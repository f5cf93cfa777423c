/**
 * The Slurm kind at the command line's edges (src/commands/run-kinds.ts): `launch --slurm` and its flags, as data
 * the CLI reads when it starts; the behaviour (./launch-slurm-run.ts, over src/slurm/) loads when a command needs it.
 */
import type { RunKindEntry } from './kind-entry.js';

/** `zerowiz launch --slurm`: the steps as one Slurm job, followed by the one viewer. */
export const SLURM_RUN_KIND: RunKindEntry = {
  name: 'slurm',
  choose: { flags: '--slurm', description: 'submit the steps as one Slurm job (sbatch) and follow it in the log pane' },
  flags: [
    { flags: '--partition <name>', description: 'Slurm partition (default: the cluster default)' },
    { flags: '--nodes <n>', description: "Slurm nodes (default: the setup's num_machines)" },
    { flags: '--gpus-per-node <n>', description: "GPUs per node (default: the setup's num_processes / num_machines)" },
    { flags: '--time <time>', description: 'Slurm time limit, HH:MM:SS or D-HH:MM:SS' },
    { flags: '--account <name>', description: 'Slurm account' },
    { flags: '--qos <name>', description: 'Slurm QOS' },
    {
      flags: '--sbatch-arg <arg>',
      description: 'one more sbatch option, e.g. --sbatch-arg=--exclusive (repeatable)',
      repeatable: true,
    },
  ],
  chooseHint: 'add --slurm to submit the steps as a Slurm job',
  help: [
    'With --slurm the steps run as one Slurm job: each pass is an `srun` step running `accelerate launch` on',
    'every node (ranks from $SLURM_NODEID, the first node as main process); nodes x GPUs per node decide the',
    'process count (zerowiz says what it changed). The pane follows the job from pending to the end: q asks,',
    'then `scancel`s it; d leaves the pane and the job keeps running (`zerowiz attach RUN` follows it again).',
  ],
  aliases: (json) => (json.slurm?.jobId ? [json.slurm.jobId] : []),
  loadCheck: async () => (await import('../slurm/schema.js')).slurmBlockProblem,
  load: async () => (await import('./launch-slurm-run.js')).SLURM_KIND_MODULE,
};
