/**
 * A file read as it grows: a run's step logs and events (written by its supervisor, or by a Slurm job on
 * shared storage), read by the viewers and by the supervisor's own parser at their own pace. Reading never
 * blocks and never waits on a writer: only regular files are read (a FIFO or a device in the place of a log
 * is never opened for reading, so it can never hold a viewer), at most READ_CHUNK_BYTES at a time.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Bytes read from a file in one read. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** A file read as it grows. */
export class Tail {
  /** Bytes consumed so far. */
  offset: number;
  /** Why the file cannot be read (not a regular file, a read error other than "not there yet"), or null. */
  problem: string | null = null;

  constructor(
    readonly path: string,
    from = 0,
  ) {
    this.offset = from;
  }

  /** The bytes added since the last read (up to `max`); null when the file is not there (yet) or not readable. */
  read(max = READ_CHUNK_BYTES): Buffer | null {
    let fd: number;
    try {
      // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
      fd = openSync(this.path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') this.problem = (err as Error).message;
      return null;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) {
        this.problem = `${this.path} is not a regular file`;
        return null;
      }
      const size = st.size;
      if (size < this.offset) this.offset = 0; // rewritten: read it again
      const n = Math.min(size - this.offset, max);
      if (n <= 0) return Buffer.alloc(0);
      const buf = Buffer.allocUnsafe(n);
      const got = readSync(fd, buf, 0, n, this.offset);
      this.offset += got;
      return buf.subarray(0, got);
    } catch (err) {
      this.problem = (err as Error).message;
      return null;
    } finally {
      closeSync(fd);
    }
  }

  /** Reads until nothing is left, or `limit` bytes were read (the rest comes at the next call). */
  drain(f: (b: Buffer) => void, limit = Number.POSITIVE_INFINITY): number {
    let got = 0;
    while (got < limit) {
      const b = this.read(Math.min(READ_CHUNK_BYTES, limit - got));
      if (!b || b.length === 0) break;
      got += b.length;
      f(b);
    }
    return got;
  }
}

/** The size of a regular file, or null (absent, or not a regular file). */
export function regularFileSize(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    return st.isFile() ? st.size : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The last `maxBytes` of a regular file (opened without following a link or waiting on a FIFO), or null when
 * it is absent or not a regular file. `from` says where in the file they start (0 for a whole small file).
 */
export function readLastBytes(path: string, maxBytes: number): { bytes: Buffer; from: number; size: number } | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const from = Math.max(0, st.size - maxBytes);
    const buf = Buffer.allocUnsafe(st.size - from);
    const n = readSync(fd, buf, 0, buf.length, from);
    return { bytes: buf.subarray(0, n), from, size: st.size };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The first `maxBytes` of a regular file and its size (as readLastBytes opens it), or null. */
export function readFirstBytes(path: string, maxBytes: number): { bytes: Buffer; size: number } | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: buf.subarray(0, got), size: st.size };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
