/**
 * Reading the user's files (presets, `--from` / `--config` YAML, the DeepSpeed JSON it names): the one
 * definition. Only regular files are read (a FIFO, a device such as /dev/zero, a socket or a directory is
 * refused at once, without blocking), and only up to MAX_USER_FILE_BYTES, so a stray 100 MB file costs an
 * error line instead of the heap. YAML is parsed with the library's warnings kept off stderr.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { parse, type DocumentOptions, type ParseOptions, type SchemaOptions, type ToJSOptions } from 'yaml';
import { UsageError, fileError } from '../text/index.js';
import { formatCap } from '../text/index.js';
import { ownedByMe, userName } from './safe-fs.js';

/** The largest file zerowiz reads: configs and presets are a few KiB; 1 MiB leaves room for comments. */
export const MAX_USER_FILE_BYTES = 2 ** 20;

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The text of `path`, a regular file of at most `maxBytes`. Anything else is a UsageError naming the file
 * (`what` says which file it is, e.g. `preset`), as is every OS error (missing, unreadable, a link loop).
 */
export function readUserFile(path: string, what: string, maxBytes = MAX_USER_FILE_BYTES): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw fileError(e, path, `cannot read ${what}`);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory())
      throw fileError(Object.assign(new Error('EISDIR'), { code: 'EISDIR' }), path, `cannot read ${what}`);
    if (!st.isFile())
      throw new UsageError(
        `cannot read ${what} ${path}: it is ${kindOf(st)}, not a regular file`,
        'give the path of a regular file',
      );
    const tooBig = () =>
      new UsageError(
        `cannot read ${what} ${path}: it is larger than the ${formatCap(maxBytes)} zerowiz reads`,
        'is this the right file? configs and presets are a few KiB',
      );
    if (st.size > maxBytes) throw tooBig();
    // One byte more than the cap: a file that grew past it since fstat is caught too.
    const buf = Buffer.allocUnsafe(maxBytes + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    if (n > maxBytes) throw tooBig();
    return buf.subarray(0, n).toString('utf8');
  } catch (e) {
    throw fileError(e, path, `cannot read ${what}`);
  } finally {
    closeSync(fd);
  }
}

/** `yaml`'s parse, with its warnings (which quote raw file bytes) kept off stderr; errors still throw. */
export function parseYamlQuietly(
  text: string,
  options: ParseOptions & DocumentOptions & SchemaOptions & ToJSOptions = {},
): unknown {
  return parse(text, { ...options, logLevel: 'error' });
}

/** True when something is at `path`, a dangling symbolic link included (reading it then says what is wrong). */
export function pathPresent(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Why a file zerowiz reads back cannot be used; `missing` when nothing is there (yet). */
export interface FileProblem {
  problem: string;
  missing: boolean;
}

/** An open file that passed the rule of ownedFile: its descriptor (the caller closes it) and its stats. */
export interface OwnedFile {
  fd: number;
  st: Stats;
}

/**
 * Opens a file zerowiz reads back from a run (run.json, events.jsonl, live.json, a step log, a Slurm job's
 * output, a loss.csv) under one rule: a regular file (a FIFO, a device, a socket or a folder is refused at
 * once, never waited on: O_NONBLOCK), never through a link at its name (O_NOFOLLOW), the user's own (another
 * user's file could say anything), and at most `maxBytes` when given. Returns the open descriptor and its
 * stats, or what is wrong with it, in words that follow the path.
 */
export function openOwnedFile(path: string, maxBytes?: number): OwnedFile | FileProblem {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { problem: 'is not there', missing: true };
    if (code === 'ELOOP')
      return { problem: 'is a symbolic link; zerowiz reads a run’s files only as it wrote them', missing: false };
    return { problem: `cannot be read (${code ?? (e as Error).message})`, missing: false };
  }
  const refuse = (problem: string): FileProblem => {
    closeSync(fd);
    return { problem, missing: false };
  };
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch (e) {
    return refuse(`cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!st.isFile()) return refuse(`is ${kindOf(st)}, not a regular file`);
  if (!ownedByMe(st)) return refuse(`belongs to ${userName(st.uid)}, not to you`);
  if (maxBytes !== undefined && st.size > maxBytes)
    return refuse(`is larger than the ${formatCap(maxBytes)} zerowiz reads (${st.size} bytes)`);
  return { fd, st };
}

/**
 * The text of a file read back from a run, under openOwnedFile's rule (a regular file of the user's own, no
 * link, at most `maxBytes`), or what is wrong with it. A file that grew past the cap while it was read is
 * refused too.
 */
export function readOwnedFile(path: string, maxBytes: number): { text: string; st: Stats } | FileProblem {
  const f = openOwnedFile(path, maxBytes);
  if ('problem' in f) return f;
  try {
    // Read to the end, whatever fstat said: one byte past the cap means it grew past it.
    const chunks: Buffer[] = [];
    let n = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(Math.max(f.st.size - n, 0) + 1, maxBytes + 1 - n, 2 ** 20));
      const got = readSync(f.fd, buf, 0, buf.length, null);
      if (got === 0) break;
      chunks.push(buf.subarray(0, got));
      n += got;
      if (n > maxBytes) return { problem: `is larger than the ${formatCap(maxBytes)} zerowiz reads`, missing: false };
    }
    return { text: Buffer.concat(chunks, n).toString('utf8'), st: f.st };
  } catch (e) {
    return { problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, missing: false };
  } finally {
    closeSync(f.fd);
  }
}
