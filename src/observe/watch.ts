/**
 * What a run really emits, per step: metrics from every source (loss.csv, HF Trainer dicts, tqdm postfixes,
 * DeepSpeed's own lines), alerts with their fix, and the GPU memory peaks of the step. It subscribes to the
 * pipeline like the pane model does (it implements PipelineListener), so wiring it is one
 * `pipeline.subscribe(watch)`; the pane, stream mode and the record read from it.
 *
 * Per line the cost is one character test, one indexOf (`oss`, the loss) and one combined regex of literal
 * needles (DeepSpeed's lines and every alert); only lines holding a needle are parsed further.
 */
import { ALERT_NEEDLES, type Alert, type AlertContext, AlertEngine, needleRegExp } from './alerts.js';
import type { Setup } from '../config/index.js';
import { CSV_LOG_FLAG, planCsvLog } from '../config/index.js';
import { type LiveStepJson, liveStepJson } from './live.js';
import { type Progress, mayBeProgress, mayHoldNonFiniteLoss, parseLoss, parseProgress } from './logparse.js';
import { LossCsvFollower } from './metrics/csv-follower.js';
import { parseDsMemory, parseDsOverflow, parseDsStep, parseHfLog, parsePostfixLr } from './metrics/sources.js';
import { LOSS_SOURCE_NAMES, LOSS_SOURCE_RANK, type LossSource, StepMetrics } from './metrics/step-metrics.js';
import type { PreparedCommand } from '../config/index.js';
import type { PipelineListener, StepResult } from './events.js';
import type { TelemetryView } from './telemetry.js';

/** Needles of DeepSpeed's metric lines (step report, see_memory_usage, overflow skips). */
const METRIC_NEEDLES = ['[Rank ', 'Max_MA', 'OVERFLOW!', 'verflow! Skipping step', 'Overflow detected'];

/** One regex over every needle: metric lines and alert lines. */
const LINE_TRIGGER_RE = needleRegExp([...METRIC_NEEDLES, ...ALERT_NEEDLES]);

/** What the watch needs to know about a step. */
export interface WatchStepConfig {
  name: string;
  /** DiffSynth's loss.csv to follow while the step runs (planCsvLog's csvPath), or null. */
  csvPath?: string | null;
  /** What to say while the step has no loss (a DiffSynth step without --enable_csv_log), or null. */
  noLossHint?: string | null;
}

/** Options of a run's watch. */
export interface RunWatchOptions {
  steps: readonly WatchStepConfig[];
  /** What zerowiz knows, for the fixes (a live object: set freePort when a step starts). */
  alertContext?: AlertContext;
  /** The run's GPU telemetry (started by the session), or null. */
  telemetry?: TelemetryView | null;
  /** Why there is no telemetry at all (the GPUs are elsewhere), for the record. */
  noTelemetry?: string;
  /** Overflow skips in a row that raise an alert (default OVERFLOW_STREAK_ALERT). */
  overflowStreak?: number;
  csvPollMs?: number;
  /** Every alert as it fires (the pane highlights it, stream mode prints it). */
  onAlert?: (a: Alert) => void;
  /** Every loss a step's series takes (StepMetricsOptions.onLoss), with the step's index: the run's series file. */
  onLoss?: (i: number, value: number, source: LossSource, step: number | null, count: number) => void;
  /**
   * 'compute' (default): the watch raises the alerts from what it reads. 'given': another reader raises them
   * (a local run's supervisor, whose alerts are the record's) and hands them in with addAlert; a viewer shows
   * those, so what it shows is what is recorded.
   */
  alerts?: 'compute' | 'given';
  now?: () => number;
}

/** One step's watch state. */
export interface WatchedStep {
  name: string;
  metrics: StepMetrics;
  csvPath: string | null;
  csv: LossCsvFollower | null;
  noLossHint: string | null;
}

/** Watches one run. */
export class RunWatch implements PipelineListener {
  readonly steps: WatchedStep[];
  readonly alerts: AlertEngine;
  private readonly telemetry: TelemetryView | null;
  private readonly pending: Promise<void>[] = [];
  private readonly alertListeners = new Set<(a: Alert) => void>();
  /** The line being handled (for the alert raised by a metric of that line). */
  private currentLine = '';

  constructor(private readonly opts: RunWatchOptions) {
    this.telemetry = opts.telemetry ?? null;
    this.alerts = new AlertEngine({
      ctx: opts.alertContext,
      given: opts.alerts === 'given',
      onAlert: (a) => {
        opts.onAlert?.(a);
        for (const f of this.alertListeners) f(a);
      },
      now: opts.now,
      overflowStreak: opts.overflowStreak,
    });
    this.steps = opts.steps.map((s, i) => ({
      name: s.name,
      csvPath: s.csvPath ?? null,
      csv: null,
      noLossHint: s.noLossHint ?? null,
      metrics: new StepMetrics({
        onSignal: (sig) => {
          if (sig.kind === 'loss')
            this.alerts.loss(i, sig.value, LOSS_SOURCE_NAMES[sig.source], this.currentLine || undefined);
          else this.alerts.overflow(i, sig, this.currentLine);
        },
        onLoss: opts.onLoss ? (v, src, step, count) => opts.onLoss?.(i, v, src, step, count) : undefined,
      }),
    }));
  }

  /** Calls `f` with every alert from now on (stream mode prints them); returns the unsubscribe. */
  onAlert(f: (a: Alert) => void): () => void {
    this.alertListeners.add(f);
    return () => this.alertListeners.delete(f);
  }

  /** Sum of the steps' versions and the alert count: changes whenever anything shown changed. */
  get version(): number {
    let v = this.alerts.alerts.length;
    for (const s of this.steps) v += s.metrics.version;
    return v;
  }

  /** An alert raised by another reader (a local run's supervisor): kept and told as if raised here. */
  addAlert(a: Alert): void {
    this.alerts.add(a);
  }

  /** Where step `i`'s loss.csv ended when the step started (rows after it are the step's), or null. */
  csvOffset(i: number): number | null {
    return this.steps[i]?.csv?.startOffset ?? null;
  }

  /**
   * A step started. `csvOffset`: where its loss.csv ended at the start, as the supervisor saw it (a viewer
   * reads from there; absent: where the file ends now); `csvEnd`, for a step a viewer knows has ended: where
   * the file ended then (it reads no further).
   */
  stepStart(i: number, info?: { csvOffset?: number | null; csvEnd?: number | null }): void {
    const s = this.steps[i];
    if (!s) return;
    this.telemetry?.beginStep?.(i);
    if (s.csvPath) {
      const from = info?.csvOffset;
      const until = info?.csvEnd;
      s.csv = new LossCsvFollower(s.csvPath, {
        from: typeof from === 'number' ? from : 'end',
        ...(typeof until === 'number' ? { until } : {}),
        pollMs: this.opts.csvPollMs,
        onRow: (row) => {
          this.currentLine = `loss.csv: ${row.step},${row.key},${row.value}`;
          s.metrics.csvRow(row.step, row.key, row.value);
          this.currentLine = '';
        },
      });
      this.pending.push(s.csv.start());
    }
  }

  /** A finished line, with the runner's tqdm parse of it (parsed here only when not given). */
  line(i: number, text: string, progress?: Progress | null): void {
    this.lineParsed(i, text, progress === undefined ? (mayBeProgress(text) ? parseProgress(text) : null) : progress);
  }

  /**
   * A finished line whose tqdm parse is known (`p`, or null when it is not a bar): for a runner that has
   * parsed it already, so the work is not done twice.
   */
  lineParsed(i: number, text: string, p: Progress | null): void {
    const s = this.steps[i];
    if (!s) return;
    this.currentLine = text;
    const m = s.metrics;
    if (p === null) {
      if (text.charCodeAt(0) === 0x7b) {
        const h = parseHfLog(text);
        if (h) m.hfLog(h);
      } else {
        const v = parseLoss(text);
        if (v !== null) m.loss(v, 'log');
      }
    }
    if (LINE_TRIGGER_RE.test(text)) {
      const r = parseDsStep(text);
      if (r) m.dsStep(r);
      const mem = parseDsMemory(text);
      if (mem) m.dsMemoryLine(mem);
      const o = parseDsOverflow(text);
      if (o) m.overflow(o);
      this.alerts.line(i, text);
    }
    this.currentLine = '';
  }

  /**
   * Whether a run of lines must come line by line: it holds a needle (DeepSpeed's lines, the alerts), a Trainer
   * dict, or a loss this step takes: `loss=` while no better source has spoken, else only a NaN or infinite
   * one. A flood of other lines costs this one scan per run instead of the per-line parse.
   */
  needsLines(i: number, text: string): boolean {
    const s = this.steps[i];
    if (!s) return false;
    if (LINE_TRIGGER_RE.test(text)) return true;
    if (text.charCodeAt(0) === 0x7b || text.includes('\n{')) return true;
    const source = s.metrics.lossSource;
    if (source === null || LOSS_SOURCE_RANK[source] <= LOSS_SOURCE_RANK.log) return text.includes('oss');
    return mayHoldNonFiniteLoss(text);
  }

  /** A run of lines that needsLines let through: nothing in it for the watch. */
  lines(_i: number, _text: string): void {}

  /** A tqdm update (the runner emits one per distinct state). */
  progress(i: number, p: Progress): void {
    const s = this.steps[i];
    if (!s) return;
    // The bar's last state: the loss shown beside it is the step's last row of loss.csv, read now.
    if (p.total !== null && p.n >= p.total) s.csv?.pollSync();
    this.currentLine = p.text;
    s.metrics.progress(p, p.postfix === '' ? null : parsePostfixLr(p.postfix));
    this.currentLine = '';
  }

  /**
   * A step ended. `csvEnd`: where its loss.csv ended then, as the supervisor saw it (a viewer reads up to there
   * and no further: a later run of the same preset appends its rows to the same file).
   */
  stepEnd(i: number, r: StepResult, info?: { csvEnd?: number | null }): void {
    const s = this.steps[i];
    if (!s) return;
    const end = info?.csvEnd;
    // The rows written just before the end, before anyone reads the step's last loss.
    if (typeof end !== 'number') s.csv?.pollSync();
    this.telemetry?.endStep?.(i);
    this.alerts.stepEnded(i, r);
    if (s.csv) this.pending.push(typeof end === 'number' ? s.csv.stopAt(end) : s.csv.stop());
  }

  /** Where step `i`'s loss.csv was read up to (its end, once the step ended), or null. */
  csvEnd(i: number): number | null {
    return this.steps[i]?.csv?.position ?? null;
  }

  stopping(): void {
    this.alerts.stopping();
  }

  /** Resolves once every loss.csv follower has done its last read (call before writing the record). */
  async settle(): Promise<void> {
    while (this.pending.length > 0) await Promise.all(this.pending.splice(0));
  }

  /** Stops every follower still running (zerowiz is leaving). */
  async close(): Promise<void> {
    for (const s of this.steps) if (s.csv) this.pending.push(s.csv.stop());
    await this.settle();
  }

  /** The run.json `live` block of step `i`. */
  stepJson(i: number): LiveStepJson | null {
    const s = this.steps[i];
    if (!s) return null;
    return liveStepJson({
      metrics: s.metrics,
      peaks: this.telemetry?.peaksOf(i) ?? [],
      telemetry: this.telemetry?.state ?? null,
      telemetryReason: this.telemetry?.reason ?? this.opts.noTelemetry ?? null,
      alerts: this.alerts.forStep(i),
    });
  }
}

/** The loss.csv a step's watch follows, and what to say when a DiffSynth step logs no loss at all. */
export function watchStepOf(
  setup: Setup,
  commands: readonly PreparedCommand[],
  cwd: string,
  i: number,
): WatchStepConfig {
  const c = commands[i]!;
  const plan = planCsvLog(setup.steps[i]?.args ?? [], cwd);
  return {
    name: c.step,
    csvPath: plan.kind === 'enabled' ? plan.csvPath : null,
    noLossHint:
      plan.kind === 'offer'
        ? `DiffSynth prints no loss: ${CSV_LOG_FLAG} (zerowiz launch --csv-log) writes it to loss.csv`
        : plan.kind === 'unsupported'
          ? plan.reason
          : plan.kind === 'not-training'
            ? `none: ${plan.task} trains nothing`
            : null,
  };
}
