/**
 * What the log pane shows of the run's output, kept up to date from pipeline events: per step its status,
 * times, the last PANE_RING_LINES lines, the open `\r` line and the latest tqdm state. The metrics, alerts
 * and GPU figures are the run's watch and telemetry (./watch.ts, ./telemetry.ts). Plain TypeScript; the
 * view reads it at a capped frame rate (a `version` counter says whether anything changed).
 */
import { PANE_RING_LINES, RingBuffer, forEachLine } from '../observe/index.js';
import type { Progress } from '../observe/index.js';
import type { PipelineListener, PipelineOutcome, RunStatus, StepResult, StepStatus } from '../observe/index.js';

/** One step as the pane sees it. */
export interface StepState {
  name: string;
  status: StepStatus;
  startedAt: number | null;
  endedAt: number | null;
  pid: number | null;
  /** Finished lines (the last PANE_RING_LINES of them). */
  lines: RingBuffer<string>;
  /** The unfinished line (a tqdm bar being redrawn), '' if none. */
  open: string;
  progress: Progress | null;
  result: StepResult | null;
  /** The step's full log file. */
  logPath: string | null;
  /** The command, shell-quoted, as shown before the run. */
  command: string;
}

/** A line under the pane's title: the text, how it reads, and the tag the title shows while running. */
export interface Headline {
  text: string;
  tone: 'info' | 'warn' | 'ok' | 'error';
  /** Replaces the title's `[running]` tag while the run has no outcome (e.g. `pending`). */
  tag?: string;
}

/** The state of one run, for the pane. */
export class RunModel implements PipelineListener {
  readonly steps: StepState[];
  /** Bumped on every change; the view re-renders when it differs from what it drew. */
  version = 0;
  stoppingRequested = false;
  outcome: PipelineOutcome | null = null;
  /** A line under the title about where the run is, e.g. a Slurm job's state; null for none. */
  headline: Headline | null = null;
  private readonly changeListeners = new Set<() => void>();

  constructor(steps: { name: string; logPath: string | null; command: string }[], ringLines = PANE_RING_LINES) {
    this.steps = steps.map((s) => ({
      name: s.name,
      status: 'pending',
      startedAt: null,
      endedAt: null,
      pid: null,
      lines: new RingBuffer<string>(ringLines),
      open: '',
      progress: null,
      result: null,
      logPath: s.logPath,
      command: s.command,
    }));
  }

  /** Called for events the view should show at once (step boundaries, the end), not per line. */
  onMilestone(f: () => void): () => void {
    this.changeListeners.add(f);
    return () => this.changeListeners.delete(f);
  }

  /** Index of the running step, or of the last one that ran. */
  get activeStep(): number {
    let last = 0;
    for (let i = 0; i < this.steps.length; i++) {
      const s = this.steps[i]!;
      if (s.status === 'running') return i;
      if (s.status !== 'pending') last = i;
    }
    return last;
  }

  private milestone(): void {
    this.version++;
    for (const f of this.changeListeners) f();
  }

  /** Sets the headline (shown at once). */
  setHeadline(h: Headline | null): void {
    this.headline = h;
    this.milestone();
  }

  stepStart(i: number, info: { pid: number | null; startedAt: number }): void {
    const s = this.steps[i];
    if (!s) return;
    s.status = 'running';
    s.startedAt = info.startedAt;
    s.pid = info.pid;
    this.milestone();
  }

  line(i: number, text: string): void {
    const s = this.steps[i];
    if (!s) return;
    s.lines.push(text);
    this.version++;
  }

  lines(i: number, text: string): void {
    const s = this.steps[i];
    if (!s) return;
    forEachLine(text, (t) => s.lines.push(t));
    this.version++;
  }

  partial(i: number, text: string): void {
    const s = this.steps[i];
    if (!s) return;
    s.open = text;
    this.version++;
  }

  progress(i: number, p: Progress): void {
    const s = this.steps[i];
    if (!s) return;
    s.progress = p;
    this.version++;
  }

  /** The run's state beyond its steps changed (a Slurm job's): the headline. */
  status(s: RunStatus): void {
    this.setHeadline({ text: s.text, tone: s.tone, tag: s.tag });
  }

  /** Something the view should show at once that is not a pipeline event (an alert fired). */
  notice(): void {
    this.milestone();
  }

  stepEnd(i: number, r: StepResult): void {
    const s = this.steps[i];
    if (!s) return;
    s.status = r.status;
    s.endedAt = r.endedAt;
    s.result = r;
    s.open = '';
    if (r.error) s.lines.push(`zerowiz: could not start the step: ${r.error}`);
    if (r.warning) s.lines.push(`zerowiz: ${r.warning}`);
    this.milestone();
  }

  logError(i: number, why: string): void {
    const s = this.steps[i];
    if (!s) return;
    s.lines.push(`zerowiz: logging stopped: ${why}; the run goes on (the log keeps what came before)`);
    this.milestone();
  }

  stopping(): void {
    this.stoppingRequested = true;
    this.milestone();
  }

  end(o: PipelineOutcome): void {
    this.outcome = o;
    this.milestone();
  }
}
