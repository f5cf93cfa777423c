/**
 * Follows DiffSynth-Studio's `<output_path>/loss.csv` while a step runs. What DiffSynth does (checked in
 * modelscope/DiffSynth-Studio diffsynth/diffusion/logger.py, CSVLogger and ModelLogger): the main process
 * creates the logger lazily at the end of the first training step (so the file appears late), opens the
 * file for APPEND (a rerun into the same output_path adds rows after the old ones, with step numbers
 * starting again at 1; the header `step,key,value` is written only when the file is new or empty), and
 * flushes after every row.
 *
 * So the follower remembers where the file ended when the step started and reads only what comes after;
 * it reads only the new bytes on each poll (at most CSV_READ_CHUNK_BYTES at a time), keeps an unfinished
 * last row until its newline arrives, and starts again from the top when the file shrinks (truncated) or is
 * a different file than before (replaced: another inode). Nothing here throws: a file that cannot be read
 * is retried on the next poll and its error is kept in `error`. Only a regular file is read, opened without
 * waiting (a FIFO in its place never holds zerowiz: it is named in `error` and skipped), and synchronously:
 * a read is at most CSV_READ_CHUNK_BYTES of a local file, and a caller that needs the rows now (the last
 * progress line of a step, its end) gets them now.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { type CsvLogRow, parseCsvLogRow } from './sources.js';
import { openOwnedFile } from '../../fs/index.js';

/** How often the file is checked while the step runs. */
export const CSV_POLL_INTERVAL_MS = 500;
/** Most bytes read in one go; a backlog is read in several turns. */
export const CSV_READ_CHUNK_BYTES = 1024 * 1024;
/** Longest unfinished row kept; beyond it the row is dropped up to the next newline. */
export const CSV_MAX_ROW_BYTES = 64 * 1024;

/** Where the follower is. */
export type CsvFollowerState = 'idle' | 'waiting' | 'following' | 'stopped';

/** Options of a follower. */
export interface CsvFollowerOptions {
  /** Each complete row, in file order. */
  onRow: (row: CsvLogRow) => void;
  pollMs?: number;
  /**
   * 'end' (default): rows already in the file when `start()` looks are from an earlier run and skipped.
   * 'start': read the file from its first byte. A number: from that byte (where the file ended when the step
   * started, as the run's supervisor saw it: a viewer that attaches later reads what the supervisor read).
   */
  from?: 'end' | 'start' | number;
  /**
   * The byte to stop at, when known from the start (a viewer of a step that has ended: where the file ended
   * then, as the supervisor saw it; what came after is a later run's).
   */
  until?: number;
}

/** Follows one loss.csv. */
export class LossCsvFollower {
  state: CsvFollowerState = 'idle';
  /** Rows delivered. */
  rows = 0;
  /** Times the file was found truncated or replaced (reading restarted at its top). */
  restarts = 0;
  /** Bytes read from the file so far (only what came after the start offset). */
  bytesRead = 0;
  /** The last read error other than "no such file", or null. */
  error: string | null = null;
  private offset = 0;
  /** The file's identity (inode and birth time), to notice a replaced file. */
  private id: string | null = null;
  private decoder = new StringDecoder('utf8');
  private carry = '';
  private skipping = false;
  /** The byte reading stops at (stopAt), or null: the end of the file. */
  private limit: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly pollMs: number;

  constructor(
    readonly path: string,
    private readonly opts: CsvFollowerOptions,
  ) {
    this.pollMs = opts.pollMs ?? CSV_POLL_INTERVAL_MS;
    this.limit = opts.until ?? null;
  }

  /** Where reading started: the file's size when start() looked (or the offset given), else 0. */
  startOffset = 0;

  /**
   * Notes where the file ends now (unless reading from the start or from a given offset) and starts polling.
   * The look is made as start() is called: the step has just been spawned, and a later look could come after
   * a fast step's first rows and skip them as an earlier run's (seen under load: 26 of 30).
   */
  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'waiting';
    const from = this.opts.from ?? 'end';
    if (typeof from === 'number') {
      this.offset = from;
    } else if (from === 'end') {
      const s = this.statNow();
      if (s) {
        this.offset = s.size;
        this.id = s.id;
        this.state = 'following';
      }
    }
    this.startOffset = this.offset;
    this.schedule();
  }

  /** Reads what is new now (also what tests call instead of waiting for the timer). */
  async poll(): Promise<void> {
    this.readNew();
  }

  /** Reads what is new now, synchronously (the last rows before a step's last progress line or its end). */
  pollSync(): void {
    this.readNew();
  }

  /** Where reading is now: the byte after the last one read. */
  get position(): number {
    return this.offset;
  }

  /**
   * Reads up to byte `end` (where the file ended when the step ended, as its supervisor saw it) and stops:
   * rows a later run appended to the same file are not this step's.
   */
  async stopAt(end: number): Promise<void> {
    if (this.state === 'stopped') return;
    this.limit = end;
    return this.stop();
  }

  /** Reads what is left (a last row written just before the step ended) and stops. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.state !== 'idle') this.readNew();
    this.state = 'stopped';
  }

  private schedule(): void {
    if (this.state === 'stopped') return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.readNew();
      this.schedule();
    }, this.pollMs);
    this.timer.unref();
  }

  /** The file's size and identity now, or null (absent, or not a regular file). */
  private statNow(): { size: number; id: string } | null {
    const fd = this.openNow();
    if (fd === null) return null;
    try {
      const s = fstatSync(fd);
      return { size: s.size, id: `${s.ino}:${s.birthtimeMs}` };
    } catch {
      return null;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Opens the file as every file read back from a run is opened (../../fs/read.ts openOwnedFile: a regular file
   * of the user's own, never through a link, never waited on); null (and `error` set) otherwise.
   */
  private openNow(): number | null {
    const f = openOwnedFile(this.path);
    if ('problem' in f) {
      if (!f.missing) this.error = `${this.path} ${f.problem}`;
      return null;
    }
    return f.fd;
  }

  private readNew(): void {
    if (this.state === 'stopped') return;
    const fd = this.openNow();
    if (fd === null) return;
    try {
      const s = fstatSync(fd);
      const id = `${s.ino}:${s.birthtimeMs}`;
      if ((this.id !== null && id !== this.id) || s.size < this.offset) {
        this.offset = 0;
        this.carry = '';
        this.skipping = false;
        this.decoder = new StringDecoder('utf8');
        this.restarts++;
      }
      this.id = id;
      this.state = 'following';
      const size = this.limit === null ? s.size : Math.min(s.size, this.limit);
      // Read the backlog in chunks; each chunk is parsed before the next is read.
      const buf = Buffer.allocUnsafe(Math.min(CSV_READ_CHUNK_BYTES, Math.max(1, size - this.offset)));
      while (this.offset < size) {
        const want = Math.min(buf.length, size - this.offset);
        const bytesRead = readSync(fd, buf, 0, want, this.offset);
        if (bytesRead <= 0) break;
        this.offset += bytesRead;
        this.bytesRead += bytesRead;
        this.consume(this.decoder.write(buf.subarray(0, bytesRead)));
      }
      this.error = null;
    } catch (err) {
      this.error = (err as Error).message;
    } finally {
      closeSync(fd);
    }
  }

  private consume(text: string): void {
    let s = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', s)) {
      const piece = text.slice(s, nl);
      s = nl + 1;
      if (this.skipping) {
        this.skipping = false;
        this.carry = '';
        continue;
      }
      const line = this.carry === '' ? piece : this.carry + piece;
      this.carry = '';
      const row = parseCsvLogRow(line.endsWith('\r') ? line.slice(0, -1) : line);
      if (row) {
        this.rows++;
        this.opts.onRow(row);
      }
    }
    if (s < text.length && !this.skipping) {
      this.carry += text.slice(s);
      if (this.carry.length > CSV_MAX_ROW_BYTES) {
        this.carry = '';
        this.skipping = true;
      }
    }
  }
}
