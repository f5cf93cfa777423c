/**
 * Stream mode (`--no-tui`, or stdout not a terminal): plain lines prefixed with the step name, fit for
 * nohup, tmux and batch schedulers. tqdm's `\r` redraws are thinned to one line per percent (when the
 * total is unknown, one per PROGRESS_UNKNOWN_TOTAL_INTERVAL_MS, spaced further as the step goes on), each
 * with what zerowiz adds (the loss, GPU memory). Output is batched into large writes.
 */
import { cleanLine } from '../observe/index.js';
import { formatDuration, printable } from '../text/index.js';
import type { Progress } from '../observe/index.js';
import type { PipelineListener, PipelineOutcome, StepResult } from '../observe/index.js';

/** With no total (no percent), a progress line at most this often ... */
export const PROGRESS_UNKNOWN_TOTAL_INTERVAL_MS = 1_000;
/**
 * ... and, as the step goes on, at most once per hundredth of its time so far, up to this: a multi-day run
 * without a total prints about 70 lines per doubling of its time, then one a minute (not 86,400 a day).
 */
export const PROGRESS_UNKNOWN_TOTAL_MAX_INTERVAL_MS = 60_000;
/** Output is flushed when this much is buffered, and at the latest on the next turn of the event loop. */
const STREAM_FLUSH_BYTES = 64 * 1024;
/**
 * Bytes the reader of stream mode's output may leave unread before lines are dropped: a pipe whose reader stops
 * (a stuck `| tee`) must not grow zerowiz without bound. The run goes on; the step logs keep every line.
 * zerowiz's own lines are never dropped: they wait, and come after the backlog.
 */
export const STREAM_BACKLOG_LIMIT_BYTES = 1024 * 1024;
/** How often the end of stream mode looks whether a stalled reader took its backlog. */
const SETTLE_POLL_MS = 100;

/** Something to write text to (process.stdout, or a test buffer). */
export interface TextSink {
  write(text: string): unknown;
  /** Bytes written but not yet taken by the reader (absent: nothing waits). */
  backlog?(): number;
}

/** Options of the printer. */
export interface StreamPrinterOptions {
  /** What to add to step `i`'s progress line (the loss, GPU memory), '' for nothing. */
  extra?: (i: number) => string;
  now?: () => number;
}

/** Prints pipeline events as prefixed lines. */
export class StreamPrinter implements PipelineListener {
  /** What waits for the next flush, in order; `own`: zerowiz's line (never dropped). */
  private buf: { text: string; own: boolean }[] = [];
  private bufBytes = 0;
  /** zerowiz's lines held back while the reader is stalled (they come after the backlog). */
  private held: string[] = [];
  private scheduled = false;
  private readonly prefixes: string[];
  private readonly lastPct: (number | null)[];
  private readonly lastProgressAt: number[];
  private readonly lastProgressText: string[];
  private readonly startedAt: number[];
  private readonly now: () => number;
  private readonly extra: ((i: number) => string) | null;

  constructor(
    private readonly out: TextSink,
    private readonly stepNames: string[],
    opts: StreamPrinterOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.extra = opts.extra ?? null;
    const width = Math.max(...stepNames.map((n) => n.length), 7);
    this.prefixes = stepNames.map((n) => `${`[${printable(n)}]`.padEnd(width + 2)} `);
    this.lastPct = stepNames.map(() => null);
    this.lastProgressAt = stepNames.map(() => 0);
    this.lastProgressText = stepNames.map(() => '');
    this.startedAt = stepNames.map(() => this.now());
  }

  /** A zerowiz message, prefixed `[zerowiz]` (names and alerts in it may come from files: shown escaped). */
  note(text: string): void {
    for (const l of text.split('\n')) this.push(`[zerowiz] ${printable(l)}\n`, true);
  }

  line(i: number, text: string): void {
    if (this.lastProgressText[i] !== '' && text.trim() === this.lastProgressText[i]) return; // a bar's final state, already printed
    this.push(`${this.prefixes[i] + text}\n`);
  }

  /**
   * Several finished lines (joined by `\n`), each printed as \`line\` would print it. None is a bar's final
   * state (which \`line\` leaves out): StepOutput sends every line that may be a bar line by line
   * (mayHoldProgress: a bar line, trimmed as \`line\` compares it, ends with `]`).
   */
  lines(i: number, text: string): void {
    const prefix = this.prefixes[i]!;
    this.push(`${prefix}${text.replaceAll('\n', `\n${prefix}`)}\n`);
  }

  progress(i: number, p: Progress): void {
    const t = this.now();
    if (p.percent !== null) {
      if (p.percent === this.lastPct[i]) return;
      this.lastPct[i] = p.percent;
    } else {
      const every = Math.min(
        PROGRESS_UNKNOWN_TOTAL_MAX_INTERVAL_MS,
        Math.max(PROGRESS_UNKNOWN_TOTAL_INTERVAL_MS, (t - this.startedAt[i]!) / 100),
      );
      if (t - this.lastProgressAt[i]! < every) return;
    }
    this.lastProgressAt[i] = t;
    const text = cleanLine(p.text).trim();
    this.lastProgressText[i] = text;
    const extra = this.extra?.(i) ?? '';
    this.push(`${this.prefixes[i] + text}${extra === '' ? '' : `  | ${extra}`}\n`);
  }

  stepStart(i: number): void {
    this.startedAt[i] = this.now();
    this.lastPct[i] = null;
    this.lastProgressText[i] = '';
  }

  stepEnd(i: number, r: StepResult): void {
    const name = this.stepNames[i] ?? String(i);
    const took = formatDuration(r.endedAt - r.startedAt);
    if (r.status === 'done') this.note(`step ${name} done in ${took} (exit 0)`);
    else if (r.status === 'stopped')
      this.note(
        `step ${name} stopped after ${took}${r.stopSignal && r.stopSignal !== 'none' ? ` (${r.stopSignal})` : ''}`,
      );
    else if (r.refused) this.note(`step ${name} did not start: ${r.error}`);
    else
      this.note(
        `step ${name} failed after ${took} (${r.error ? r.error : r.signal ? `signal ${r.signal}` : `exit ${r.exitCode}`})`,
      );
    if (r.warning) this.note(`step ${name}: ${r.warning}`);
  }

  logError(i: number, why: string): void {
    this.note(
      `logging stopped at step ${this.stepNames[i] ?? i + 1}: ${why}; the run goes on (the logs keep what came before)`,
    );
  }

  end(_o: PipelineOutcome): void {
    this.flush();
  }

  /** Lines dropped because the reader did not keep up (said once it does again). */
  dropped = 0;

  /**
   * Writes out whatever is buffered; while the reader leaves more than STREAM_BACKLOG_LIMIT_BYTES unread, the
   * step's lines are dropped and counted instead, and zerowiz's own are held back; once it reads again, the
   * count is said (how many, where they are), then the held lines, then the rest, in order.
   */
  flush(): void {
    const b = this.buf;
    this.buf = [];
    this.bufBytes = 0;
    if ((this.out.backlog?.() ?? 0) > STREAM_BACKLOG_LIMIT_BYTES) {
      for (const seg of b) {
        if (seg.own) this.held.push(seg.text);
        else for (let k = seg.text.indexOf('\n'); k !== -1; k = seg.text.indexOf('\n', k + 1)) this.dropped++;
      }
      return;
    }
    let text = '';
    if (this.dropped > 0) {
      text += `[zerowiz] ${this.dropped} line(s) not shown here: stdout was not read fast enough (the run went on; the step logs have every line)\n`;
      this.dropped = 0;
    }
    text += this.held.join('');
    this.held = [];
    for (const seg of b) text += seg.text;
    if (text !== '') this.out.write(text);
  }

  /**
   * The end of stream mode: writes out what is buffered, and, while a stalled reader still holds zerowiz's own
   * lines back (or the count of what was dropped), waits for it to read, then writes them. A reader that went
   * away takes nothing more (its backlog reads 0, and the writes are dropped).
   */
  async settle(): Promise<void> {
    this.flush();
    while (this.held.length > 0 || this.dropped > 0) {
      await new Promise((res) => setTimeout(res, SETTLE_POLL_MS));
      this.flush();
    }
  }

  private push(s: string, own = false): void {
    this.buf.push({ text: s, own });
    this.bufBytes += s.length;
    if (this.bufBytes >= STREAM_FLUSH_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }
}
