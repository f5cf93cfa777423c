/** Bad usage or bad input: the CLI prints `message` (and `hint`) on one line each and exits 2. */
export class UsageError extends Error {
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
  }
}

/** A run or a check failed: the CLI prints the message and exits 1. */
export class RunError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'RunError';
    this.exitCode = exitCode;
  }
}

/** The one-line text for an error, without a stack trace. */
export function describeError(err: unknown): string {
  if (err instanceof UsageError) return err.hint ? `${err.message}\n  hint: ${err.hint}` : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
