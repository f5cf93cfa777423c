/**
 * One step's metrics, fed by whichever source speaks: the loss series (for the sparkline), last and min
 * loss, throughput, learning rate, skipped steps and DeepSpeed's own memory figures. Plain data, no I/O.
 *
 * Precedence when two sources give the loss: DiffSynth's loss.csv > the HF Trainer dict > a tqdm postfix >
 * a `loss=` in any other log line. The series follows the best source that has spoken in this step: once a
 * better one speaks, the series, last and min restart from it and worse sources are ignored for the loss
 * (two sources usually differ in grain, e.g. per-step rows and a moving average in a postfix, and one
 * sparkline mixing them would lie). A non-finite loss from ANY source is still reported (alerts use it).
 */
import type { Progress } from '../logparse.js';
import { LossSeries } from './series.js';
import type { DsMemory, DsOverflow, DsStepReport, HfLog } from './sources.js';

/** Where a loss value came from. */
export type LossSource = 'csv' | 'hf' | 'tqdm' | 'log';

/** How a loss source is named to people (the pane, the alerts). */
export const LOSS_SOURCE_NAMES: Readonly<Record<LossSource, string>> = {
  csv: 'loss.csv',
  hf: 'Trainer log',
  tqdm: 'tqdm',
  log: 'log line',
};

/** Higher wins (see the module comment). */
export const LOSS_SOURCE_RANK: Readonly<Record<LossSource, number>> = { log: 0, tqdm: 1, hf: 2, csv: 3 };

/** What happened to a loss value offered to the aggregate. */
export type LossOutcome = 'accepted' | 'switched' | 'ignored';

/** A change worth telling the alert engine about: a NaN or infinite loss, or a skipped step. */
export type MetricSignal =
  | { kind: 'loss'; value: number; source: LossSource }
  | { kind: 'overflow'; streak: number; scale: number | null; fp16: boolean };

/** Options of one step's aggregate. */
export interface StepMetricsOptions {
  /** Called for every non-finite loss (any source) and every overflow. */
  onSignal?: (s: MetricSignal) => void;
  /**
   * Called for every loss the series takes (not one a better source outranks): its value, source, the training
   * step when the source numbers them, and its count in the current source's series (1-based).
   */
  onLoss?: (value: number, source: LossSource, step: number | null, count: number) => void;
}

/** One step's live metrics. */
export class StepMetrics {
  /** The source the loss series follows now, or null before any loss. */
  lossSource: LossSource | null = null;
  lastLoss: number | null = null;
  /** Smallest finite loss of the current source, and at which value count (1-based) it came. */
  minLoss: number | null = null;
  minLossAt: number | null = null;
  /** The training step the smallest loss came at, when its source numbers them (loss.csv's step, tqdm's count). */
  minLossStep: number | null = null;
  /** Losses taken from the current source. */
  lossCount = 0;
  /** NaN or infinite losses seen (any source). */
  nonFiniteLosses = 0;
  series = new LossSeries();
  /** Units per second from tqdm, and tqdm's own text (`6.00it/s`, `12.34s/it`). */
  ratePerS: number | null = null;
  rateText: string | null = null;
  learningRate: number | null = null;
  gradNorm: number | null = null;
  epoch: number | null = null;
  /** The optimizer step: DeepSpeed's report, or the last loss.csv row. */
  optimizerStep: number | null = null;
  /** Skipped steps: DeepSpeed's own count when it reports one, else the overflow messages seen. */
  skippedSteps = 0;
  overflows = 0;
  /** Overflow messages in a row without a good step between them. */
  overflowStreak = 0;
  /** The fp16 loss scale after the last overflow, when DeepSpeed printed one. */
  lossScale: number | null = null;
  /** DeepSpeed `see_memory_usage`: the last figures, and the largest Max_MA of the step. */
  dsMemory: DsMemory | null = null;
  dsPeakAllocatedBytes: number | null = null;
  /** The HF summary's mean training loss, when it came. */
  trainLoss: number | null = null;
  /** Bumped on every change. */
  version = 0;

  private dsSkipped: number | null = null;
  /** Good steps (step - skipped) in DeepSpeed's last report, and whether more came since the last overflow. */
  private dsGood: number | null = null;
  private goodSinceOverflow = false;

  constructor(private readonly opts: StepMetricsOptions = {}) {}

  /** Offers a loss value from `source` (at training step `step`, when the source says); see the precedence rule above. */
  loss(value: number, source: LossSource, step: number | null = null): LossOutcome {
    if (!Number.isFinite(value)) {
      this.nonFiniteLosses++;
      this.opts.onSignal?.({ kind: 'loss', value, source });
    }
    const current = this.lossSource;
    let outcome: LossOutcome = 'accepted';
    if (current !== null && LOSS_SOURCE_RANK[source] < LOSS_SOURCE_RANK[current]) {
      this.version++;
      return 'ignored';
    }
    if (current !== source) {
      if (current !== null) outcome = 'switched';
      this.lossSource = source;
      this.series = new LossSeries();
      this.lossCount = 0;
      this.minLoss = null;
      this.minLossAt = null;
      this.minLossStep = null;
    }
    this.lossCount++;
    this.lastLoss = value;
    this.series.push(value);
    if (Number.isFinite(value) && (this.minLoss === null || value < this.minLoss)) {
      this.minLoss = value;
      this.minLossAt = this.lossCount;
      this.minLossStep = step;
    }
    this.version++;
    this.opts.onLoss?.(value, source, step, this.lossCount);
    return outcome;
  }

  /** A tqdm update: throughput and the postfix's loss (and learning rate). */
  progress(p: Progress, postfixLr: number | null = null): void {
    if (p.ratePerS !== null) {
      this.ratePerS = p.ratePerS;
      this.rateText = p.rateText;
    }
    if (postfixLr !== null && this.lossSource !== 'hf') this.learningRate = postfixLr;
    this.version++;
    if (p.loss !== null) this.loss(p.loss, 'tqdm', p.n);
  }

  /** A Trainer log dict. */
  hfLog(h: HfLog): void {
    if (h.kind === 'summary') {
      this.trainLoss = h.trainLoss;
      this.version++;
      return;
    }
    if (h.kind !== 'train') return;
    if (h.learningRate !== null) this.learningRate = h.learningRate;
    if (h.gradNorm !== null) this.gradNorm = h.gradNorm;
    if (h.epoch !== null) this.epoch = h.epoch;
    this.version++;
    if (h.loss !== null) this.loss(h.loss, 'hf');
  }

  /** A loss.csv row. */
  csvRow(step: number, key: string, value: number): void {
    if (key !== 'loss') return;
    this.optimizerStep = step;
    this.loss(value, 'csv', step);
  }

  /** DeepSpeed's step report. */
  dsStep(r: DsStepReport): void {
    this.optimizerStep = r.step;
    this.dsSkipped = r.skipped;
    const good = r.step - r.skipped;
    if (this.dsGood !== null && good > this.dsGood) this.goodSinceOverflow = true;
    this.dsGood = good;
    this.skippedSteps = Math.max(r.skipped, this.overflows);
    if (r.lr !== null && this.lossSource !== 'hf') this.learningRate = r.lr;
    this.version++;
  }

  /** DeepSpeed's memory figures. */
  dsMemoryLine(m: DsMemory): void {
    this.dsMemory = m;
    this.dsPeakAllocatedBytes = Math.max(this.dsPeakAllocatedBytes ?? 0, m.maxAllocatedBytes);
    this.version++;
  }

  /**
   * A skipped step. It continues the streak unless the run shows it recovered in between: the scale this
   * overflow tried is above the last one (DeepSpeed grows the fp16 scale only after loss_scale_window good
   * steps, 1000 by default), or DeepSpeed's step report counted more good steps (step - skipped) since. So
   * the streak is "skips without recovery": eight of them have divided the fp16 scale by 256. The tqdm
   * counter is no help here: tqdm redraws at most every 0.1 s, so it skips numbers on fast steps.
   */
  overflow(o: DsOverflow): void {
    this.overflows++;
    this.skippedSteps = Math.max(this.dsSkipped ?? 0, this.overflows);
    let good = this.goodSinceOverflow;
    if (o.attemptedScale !== null && this.lossScale !== null && o.attemptedScale > this.lossScale) good = true;
    this.goodSinceOverflow = false;
    this.overflowStreak = good || this.overflowStreak === 0 ? 1 : this.overflowStreak + 1;
    if (o.nextScale !== null) this.lossScale = o.nextScale;
    else if (o.attemptedScale !== null) this.lossScale = o.attemptedScale;
    this.version++;
    this.opts.onSignal?.({ kind: 'overflow', streak: this.overflowStreak, scale: this.lossScale, fp16: o.fp16 });
  }
}
