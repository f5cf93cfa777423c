/** `zerowiz report [RUN] [--out FILE]`: a run's one-file HTML report. The work is in html-report-run.ts. */
import type { Command } from 'commander';
import type { CommandContext } from './context.js';

/** Registers `report`. */
export function registerReport(program: Command, ctx: CommandContext): void {
  program
    .command('report')
    .argument(
      '[run]',
      'a run id of `zerowiz runs` (or a unique part of it), its directory, or the Slurm job id; default: the newest',
    )
    .option(
      '--out <file>',
      'write it here instead of report.html in the run directory (an existing file is kept as a backup)',
    )
    .description(
      "write a run's report: one HTML file with its plots and numbers, that opens in any browser without a network",
    )
    .addHelpText(
      'after',
      [
        '',
        "The report shows the loss of each pass (raw and smoothed), seconds per step, each GPU's memory over time",
        "against the estimate's band, the alerts and checkpoints on the same time axis, the numbers a reviewer asks",
        'for first (final and best loss, steps, wall time, GPU-hours, peak per GPU, why it ended), and what ran: each',
        "pass's command and every effective value with its source. A run writes it to its directory when it ends;",
        'this command writes it again, at any time (a run still going: so far). It holds no script and loads',
        'nothing: open it from the file, or send it to a colleague. Exit codes: 0 written, 2 no such run.',
      ].join('\n'),
    )
    .action(async (ref: string | undefined, flags: { out?: string }) => {
      ctx.setExitCode(await (await import('./html-report-run.js')).reportCommand(ref, flags));
    });
}
