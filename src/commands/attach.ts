/** `zerowiz attach [RUN]`: follow a Slurm job of a run record again. The work is in launch-slurm-run.ts. */
import type { Command } from 'commander';
import type { CommandContext } from './context.js';

/** Registers `attach`. */
export function registerAttach(program: Command, ctx: CommandContext): void {
  program
    .command('attach')
    .argument('[run]', 'a run id of `zerowiz runs` (or a unique part of it), its directory, or the Slurm job id')
    .description(
      'follow a Slurm job of this directory in the log pane again (running or finished); default: the newest',
    )
    .option('--no-tui', 'plain lines prefixed with the pass name (also used when stdout is not a terminal)')
    .addHelpText(
      'after',
      [
        '',
        'A Slurm job outlives the terminal: leaving the pane (d), closing the terminal or Ctrl+C in stream mode',
        'without confirming leaves it running. q in the pane asks, then cancels it with scancel.',
        'Exit codes: 0 the job completed (or you left it running), 1 it failed or timed out, 130 it was',
        'cancelled, 2 no such run, not a Slurm run, or Slurm no longer knows the job and its end is unknown.',
      ].join('\n'),
    )
    .action(async (ref: string | undefined, flags: { tui?: boolean }) => {
      ctx.setExitCode(await (await import('./launch-slurm-run.js')).attachCommand(ref, flags, ctx));
    });
}
