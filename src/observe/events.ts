/**
 * What every part of a launch agrees on about a run: how a step and the run end, the events a run reports to
 * its subscribers (the pane model, stream mode, the watch, the record keeper), and the control a viewer has
 * over it. The supervisor's pipeline (./runner.ts), a viewer's follower of a local run or of a Slurm job
 * (./follower.ts) and the output parser (./output.ts) speak it.
 */
import type { Progress } from './logparse.js';
import type { StopSignal } from '../proc/index.js';

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
  /** The checks before the step failed: it never started (`error` says which check and why). */
  refused?: boolean;
}

/** How the pipeline ended, with the exit code zerowiz uses for it. */
export interface PipelineOutcome {
  outcome: 'succeeded' | 'failed' | 'interrupted';
  /** 2: a check before a pass failed, so the pass never started (bad input for it, as `zerowiz check`). */
  exitCode: 0 | 1 | 2 | 130;
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
  /**
   * A step started. `csvOffset` (a viewer of a local run): where its loss.csv ended at the start, as the
   * supervisor saw it.
   */
  stepStart?(
    index: number,
    info: {
      pid: number | null;
      startedAt: number;
      csvOffset?: number | null;
      csvEnd?: number | null;
      /** The step's leader's start time in clock ticks since boot (with pid, its identity), when known. */
      pidStart?: number | null;
    },
  ): void;
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
  /** A step ended; `info.csvEnd`: where its loss.csv ended then (a viewer of a record reads no further). */
  stepEnd?(index: number, result: StepResult, info?: { csvEnd?: number | null }): void;
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
