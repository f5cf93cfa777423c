/** Runs the CLI and turns errors into exit codes: 2 for bad usage or input, 1 for a failed run. */
import { CommanderError } from 'commander';
import { buildProgram } from './cli.js';
import { RunError, UsageError, describeError, fileError, isOsError } from './text/index.js';
import type { UiLoaders } from './commands/index.js';
import { printable, shellWord } from './text/index.js';
import { NearMiss, nearMissHint } from './text/index.js';
// Prints one error line (and its hint), with whatever came from files shown escaped.
import { error as printError } from './commands/index.js';

/** Errors of a reader that closed early: the output has nowhere to go, and nobody waits for it. */
const GONE_CODES = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/**
 * A reader that closed early (`zerowiz preset list | head -1`) ends zerowiz quietly, as Unix tools end,
 * unless a view has its own handler for that stream (a running launch keeps logging to disk; the terminal
 * views handle a terminal that went away). Any other output error is one line and exit 2.
 */
function endQuietlyOnClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const onError = (err: NodeJS.ErrnoException) => {
      if (stream.listenerCount('error') > 1) return;
      if (GONE_CODES.has(err.code ?? '')) process.exit(process.exitCode ?? 0);
      // Output that cannot be written (stdout on a full disk): one line on the other stream, exit 2.
      const other = stream === process.stdout ? process.stderr : process.stdout;
      other.write(
        `zerowiz: ${describeError(fileError(err, stream === process.stdout ? 'stdout' : 'stderr', 'cannot write to'))}\n`,
      );
      process.exit(2);
    };
    if (!stream.listeners('error').some((l) => l.name === 'zerowizClosedOutput')) {
      Object.defineProperty(onError, 'name', { value: 'zerowizClosedOutput' });
      stream.on('error', onError);
    }
  }
}

/**
 * The exit codes zerowiz gives (README): 0 success, 1 a run or check failed, 2 bad usage or input, 130 a run
 * stopped. A command that came to another (a value read from a file) ends with 1: something failed.
 */
const LISTED_EXIT_CODES: ReadonlySet<number> = new Set([0, 1, 2, 130]);

/** Runs zerowiz with these arguments; resolves with the exit code. Never throws. */
export async function main(argv: string[], ui: UiLoaders): Promise<number> {
  endQuietlyOnClosedOutput();
  const program = buildProgram(ui);
  try {
    await program.parseAsync(argv, { from: 'user' });
    const code = program.exitCodeFromAction ?? 0;
    return LISTED_EXIT_CODES.has(code) ? code : 1;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here with code 0; usage errors were already printed by commander.
      if (err.exitCode === 0) return 0;
      return 2;
    }
    if (err instanceof NearMiss) {
      // The near miss, with the command line that works when there is one.
      const hint = nearMissHint(err, argv, shellWord);
      // One line and its hint, whatever the value held (a newline typed into a flag is shown escaped).
      printError(hint ? `${printable(err.message)}\n  hint: ${printable(hint)}` : printable(err.message));
      return 2;
    }
    if (err instanceof UsageError) {
      printError(describeError(err));
      return 2;
    }
    if (err instanceof RunError) {
      printError(err.message);
      return err.exitCode;
    }
    // An OS error on a path (a full disk, a read-only folder, a name too long): the user can fix it.
    if (isOsError(err)) {
      printError(describeError(fileError(err)));
      return 2;
    }
    printError(`unexpected error: ${describeError(err)}\n  hint: please report this with the command you ran`);
    return 1;
  }
}
