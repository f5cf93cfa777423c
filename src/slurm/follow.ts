/**
 * Following a Slurm job from its files: the job's output (the batch shell's lines and the `zerowiz-step`
 * marks) and one log per pass, read as they grow (they live on shared storage, so polling, not inotify),
 * and the job's state from Slurm every few seconds. To the pane and stream mode it looks like the local
 * pipeline (the same listener events, src/launch/runner.ts): steps start and end, lines, progress.
 * It keeps the run record current. Stopping is `scancel`; detaching stops following and leaves the job.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { LineSplitter, type LineSink } from '../launch/lines.js';
import { recordStepEnd, recordStepStart, type RunRecord } from '../launch/record.js';
import {
  StepOutput,
  type PipelineListener,
  type PipelineOutcome,
  type RunControl,
  type RunStatus,
  type StepResult,
} from '../launch/runner.js';
import { describeJob, pendingHint, queryJob, type JobInfo } from './job.js';
import { jobEnding, jobOutputPath, recordJobEnd, recordJobState, settleRecord } from './record.js';
import { parseStepMark, type StepMark } from './script.js';
import { slurm, type SlurmContext } from './tools.js';

/** How often the job's state is asked of Slurm (override: ZEROWIZ_SLURM_POLL_MS). */
export const STATE_POLL_MS = 3_000;
/** How often the job's files are read for new output. */
export const TAIL_POLL_MS = 200;
/** Bytes read from a file in one read. */
const READ_CHUNK_BYTES = 1024 * 1024;
/** Bytes read from one file per poll while the job runs (a large backlog, e.g. on attach, takes several). */
const POLL_READ_LIMIT_BYTES = 16 * 1024 * 1024;
/** Prefix of the batch shell's own lines (not a pass's output) in the pane. */
export const JOB_LINE_PREFIX = '[job] ';

/**
 * A job state as the run's status: the pane's headline (`Slurm job 12 · pending (Resources): waiting for
 * ...`) and stream mode's note (`job 12: pending (Resources): waiting for ...`). Before the first state
 * (`j` null) only the pane says anything.
 */
export function jobStatus(jobId: string, j: JobInfo | null, lost: string | null): RunStatus {
  if (!j)
    return {
      text: `Slurm job ${jobId} · ${lost ?? 'submitted, waiting for its state'}`,
      tone: lost ? 'warn' : 'info',
      tag: 'submitted',
      note: '',
    };
  const hint = j.phase === 'pending' ? pendingHint(j.reason) : null;
  const said = `${describeJob(j)}${hint ? `: ${hint}` : ''}`;
  const tone =
    j.phase === 'done'
      ? 'ok'
      : j.phase === 'failed' || j.phase === 'timeout'
        ? 'error'
        : j.phase === 'running'
          ? 'info'
          : 'warn';
  return {
    text: `Slurm job ${jobId} · ${said}`,
    tone,
    tag: j.final ? undefined : j.phase,
    note: `job ${jobId}: ${said}`,
  };
}

/** The state poll interval in effect. */
export function statePollMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.ZEROWIZ_SLURM_POLL_MS);
  return Number.isFinite(n) && n >= 50 ? n : STATE_POLL_MS;
}

/** A file read as it grows. */
class Tail {
  private offset = 0;

  constructor(readonly path: string) {}

  /** The bytes added since the last read (up to READ_CHUNK_BYTES); null when the file is not there yet. */
  read(): Buffer | null {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return null;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.offset) this.offset = 0; // rewritten: read it again
      const n = Math.min(size - this.offset, READ_CHUNK_BYTES);
      if (n <= 0) return Buffer.alloc(0);
      const buf = Buffer.alloc(n);
      const got = readSync(fd, buf, 0, n, this.offset);
      this.offset += got;
      return buf.subarray(0, got);
    } finally {
      closeSync(fd);
    }
  }

  /** Reads until nothing is left, or `limit` bytes were read (the rest comes at the next poll). */
  drain(f: (b: Buffer) => void, limit = Number.POSITIVE_INFINITY): void {
    let got = 0;
    while (got < limit) {
      const b = this.read();
      if (!b || b.length === 0) return;
      got += b.length;
      f(b);
    }
  }
}

/** Options of a follower. */
export interface FollowOptions {
  record: RunRecord;
  ctx: SlurmContext;
  /** The state poll interval (default statePollMs(env)). */
  stateMs?: number;
  tailMs?: number;
}

/**
 * Follows one Slurm job. `run()` resolves when the job has ended (or on detach); `stop()` cancels the
 * job; `detach()` stops following and leaves the job alone.
 */
export class SlurmFollower implements RunControl {
  /** The latest state Slurm reported. */
  job: JobInfo | null = null;
  /** Set when Slurm does not know the job (or cannot be asked): the message. */
  lost: string | null = null;
  /** True once detach() was called: the job goes on without zerowiz. */
  detached = false;
  private listeners: PipelineListener[] = [];
  private outcome: PipelineOutcome | null = null;
  private stopRequested = false;
  private running: Promise<PipelineOutcome> | null = null;
  private wake: (() => void) | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly jobTail: Tail | null;
  private readonly jobSplitter = new LineSplitter();
  private readonly tails: Tail[];
  private readonly splitters: LineSplitter[];
  private readonly sinks: LineSink[];
  private readonly started: boolean[];
  private readonly ended: boolean[];
  private readonly results: (StepResult | null)[];
  private readonly marks: StepMark[] = [];
  private readonly stateMs: number;
  private readonly tailMs: number;
  private lastState = 0;

  constructor(private readonly opts: FollowOptions) {
    const rec = opts.record;
    const out = jobOutputPath(rec);
    this.jobTail = out ? new Tail(out) : null;
    this.tails = rec.json.steps.map((s) => new Tail(join(rec.dir, s.log)));
    this.splitters = rec.json.steps.map(() => new LineSplitter());
    this.sinks = rec.json.steps.map((_, i) => this.sinkFor(i));
    this.started = rec.json.steps.map(() => false);
    this.ended = rec.json.steps.map(() => false);
    this.results = rec.json.steps.map(() => null);
    this.stateMs = opts.stateMs ?? statePollMs(opts.ctx.env);
    this.tailMs = opts.tailMs ?? TAIL_POLL_MS;
  }

  /** The steps' names, in order. */
  get stepNames(): readonly string[] {
    return this.opts.record.json.steps.map((s) => s.name);
  }

  /** The pass logs are Slurm's files on shared storage, written by the job, not by zerowiz: nothing to stop. */
  stopLogging(_why: string): void {}

  /** Adds a listener (the pane model, stream mode); returns the function that removes it. */
  subscribe(l: PipelineListener): () => void {
    this.listeners = [...this.listeners, l];
    return () => {
      this.listeners = this.listeners.filter((x) => x !== l);
    };
  }

  /** The job's id. */
  get jobId(): string {
    return this.opts.record.json.slurm?.jobId ?? '?';
  }

  /** Whether a stop (scancel) was asked for. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** How the run ended, once it has (null after a detach). */
  get result(): PipelineOutcome | null {
    return this.outcome;
  }

  /** Follows until the job ends (or detach); resolves with the outcome. */
  run(): Promise<PipelineOutcome> {
    this.running ??= this.loop();
    return this.running;
  }

  /** Cancels the job (`scancel`: SIGTERM to every task, SIGKILL after the cluster's KillWait). */
  async stop(): Promise<void> {
    if (this.detached || this.outcome) return;
    if (!this.stopRequested) {
      this.stopRequested = true;
      this.emit((l) => l.stopping?.());
      await this.cancel();
    }
    this.wake?.();
    await this.run();
  }

  /** Asks again (a second Ctrl+C): Slurm escalates to SIGKILL itself after KillWait. */
  killNow(): void {
    if (this.detached || this.outcome) return;
    this.stopRequested = true;
    void this.cancel();
  }

  /** Stops following; the job goes on. */
  detach(): void {
    if (this.outcome) return;
    this.detached = true;
    this.wake?.();
  }

  private async cancel(): Promise<void> {
    const id = this.opts.record.json.slurm?.jobId;
    if (!id) return;
    const r = await slurm('scancel', [id], this.opts.ctx);
    if (r.code !== 0) {
      const why = r.error ?? (r.stderr.trim() || `exit ${r.code}`);
      this.jobLine(`zerowiz: scancel ${id} failed: ${why}`);
    }
  }

  private emit(f: (l: PipelineListener) => void): void {
    for (const l of this.listeners) f(l);
  }

  private sinkFor(i: number): LineSink {
    return new StepOutput(i, () => this.listeners).sink(0);
  }

  /** The step the batch shell's own lines go with: the running one, else the last that ran, else the first. */
  private currentStep(): number {
    let last = 0;
    for (let i = 0; i < this.started.length; i++) if (this.started[i]) last = i;
    return last;
  }

  private jobLine(text: string): void {
    const i = this.currentStep();
    this.emit((l) => l.line?.(i, JOB_LINE_PREFIX + text, null));
  }

  private startStep(i: number, at: number): void {
    if (this.started[i]) return;
    this.started[i] = true;
    recordStepStart(this.opts.record, i, at);
    this.emit((l) => l.stepStart?.(i, { pid: null, startedAt: at }));
  }

  private endStep(i: number, r: StepResult): void {
    if (this.ended[i]) return;
    this.startStep(i, r.startedAt);
    this.drainStep(i, true);
    this.ended[i] = true;
    this.results[i] = r;
    recordStepEnd(this.opts.record, i, r);
    this.emit((l) => l.stepEnd?.(i, r));
  }

  private drainStep(i: number, final: boolean): void {
    const sink = this.sinks[i]!;
    this.tails[i]!.drain((b) => this.splitters[i]!.feed(b, sink), final ? undefined : POLL_READ_LIMIT_BYTES);
    if (final) {
      this.splitters[i]!.flush(sink);
      this.emit((l) => l.partial?.(i, ''));
    }
  }

  /** Reads what the files have gained: the job's lines and marks first, then each started pass's log. */
  private readFiles(): void {
    const sink: LineSink = {
      line: (text) => {
        const m = parseStepMark(text);
        if (!m) {
          if (text.trim() !== '') this.jobLine(text);
          return;
        }
        this.marks.push(m);
        if (m.kind === 'start') this.startStep(m.step, m.at);
        else {
          const startedAt = this.marks.find((x) => x.step === m.step && x.kind === 'start')?.at ?? m.at;
          this.endStep(m.step, {
            status: m.code === 0 ? 'done' : 'failed',
            exitCode: m.code,
            signal: null,
            startedAt,
            endedAt: m.at,
          });
        }
      },
      partial: () => {},
    };
    this.jobTail?.drain((b) => this.jobSplitter.feed(b, sink));
    for (let i = 0; i < this.tails.length; i++) if (this.started[i] && !this.ended[i]) this.drainStep(i, false);
  }

  private async poll(): Promise<boolean> {
    const id = this.opts.record.json.slurm?.jobId;
    if (!id) return true;
    const r = await queryJob(id, this.opts.ctx);
    if (!r.found) {
      if (r.gone) {
        this.lost = r.message;
        return true;
      }
      // Slurm did not answer this time (a busy controller): keep following, say so once.
      if (this.lost !== r.message) this.jobLine(`zerowiz: ${r.message}`);
      this.lost = r.message;
      return false;
    }
    this.lost = null;
    const j = r.job;
    const changed =
      !this.job || this.job.state !== j.state || this.job.reason !== j.reason || this.job.nodeList !== j.nodeList;
    this.job = j;
    if (changed) {
      recordJobState(this.opts.record, j);
      const st = jobStatus(this.jobId, j, null);
      this.emit((l) => l.status?.(st));
    }
    return j.final;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((res) => {
      this.wake = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        this.wake = null;
        res();
      };
      this.timer = setTimeout(() => this.wake?.(), ms);
    });
  }

  private async loop(): Promise<PipelineOutcome> {
    const first = jobStatus(this.jobId, null, null);
    this.emit((l) => l.status?.(first));
    let over = false;
    while (!this.detached) {
      this.readFiles();
      const now = Date.now();
      if (now - this.lastState >= this.stateMs || this.stopRequested) {
        this.lastState = now;
        over = await this.poll();
        if (over) break;
      }
      await this.sleep(this.stopRequested ? Math.min(this.tailMs * 2, this.stateMs) : this.tailMs);
    }
    if (this.detached) {
      // The job goes on; the record keeps `running` with the last state seen.
      return { outcome: 'interrupted', exitCode: 0, failedStep: null, results: this.results };
    }
    // The job is over (or Slurm no longer knows it): read everything left, then settle every step.
    this.readFiles();
    for (let i = 0; i < this.tails.length; i++) if (this.started[i] && !this.ended[i]) this.drainStep(i, true);
    const rec = this.opts.record;
    const endedAt = Date.now();
    if (!this.job || this.lost !== null) {
      this.job = null;
      settleRecord(rec, null, true);
      const ending = jobEnding(this.tails.length, this.marks, null, endedAt);
      return this.finish(ending.outcome === 'succeeded' ? 0 : 1, ending.failedStep, ending.outcome);
    }
    const ending = jobEnding(this.tails.length, this.marks, this.job, endedAt);
    ending.steps.forEach((s, i) => {
      // A pass whose exit mark came as the job was cancelled or timed out: stopped, not failed (jobEnding).
      const seen = this.results[i];
      if (seen && s.status === 'stopped') this.results[i] = { ...seen, status: 'stopped' };
      if (this.ended[i] || s.status === 'pending') return;
      this.endStep(i, {
        status: s.status === 'done' ? 'done' : s.status === 'stopped' ? 'stopped' : 'failed',
        exitCode: s.exitCode,
        signal: null,
        startedAt: s.startedAt ?? endedAt,
        endedAt: s.endedAt ?? endedAt,
      });
    });
    recordJobEnd(rec, this.job, ending, endedAt);
    return this.finish(ending.exitCode, ending.failedStep, ending.outcome);
  }

  private finish(
    exitCode: PipelineOutcome['exitCode'],
    failedStep: number | null,
    outcome: PipelineOutcome['outcome'],
  ): PipelineOutcome {
    const o: PipelineOutcome = { outcome, exitCode, failedStep, results: this.results };
    this.outcome = o;
    this.emit((l) => l.end?.(o));
    return o;
  }
}
