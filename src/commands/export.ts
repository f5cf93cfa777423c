/**
 * `zerowiz export slurm|torchrun|hostfile NAME|FILE --out DIR`: the artifacts other launchers need, written
 * without submitting anything. The work is in export-run.ts, loaded when the command runs.
 * `zerowiz export weights RUN --out DIR`: a run's weights (export-weights.ts).
 */
import { Argument, Option, type Command } from 'commander';
import type { CommandContext } from './context.js';
import { UsageError } from '../text/index.js';
import type { ExportFlags } from './export-run.js';
import { oneOf } from './usage.js';

/** The kinds of export. */
export const EXPORT_KINDS = ['slurm', 'torchrun', 'hostfile', 'weights'] as const;
/** The flags only `export weights` takes. */
const WEIGHTS_FLAGS = [
  ['step', '--step'],
  ['layout', '--layout'],
  ['python', '--python'],
] as const;

/** Registers `export`. */
export function registerExport(program: Command, ctx: CommandContext): void {
  program
    .command('export')
    .addArgument(
      new Argument(
        '<kind>',
        "what to write: an sbatch script, per-node launch commands with ranks, a DeepSpeed hostfile, or a run's weights",
      )
        .choices(EXPORT_KINDS)
        .argParser(oneOf(EXPORT_KINDS, (v) => `'${v}' is not a kind of export (${EXPORT_KINDS.join(', ')})`)),
    )
    .argument(
      '<preset>',
      'a preset name (see `zerowiz preset list`) or a preset file; for weights, a run (`zerowiz runs`)',
    )
    .description(
      "write the sbatch script, per-node launch commands or a DeepSpeed hostfile of a setup, without running it; or a run's weights",
    )
    .addOption(new Option('--out <dir>', 'the directory to write to (backups of differing files, atomic writes)'))
    .option('--nodes <n>', "nodes (default: the setup's num_machines, or the number of --hosts)")
    .option('--gpus-per-node <n>', "GPUs per node (default: the setup's num_processes / num_machines)")
    .option('--hosts <list>', 'the node host names, comma-separated, first = main process (torchrun, hostfile)')
    .option('--main-process-port <port>', "the main process port (torchrun; default: the setup's, else 29500)")
    .option('--accelerate <path>', "the accelerate the commands run (default: `accelerate` on the nodes' PATH)")
    .option('--partition <name>', 'slurm: the partition')
    .option('--time <time>', 'slurm: the time limit, HH:MM:SS or D-HH:MM:SS')
    .option('--account <name>', 'slurm: the account')
    .option('--qos <name>', 'slurm: the QOS')
    .option(
      '--sbatch-arg <arg>',
      'slurm: one more sbatch option, e.g. --sbatch-arg=--exclusive (repeatable)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--pin-step <name>',
      "run this step with zerowiz's accelerate config without DeepSpeed (written with the others), as `zerowiz launch --pin-step` (repeatable)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--step <n>', 'weights: the checkpoint of this step (or epoch) instead of the last good one')
    .option(
      '--layout <layout>',
      'weights: LoRA keys for comfyui (default), diffusers, or as DiffSynth saved them (diffsynth)',
    )
    .option('--python <path>', "weights: the Python with DeepSpeed for zero_to_fp32 (default: the run's accelerate's)")
    .addHelpText(
      'after',
      [
        '',
        'slurm and torchrun also write DIR/accelerate_config.yaml and DIR/ds_config.json for the shape (nodes x',
        "GPUs per node decide num_processes; several nodes use accelerate's per-node `standard` launcher), and",
        'DIR/accelerate_no_deepspeed.yaml when a step is pinned to it: every config the commands name. The setup is',
        'checked as `zerowiz launch --slurm` checks it.',
        '  slurm     DIR/NAME.sbatch: submit with `sbatch DIR/NAME.sbatch`; logs go to DIR/logs/.',
        '  torchrun  DIR/per-node-commands.sh: run `NODE_RANK=r sh DIR/per-node-commands.sh` on node r.',
        "  hostfile  DIR/hostfile: one `host slots=GPUs` row per node, for DeepSpeed's own launchers.",
        "  weights   RUN's last good checkpoint (or --step N's) into DIR: a DiffSynth LoRA in the --layout keys, other",
        '            weights as saved, ZeRO shards consolidated by zero_to_fp32 (`zerowiz runs` lists the runs).',
        'Host names: --hosts, or inside a Slurm allocation the nodes of $SLURM_JOB_NODELIST.',
        'Exit codes: 0 written; 1 zero_to_fp32 failed (weights); 2 bad flags, a setup accelerate/DeepSpeed would refuse,',
        'no host names, or no good checkpoint (weights).',
      ].join('\n'),
    )
    .action(async (kind: (typeof EXPORT_KINDS)[number], ref: string, flags: ExportFlags) => {
      if (kind === 'weights') {
        ctx.setExitCode(await (await import('./export-weights.js')).exportWeightsCommand(ref, flags));
        return;
      }
      for (const [key, flag] of WEIGHTS_FLAGS)
        if (flags[key] !== undefined)
          throw new UsageError(`${flag} is for \`export weights\`, not \`export ${kind}\``, `leave ${flag} out`);
      ctx.setExitCode(await (await import('./export-run.js')).exportCommand(kind, ref, flags));
    });
}
