/** `zerowiz check NAME|FILE`: the checks before a pass, on this machine. The work is in check-run.ts. */
import { Option, type Command } from 'commander';
import type { CommandContext } from './context.js';
import { CHECK_IDS, CHECK_TITLES } from '../checks/index.js';
import type { CheckFlags } from './check-run.js';

/** Registers `zerowiz check`. */
export function registerCheck(program: Command, ctx: CommandContext): void {
  program
    .command('check')
    .argument('<preset>', 'a preset name (see `zerowiz preset list`) or a preset file')
    .description(
      "check this machine before a run of the preset's steps: the Python environment, the driver, DeepSpeed's ops, the config against the installed versions, memory, /dev/shm, the port, the NVMe folder, disk room, inputs and models",
    )
    .option(
      '--json',
      'print JSON: {checks: [{id, status: pass|warn|fail|skip, title, measured, need, fix, ms}], failed: [ids], warned: [ids]}',
    )
    .option(
      '--skip-check <id>',
      'do not run this check, and do not let it fail (repeatable)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--no-speed-test', 'leave out the NVMe read/write test (the same as --skip-check nvme-speed)')
    .addOption(
      new Option(
        '--accelerate <path>',
        'the accelerate executable (default: ZEROWIZ_ACCELERATE, else `accelerate` on PATH)',
      ),
    )
    .option(
      '--fresh',
      "ask accelerate's Python again instead of the answer remembered from the last clean check (kept a day, while nothing is installed)",
    )
    .option('--pass <n|name>', "only what one pass needs (a pass's number from 1, or its name)")
    .option('--port <n>', "the main process port the pass will use (default: the setup's, else 29500)")
    .option('--machine-rank <n>', "this node's rank in a multi-node run (default: the setup's machine_rank)")
    .option(
      '--node-report',
      'print one `zerowiz-check HOST STATUS ID: ...` line per check (for a Slurm pass log) instead of the report',
    )
    .addHelpText(
      'after',
      [
        '',
        'The checks, in the order to fix what fails:',
        ...CHECK_IDS.map((id) => `  ${id.padEnd(14)}${CHECK_TITLES[id]}`),
        '',
        'Each prints PASS, WARN, FAIL or SKIP, what it measured, what the setup needs and the fix. The Python',
        "checks ask the interpreter of accelerate's entry point (its #! line), in one Python process.",
        'Exit codes: 0 nothing failed (warnings allowed); 2 a check failed (not skipped), or bad input.',
      ].join('\n'),
    )
    .action(async (ref: string, flags: CheckFlags) => {
      ctx.setExitCode(await (await import('./check-run.js')).checkCommand(ref, flags));
    });
}
