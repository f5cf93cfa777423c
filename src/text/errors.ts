import { printable } from './printable.js';

/** Bad usage or bad input: the CLI prints `message` (and `hint`) on one line each and exits 2. */
export class UsageError extends Error {
  readonly hint: string | undefined;
  /** The fix in the wizard's terms, when the hint is a command-line flag the wizard has no field for. */
  readonly wizardHint: string | undefined;
  constructor(message: string, hint?: string, wizardHint?: string) {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
    this.wizardHint = wizardHint;
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

/**
 * The text for an error, without a stack trace: its message on one line and, for a UsageError, its hint on
 * a second. Any control character in either (a value holding a newline, an escape from a file or from
 * Slurm) is shown escaped (./printable.ts), so neither can break the line or reach the terminal raw.
 */
export function describeError(err: unknown): string {
  if (err instanceof UsageError)
    return err.hint ? `${printable(err.message)}\n  hint: ${printable(err.hint)}` : printable(err.message);
  if (err instanceof Error) return printable(err.message);
  return printable(String(err));
}

/** What an OS error code means to a user, and what to do about it. */
const OS_PROBLEMS: Record<string, [problem: string, hint: string]> = {
  ENOENT: ['no such file or directory', 'check the path'],
  EACCES: ['permission denied', 'check the permissions (ls -ld), or choose another place'],
  EPERM: ['operation not permitted', 'check the permissions (ls -ld), or choose another place'],
  EROFS: ['read-only file system', 'write to a directory on a writable file system'],
  ENOSPC: ['no space left on device', 'free some space, or write somewhere else'],
  EDQUOT: ['disk quota exceeded', 'free some space, or write somewhere else'],
  EFBIG: ['file too large', 'free some space, or write somewhere else'],
  EISDIR: ['is a directory', 'give the path of a file, or move the directory out of the way'],
  ENOTDIR: ['not a directory (a part of the path is a file)', 'give a path whose folders are folders'],
  ENAMETOOLONG: ['file name too long', 'use a shorter path'],
  ELOOP: ['too many levels of symbolic links (a link loop?)', 'fix or remove the link'],
  EEXIST: ['already exists', 'move it out of the way, or choose another name'],
  EMFILE: ['too many open files', 'close some programs, or raise the limit (ulimit -n)'],
  ENFILE: ['too many open files in the system', 'close some programs and try again'],
  EIO: ['input/output error', 'check the disk (dmesg) and try again'],
  EBUSY: ['device or resource busy', 'try again when it is free'],
  ENXIO: ['no such device or address (a socket?)', 'give the path of a regular file'],
  EXDEV: ['on another file system', 'keep the files on one file system'],
};

/** An OS error on a path the user gave or owns: printed as one line naming the path, with a hint; exit 2. */
export class FileError extends UsageError {
  readonly path: string;
  readonly code: string | undefined;
  constructor(path: string, code: string | undefined, problem: string, hint: string) {
    super(`${path}: ${problem}`, hint);
    this.name = 'FileError';
    this.path = path;
    this.code = code;
  }
}

/** True when `err` is an error from the OS (it carries an errno code such as ENOSPC). */
export function isOsError(err: unknown): err is NodeJS.ErrnoException & { code: string } {
  return (
    err instanceof Error &&
    typeof (err as NodeJS.ErrnoException).code === 'string' &&
    /^E[A-Z]+$/.test((err as NodeJS.ErrnoException).code!)
  );
}

/**
 * The OS error `err` as a FileError naming `path` (default: the path the error itself names), `doing`
 * saying what zerowiz was doing (e.g. `cannot write`), and `after` a sentence on what state things are in.
 */
export function fileError(err: unknown, path?: string, doing = '', after = ''): UsageError {
  if (err instanceof UsageError) return err;
  if (!isOsError(err)) return new UsageError(describeError(err));
  const where = path ?? err.path ?? (err as { dest?: string }).dest ?? '';
  const [problem, hint] = OS_PROBLEMS[err.code] ?? [`${err.code} (${err.message})`, 'check the path and try again'];
  return new FileError(`${doing ? `${doing} ` : ''}${where}`, err.code, `${problem}${after ? `; ${after}` : ''}`, hint);
}

/** `ENOSPC (no space left on device)` from a file system error. */
export function describeWriteError(err: unknown): string {
  const e = err as NodeJS.ErrnoException | null;
  if (!e?.code) return String(err);
  // "ENOSPC: no space left on device, write" -> "no space left on device"
  const m = /^[A-Z]+: ([^,]+)/.exec(e.message);
  return `${e.code} (${m?.[1] ?? e.message})`;
}
