/**
 * Keeps a run's record current from its events: step starts and ends, each step's `live` block (metrics,
 * GPU peaks, alerts: at the step's end and every LIVE_SAVE_INTERVAL_MS while it runs, so a run killed after
 * two days keeps its peaks), why the logs stopped, and how the run ended. A local run's supervisor keeps its
 * record this way; so does a viewer following a Slurm job (the job has no zerowiz beside it).
 */
import {
  type RunRecord,
  recordEnd,
  recordStepEnd,
  recordStepStart,
  releaseReserve,
  saveRunJson,
} from '../records/index.js';
import type { PipelineListener, PipelineOutcome, RunControl } from '../observe/index.js';
import type { RunWatch } from '../observe/index.js';
import { envNumber } from '../text/index.js';

/**
 * How often run.json takes the running step's metrics and peaks, so a killed multi-day run keeps them
 * (override: ZEROWIZ_LIVE_SAVE_MS, at least 100).
 */
export const LIVE_SAVE_INTERVAL_MS = 60_000;

/** The live save interval in effect for an environment. */
export function liveSaveMs(env: NodeJS.ProcessEnv): number {
  return envNumber(env, 'ZEROWIZ_LIVE_SAVE_MS', LIVE_SAVE_INTERVAL_MS);
}

/** Options of a record keeper. */
export interface RecordKeeperOptions {
  record: RunRecord;
  watch: RunWatch;
  /** The run: it hears the keeper's "the disk is full" (the logs stop so the record gets the space left). */
  run: Pick<RunControl, 'stopLogging'>;
  /** The steps' own events are recorded elsewhere (a Slurm job's follower records them as it reads them). */
  stepsRecordedElsewhere?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** The record keeper: a listener of the run, plus the periodic save while a step runs. */
export class RecordKeeper implements PipelineListener {
  private readonly savedLive: (string | null)[];
  private periodic: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly opts: RecordKeeperOptions) {
    this.savedLive = opts.record.json.steps.map(() => null);
  }

  /** Saves run.json (never throws; a save that finds the disk full stops the logs first). */
  save(): boolean {
    return saveRunJson(this.opts.record, (why) => this.opts.run.stopLogging(why));
  }

  /** Takes step `i`'s live block into the record; true when it changed. */
  takeLive(i: number): boolean {
    const live = this.opts.watch.stepJson(i);
    const step = this.opts.record.json.steps[i];
    if (!live || !step) return false;
    const text = JSON.stringify(live);
    if (text === this.savedLive[i]) return false;
    this.savedLive[i] = text;
    step.live = live;
    return true;
  }

  /** Takes the live block of every step that ran and saves when any changed. */
  takeAllLive(): void {
    let changed = false;
    this.opts.record.json.steps.forEach((s, i) => {
      if (s.status !== 'pending' && this.takeLive(i)) changed = true;
    });
    if (changed) this.save();
  }

  /** Starts the periodic save of the running step's live block. */
  start(): void {
    if (this.periodic) return;
    this.periodic = setInterval(
      () => {
        let changed = false;
        this.opts.record.json.steps.forEach((s, i) => {
          if (s.status === 'running' && this.takeLive(i)) changed = true;
        });
        if (changed) this.save();
      },
      liveSaveMs(this.opts.env ?? process.env),
    );
    this.periodic.unref();
  }

  /** Stops the periodic save. */
  close(): void {
    if (this.periodic) clearInterval(this.periodic);
    this.periodic = null;
  }

  stepStart(i: number, info: { startedAt: number; pid: number | null; pidStart?: number | null }): void {
    if (this.opts.stepsRecordedElsewhere) return;
    recordStepStart(this.opts.record, i, info.startedAt, info);
    this.save();
  }

  stepEnd(i: number, r: import('../observe/events.js').StepResult): void {
    this.takeLive(i);
    if (!this.opts.stepsRecordedElsewhere) recordStepEnd(this.opts.record, i, r);
    this.save();
  }

  logError(i: number, why: string): void {
    const at = new Date().toISOString();
    const name = this.opts.record.json.steps[i]?.name ?? String(i + 1);
    this.opts.record.json.logError = `${why}, at step ${name} (${at}); the run went on`;
    this.save();
  }

  end(o: PipelineOutcome): void {
    if (this.opts.stepsRecordedElsewhere) return;
    recordEnd(this.opts.record, o);
    // The reserve goes first: on a full disk it is the room the last save needs.
    releaseReserve(this.opts.record.dir);
    this.save();
  }
}
