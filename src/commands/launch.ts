/**
 * `zerowiz launch NAME|FILE [--dry-run] [--no-tui] [--accelerate PATH]`, `zerowiz launch --last` and
 * `zerowiz runs`. The pipeline lives in src/launch/; the work is in launch-run.ts, loaded when the command runs.
 */
import { Option, type Command } from 'commander';
import type { CommandContext } from '../cli.js';
import { SIGINT_GRACE_MS, SIGTERM_GRACE_MS } from '../launch/group.js';

/** Raw flag values as commander hands them over. */
export interface LaunchFlags {
  dryRun?: boolean;
  tui?: boolean;
  accelerate?: string;
  last?: boolean;
}

/** Registers `launch` and `runs`. */
export function registerLaunch(program: Command, ctx: CommandContext): void {
  program
    .command('launch')
    .argument('[preset]', 'a preset name (see `zerowiz preset list`) or a preset file')
    .description('run the steps of a preset (`accelerate launch` commands) in a live log pane, and keep a run record')
    .option('--dry-run', 'check everything and print the exact commands, then exit without running')
    .option('--no-tui', 'plain lines prefixed with the step name (also used when stdout is not a terminal)')
    .addOption(
      new Option(
        '--accelerate <path>',
        'the accelerate executable (default: ZEROWIZ_ACCELERATE, else `accelerate` on PATH)',
      ),
    )
    .option('--last', 'run the newest run record of this directory again')
    .addHelpText(
      'after',
      [
        '',
        'Steps run in order; a step starts only when the previous one exited 0. Exit codes: 0 all steps done,',
        '1 a step failed, 130 stopped, 2 bad input (missing preset, accelerate or training script).',
        `Stopping (q or Ctrl+C in the pane, Ctrl+C/SIGTERM/SIGHUP otherwise) sends SIGINT to the step's whole`,
        `process group, SIGTERM after ${SIGINT_GRACE_MS / 1000} s, SIGKILL after ${SIGTERM_GRACE_MS / 1000} s more`,
        '(ZEROWIZ_SIGINT_GRACE_MS / ZEROWIZ_SIGTERM_GRACE_MS change them); a second Ctrl+C kills at once.',
        'Closing the terminal stops the run the same way; if zerowiz is killed (kill -9, the OOM killer), its',
        'watchdog does. A full disk stops the logs, never the run.',
        'Each run is recorded in .zerowiz/runs/<YYYYmmdd-HHMMSS>-<name>/ (config files used, commands.sh,',
        'one log per step, run.json); see `zerowiz runs`.',
      ].join('\n'),
    )
    .action(async (ref: string | undefined, flags: LaunchFlags) => {
      ctx.setExitCode(await (await import('./launch-run.js')).launchCommand(ref, flags, ctx));
    });

  program
    .command('runs')
    .description('list the run records of this directory, newest first')
    .option(
      '--json',
      'print JSON: [{id, dir, name, source, startedAt, endedAt, ended, exitCode, steps: [{name, status, exitCode, durationMs, log}]}]',
    )
    .action(async (opts: { json?: boolean }) => (await import('./launch-run.js')).runsCommand(opts));
}
