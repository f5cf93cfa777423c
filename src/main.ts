/** Runs the CLI and turns errors into exit codes: 2 for bad usage or input, 1 for a failed run. */
import { CommanderError } from 'commander';
import { buildProgram } from './cli.js';
import { RunError, UsageError, describeError } from './errors.js';
import type { UiLoaders } from './ui.js';

/** Runs zerowiz with these arguments; resolves with the exit code. Never throws. */
export async function main(argv: string[], ui: UiLoaders): Promise<number> {
  const program = buildProgram(ui);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return program.exitCodeFromAction ?? 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here with code 0; usage errors were already printed by commander.
      if (err.exitCode === 0) return 0;
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`zerowiz: ${describeError(err)}\n`);
      return 2;
    }
    if (err instanceof RunError) {
      process.stderr.write(`zerowiz: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(
      `zerowiz: unexpected error: ${describeError(err)}\n  hint: please report this with the command you ran\n`,
    );
    return 1;
  }
}
