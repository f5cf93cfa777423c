/**
 * The pipeline runner of a local run's supervisor: runs steps in order, each as the leader of its own process
 * group, writes each step's output to its log file, and stops the whole group on request.
 *
 * The step's stdout and stderr are one pipe read by GNU `tee --output-error=warn -i /dev/null`, whose
 * stdout is the log file: the training writes to a process that does nothing but copy, never to zerowiz.
 * Whatever a reader of the log does (the supervisor parsing it for the record, a viewer that is paused,
 * slow, stopped, killed, or whose terminal hangs), the step's writes are never held up by it, and a full
 * disk only stops the log (tee warns and goes on draining the pipe into /dev/null), never the step. Where
 * `tee` is not GNU's (no --output-error), the supervisor copies the pipe into the log itself (StepLog).
 * The output is parsed from the log file, at the pipeline's own pace (every PARSE_POLL_MS, a bounded amount
 * each time, and the rest of a step's log before its end is told): its subscribers hear the lines as before,
 * and nothing they do is on the step's path.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, createWriteStream, openSync, type WriteStream, writeSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { describeWriteError } from '../text/index.js';
import {
  fdTarget,
  GroupStop,
  gracePeriods,
  groupAlive,
  processesHolding,
  signalGroup,
  trackGroup,
  untrackGroup,
  processStartTime,
  type LadderHooks,
  type ProcessGuard,
  type ProcessInfo,
  type StopSignal,
} from '../proc/index.js';
import { StepLogReader } from '../observe/index.js';
import { RUN_DIR_ENV } from './run-env.js';
import type { PipelineListener, PipelineOutcome, RunControl, StepResult, StepStatus } from '../observe/index.js';

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

/**
 * After a step's leader exited and its group is gone, how long its output may take to reach end of file
 * before zerowiz looks for who else holds it (a process that left the group, such as a daemon).
 */
export const PIPE_CLOSE_GRACE_MS = 1_000;

/** What to say about processes outside a step's group that keep its output open. */
function holderWarning(holders: ProcessInfo[] | null): string {
  const who =
    holders && holders.length > 0
      ? holders.map((h) => `pid ${h.pid} (${h.command})`).join(', ')
      : 'a process zerowiz cannot look into (not found in /proc)';
  return `its output is still held open by ${who}, outside the step's process group; zerowiz stopped reading it`;
}

/** Extra environment for every step: Python output unbuffered, so lines arrive as they are printed. */
export const STEP_ENV: Readonly<Record<string, string>> = { PYTHONUNBUFFERED: '1' };

/** The arguments of the copier between a step and its log (its stdout is the log). */
export const TEE_ARGS = ['--output-error=warn', '-i', '/dev/null'] as const;

let teeWorks: boolean | null = null;

/**
 * Whether GNU tee with --output-error is on PATH (asked once per process, ~2 ms): only it keeps draining
 * the step's output when the log's disk is full (plain tee stops, and the step would get SIGPIPE).
 */
export function gnuTeeAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  if (teeWorks !== null) return teeWorks;
  try {
    const r = spawnSync('tee', [...TEE_ARGS], { input: '', stdio: ['pipe', 'ignore', 'ignore'], env, timeout: 5000 });
    teeWorks = r.status === 0;
  } catch {
    teeWorks = false;
  }
  return teeWorks;
}

/** Bytes the log file may have queued before the step's streams wait for the disk (the fallback copier). */
const LOG_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * The fallback copier hands chunks to the disk together once this much has gathered: a pipe read is ~20 KB
 * under a flood, and on ext4 each write call costs ~10 µs besides its bytes.
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
 * A step's full raw log written by zerowiz itself (the fallback when GNU tee is missing): the original
 * chunks, appended in the order they arrive, written by libuv's thread pool, gathered into one write call
 * per LOG_BATCH_BYTES (or per LOG_FLUSH_INTERVAL_MS when output is slow). A write error (a full disk) stops
 * the logging, never the run: `onError` hears it once.
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
      fd = openLog(path);
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

/** Opens a step log for appending: created private to the user, never through a symbolic link. */
function openLog(path: string): number {
  return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
}

/**
 * Where a step's output goes: the stdio the step is spawned with, and what ends when every writer has
 * closed it and what was written is in the log.
 */
interface OutputChannel {
  readonly stdio: ['ignore', unknown, unknown];
  /** Called once the step is spawned (the fallback copier starts reading). */
  started(child: ChildProcess): void;
  /** Resolves when every writer closed the output and the log holds what they wrote. */
  readonly closed: Promise<void>;
  /** Stops reading now (a process outside the step holds the output). */
  cut(): void;
}

/** The step writes into GNU tee's stdin; tee's stdout is the log (or /dev/null when logging stopped). */
function teeChannel(logPath: string | null, env: NodeJS.ProcessEnv, onError: (why: string) => void): OutputChannel {
  let logFd: number | null = null;
  if (logPath !== null) {
    try {
      logFd = openLog(logPath);
    } catch (err) {
      onError(describeWriteError(err));
    }
  }
  // tee is zerowiz's copier, not the step: it leaves out the variable that marks a step's processes (a stop of
  // an orphaned run signals those, and tee must outlive them to keep their last lines).
  const { [RUN_DIR_ENV]: _step, ...teeEnv } = env;
  const tee = spawn('tee', [...TEE_ARGS], { stdio: ['pipe', logFd ?? 'ignore', 'pipe'], env: teeEnv });
  if (logFd !== null) closeSync(logFd);
  let said = false;
  tee.stderr!.setEncoding('utf8');
  tee.stderr!.on('data', (text: string) => {
    if (said) return;
    said = true;
    // "tee: standard output: No space left on device"
    const why = text
      .split('\n')[0]!
      .replace(/^tee: (standard output: )?/, '')
      .trim();
    onError(/no space left/i.test(why) ? 'ENOSPC (no space left on device)' : why);
  });
  const closed = new Promise<void>((res) => {
    tee.on('close', () => res());
    tee.on('error', (err) => {
      onError(`the log copier could not run: ${err.message}`);
      res();
    });
  });
  return {
    stdio: ['ignore', tee.stdin, tee.stdin],
    started() {
      // The step holds its own copies now; ours would keep tee from ever seeing the end of the output.
      tee.stdin!.destroy();
    },
    closed,
    cut() {
      tee.kill('SIGKILL');
    },
  };
}

/** The fallback: zerowiz reads the step's two pipes and appends every chunk to the log (StepLog). */
function copyChannel(logPath: string | null, onError: (why: string) => void): OutputChannel {
  const log = new StepLog(logPath, { onError });
  let streams: Readable[] = [];
  let res!: () => void;
  const closed = new Promise<void>((r) => (res = r));
  return {
    stdio: ['ignore', 'pipe', 'pipe'],
    started(child) {
      streams = [child.stdout!, child.stderr!];
      let waiting = false;
      const pumps = streams.map(
        (stream) =>
          new Promise<void>((done) => {
            stream.on('data', (chunk: Buffer) => {
              if (!log.write(chunk) && !waiting) {
                waiting = true;
                for (const st of streams) st.pause();
                log.onDrain(() => {
                  waiting = false;
                  for (const st of streams) st.resume();
                });
              }
            });
            stream.on('close', () => done());
          }),
      );
      void Promise.all(pumps)
        .then(() => log.close())
        .then(() => res());
    },
    closed,
    cut() {
      for (const st of streams) st.destroy();
    },
  };
}

/** How often the running step's log is read for the subscribers' lines. */
export const PARSE_POLL_MS = 100;
/** Bytes of log parsed per read at most (the rest comes at the next; nothing waits on it). */
const PARSE_LIMIT_BYTES = 4 * 1024 * 1024;

/** Options of a pipeline. */
export interface PipelineOptions {
  /** Told about every process group (the watchdog), so none outlives the supervisor. */
  guard?: ProcessGuard | null;
  /**
   * Called once a step's output is closed and in its log, before its end is told (the supervisor reads the
   * rest of the log here, so that every line of a step is parsed before its end).
   */
  afterOutput?: (index: number) => void | Promise<void>;
  /** Copy the output with zerowiz's own reader instead of tee (default: when GNU tee is missing). */
  copier?: 'tee' | 'node';
  /** How often the running step's log is parsed for the subscribers (default PARSE_POLL_MS). */
  parsePollMs?: number;
  /**
   * Called before each step is spawned (the checks before a pass): its lines go at the top of the step's
   * log, and a step it refuses never starts (the run fails with exit status 2). `signal` aborts when the run
   * is stopped meanwhile: the checks end their children then.
   */
  beforeStep?: (index: number, signal: AbortSignal) => Promise<StepGate>;
  /** The stop ladder's hooks for a step's group (the supervisor's ledger in events.jsonl: ./ladder.ts). */
  ladder?: (pgid: number) => LadderHooks;
  /**
   * The signal another process stopped a step's group with (`zerowiz stop --now` while the supervisor could
   * not act), or null: such a step ended stopped, not failed, and the run stops.
   */
  stoppedElsewhere?: (pgid: number) => StopSignal | null;
}

/** What the checks before a step decided (./checks/gate.ts). */
export interface StepGate {
  start: boolean;
  /** Lines for the top of the step's log. */
  logLines: string[];
  /** Why the step may not start (the step's error), or null. */
  reason: string | null;
}

/** Runs steps in order; a step starts only if the previous one exited 0. */
export class Pipeline implements RunControl {
  readonly statuses: StepStatus[];
  readonly results: (StepResult | null)[];
  private listeners: PipelineListener[] = [];
  private stopRequested = false;
  private current: { child: ChildProcess; pgid: number; index: number } | null = null;
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
  /** Aborted by a stop: the checks before a pass end their children. */
  private readonly abortChecks = new AbortController();

  constructor(
    readonly steps: StepSpec[],
    private readonly grace = gracePeriods(),
    private readonly opts: PipelineOptions = {},
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
    const refused = failedStep !== null && this.results[failedStep]?.refused === true;
    const outcome: PipelineOutcome = interrupted
      ? { outcome: 'interrupted', exitCode: 130, failedStep, results: this.results }
      : failedStep !== null
        ? { outcome: 'failed', exitCode: refused ? 2 : 1, failedStep, results: this.results }
        : { outcome: 'succeeded', exitCode: 0, failedStep: null, results: this.results };
    this.outcome = outcome;
    this.emit((l) => l.end?.(outcome));
    return outcome;
  }

  /**
   * Stops the run: no further step starts, and the running step's group gets SIGINT, then SIGTERM after
   * the first grace period, then SIGKILL after the second. Resolves when the group is gone. Asking again
   * joins the stop under way (the same promise): only killNow() cuts it short.
   */
  stop(): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    this.stopRequested = true;
    this.emit((l) => l.stopping?.());
    this.abortChecks.abort();
    const cur = this.current;
    if (cur) {
      // A group already being ended (workers left after their leader exited) keeps its ladder.
      const st = this.groupStop ?? new GroupStop(cur.pgid, this.grace, 'SIGINT', this.ladderOf(cur.pgid));
      this.groupStop = st;
      this.stopPromise = st.done.then((sig) => {
        this.stopSignalUsed = sig;
      });
    } else this.stopPromise = Promise.resolve();
    return this.stopPromise;
  }

  /** Skips the grace periods: SIGKILL to the running step's group now (a second Ctrl+C). */
  killNow(): void {
    if (!this.stopRequested) this.emit((l) => l.stopping?.());
    this.stopRequested = true;
    this.killed = true;
    this.abortChecks.abort();
    if (this.groupStop) this.groupStop.killNow();
    else if (this.current) {
      this.ladderOf(this.current.pgid).onSignal?.('SIGKILL', 0);
      signalGroup(this.current.pgid, 'SIGKILL');
      this.stopSignalUsed = 'SIGKILL';
    }
    this.cutDrain?.();
  }

  /** The ladder's hooks for a group (none without a ledger). */
  private ladderOf(pgid: number): LadderHooks {
    return this.opts.ladder?.(pgid) ?? {};
  }

  /**
   * The logs stop for the rest of the run (a write error, e.g. the disk is full); the run goes on. Later
   * steps write into /dev/null; the running one's copier has met the error itself or goes on trying.
   */
  stopLogging(why: string): void {
    if (this.logStopped !== null) return;
    this.logStopped = why;
    const i = this.current?.index ?? Math.max(0, this.statuses.lastIndexOf('done'));
    this.emit((l) => l.logError?.(i, why));
  }

  private emit(f: (l: PipelineListener) => void): void {
    for (const l of this.listeners) f(l);
  }

  private channel(spec: StepSpec, env: NodeJS.ProcessEnv): OutputChannel {
    const logPath = this.logStopped === null ? spec.logPath : null;
    const onError = (why: string) => this.stopLogging(why);
    const useTee = (this.opts.copier ?? (gnuTeeAvailable(env) ? 'tee' : 'node')) === 'tee';
    return useTee ? teeChannel(logPath, env, onError) : copyChannel(logPath, onError);
  }

  /** Runs the checks before step `i` (if any), then the step unless they refuse it. */
  private async runStep(i: number): Promise<StepResult> {
    const gate = this.opts.beforeStep;
    if (!gate) return this.spawnStep(i);
    const spec = this.steps[i]!;
    const startedAt = Date.now();
    this.statuses[i] = 'running';
    let g: StepGate;
    try {
      g = await gate(i, this.abortChecks.signal);
    } catch (e) {
      g = {
        start: true,
        logLines: [`zerowiz: the checks before this pass could not run: ${(e as Error).message}`],
        reason: null,
      };
    }
    if (g.logLines.length > 0 && spec.logPath !== null && this.logStopped === null) {
      try {
        const fd = openLog(spec.logPath);
        try {
          writeSync(fd, `${g.logLines.join('\n')}\n`);
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        this.stopLogging(describeWriteError(err));
      }
    }
    if (g.start && !this.stopRequested) return this.spawnStep(i);
    // Refused (or stopped while checking): the step never starts; its log's lines are read all the same.
    this.emit((l) => l.stepStart?.(i, { pid: null, startedAt }));
    if (spec.logPath !== null) new StepLogReader(i, spec.logPath, () => this.listeners).finish();
    const endedAt = Date.now();
    if (this.stopRequested)
      return { status: 'stopped', exitCode: null, signal: null, startedAt, endedAt, stopSignal: 'none' };
    return {
      status: 'failed',
      exitCode: null,
      signal: null,
      startedAt,
      endedAt,
      error: g.reason ?? 'the checks before the pass refused it',
      refused: true,
    };
  }

  private spawnStep(i: number): Promise<StepResult> {
    const spec = this.steps[i]!;
    const startedAt = Date.now();
    this.statuses[i] = 'running';
    const env = { ...process.env, ...STEP_ENV, ...spec.env };
    return new Promise<StepResult>((resolve) => {
      let output: OutputChannel;
      let child: ChildProcess;
      this.guard?.willSpawn(i);
      try {
        output = this.channel(spec, env);
        child = spawn(spec.file, spec.args, {
          cwd: spec.cwd,
          env,
          stdio: output.stdio as ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
      } catch (err) {
        const error = (err as Error).message;
        resolve({ status: 'failed', exitCode: null, signal: null, startedAt, endedAt: Date.now(), error });
        return;
      }
      output.started(child);
      const pgid = child.pid ?? null;
      // The step's ends of its output, to find who still holds them if they do not close.
      const outputs = new Set<string>();
      // With the pid, the step's identity in the record: a pid reused after the step is never taken for it.
      const pidStart = pgid !== null ? processStartTime(pgid) : null;
      if (pgid !== null) {
        this.guard?.spawned(i, pgid);
        trackGroup(pgid);
        this.current = { child, pgid, index: i };
        for (const fd of [1, 2]) {
          const t = fdTarget(pgid, fd);
          if (t !== null) outputs.add(t);
        }
      }
      this.emit((l) => l.stepStart?.(i, { pid: pgid, startedAt, pidStart }));
      // The log, read as it grows into the subscribers' lines (a step without a log has none).
      const reader = spec.logPath !== null ? new StepLogReader(i, spec.logPath, () => this.listeners) : null;
      const parse = setInterval(() => reader?.poll(PARSE_LIMIT_BYTES), this.opts.parsePollMs ?? PARSE_POLL_MS);
      parse.unref();

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
        const elsewhere = pgid !== null && !this.stopRequested ? (this.opts.stoppedElsewhere?.(pgid) ?? null) : null;
        if (elsewhere !== null) {
          this.stopRequested = true;
          this.stopSignalUsed = elsewhere;
          this.emit((l) => l.stopping?.());
        }
        if (pgid !== null) {
          if (!(this.stopRequested && this.stopPromise) && groupAlive(pgid)) {
            // The leader is gone but workers are left: they would outlive the step, so end them.
            this.groupStop = new GroupStop(pgid, this.grace, 'SIGTERM', this.ladderOf(pgid));
            if (this.killed) this.groupStop.killNow();
            await this.groupStop.done;
          }
          if (this.stopRequested && this.stopPromise) await this.stopPromise;
          this.groupStop = null;
          untrackGroup(pgid);
          this.guard?.gone(pgid);
        }
        const warning = await this.drain(output, outputs);
        clearInterval(parse);
        // Every line of the step, parsed, before its end.
        reader?.finish();
        await this.opts.afterOutput?.(i);
        this.current = null;
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
   * Waits for a step's output to close once its group is gone. Normally that is at once; a process that
   * left the group (a daemon in its own session) can hold it open for its whole life, so after
   * PIPE_CLOSE_GRACE_MS zerowiz looks in /proc for who holds it: if someone does (or it cannot tell), it
   * stops reading and returns what to tell the user. If nobody does, the rest of the output is still on its
   * way (a slow disk holds the copier back), and it waits on.
   */
  private async drain(output: OutputChannel, outputs: Set<string>): Promise<string | undefined> {
    const all = output.closed.then(() => true);
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
        output.cut();
        await all;
        return holders?.length === 0 ? undefined : holderWarning(holders);
      }
    }
  }
}
