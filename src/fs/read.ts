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
