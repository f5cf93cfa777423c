/** `zerowiz attach [RUN]`: follow a run again (local or a Slurm job). The work is in attach-run.ts. */
import type { Command } from 'commander';
import type { CommandContext } from './context.js';

/** Registers `attach`. */
export function registerAttach(program: Command, ctx: CommandContext): void {
  program
    .command('attach')
    .argument('[run]', 'a run id of `zerowiz runs` (or a unique part of it), its directory, or the Slurm job id')
    .description('follow a run of this directory in the log pane again (running or finished); default: the newest')
    .option('--no-tui', 'plain lines prefixed with the pass name (also used when stdout is not a terminal)')
    .addHelpText(
      'after',
      [
        '',
        'A run outlives the terminal: leaving the pane (d), closing the terminal or Ctrl+C in stream mode without',
        'confirming leaves it running. q in the pane asks, then stops it (a Slurm job: scancel).',
        'Exit codes, as `zerowiz launch` would have given: 0 it completed (or you left it running), 1 it failed',
        '(or a Slurm job timed out), 130 it was stopped, 2 no such run, or Slurm no longer knows the job and its',
        'end is unknown.',
      ].join('\n'),
    )
    .action(async (ref: string | undefined, flags: { tui?: boolean }) => {
      ctx.setExitCode(await (await import('./attach-run.js')).attachCommand(ref, flags, ctx));
    });
}
