/**
 * Turning a child's byte stream into display lines: `\r` updates collapse into one line, ANSI and other
 * control sequences are stripped (the raw bytes still go to the log file), and a ring buffer keeps the
 * last N lines so memory stays bounded however long the run is.
 */
import stripAnsi from 'strip-ansi';

/** Lines the log pane keeps per step; older lines live only in the step's log file. */
export const PANE_RING_LINES = 10_000;
/** Longest line kept for display (characters); the rest is in the log file. */
export const MAX_DISPLAY_LINE_CHARS = 4_000;

// C0 controls other than tab, plus DEL; matched after ANSI sequences are stripped.
const CONTROL_RE = /[\x00-\x08\x0b-\x1f\x7f]/g;
const NEEDS_CLEAN_RE = /[\x00-\x08\x0b-\x1f\x7f\x9b]/;

/** A line fit for the layout: no ANSI sequences, no control characters, tabs expanded, length capped. */
export function cleanLine(text: string): string {
  let s = text;
  if (NEEDS_CLEAN_RE.test(s)) {
    s = stripAnsi(s).replace(CONTROL_RE, '');
  }
  if (s.includes('\t')) s = expandTabs(s);
  if (s.length > MAX_DISPLAY_LINE_CHARS) s = s.slice(0, MAX_DISPLAY_LINE_CHARS) + '…';
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
   * The current unfinished line changed (a `\r` update such as a tqdm bar). Called at most once per
   * `feed`, with the latest state, already cleaned.
   */
  partial(text: string): void;
  /** Every `\r` segment of this feed, for callers that thin progress per update (may be omitted). */
  segment?(text: string): void;
}

/** Splits decoded text into lines, one splitter per stream (stdout and stderr never split each other's lines). */
export class LineSplitter {
  private pending = '';

  /** Feeds decoded text; calls `sink.line` for each finished line and `sink.partial` for the open one. */
  feed(text: string, sink: LineSink): void {
    let start = 0;
    const n = text.length;
    const wantSegments = sink.segment !== undefined;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl === -1) break;
      let raw = text.slice(start, nl);
      if (this.pending !== '') {
        raw = this.pending + raw;
        this.pending = '';
      }
      if (wantSegments && raw.includes('\r')) this.emitSegments(raw, sink);
      sink.line(cleanLine(collapseCarriageReturns(raw)));
      start = nl + 1;
    }
    if (start < n) {
      const rest = text.slice(start);
      const had = this.pending;
      // Keep only what is still visible: everything before the last non-empty \r segment is overwritten.
      const joined = had + rest;
      if (wantSegments && rest.includes('\r')) this.emitSegments(rest, sink);
      const cr = joined.lastIndexOf('\r');
      if (cr !== -1 && cr < joined.length - 1) this.pending = '\r' + joined.slice(cr + 1);
      else this.pending = joined.length > MAX_DISPLAY_LINE_CHARS * 4 ? joined.slice(-MAX_DISPLAY_LINE_CHARS * 4) : joined;
      const visible = collapseCarriageReturns(this.pending);
      sink.partial(cleanLine(visible));
    }
  }

  /** Whatever is left when the stream ends, as a finished line (or nothing). */
  flush(sink: LineSink): void {
    if (this.pending !== '') {
      const v = collapseCarriageReturns(this.pending);
      this.pending = '';
      if (v !== '') sink.line(cleanLine(v));
    }
  }

  /** The open line as it would show now ('' if none). */
  get open(): string {
    return this.pending === '' ? '' : cleanLine(collapseCarriageReturns(this.pending));
  }

  private emitSegments(raw: string, sink: LineSink): void {
    let s = 0;
    for (;;) {
      const cr = raw.indexOf('\r', s);
      const end = cr === -1 ? raw.length : cr;
      if (end > s) sink.segment!(raw.slice(s, end));
      if (cr === -1) break;
      s = cr + 1;
    }
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
