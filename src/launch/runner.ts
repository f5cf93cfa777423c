/**
 * The pipeline runner: runs steps in order, each as the leader of its own process group, streams their
 * output as lines (and tqdm progress parsed from them) to subscribers, writes the raw output to one log
 * file per step, and stops the whole group on request. No ink, no react: the pane, stream mode and the
 * run's watch (metrics, alerts: ./watch.ts) only subscribe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  fdTarget,
  GroupStop,
  gracePeriods,
  groupAlive,
  processesHolding,
  signalGroup,
  trackGroup,
  untrackGroup,
  type ProcessInfo,
  type StopSignal,
} from './group.js';
import { LineSplitter, cleanLine, forEachLine, type LineSink } from './lines.js';
import { mayBeProgress, mayHoldProgress, parseProgress, type Progress } from './logparse.js';
import type { ProcessGuard } from './watchdog.js';

/** One command of a pipeline. */
export interface StepSpec {
  name: string;
  /** The executable (resolved path of `accelerate`). */
  file: string;
  args: string[];
  /** Where the step's full raw output goes; null for none. */
  logPath: string | null;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Status of a step, as the pane shows it. */
export type StepStatus = 'pending' | 'running' | 'done' | 'failed' | 'stopped';

/** How a step ended. */
export interface StepResult {
  status: 'done' | 'failed' | 'stopped';
  exitCode: number | null;
  signal: string | null;
  startedAt: number;
  endedAt: number;
  /** The signal that finally ended a stop (`SIGINT` if the step obeyed the first one). */
  stopSignal?: StopSignal;
  /** Set when the step could not be started at all (e.g. ENOENT). */
  error?: string;
  /** Something the user should know about how it ended (a process outside the step held its output). */
  warning?: string;
}

/** How the pipeline ended, with the exit code zerowiz uses for it. */
export interface PipelineOutcome {
  outcome: 'succeeded' | 'failed' | 'interrupted';
  exitCode: 0 | 1 | 130;
  /** Index of the step that failed (or was stopped), if any. */
  failedStep: number | null;
  results: (StepResult | null)[];
}

/**
 * Where a run stands beyond its steps (a Slurm job's state): a line under the pane's title, and a note in
 * stream mode ('' for none).
 */
export interface RunStatus {
  text: string;
  tone: 'info' | 'warn' | 'ok' | 'error';
  /** Replaces the title's `[running]` tag while the run has no outcome (e.g. `pending`). */
  tag?: string;
  note: string;
}

/** What subscribers hear. Every method is optional. */
export interface PipelineListener {
  stepStart?(index: number, info: { pid: number | null; startedAt: number }): void;
  /**
   * A finished line (collapsed, cleaned), with its tqdm parse: `progress` is the bar the line is (a bar's
   * last state, ended by a newline), null when it is not one. Parsed once, here, for every subscriber.
   */
  line?(index: number, text: string, progress: Progress | null): void;
  /**
   * Several finished lines at once (`text`: joined by `\n`, none at the end), none of them a tqdm bar: a
   * subscriber that can take a run of lines in one go implements it; the others hear `line` for each.
   */
  lines?(index: number, text: string): void;
  /**
   * Whether a run of finished lines must be told line by line to every subscriber: it holds something this
   * subscriber reacts to per line (an alert, a metric), so that the reaction keeps its place among the lines
   * (stream mode prints an alert just before the line that raised it).
   */
  needsLines?(index: number, text: string): boolean;
  /** The open (unfinished) line changed, e.g. a tqdm bar redraw. '' clears it. */
  partial?(index: number, text: string): void;
  /** A tqdm update (one per distinct update; `\r` redraws of the same state are dropped). */
  progress?(index: number, p: Progress): void;
  stepEnd?(index: number, result: StepResult): void;
  /** The logs stopped (a write error such as a full disk) while step `index` ran; the run goes on. */
  logError?(index: number, why: string): void;
  /** A stop was requested (the pane shows "stopping..."). */
  stopping?(): void;
  /** The run's state beyond its steps changed (a Slurm job's state). */
  status?(s: RunStatus): void;
  end?(outcome: PipelineOutcome): void;
}

/**
 * A run as the launch, the pane and stream mode see it: local process groups (Pipeline), or another kind
 * (a batch job followed through its output files) that reports through the same events.
 */
export interface RunControl {
  /** The steps' names, in order. */
  readonly stepNames: readonly string[];
  /** The outcome once the run has ended. */
  readonly result: PipelineOutcome | null;
  /** Whether a stop was requested. */
  readonly stopping: boolean;
  /** Adds a listener; returns the function that removes it. */
  subscribe(l: PipelineListener): () => void;
  /** Runs it (once); resolves with the outcome. */
  run(): Promise<PipelineOutcome>;
  /** Stops it: SIGINT, grace, SIGTERM, grace, SIGKILL. Resolves when its processes are gone. */
  stop(): Promise<void>;
  /** Ends it now (a second Ctrl+C). */
  killNow(): void;
  /** The logs stop (e.g. the disk is full); the run goes on. */
  stopLogging(why: string): void;
}

/**
 * After a step's leader exited and its group is gone, how long its output may take to reach end of file
 * before zerowiz looks for who else holds it (a process that left the group, such as a daemon).
 */
export const PIPE_CLOSE_GRACE_MS = 1_000;

/** `ENOSPC (no space left on device)` from a file system error. */
export function describeWriteError(err: unknown): string {
  const e = err as NodeJS.ErrnoException | null;
  if (!e?.code) return String(err);
  // "ENOSPC: no space left on device, write" -> "no space left on device"
  const m = /^[A-Z]+: ([^,]+)/.exec(e.message);
  return `${e.code} (${m?.[1] ?? e.message})`;
}

/** What to say about processes outside a step's group that keep its output open. */
function holderWarning(holders: ProcessInfo[] | null): string {
  const who =
    holders && holders.length > 0
      ? holders.map((h) => `pid ${h.pid} (${h.command})`).join(', ')
      : 'a process zerowiz cannot look into (not found in /proc)';
  return `its output is still held open by ${who}, outside the step's process group; zerowiz stopped reading it`;
}

/** Output work (ms) after which the step's streams let the event loop have a turn. */
const READ_SLICE_MS = 8;
/** Between reads, a counter without a total is parsed at most this often. */
const UNKNOWN_TOTAL_PARSE_INTERVAL_MS = 200;
const PERCENT_BAR = Buffer.from('%|');

/**
 * The open (unfinished) line of a step's two streams: what changed last is shown, and when that line
 * finishes the other stream's open line (a tqdm bar on stderr) shows again instead of nothing.
 */
export class OpenLines {
  private readonly open = ['', ''];

  /** Stream `k` (0 stdout, 1 stderr) reports its open line; returns the text to show. */
  set(k: 0 | 1 | number, text: string): string {
    this.open[k] = text;
    return text !== '' ? text : (this.open[1 - k] ?? '');
  }
}

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
  private readonly open = new OpenLines();
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
    let perLine = mayHoldProgress(text);
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

  /** The sink of stream `k` (0 stdout, 1 stderr; a single stream is 0). */
  sink(k: 0 | 1): LineSink {
    const i = this.index;
    return {
      line: (text) => this.line(text),
      lines: (text) => this.lines(text),
      partial: (text) => {
        const shown = this.open.set(k, text);
        for (const l of this.listeners()) l.partial?.(i, shown);
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

/** Extra environment for every step: Python output unbuffered, so lines arrive as they are printed. */
export const STEP_ENV: Readonly<Record<string, string>> = { PYTHONUNBUFFERED: '1' };

/** Bytes the log file may have queued before the step's streams wait for the disk. */
const LOG_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * Chunks are handed to the disk together once this much has gathered: a pipe read is ~20 KB under a flood,
 * and on ext4 each write call costs ~10 µs besides its bytes (100 MB in 20 KB writes: 46-56 ms of CPU; in
 * writes of 13 chunks: 20 ms), time a thread-pool thread takes from the child on a 2-core machine.
 */
export const LOG_BATCH_BYTES = 256 * 1024;
/** ... and at the latest this long after the first of them came, so a quiet run's log is current. */
export const LOG_FLUSH_INTERVAL_MS = 20;

/** Options of a step log. */
export interface StepLogOptions {
  /** Called once when a write fails (a full disk). */
  onError?: (why: string) => void;
  /** How long a chunk may wait for others before it is written (default LOG_FLUSH_INTERVAL_MS). */
  flushMs?: number;
}

/**
 * A step's full raw log: the original chunks, appended in the order they arrive, written by libuv's
 * thread pool (the main thread parses and draws meanwhile), gathered into one write call per
 * LOG_BATCH_BYTES (or per LOG_FLUSH_INTERVAL_MS when output is slow). The file is created at once. A write
 * error (a full disk) stops the logging, never the run: `onError` hears it once.
 */
export class StepLog {
  private stream: WriteStream | null = null;
  /** Why logging stopped, if it did. */
  error: string | null = null;
  private readonly onError: (why: string) => void;
  private readonly flushMs: number;
  /** Bytes written since the stream was corked (0: not corked). */
  private gathered = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(path: string | null, opts: StepLogOptions = {}) {
    this.onError = opts.onError ?? (() => undefined);
    this.flushMs = opts.flushMs ?? LOG_FLUSH_INTERVAL_MS;
    if (path === null) return;
    let fd: number;
    try {
      fd = openSync(path, 'a');
    } catch (err) {
      this.fail(describeWriteError(err));
      return;
    }
    this.stream = createWriteStream(path, { fd, highWaterMark: LOG_BUFFER_BYTES });
    this.stream.on('error', (err) => this.fail(describeWriteError(err)));
  }

  private fail(why: string): void {
    if (this.error !== null) return;
    this.error = why;
    this.onError(why);
  }

  /** Stops writing (what is queued is dropped: the disk may be full); the file is closed. */
  stop(why: string): void {
    if (this.error === null) this.error = why;
    this.cancelFlush();
    this.stream?.destroy();
  }

  /** Queues a chunk; false when the buffer is full (wait for onDrain before reading more). */
  write(chunk: Buffer): boolean {
    const s = this.stream;
    if (!s || this.error !== null || s.destroyed) return true;
    if (this.gathered === 0) {
      s.cork();
      this.timer = setTimeout(this.flush, this.flushMs);
    }
    const more = s.write(chunk);
    this.gathered += chunk.length;
    // A full buffer is written at once: the pipes wait for its drain.
    if (!more || this.gathered >= LOG_BATCH_BYTES) this.flush();
    return more;
  }

  /** Hands what has gathered to the disk (one write call). */
  private readonly flush = (): void => {
    this.cancelFlush();
    if (this.gathered === 0) return;
    this.gathered = 0;
    this.stream?.uncork();
  };

  private cancelFlush(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** Calls f once the queued chunks are written (or logging stopped). */
  onDrain(f: () => void): void {
    const s = this.stream;
    if (!s || this.error !== null || s.destroyed) {
      f();
      return;
    }
    const done = () => {
      s.off('drain', done);
      s.off('close', done);
      f();
    };
    s.on('drain', done);
    s.on('close', done);
  }

  /** Writes out what is queued and closes the file. */
  close(): Promise<void> {
    this.flush();
    const s = this.stream;
    if (!s || s.closed) return Promise.resolve();
    return new Promise((res) => {
      s.once('close', () => res());
      if (s.destroyed) return;
      s.end();
    });
  }
}

/** Options of a pipeline. */
export interface PipelineOptions {
  /** Told about every process group (the watchdog), so none outlives zerowiz. */
  guard?: ProcessGuard | null;
}

/** Runs steps in order; a step starts only if the previous one exited 0. */
export class Pipeline implements RunControl {
  readonly statuses: StepStatus[];
  readonly results: (StepResult | null)[];
  /** Subscribers, as an array: the per-line path loops over it without allocating. */
  private listeners: PipelineListener[] = [];
  private stopRequested = false;
  private current: { child: ChildProcess; pgid: number; index: number } | null = null;
  private currentLog: StepLog | null = null;
  private stopPromise: Promise<void> | null = null;
  private groupStop: GroupStop | null = null;
  private started = false;
  private outcome: PipelineOutcome | null = null;
  private stopSignalUsed: StopSignal | undefined;
  private killed = false;
  /** Ends the current wait for a step's output to close (a second Ctrl+C). */
  private cutDrain: (() => void) | null = null;
  private logStopped: string | null = null;
  private readonly guard: ProcessGuard | null;

  constructor(
    readonly steps: StepSpec[],
    private readonly grace = gracePeriods(),
    opts: PipelineOptions = {},
  ) {
    this.statuses = steps.map(() => 'pending');
    this.results = steps.map(() => null);
    this.guard = opts.guard ?? null;
  }

  get stepNames(): string[] {
    return this.steps.map((s) => s.name);
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(l: PipelineListener): () => void {
    this.listeners = [...this.listeners, l];
    return () => {
      this.listeners = this.listeners.filter((x) => x !== l);
    };
  }

  /** Whether a stop was requested. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** The outcome once the pipeline has ended. */
  get result(): PipelineOutcome | null {
    return this.outcome;
  }

  /** Runs every step; resolves when the last one ended, one failed, or a stop finished. */
  async run(): Promise<PipelineOutcome> {
    if (this.started) throw new Error('pipeline already started');
    this.started = true;
    let failedStep: number | null = null;
    for (let i = 0; i < this.steps.length; i++) {
      if (this.stopRequested) break;
      const r = await this.runStep(i);
      this.results[i] = r;
      this.statuses[i] = r.status;
      this.emit((l) => l.stepEnd?.(i, r));
      if (r.status !== 'done') {
        failedStep = i;
        break;
      }
    }
    const interrupted = this.stopRequested;
    const outcome: PipelineOutcome = interrupted
      ? { outcome: 'interrupted', exitCode: 130, failedStep, results: this.results }
      : failedStep !== null
        ? { outcome: 'failed', exitCode: 1, failedStep, results: this.results }
        : { outcome: 'succeeded', exitCode: 0, failedStep: null, results: this.results };
    this.outcome = outcome;
    this.emit((l) => l.end?.(outcome));
    return outcome;
  }

  /**
   * Stops the run: no further step starts, and the running step's group gets SIGINT, then SIGTERM after
   * the first grace period, then SIGKILL after the second. Resolves when the group is gone.
   */
  stop(): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    this.stopRequested = true;
    this.emit((l) => l.stopping?.());
    const cur = this.current;
    if (cur) {
      // A group already being ended (workers left after their leader exited) keeps its ladder.
      const st = this.groupStop ?? new GroupStop(cur.pgid, this.grace);
      this.groupStop = st;
      this.stopPromise = st.done.then((sig) => {
        this.stopSignalUsed = sig;
      });
    } else this.stopPromise = Promise.resolve();
    return this.stopPromise;
  }

  /** Skips the grace periods: SIGKILL to the running step's group now (a second Ctrl+C). */
  killNow(): void {
    this.stopRequested = true;
    this.killed = true;
    if (this.groupStop) this.groupStop.killNow();
    else if (this.current) {
      signalGroup(this.current.pgid, 'SIGKILL');
      this.stopSignalUsed = 'SIGKILL';
    }
    this.cutDrain?.();
  }

  /** The logs stop for the rest of the run (a write error, e.g. the disk is full); the run goes on. */
  stopLogging(why: string): void {
    if (this.logStopped !== null) return;
    this.logStopped = why;
    this.currentLog?.stop(why);
    const i = this.current?.index ?? Math.max(0, this.statuses.lastIndexOf('done'));
    this.emit((l) => l.logError?.(i, why));
  }

  private emit(f: (l: PipelineListener) => void): void {
    for (const l of this.listeners) f(l);
  }

  private runStep(i: number): Promise<StepResult> {
    const spec = this.steps[i]!;
    const startedAt = Date.now();
    this.statuses[i] = 'running';
    const log = new StepLog(this.logStopped === null ? spec.logPath : null, {
      onError: (why) => this.stopLogging(why),
    });
    this.currentLog = log;
    return new Promise<StepResult>((resolve) => {
      let child: ChildProcess;
      this.guard?.willSpawn(i);
      try {
        child = spawn(spec.file, spec.args, {
          cwd: spec.cwd,
          env: { ...process.env, ...STEP_ENV, ...spec.env },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
      } catch (err) {
        const error = (err as Error).message;
        void log
          .close()
          .then(() =>
            resolve({ status: 'failed', exitCode: null, signal: null, startedAt, endedAt: Date.now(), error }),
          );
        return;
      }
      const pgid = child.pid ?? null;
      // The step's ends of its output pipes, to find who still holds them if they do not close.
      const outputs = new Set<string>();
      if (pgid !== null) {
        this.guard?.spawned(i, pgid);
        trackGroup(pgid);
        this.current = { child, pgid, index: i };
        for (const fd of [1, 2]) {
          const t = fdTarget(pgid, fd);
          if (t !== null) outputs.add(t);
        }
      }
      this.emit((l) => l.stepStart?.(i, { pid: pgid, startedAt }));

      const output = new StepOutput(i, () => this.listeners);
      const streams = [child.stdout!, child.stderr!];
      // libuv reads a pipe up to 32 times (2 MB) per wakeup: under a flood that is tens of ms without a
      // turn of the event loop, so keys and frames wait. After READ_SLICE_MS of output work the streams
      // pause until setImmediate, i.e. until the loop has had its turn (keys, timers, the pane's frame).
      // The streams are paused while anything holds them: the read slice is used up (until the loop's
      // next turn) or the log file's buffer is full (until it drains, so a slow disk slows the child
      // down instead of filling memory).
      const SLICE = 1;
      const LOG = 2;
      let holds = 0;
      const hold = (why: number) => {
        if (holds === 0) for (const st of streams) st.pause();
        holds |= why;
      };
      const release = (why: number) => {
        if ((holds & why) === 0) return;
        holds &= ~why;
        if (holds === 0) for (const st of streams) st.resume();
      };
      let sliceStart = -1;
      const endSlice = () => {
        sliceStart = -1;
        release(SLICE);
      };
      const pumps = streams.map((stream, k) => {
        const splitter = new LineSplitter();
        const sink = output.sink(k === 0 ? 0 : 1);
        stream.on('data', (chunk: Buffer) => {
          if (sliceStart === -1) {
            sliceStart = performance.now();
            setImmediate(endSlice);
          }
          if (!log.write(chunk) && (holds & LOG) === 0) {
            hold(LOG);
            log.onDrain(() => release(LOG));
          }
          splitter.feed(chunk, sink);
          if ((holds & SLICE) === 0 && performance.now() - sliceStart > READ_SLICE_MS) hold(SLICE);
        });
        return new Promise<void>((res) => {
          stream.on('close', () => {
            splitter.flush(sink);
            res();
          });
        });
      });

      let spawnError: string | undefined;
      child.on('error', (err) => {
        spawnError = err.message;
      });
      const exited = new Promise<{ code: number | null; signal: string | null }>((res) => {
        child.on('exit', (code, signal) => res({ code, signal }));
        child.on('error', () => res({ code: null, signal: null }));
      });

      void (async () => {
        const { code, signal } = await exited;
        if (pgid !== null) {
          if (!(this.stopRequested && this.stopPromise) && groupAlive(pgid)) {
            // The leader is gone but workers are left: they would outlive the step, so end them.
            this.groupStop = new GroupStop(pgid, this.grace, 'SIGTERM');
            if (this.killed) this.groupStop.killNow();
            await this.groupStop.done;
          }
          if (this.stopRequested && this.stopPromise) await this.stopPromise;
          this.groupStop = null;
          untrackGroup(pgid);
          this.guard?.gone(pgid);
        }
        const warning = await this.drain(pumps, streams, outputs);
        this.emit((l) => l.partial?.(i, ''));
        await log.close();
        this.current = null;
        this.currentLog = null;
        const endedAt = Date.now();
        // Stopped only if the stop reached it: a step that ended by itself first keeps its own outcome.
        const stopSignal = this.stopRequested && this.stopSignalUsed !== 'none' ? this.stopSignalUsed : undefined;
        const status: StepResult['status'] = stopSignal ? 'stopped' : code === 0 ? 'done' : 'failed';
        const r: StepResult = { status, exitCode: code, signal, startedAt, endedAt };
        if (stopSignal) r.stopSignal = stopSignal;
        if (spawnError) r.error = spawnError;
        if (warning) r.warning = warning;
        resolve(r);
      })();
    });
  }

  /**
   * Waits for a step's output to reach end of file once its group is gone. Normally that is at once; a
   * process that left the group (a daemon in its own session) can hold it open for its whole life, so
   * after PIPE_CLOSE_GRACE_MS zerowiz looks in /proc for who holds it: if someone does (or it cannot
   * tell), it stops reading and returns what to tell the user. If nobody does, the rest of the output is
   * still on its way (a slow disk holds the reads back), and it waits on.
   */
  private async drain(pumps: Promise<void>[], streams: Readable[], outputs: Set<string>): Promise<string | undefined> {
    const all = Promise.all(pumps).then(() => true);
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const closed = await Promise.race([
        all,
        new Promise<boolean>((res) => {
          timer = setTimeout(() => res(false), PIPE_CLOSE_GRACE_MS);
          this.cutDrain = () => res(false);
        }),
      ]);
      clearTimeout(timer);
      this.cutDrain = null;
      if (closed) return undefined;
      const holders = outputs.size > 0 ? processesHolding(outputs) : null;
      if (holders === null || holders.length > 0 || this.killed) {
        for (const st of streams) st.destroy();
        await all;
        return holders?.length === 0 ? undefined : holderWarning(holders);
      }
    }
  }
}
