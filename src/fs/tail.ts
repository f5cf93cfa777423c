/**
 * A file read as it grows: a run's step logs and events (written by its supervisor, or by a Slurm job on
 * shared storage), read by the viewers and by the supervisor's own parser at their own pace. Reading never
 * blocks and never waits on a writer: only regular files are read (a FIFO or a device in the place of a log
 * is never opened for reading, so it can never hold a viewer), at most READ_CHUNK_BYTES at a time, under the
 * rule every file read back from a run follows (./read.ts openOwnedFile: no link, the user's own), and a file
 * given a cap is read no further than it.
 */
import { closeSync, readSync } from 'node:fs';
import { formatCap } from '../text/index.js';
import { openOwnedFile } from './read.js';

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
    /** Bytes read at most (a record file's cap); the rest is refused with a problem. */
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    this.offset = from;
  }

  /** The bytes added since the last read (up to `max`); null when the file is not there (yet) or not readable. */
  read(max = READ_CHUNK_BYTES): Buffer | null {
    const f = openOwnedFile(this.path);
    if ('problem' in f) {
      if (!f.missing) this.problem = `${this.path} ${f.problem}`;
      return null;
    }
    try {
      const size = f.st.size;
      if (size < this.offset) this.offset = 0; // rewritten: read it again
      if (size > this.maxBytes && this.offset >= this.maxBytes) {
        this.problem = `${this.path} is larger than the ${formatCap(this.maxBytes)} zerowiz reads`;
        return null;
      }
      const n = Math.min(size, this.maxBytes) - this.offset;
      if (n <= 0) return Buffer.alloc(0);
      const buf = Buffer.allocUnsafe(Math.min(n, max));
      const got = readSync(f.fd, buf, 0, buf.length, this.offset);
      this.offset += got;
      return buf.subarray(0, got);
    } catch (err) {
      this.problem = (err as Error).message;
      return null;
    } finally {
      closeSync(f.fd);
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

/**
 * The last `maxBytes` of a regular file (opened without following a link or waiting on a FIFO), or null when
 * it is absent or not a regular file. `from` says where in the file they start (0 for a whole small file).
 */
export function readLastBytes(path: string, maxBytes: number): { bytes: Buffer; from: number; size: number } | null {
  const f = openOwnedFile(path);
  if ('problem' in f) return null;
  try {
    const from = Math.max(0, f.st.size - maxBytes);
    const buf = Buffer.allocUnsafe(f.st.size - from);
    const n = readSync(f.fd, buf, 0, buf.length, from);
    return { bytes: buf.subarray(0, n), from, size: f.st.size };
  } catch {
    return null;
  } finally {
    closeSync(f.fd);
  }
}

/** The first `maxBytes` of a file read back from a run and its size (under the same rule), or null. */
export function readFirstBytes(path: string, maxBytes: number): { bytes: Buffer; size: number } | null {
  const f = openOwnedFile(path);
  if ('problem' in f) return null;
  try {
    const buf = Buffer.allocUnsafe(Math.min(f.st.size, maxBytes));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(f.fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: buf.subarray(0, got), size: f.st.size };
  } catch {
    return null;
  } finally {
    closeSync(f.fd);
  }
}
