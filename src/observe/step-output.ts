/**
 * A step's output as events: its log file, read as it grows (by the supervisor of a local run for the
 * record's metrics and alerts, by every viewer for what it shows, by the follower of a Slurm job), split into
 * lines and parsed once per reader for every subscriber: finished lines with their tqdm parse, the open `\r`
 * line, one progress event per distinct tqdm state. Nothing here is on the step's own path: the step writes
 * its log through `tee` (./runner.ts), whatever its readers do.
 */
import { LineSplitter, cleanLine, forEachLine, type LineSink } from './lines.js';
import { mayBeProgress, mayHoldProgress, parseProgress, splitGluedBar, type Progress } from './logparse.js';
import type { PipelineListener } from './events.js';
import { Tail } from '../fs/index.js';

/** Between reads, a counter without a total is parsed at most this often. */
const UNKNOWN_TOTAL_PARSE_INTERVAL_MS = 200;
const PERCENT_BAR = Buffer.from('%|');

/**
 * Decides which complete `\r` segments (tqdm redraws) are worth a full parse: a bar's when its percent
 * differs from the last one seen (found by a byte scan for `%|`, nothing decoded), a counter without a
 * total at most every UNKNOWN_TOTAL_PARSE_INTERVAL_MS. The rest are overwritten on screen anyway.
 */
export class SegmentThinner {
  private pct = -1;
  private at = 0;
  // The first `%|` at or after a position of the current buffer (buffer length: none left).
  private scanned: Buffer | null = null;
  private barAt = 0;

  constructor(
    private readonly parse: (text: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  segment(bytes: Buffer, start: number, end: number): void {
    if (bytes !== this.scanned || (this.barAt < start && this.barAt !== bytes.length)) {
      this.scanned = bytes;
      const k = bytes.indexOf(PERCENT_BAR, start);
      this.barAt = k === -1 ? bytes.length : k;
    }
    let pct = -1;
    if (this.barAt + 1 < end) {
      // Up to three digits before the `%|`.
      let v = 0;
      let scale = 1;
      for (let j = this.barAt - 1; j >= start && scale <= 100; j--) {
        const c = bytes[j]! - 0x30;
        if (c < 0 || c > 9) break;
        v += c * scale;
        scale *= 10;
      }
      if (scale > 1) pct = v;
    }
    if (pct !== -1) {
      if (pct === this.pct) return;
      this.pct = pct;
    } else {
      const t = this.now();
      if (t - this.at < UNKNOWN_TOTAL_PARSE_INTERVAL_MS) return;
      this.at = t;
    }
    this.parse(cleanLine(bytes.toString('utf8', start, end)));
  }
}

/**
 * One step's output as events, the same for a local step (its stdout and stderr) and a followed one (a
 * Slurm pass's log): finished lines with their tqdm parse, the open `\r` line, and one progress event per
 * distinct tqdm state. Each line is parsed once here; subscribers (the pane model, stream mode, the watch)
 * share the result. `listeners` is read at each event (subscriptions may change while a step runs).
 */
export class StepOutput {
  private lastN = Number.NaN;
  private lastDesc = '';
  private readonly thin: SegmentThinner;

  constructor(
    private readonly index: number,
    private readonly listeners: () => readonly PipelineListener[],
  ) {
    this.thin = new SegmentThinner((text) => {
      const p = parseProgress(text);
      if (p) this.progress(p);
    });
  }

  private progress(p: Progress): void {
    if (p.n === this.lastN && p.desc === this.lastDesc) return;
    this.lastN = p.n;
    this.lastDesc = p.desc;
    const i = this.index;
    for (const l of this.listeners()) l.progress?.(i, p);
  }

  /** A finished line to every subscriber, with its tqdm parse. */
  private line(text: string): void {
    const i = this.index;
    const p = mayBeProgress(text) ? parseProgress(text) : null;
    if (p === null) {
      // A line glued onto tqdm's open bar: the bar is a redraw, the line a line of its own.
      const glued = splitGluedBar(text);
      if (glued) {
        const bar = parseProgress(glued.bar);
        if (bar) {
          this.progress(bar);
          this.line(glued.rest);
          return;
        }
      }
    }
    const ls = this.listeners();
    for (let n = 0; n < ls.length; n++) ls[n]!.line?.(i, text, p);
    if (p) this.progress(p);
  }

  /**
   * A run of finished lines: in one go to the subscribers that take runs, unless one of them needs them line
   * by line or a line may be a tqdm bar (each is parsed); then line by line to all, as \`line\` would.
   */
  private lines(text: string): void {
    const i = this.index;
    const ls = this.listeners();
    let perLine = mayHoldProgress(text) || text.includes('%|');
    for (let n = 0; n < ls.length && !perLine; n++) perLine = ls[n]!.needsLines?.(i, text) === true;
    if (perLine) {
      forEachLine(text, (t) => this.line(t));
      return;
    }
    for (let n = 0; n < ls.length; n++) {
      const l = ls[n]!;
      if (l.lines) l.lines(i, text);
      else if (l.line) forEachLine(text, (t) => l.line!(i, t, null));
    }
  }

  /** The sink the step's log is split into. */
  sink(): LineSink {
    const i = this.index;
    return {
      line: (text) => this.line(text),
      lines: (text) => this.lines(text),
      partial: (text) => {
        for (const l of this.listeners()) l.partial?.(i, text);
        // The latest redraw of each read is parsed in full (pane: bar, rate, ETA, loss) ...
        const p = text.includes('[') ? parseProgress(text) : null;
        if (p) this.progress(p);
      },
      // ... and the redraws in between only when the percent moves (stream mode prints one per percent):
      // a byte scan each, decoded and parsed only then.
      segment: (bytes, start, end) => this.thin.segment(bytes, start, end),
    };
  }
}

/** Bytes of a log one poll reads at most (a backlog, e.g. on attach, takes several polls). */
export const POLL_READ_LIMIT_BYTES = 16 * 1024 * 1024;

/** One step's log, read as it grows, into its listeners' events. */
export class StepLogReader {
  private readonly tail: Tail;
  private readonly splitter = new LineSplitter();
  private readonly sink: LineSink;
  private flushed = false;

  constructor(
    index: number,
    readonly path: string,
    listeners: () => readonly PipelineListener[],
    from = 0,
  ) {
    this.tail = new Tail(path, from);
    this.sink = new StepOutput(index, listeners).sink();
  }

  /** Bytes read so far. */
  get offset(): number {
    return this.tail.offset;
  }

  /** Reads what the log has gained (at most `limit` bytes); returns how many bytes were read. */
  poll(limit = POLL_READ_LIMIT_BYTES): number {
    if (this.flushed) return 0;
    return this.tail.drain((b) => this.splitter.feed(b, this.sink), limit);
  }

  /** The step is over: reads the rest, ends the open line, and clears it. */
  finish(): void {
    if (this.flushed) return;
    this.poll(Number.POSITIVE_INFINITY);
    this.flushed = true;
    this.splitter.flush(this.sink);
    this.sink.partial('');
  }
}
