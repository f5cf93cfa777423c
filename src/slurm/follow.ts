/**
 * Following a Slurm job from its files, the Slurm part of the one follower (src/launch/follower.ts): the
 * job's output (the batch shell's lines and the `zerowiz-step` marks) says where the passes start and end,
 * Slurm says the job's state every few seconds, and the pass logs are read as they grow (they live on shared
 * storage, so polling, not inotify). The job has no supervisor beside it, so this follower keeps the run
 * record current. Stopping is `scancel`; detaching stops following and leaves the job.
 */
import { join } from 'node:path';
import { RunFollower } from '../launch/index.js';
import { LineSplitter, type LineSink } from '../observe/index.js';
import { recordStepEnd, recordStepStart, type RunRecord } from '../records/index.js';
import type { PipelineOutcome, RunStatus, StepResult } from '../observe/index.js';
import { Tail } from '../fs/index.js';
import { cancelJob, describeJob, pendingHint, queryJob, type JobInfo } from './job.js';
import { jobEnding, jobOutputPath, recordJobEnd, recordJobState, settleRecord } from './record.js';
import { parseStepMark, type StepMark } from './script.js';
import { parseJobEnd } from './job-watch.js';
import type { SlurmContext } from './tools.js';
import { envNumber } from '../text/index.js';

/** How often the job's state is asked of Slurm (override: ZEROWIZ_SLURM_POLL_MS). */
export const STATE_POLL_MS = 3_000;
/** How often the job's files are read for new output. */
export const TAIL_POLL_MS = 200;
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
  return envNumber(env, 'ZEROWIZ_SLURM_POLL_MS', STATE_POLL_MS);
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
export class SlurmFollower extends RunFollower {
  /** The latest state Slurm reported. */
  job: JobInfo | null = null;
  /** Set when Slurm does not know the job (or cannot be asked): the message. */
  lost: string | null = null;
  private readonly jobTail: Tail | null;
  private readonly jobSplitter = new LineSplitter();
  private readonly marks: StepMark[] = [];
  private readonly stateMs: number;
  private readonly tailMs: number;
  private lastState = 0;

  constructor(private readonly opts: FollowOptions) {
    super(opts.record.json.steps.map((s) => ({ name: s.name, logPath: join(opts.record.dir, s.log) })));
    const out = jobOutputPath(opts.record);
    this.jobTail = out ? new Tail(out) : null;
    this.stateMs = opts.stateMs ?? statePollMs(opts.ctx.env);
    this.tailMs = opts.tailMs ?? TAIL_POLL_MS;
  }

  /** The job's id. */
  get jobId(): string {
    return this.opts.record.json.slurm?.jobId ?? '?';
  }

  /** Cancels the job (`scancel`: SIGTERM to every task, SIGKILL after the cluster's KillWait). */
  async stop(): Promise<void> {
    if (this.detached || this.outcome) return;
    if (!this.stopRequested) {
      this.stopRequested = true;
      this.emit((l) => l.stopping?.());
      await this.cancel();
    }
    this.wakeUp();
    await this.run();
  }

  /** Asks again (a second Ctrl+C): Slurm escalates to SIGKILL itself after KillWait. */
  killNow(): void {
    if (this.detached || this.outcome) return;
    this.stopRequested = true;
    void this.cancel();
  }

  private async cancel(): Promise<void> {
    const id = this.opts.record.json.slurm?.jobId;
    if (!id) return;
    const r = await cancelJob(id, this.opts.record.json.slurm?.cluster ?? null, this.opts.ctx);
    if (r.code !== 0) {
      const why = r.error ?? (r.stderr.trim() || `exit ${r.code}`);
      this.jobLine(`zerowiz: scancel ${id} failed: ${why}`);
    }
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

  /** A pass started (its mark): recorded, and its log read from now on. */
  private passStarted(i: number, at: number): void {
    if (this.started[i]) return;
    recordStepStart(this.opts.record, i, at);
    this.startStep(i, { at, pid: null });
  }

  /** A pass ended: the rest of its log read, recorded, told. */
  private passEnded(i: number, r: StepResult): void {
    if (this.ended[i]) return;
    this.passStarted(i, r.startedAt);
    recordStepEnd(this.opts.record, i, r);
    this.endStep(i, r);
  }

  /** Reads what the files have gained: the job's lines and marks first, then each started pass's log. */
  private readFiles(): void {
    const sink: LineSink = {
      line: (text) => {
        const m = parseStepMark(text);
        if (!m) {
          // The end mark is for the job's watch on the node (./job-watch.ts), not for people.
          if (text.trim() !== '' && parseJobEnd(text) === null) this.jobLine(text);
          return;
        }
        this.marks.push(m);
        if (m.kind === 'start') this.passStarted(m.step, m.at);
        else {
          const startedAt = this.marks.find((x) => x.step === m.step && x.kind === 'start')?.at ?? m.at;
          this.passEnded(m.step, {
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
    this.readLogs();
  }

  private async poll(): Promise<boolean> {
    const id = this.opts.record.json.slurm?.jobId;
    if (!id) return true;
    const r = await queryJob(id, this.opts.ctx, this.opts.record.json.slurm?.cluster ?? null);
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

  protected async loop(): Promise<PipelineOutcome> {
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
    for (let i = 0; i < this.steps.length; i++) if (this.started[i] && !this.ended[i]) this.readers[i]!.finish();
    const rec = this.opts.record;
    const endedAt = Date.now();
    if (!this.job || this.lost !== null) {
      this.job = null;
      settleRecord(rec, null, true);
      const ending = jobEnding(this.steps.length, this.marks, null, endedAt);
      return this.finish(ending.outcome === 'succeeded' ? 0 : 1, ending.failedStep, ending.outcome);
    }
    const ending = jobEnding(this.steps.length, this.marks, this.job, endedAt);
    ending.steps.forEach((s, i) => {
      // A pass whose exit mark came as the job was cancelled or timed out: stopped, not failed (jobEnding).
      const seen = this.results[i];
      if (seen && s.status === 'stopped') this.results[i] = { ...seen, status: 'stopped' };
      if (this.ended[i] || s.status === 'pending') return;
      this.passEnded(i, {
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
}
