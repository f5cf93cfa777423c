/**
 * Turning a child's byte stream into display lines: `\r` updates collapse into one line, ANSI and other
 * control sequences are stripped by the one terminal sanitizer (../printable.ts displayLine: C0, DEL and C1
 * alike; the raw bytes still go to the log file), and a ring buffer keeps the last N lines so memory stays
 * bounded however long the run is.
 */
import { BLOCK_NEEDS_DISPLAY_CLEAN_RE, displayLine } from '../text/index.js';

/** Lines the log pane keeps per step; older lines live only in the step's log file. */
export const PANE_RING_LINES = 10_000;
/** Longest line kept for display (characters); the rest is in the log file. */
export const MAX_DISPLAY_LINE_CHARS = 4_000;

/** A line fit for the layout: no ANSI sequences, no control characters, tabs expanded, length capped. */
export function cleanLine(text: string): string {
  let s = displayLine(text);
  if (s.includes('\t')) s = expandTabs(s);
  if (s.length > MAX_DISPLAY_LINE_CHARS) s = `${s.slice(0, MAX_DISPLAY_LINE_CHARS)}…`;
  return s;
}

function expandTabs(s: string): string {
  let out = '';
  for (const ch of s) {
    if (ch === '\t') out += ' '.repeat(8 - (out.length % 8));
    else out += ch;
  }
  return out;
}

/** The text a terminal would end up showing for a line with `\r` updates: its last non-empty segment. */
export function collapseCarriageReturns(line: string): string {
  const cr = line.lastIndexOf('\r');
  if (cr === -1) return line;
  let end = line.length;
  let start = cr + 1;
  // Skip empty trailing segments ("...\r" or "\r\n" endings).
  while (start === end) {
    const prev = line.lastIndexOf('\r', start - 2);
    end = start - 1;
    if (prev === -1) return line.slice(0, end);
    start = prev + 1;
  }
  return line.slice(start, end);
}

/** Receives what a splitter finds. */
export interface LineSink {
  /** A finished line (ended by `\n`), already collapsed and cleaned. */
  line(text: string): void;
  /**
   * Several finished lines at once (a run of them read together), joined by `\n` (none at the end): each is
   * clean already (no control characters, no tabs) and at most MAX_DISPLAY_LINE_CHARS long, and none had a
   * `\r`. Optional: without it, `line` is called for each. A flood of output costs per block, not per line.
   */
  lines?(text: string): void;
  /**
   * The current unfinished line changed (a `\r` update such as a tqdm bar). Called at most once per
   * `feed`, with the latest state, already cleaned; '' once a line that was reported open has finished.
   */
  partial(text: string): void;
  /**
   * Each `\r` segment once it is complete (ended by `\r`, `\n` or the end of the stream), as raw bytes
   * `bytes[start, end)`, for callers that thin progress per update (may be omitted). The bytes are only
   * valid during the call: decode what you keep. Nothing is decoded for a segment unless the caller does.
   */
  segment?(bytes: Buffer, start: number, end: number): void;
}

const LF = 0x0a;
const CR = 0x0d;
/** Bytes kept of an unfinished segment; enough for MAX_DISPLAY_LINE_CHARS characters of any UTF-8. */
const MAX_OPEN_BYTES = MAX_DISPLAY_LINE_CHARS * 4;

/** Whether every line of `text` (lines joined by `\n`) is at most `max` characters long. */
function linesWithin(text: string, max: number): boolean {
  if (text.length <= max) return true;
  let s = 0;
  for (;;) {
    const nl = text.indexOf('\n', s);
    if ((nl === -1 ? text.length : nl) - s > max) return false;
    if (nl === -1) return true;
    s = nl + 1;
  }
}

/** Calls `f` with each line of `text` (lines joined by `\n`, as LineSink.lines gives them). */
export function forEachLine(text: string, f: (line: string) => void): void {
  let s = 0;
  for (;;) {
    const nl = text.indexOf('\n', s);
    if (nl === -1) {
      f(s === 0 ? text : text.slice(s));
      return;
    }
    f(text.slice(s, nl));
    s = nl + 1;
  }
}

/** `bytes` cut back to the last complete UTF-8 character (an unfinished line may end inside one). */
function completeUtf8End(bytes: Buffer, start: number, end: number): number {
  // Look back at most 3 bytes for a lead byte whose sequence runs past `end`.
  for (let i = end - 1, k = 0; i >= start && k < 3; i--, k++) {
    const b = bytes[i]!;
    if (b < 0x80) return end; // ASCII: complete
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return end - i >= need ? end : i;
    }
  }
  return end;
}

function decode(bytes: Buffer, start: number, end: number): string {
  return start >= end ? '' : bytes.toString('utf8', start, end);
}

/** `a` followed by `b[start, end)`, at most MAX_OPEN_BYTES bytes (the start of an overlong line is kept). */
function append(a: Buffer | null, b: Buffer, start: number, end: number): Buffer {
  const room = MAX_OPEN_BYTES - (a?.length ?? 0);
  const take = Math.max(0, Math.min(end - start, room));
  if (!a || a.length === 0) return Buffer.from(b.subarray(start, start + take)); // a copy: the chunk is not kept
  if (take === 0) return a;
  return Buffer.concat([a, b.subarray(start, start + take)]);
}

/**
 * Splits a byte stream into lines, one splitter per stream (stdout and stderr never split each other's
 * lines). Works on the bytes: `\n` and `\r` are found with Buffer.indexOf, a run of complete lines
 * without `\r` is decoded in one go, and of a run of `\r` redraws only the segment that stays visible
 * is decoded. UTF-8 characters split across chunks are never cut (`\n` and `\r` never occur inside one).
 */
export class LineSplitter {
  /** The growing (last) segment of the open line, or null. */
  private carry: Buffer | null = null;
  /** The last non-empty complete segment of the open line, or null. */
  private last: Buffer | null = null;
  /** Whether a line is open (bytes after the last `\n`). */
  private opened = false;
  /** Whether the open line has had a `\r` (only then are its segments reported). */
  private sawCr = false;
  /** Whether the last `partial` reported a non-empty open line. */
  private reportedOpen = false;
  // Per feed: the next \r at or after a position (-1: none left in this chunk).
  private crAt = -1;

  /** Feeds a chunk (a string is encoded as UTF-8 first); calls the sink for what it completes. */
  feed(chunk: Buffer | string, sink: LineSink): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const n = buf.length;
    if (n === 0) return;
    this.crAt = buf.indexOf(CR);
    let pos = 0;
    if (this.opened) {
      // The open line from earlier chunks ends at the first \n (or goes on past this chunk).
      const nl = buf.indexOf(LF);
      const end = nl === -1 ? n : nl;
      this.lineRegion(buf, 0, end, nl !== -1, sink);
      pos = nl === -1 ? n : nl + 1;
    }
    const lastLf = buf.lastIndexOf(LF);
    while (pos < n) {
      if (this.crAt !== -1 && this.crAt < pos) this.crAt = buf.indexOf(CR, pos);
      // Complete lines up to the next \r (or all of them): one decode, split as text.
      const blockEnd = this.crAt === -1 ? lastLf + 1 : buf.lastIndexOf(LF, this.crAt) + 1;
      if (blockEnd > pos) {
        this.block(buf, pos, blockEnd, sink);
        pos = blockEnd;
        continue;
      }
      const nl = buf.indexOf(LF, pos);
      const end = nl === -1 ? n : nl;
      this.lineRegion(buf, pos, end, nl !== -1, sink);
      pos = nl === -1 ? n : nl + 1;
    }
    if (this.opened) {
      this.reportedOpen = true;
      sink.partial(this.openText());
    } else if (this.reportedOpen) {
      this.reportedOpen = false;
      sink.partial('');
    }
  }

  /** Whatever is left when the stream ends, as a finished line (or nothing). */
  flush(sink: LineSink): void {
    if (!this.opened) return;
    if (this.carry && this.carry.length > 0) {
      if (this.sawCr) sink.segment?.(this.carry, 0, this.carry.length);
      this.last = this.carry;
    }
    const v = this.last ? cleanLine(decode(this.last, 0, this.last.length)) : '';
    this.reset();
    if (v !== '') sink.line(v);
  }

  /** The open line as it would show now ('' if none). */
  get open(): string {
    return this.opened ? this.openText() : '';
  }

  private reset(): void {
    this.carry = null;
    this.last = null;
    this.opened = false;
    this.sawCr = false;
  }

  private openText(): string {
    const b = this.carry && this.carry.length > 0 ? this.carry : this.last;
    if (!b) return '';
    return cleanLine(decode(b, 0, completeUtf8End(b, 0, b.length)));
  }

  /** Complete lines `buf[start, end)` (end just after a \n) without \r and with nothing carried. */
  private block(buf: Buffer, start: number, end: number, sink: LineSink): void {
    const text = buf.toString('utf8', start, end - 1); // without the final \n
    // No control character (C0 but newline, DEL, C1) and no tab: the block is used as it is.
    const clean = !BLOCK_NEEDS_DISPLAY_CLEAN_RE.test(text) && !text.includes('\t');
    if (clean && sink.lines && linesWithin(text, MAX_DISPLAY_LINE_CHARS)) {
      sink.lines(text);
      return;
    }
    let s = 0;
    for (;;) {
      const nl = text.indexOf('\n', s);
      const e = nl === -1 ? text.length : nl;
      const raw = text.slice(s, e);
      if (!clean) sink.line(cleanLine(raw));
      else sink.line(raw.length > MAX_DISPLAY_LINE_CHARS ? `${raw.slice(0, MAX_DISPLAY_LINE_CHARS)}…` : raw);
      if (nl === -1) break;
      s = nl + 1;
    }
  }

  /**
   * One line's bytes `buf[start, end)` (continuing the open line if there is one); `ended` when a \n
   * follows, else the line stays open.
   */
  private lineRegion(buf: Buffer, start: number, end: number, ended: boolean, sink: LineSink): void {
    let s = start;
    let cr = this.nextCr(buf, s, end);
    // A line without any \r is not a redraw: no segments for it.
    const redraw = this.sawCr || cr !== -1;
    const seg = redraw ? sink.segment : undefined;
    // The last non-empty complete segment: in this chunk [lastA, lastB), or `lastBuf` from before.
    let lastA = -1;
    let lastB = -1;
    let lastBuf = this.last;
    if (this.carry) {
      const upto = cr === -1 ? end : cr;
      const joined = append(this.carry, buf, s, upto);
      this.carry = null;
      if (cr === -1 && !ended) {
        this.carry = joined;
        this.opened = true;
        return;
      }
      if (joined.length > 0) {
        seg?.(joined, 0, joined.length);
        lastBuf = joined;
      }
      if (cr === -1) {
        // ended: the joined segment is the line
        this.reset();
        sink.line(lastBuf ? cleanLine(decode(lastBuf, 0, lastBuf.length)) : '');
        return;
      }
      s = cr + 1;
      cr = this.nextCr(buf, s, end);
    }
    while (cr !== -1) {
      if (cr > s) {
        seg?.(buf, s, cr);
        lastA = s;
        lastB = cr;
      }
      s = cr + 1;
      cr = this.nextCr(buf, s, end);
    }
    if (ended) {
      let text: string;
      if (end > s) {
        seg?.(buf, s, end);
        text = decode(buf, s, Math.min(end, s + MAX_OPEN_BYTES));
      } else if (lastA !== -1) text = decode(buf, lastA, Math.min(lastB, lastA + MAX_OPEN_BYTES));
      else if (lastBuf) text = decode(lastBuf, 0, lastBuf.length);
      else text = '';
      this.reset();
      sink.line(cleanLine(text));
      return;
    }
    this.opened = true;
    this.sawCr = redraw;
    this.last = lastA !== -1 ? append(null, buf, lastA, lastB) : lastBuf;
    this.carry = end > s ? append(null, buf, s, end) : null;
  }

  /** The next \r in `buf[from, end)`, or -1; keeps the chunk's cursor so a run of lines is scanned once. */
  private nextCr(buf: Buffer, from: number, end: number): number {
    if (this.crAt !== -1 && this.crAt < from) this.crAt = buf.indexOf(CR, from);
    return this.crAt !== -1 && this.crAt < end ? this.crAt : -1;
  }
}

/** A fixed-capacity ring of items; pushing past capacity drops the oldest. */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[];
  private head = 0; // index of the oldest item
  private count = 0;
  /** How many items were ever dropped (so line numbers stay absolute). */
  dropped = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.count;
  }

  /** Absolute number of items ever pushed. */
  get total(): number {
    return this.dropped + this.count;
  }

  push(item: T): void {
    if (this.count < this.capacity) {
      this.items[(this.head + this.count) % this.capacity] = item;
      this.count++;
    } else {
      this.items[this.head] = item;
      this.head = (this.head + 1) % this.capacity;
      this.dropped++;
    }
  }

  /** The i-th kept item, 0 = oldest kept. */
  at(i: number): T | undefined {
    if (i < 0 || i >= this.count) return undefined;
    return this.items[(this.head + i) % this.capacity];
  }

  /** Kept items from index `from` (inclusive) to `to` (exclusive). */
  slice(from: number, to: number): T[] {
    const out: T[] = [];
    const a = Math.max(0, from);
    const b = Math.min(this.count, to);
    for (let i = a; i < b; i++) out.push(this.items[(this.head + i) % this.capacity] as T);
    return out;
  }

  /** The last `n` items, oldest first. */
  tail(n: number): T[] {
    return this.slice(this.count - n, this.count);
  }
}
