/**
 * The events of one run, told to its notifier: the run started, the first training step (its measured time
 * and the ETA), each alert, each pass's end, the run's end. A listener of the run (the supervisor subscribes
 * it to its pipeline, like the record keeper), fed by what the run's watch and telemetry already read: it
 * reads no log but the failing pass's last lines, and it never waits on a target.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type Alert, highestPeak, lastLogLines, type PipelineListener, type Progress } from '../observe/index.js';
import type { PipelineOutcome, RunWatch, StepResult, TelemetryView } from '../observe/index.js';
import { predictedStepTime, type RunRecord } from '../records/index.js';
import { shellWord } from '../text/index.js';
import { type EventFacts, LOG_TAIL_LINES, type NotifyEventKind, type PayloadRun, payloadOf } from './message.js';
import type { Notifier } from './notifier.js';

/** What the events of a run are read from. */
export interface RunNoticesOptions {
  record: RunRecord;
  notifier: Notifier;
  watch: RunWatch;
  telemetry: TelemetryView | null;
  /** A Slurm job's id (the events then say so), else null. */
  jobId?: string | null;
  host?: string;
  now?: () => number;
}

/** The run's end, as the notifier tells it (with each pass's result when known). */
export type RunEnd = Pick<PipelineOutcome, 'outcome' | 'exitCode' | 'failedStep'> & {
  results?: PipelineOutcome['results'];
};

/** One run's notifications. */
export class RunNotices implements PipelineListener {
  private firstStepSent = false;
  /** Per pass: when it started, and its first loss (time, step) when its bar is not read. */
  private readonly starts = new Map<number, number>();
  private readonly firstLoss = new Map<number, { at: number; step: number }>();
  private readonly now: () => number;
  private readonly off: () => void;

  constructor(private readonly opts: RunNoticesOptions) {
    this.now = opts.now ?? Date.now;
    this.off = opts.watch.onAlert((a) => this.alert(a));
  }

  /** The run as every event names it. */
  private run(): PayloadRun {
    const j = this.opts.record.json;
    return {
      id: j.id,
      name: j.name,
      host: this.opts.host ?? hostname(),
      cwd: j.cwd,
      source: j.source,
      kind: this.opts.jobId ? 'slurm' : 'local',
      jobId: this.opts.jobId ?? null,
      startedAt: j.startedAt,
      passes: j.steps.length,
    };
  }

  /** The command that follows the run again, from any shell. */
  attachCommand(): string {
    const j = this.opts.record.json;
    return `cd ${shellWord(j.cwd)} && zerowiz attach ${shellWord(j.id)}`;
  }

  private emit(kind: NotifyEventKind, facts: EventFacts): void {
    if (!this.opts.notifier.active) return;
    const p = payloadOf(kind, this.run(), { ...this.common(), ...facts }, this.attachCommand(), this.now());
    this.opts.notifier.send(p);
  }

  /** The loss and GPU peak as they stand (every event carries them). */
  private common(): EventFacts {
    return { loss: this.lossNow(), gpu: this.peakNow() };
  }

  /** The last and best loss of the latest pass that has one. */
  private lossNow(): EventFacts['loss'] {
    const steps = this.opts.watch.steps;
    for (let i = steps.length - 1; i >= 0; i--) {
      const m = steps[i]!.metrics;
      if (m.lastLoss === null) continue;
      const last = Number.isFinite(m.lastLoss) ? m.lastLoss : String(m.lastLoss).toLowerCase();
      return { last, min: m.minLoss, source: m.lossSource };
    }
    return null;
  }

  /** The highest GPU peak of the passes that train with the setup (others: any pass), with the estimate. */
  private peakNow(): EventFacts['gpu'] {
    const t = this.opts.telemetry;
    if (!t) return null;
    const steps = this.opts.record.json.steps;
    const training = steps.map((s, i) => (s.usesConfig ? i : -1)).filter((i) => i >= 0);
    const passes = training.length > 0 ? training : steps.map((_, i) => i);
    const top = highestPeak(passes.flatMap((i) => t.peaksOf(i)));
    if (!top) return null;
    const est = this.opts.record.json.estimate?.gpuBytesPerGpu ?? null;
    return { peakBytes: top.usedBytes, gpu: top.index, totalBytes: top.totalBytes, estimateBytes: est };
  }

  private pass(i: number, r?: StepResult): NonNullable<EventFacts['pass']> {
    const s = this.opts.record.json.steps[i];
    return {
      number: i + 1,
      name: s?.name ?? String(i + 1),
      status: r?.status ?? s?.status ?? null,
      exitCode: r ? r.exitCode : (s?.exitCode ?? null),
      seconds: r ? (r.endedAt - r.startedAt) / 1000 : null,
    };
  }

  /** The run started (its record exists, the first pass is about to). */
  started(): void {
    this.emit('started', {});
  }

  stepStart(i: number, info: { startedAt: number }): void {
    this.starts.set(i, info.startedAt);
  }

  /** Whether pass `i` is the one whose steps count as training (the first that uses the setup's config). */
  private trains(i: number): boolean {
    const steps = this.opts.record.json.steps;
    const first = steps.findIndex((s) => s.usesConfig);
    return first === -1 ? true : i === first || (i > first && steps[i]!.usesConfig);
  }

  /** A tqdm update: the first one with a rate in a training pass is the first step's event. */
  progress(i: number, p: Progress): void {
    if (this.firstStepSent || !this.trains(i) || p.n < 1 || p.ratePerS === null || !(p.ratePerS > 0)) return;
    const seconds = 1 / p.ratePerS;
    const eta = p.total !== null && p.total >= p.n ? (p.total - p.n) * seconds : null;
    this.firstStep(i, { seconds, step: p.n, total: p.total, etaSeconds: eta });
  }

  /** A loss the pass's series took: without a bar, the second one gives the step time. */
  loss(i: number, step: number | null, count: number): void {
    if (this.firstStepSent || !this.trains(i)) return;
    const at = this.now();
    const n = step ?? count;
    const first = this.firstLoss.get(i);
    if (!first) {
      this.firstLoss.set(i, { at, step: n });
      return;
    }
    if (n <= first.step || at <= first.at) return;
    this.firstStep(i, { seconds: (at - first.at) / 1000 / (n - first.step), step: n, total: null, etaSeconds: null });
  }

  private firstStep(i: number, st: Omit<NonNullable<EventFacts['stepTime']>, 'predicted'>): void {
    this.firstStepSent = true;
    const pred = predictedStepTime(this.opts.record.json);
    this.emit('first-step', {
      pass: this.pass(i),
      stepTime: { ...st, predicted: pred ? { low: pred.low, high: pred.high } : null },
    });
  }

  /** An alert (each pass's alert id once). */
  alert(a: Alert): void {
    this.emit('alert', {
      pass: this.pass(a.step),
      alert: { id: a.id, title: a.title, fix: a.fix, fatal: a.fatal, line: a.line },
    });
  }

  stepEnd(i: number, r: StepResult): void {
    const failed = r.status === 'failed';
    this.emit('pass-end', { pass: this.pass(i, r), logTail: failed ? this.tailOf(i) : [] });
  }

  /** The failing pass's last lines. */
  private tailOf(i: number): string[] {
    const s = this.opts.record.json.steps[i];
    return s ? lastLogLines(join(this.opts.record.dir, s.log), LOG_TAIL_LINES) : [];
  }

  /** The run ended: its event goes out, then the notifications get at most `flushMs` to finish. */
  async finish(o: RunEnd, report: string | null, flushMs?: number): Promise<void> {
    this.off();
    const j = this.opts.record.json;
    const endedAt = j.endedAt ? Date.parse(j.endedAt) : this.now();
    const wall = (endedAt - Date.parse(j.startedAt)) / 1000;
    const failed = o.failedStep;
    this.emit('end', {
      pass: failed !== null ? this.pass(failed, o.results?.[failed] ?? undefined) : null,
      outcome: {
        ended: o.outcome,
        exitCode: o.exitCode,
        wallSeconds: Number.isFinite(wall) ? wall : null,
        reason: this.reasonOf(o),
      },
      logTail: o.outcome === 'failed' && failed !== null ? this.tailOf(failed) : [],
      report,
    });
    await this.opts.notifier.flush(flushMs);
  }

  /** Why the run ended, in a line: the failing pass's alert or error, or the stop. */
  private reasonOf(o: RunEnd): string | null {
    if (o.outcome === 'succeeded') return null;
    const i = o.failedStep;
    if (o.outcome === 'interrupted') return i !== null ? `stopped during ${this.pass(i).name}` : 'stopped';
    if (i === null) return null;
    const alert = this.opts.watch.alerts.reason(i);
    if (alert) return `${alert.title} (fix: ${alert.fix})`;
    const s = this.opts.record.json.steps[i];
    const r = o.results?.[i] ?? null;
    const name = s?.name ?? `pass ${i + 1}`;
    const error = r?.error ?? s?.error;
    if (error) return error;
    const signal = r ? r.signal : (s?.signal ?? null);
    return signal ? `${name} ended by ${signal}` : `${name} exited ${r ? r.exitCode : s?.exitCode}`;
  }
}
