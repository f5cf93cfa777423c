/**
 * What a local run leaves for later, besides its record and logs, as its supervisor runs it: the series the
 * report draws (losses, the progress bar, each GPU's memory: src/report/series.ts), the notifications of its
 * events (src/notify/), and at its end the one-file HTML report. A listener of the run like the record keeper,
 * so the supervisor's part is a few calls: nothing here is on a step's path, and nothing waits on a target.
 *
 * The targets come from ZEROWIZ_NOTIFY in the supervisor's environment (the launcher puts --notify, the
 * preset's and the user's own there): never in a file. The steps do not get it.
 */
import type { LossSource, PipelineListener, Progress, RunWatch, StepResult, TelemetryView } from '../observe/index.js';
import { readRunRecord, saveRunJson, type RunRecord } from '../records/index.js';
import {
  NOTIFY_ENV,
  Notifier,
  RunNotices,
  endPayloadOfRecord,
  targetsFromEnv,
  type NotifySummary,
  type RunEnd,
} from '../notify/index.js';
import { SeriesRecorder, gpuWindowMs, writeRunReport } from '../report/index.js';
import type { NotifyTarget } from '../notify/index.js';

/** Options of a run's outputs. */
export interface RunOutputsOptions {
  record: RunRecord;
  env: NodeJS.ProcessEnv;
  /** The GPU telemetry's loop interval (the GPU series' window follows it). */
  telemetryIntervalMs: number;
  /**
   * A Slurm job watched on its batch node (src/slurm/job-watch.ts): its id for the notifications, and the record
   * is left alone (the viewer on the login node keeps it; two writers of run.json would lose each other's fields).
   */
  job?: { id: string };
}

/** The environment a step gets: the notification targets (and their secrets) left out. */
export function stepEnvOf(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, [NOTIFY_ENV]: undefined };
}

/** The targets of the supervisor's environment; one that does not parse is said in the record, not sent to. */
function targetsOf(env: NodeJS.ProcessEnv): { targets: NotifyTarget[]; problem: string | null } {
  try {
    return { targets: targetsFromEnv(env), problem: null };
  } catch (e) {
    return { targets: [], problem: (e as Error).message };
  }
}

/** A run's series, notifications and report. */
export class RunOutputs implements PipelineListener {
  private readonly series: SeriesRecorder;
  private readonly notifier: Notifier;
  private notices: RunNotices | null = null;

  constructor(private readonly opts: RunOutputsOptions) {
    this.series = new SeriesRecorder(opts.record.dir, { gpuWindowMs: gpuWindowMs(opts.telemetryIntervalMs) });
    const { targets, problem } = targetsOf(opts.env);
    this.notifier = new Notifier({ targets, env: stepEnvOf(opts.env), onChange: (s) => this.keep(s) });
    if (targets.length > 0) this.keep(this.notifier.summary());
    if (problem)
      this.keep({
        targets: [],
        failures: [{ at: new Date().toISOString(), target: NOTIFY_ENV, event: 'started', why: problem }],
      });
  }

  /** The record's `notify` block: each target's label and counts, each failure a line. */
  private keep(s: NotifySummary): void {
    if (this.opts.job) return;
    (this.opts.record.json as unknown as { notify: NotifySummary }).notify = s;
    saveRunJson(this.opts.record);
  }

  /** A loss a pass's series took (the watch's onLoss). */
  readonly onLoss = (i: number, value: number, source: LossSource, step: number | null, count: number): void => {
    this.series.loss(i, value, source, step, count);
    this.notices?.loss(i, step, count);
  };

  /** A telemetry update. */
  gpu(t: TelemetryView): void {
    this.series.gpu(t.latestList);
  }

  /** Starts the notices (the run started) once the watch and telemetry exist. */
  start(watch: RunWatch, telemetry: TelemetryView | null): void {
    if (!this.notifier.active) return;
    this.notices = new RunNotices({
      record: this.opts.record,
      notifier: this.notifier,
      watch,
      telemetry,
      ...(this.opts.job ? { jobId: this.opts.job.id } : {}),
    });
    this.notices.started();
  }

  stepStart(i: number, info: { pid: number | null; startedAt: number }): void {
    this.series.stepStart(i);
    this.notices?.stepStart(i, info);
  }

  progress(i: number, p: Progress): void {
    this.series.progress(i, p);
    this.notices?.progress(i, p);
  }

  stepEnd(i: number, r: StepResult): void {
    this.series.stepEnd(i);
    this.notices?.stepEnd(i, r);
  }

  /** The series written and closed; returns why a file of them stopped early, by file. */
  closeSeries(): Record<string, string> {
    this.series.close();
    return this.series.problems();
  }

  /** The series written and closed, the report written; returns the report's path (null when it failed). */
  finishFiles(): string | null {
    const problems = this.closeSeries();
    if (Object.keys(problems).length > 0) {
      (this.opts.record.json as unknown as { seriesStopped: Record<string, string> }).seriesStopped = problems;
      saveRunJson(this.opts.record);
    }
    try {
      return writeRunReport(this.opts.record.dir);
    } catch (e) {
      (this.opts.record.json as unknown as { reportError: string }).reportError = (e as Error).message;
      saveRunJson(this.opts.record);
      return null;
    }
  }

  /** The end's notification, and at most NOTIFY_FLUSH_MS for every notification still on its way. */
  async notifyEnd(o: RunEnd, report: string | null): Promise<void> {
    await this.notices?.finish(o, report);
  }
}

/**
 * What a run leaves when its supervisor died before it (kill -9, the OOM killer) and its watchdog ended the
 * record: the report, and the end's notification from what the record kept. Run by the watchdog's finisher,
 * which has the supervisor's environment (and so the targets).
 */
export async function outputsAfterSupervisor(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  let report: string | null = null;
  try {
    report = writeRunReport(dir);
  } catch {}
  const { targets } = targetsOf(env);
  const r = readRunRecord(dir);
  if (targets.length === 0 || !('record' in r)) return;
  const notifier = new Notifier({ targets, env: stepEnvOf(env) });
  notifier.send(endPayloadOfRecord(r.record, report));
  await notifier.flush();
  (r.record.json as unknown as { notify: NotifySummary }).notify = notifier.summary();
  saveRunJson(r.record);
}
