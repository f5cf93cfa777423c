/**
 * A loss series in bounded memory, however long the run: the last RECENT values as they came, and an
 * overview of the whole step in at most OVERVIEW buckets. When the overview is full, neighbouring buckets
 * are merged pairwise and each new bucket takes twice as many values (so a multi-day run keeps its whole
 * shape at a coarser grain). A bucket holds the mean of its finite values; one without any is NaN (a gap).
 */

/** Raw values kept for the recent view. */
export const SERIES_RECENT_POINTS = 512;
/** Buckets of the whole-step overview (even). */
export const SERIES_OVERVIEW_BUCKETS = 512;

/** A bounded loss series: recent raw values plus a downsampled overview. */
export class LossSeries {
  private readonly recentValues: Float64Array;
  private recentHead = 0;
  private recentCount = 0;
  private readonly sums: Float64Array;
  private readonly finite: Uint32Array;
  private buckets = 0;
  /** Values per closed bucket. */
  private stride = 1;
  private openSum = 0;
  private openFinite = 0;
  private openTotal = 0;
  /** Every value ever pushed. */
  total = 0;

  constructor(
    private readonly recentCapacity = SERIES_RECENT_POINTS,
    private readonly overviewCapacity = SERIES_OVERVIEW_BUCKETS,
  ) {
    if (overviewCapacity < 2 || overviewCapacity % 2 !== 0) throw new Error('overview capacity must be even');
    this.recentValues = new Float64Array(recentCapacity);
    this.sums = new Float64Array(overviewCapacity);
    this.finite = new Uint32Array(overviewCapacity);
  }

  push(v: number): void {
    this.total++;
    this.recentValues[(this.recentHead + this.recentCount) % this.recentCapacity] = v;
    if (this.recentCount < this.recentCapacity) this.recentCount++;
    else this.recentHead = (this.recentHead + 1) % this.recentCapacity;
    this.openTotal++;
    if (Number.isFinite(v)) {
      this.openSum += v;
      this.openFinite++;
    }
    if (this.openTotal < this.stride) return;
    if (this.buckets === this.overviewCapacity) {
      // Coarser grain: the open bucket now fills up to the doubled stride before it closes.
      this.halve();
      return;
    }
    this.sums[this.buckets] = this.openSum;
    this.finite[this.buckets] = this.openFinite;
    this.buckets++;
    this.openSum = 0;
    this.openFinite = 0;
    this.openTotal = 0;
  }

  /** The last `n` values pushed (at most the recent capacity), oldest first. */
  recent(n = this.recentCapacity): number[] {
    const k = Math.min(n, this.recentCount);
    const out = new Array<number>(k);
    const start = this.recentCount - k;
    for (let i = 0; i < k; i++) out[i] = this.recentValues[(this.recentHead + start + i) % this.recentCapacity]!;
    return out;
  }

  /**
   * The whole step, at most `overviewCapacity + 1` points (bucket means; the last may be partial), or at most
   * `points` points (neighbouring buckets merged, each the mean of their finite values): a sparkline `points`
   * cells wide.
   */
  overview(points?: number): number[] {
    const sums: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < this.buckets; i++) {
      sums.push(this.sums[i]!);
      counts.push(this.finite[i]!);
    }
    if (this.openTotal > 0) {
      sums.push(this.openSum);
      counts.push(this.openFinite);
    }
    const n = sums.length;
    const cells = points === undefined || points >= n ? n : Math.max(1, Math.floor(points));
    const out: number[] = [];
    for (let c = 0; c < cells; c++) {
      let sum = 0;
      let count = 0;
      for (let i = Math.floor((c * n) / cells); i < Math.floor(((c + 1) * n) / cells); i++) {
        sum += sums[i]!;
        count += counts[i]!;
      }
      out.push(count > 0 ? sum / count : Number.NaN);
    }
    return out;
  }

  /** How many values each overview point stands for. */
  get valuesPerPoint(): number {
    return this.stride;
  }

  private halve(): void {
    const half = this.overviewCapacity / 2;
    for (let i = 0; i < half; i++) {
      this.sums[i] = this.sums[2 * i]! + this.sums[2 * i + 1]!;
      this.finite[i] = this.finite[2 * i]! + this.finite[2 * i + 1]!;
    }
    this.buckets = half;
    this.stride *= 2;
  }
}
