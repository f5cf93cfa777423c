/**
 * The report's four kinds of plot over a run's data (./data.ts): the loss of each pass against its steps (raw
 * and smoothed), seconds per step, each GPU's memory against the estimate's band, and the timeline of passes,
 * alerts and checkpoints. The last three share one time axis (elapsed since the run started), so a spike in
 * memory, a slower step and the alert that followed line up. Each says in its caption what it drew from, and
 * when it drew a summary (more points than pixels) or had nothing to draw.
 */
import type { GpuData, LossSeriesData } from './read-series.js';
import type { AlertView, CheckpointView, PassView, ReportData } from './data.js';
import { esc } from './escape.js';
import { formatGiB } from '../text/index.js';
import {
  areaOf,
  axes,
  boxOf,
  bucketize,
  elapsedLabel,
  ema,
  emptyPlot,
  logTicks,
  niceTicks,
  polyline,
  px,
  rangeOf,
  rangePolygon,
  scale,
  svgOpen,
  timeTicks,
  type Box,
  type Scale,
} from './plot.js';

/**
 * The estimate's band: ±25% around the estimated peak, the error the peak model is held to on published
 * measurements (__tests__/estimate/peak-calibration.test.ts: every DiT row and 3 of 4 LLM rows within ±25%).
 */
export const ESTIMATE_BAND_FRACTION = 0.25;
/** A plot's height, pixels. */
export const PLOT_HEIGHT_PX = 230;
/** A y axis turns logarithmic when its positive values span more than this ratio. */
const LOG_AXIS_RATIO = 50;
/** Non-finite losses marked at most (the caption gives the count). */
const MAX_NONFINITE_MARKS = 200;
const GIB = 2 ** 30;
const MIB_PER_GIB = 1024;

/** A drawing at one width, and what its caption says about its data. */
export interface Drawing {
  svg: string;
  notes: string[];
}

/** A plot the page shows: its title (text), its caption (HTML, every value in it escaped), how to draw it. */
export interface Chart {
  id: string;
  title: string;
  captionHtml: string;
  draw(width: number): Drawing;
}

/** Whether values call for a log axis (all positive, spanning more than LOG_AXIS_RATIO). */
function wantsLog(arrays: ArrayLike<number>[]): boolean {
  let lo = Number.POSITIVE_INFINITY;
  let hi = 0;
  for (const a of arrays)
    for (let i = 0; i < a.length; i++) {
      const v = a[i]!;
      if (!Number.isFinite(v)) continue;
      if (v <= 0) return false;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  return hi / lo > LOG_AXIS_RATIO;
}

function yTicks(sy: Scale, count: number): number[] {
  return sy.log ? logTicks(sy.d0, sy.d1) : niceTicks(sy.d0, sy.d1, count);
}

/** The smoothing span of a loss series of `n` values. */
export function smoothingSpan(n: number): number {
  return Math.max(1, Math.min(2000, Math.round(n / 50)));
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

// ---------------------------------------------------------------------------------------------
// Loss per step

/**
 * Where a loss axis stops when a few spikes would flatten the curve: past the 99.5th percentile by half the
 * span below it, when the largest value is more than four such spans away (null: the whole range is shown).
 */
export function robustTop(values: Float64Array): number | null {
  const all = new Float64Array(values.length);
  let k = 0;
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i]!)) all[k++] = values[i]!;
  const v = all.subarray(0, k).sort();
  if (v.length < 200) return null;
  const lo = v[0]!;
  const q = v[Math.floor(0.995 * (v.length - 1))]!;
  const max = v[v.length - 1]!;
  return q > lo && max - lo > 4 * (q - lo) ? q + 0.5 * (q - lo) : null;
}

/** What a loss plot draws at any width: its axis (log or not, where it stops), the values drawn, the smoothed line. */
interface LossPrep {
  log: boolean;
  top: number | null;
  shown: Float64Array;
  span: number;
  smooth: Float64Array;
}

/** Works out a loss series' drawing once (the page draws it at two widths). */
function lossPrep(l: LossSeriesData): LossPrep {
  const log = wantsLog([l.values]);
  const top = log ? null : robustTop(l.values);
  const shown = top === null ? l.values : l.values.map((v) => (Number.isFinite(v) ? Math.min(v, top) : v));
  const span = smoothingSpan(l.values.length);
  return { log, top, shown, span, smooth: ema(l.values, span) };
}

/** A pass's loss against its steps: raw (or, past two points per pixel, each column's min-max and mean) and smoothed. */
function lossDrawing(pass: PassView, l: LossSeriesData, prep: LossPrep, width: number): Drawing {
  const b = boxOf(width, PLOT_HEIGHT_PX);
  const { w, h } = areaOf(b);
  const n = l.values.length;
  const { log, top, shown, span } = prep;
  const yr = rangeOf([shown], 0.05, log);
  const xr = rangeOf([l.steps], 0);
  if (!yr || !xr) return { svg: emptyPlot(b, 'loss', 'no finite loss'), notes: ['every loss was NaN or infinite'] };
  const [x0, x1] = xr[1] > xr[0] ? xr : [xr[0] - 1, xr[0] + 1];
  const sx = scale(x0, x1, b.left, b.left + w);
  const y1 = top ?? (log ? yr[1] * 1.1 : yr[1]);
  const sy = scale(log ? yr[0] / 1.1 : yr[0], y1, b.top + h, b.top, log);
  const smooth = prep.smooth.map((v) => Math.min(v, y1));
  const notes: string[] = [];
  const parts: string[] = [];
  if (n > w * 2) {
    const bk = bucketize(l.steps, shown, Math.floor(w));
    const last = lastOfBuckets(smooth, bk.x.length);
    parts.push(
      rangePolygon('range', 'range', bk.x, bk.min, bk.max, sx, sy),
      polyline('mean', 'raw', bk.x, bk.mean, sx, sy),
      polyline('smooth', 'smooth', bk.x, last, sx, sy),
    );
    notes.push(
      `sampled: ${count(n)} losses drawn as ${count(bk.x.length)} columns of about ${count(bk.per)} (shaded: each column's min to max; thin line: its mean)`,
    );
  } else {
    parts.push(polyline('raw', 'raw', l.steps, shown, sx, sy), polyline('smooth', 'smooth', l.steps, smooth, sx, sy));
  }
  parts.push(nonFiniteMarks(l, sx, b, notes));
  if (top !== null) parts.push(clippedMarks(l, top, sx, b, notes));
  if (log) notes.push('log scale (the losses span more than 50x)');
  const svg = [
    svgOpen(b, 'loss', sx, sy, `loss of ${pass.name}`, {
      'data-pass': String(pass.index + 1),
      'data-smooth-span': String(span),
    }),
    axes(
      b,
      { ticks: niceTicks(x0, x1, Math.max(3, Math.floor(w / 110))), label: stepLabel, at: sx.at },
      { ticks: yTicks(sy, 5), at: sy.at },
      'loss',
      'step',
    ),
    ...parts,
    '</svg>',
  ].join('');
  return { svg, notes };
}

/** An orange tick at the top for each loss above the axis (they are drawn at its top). */
function clippedMarks(l: LossSeriesData, top: number, sx: Scale, b: Box, notes: string[]): string {
  const marks: string[] = [];
  let above = 0;
  let max = top;
  for (let i = 0; i < l.values.length; i++) {
    const v = l.values[i]!;
    if (!(v > top)) continue;
    above++;
    max = Math.max(max, v);
    if (marks.length < MAX_NONFINITE_MARKS) {
      const x = px(sx.at(l.steps[i]!));
      marks.push(`M${x},${b.top}v6`);
    }
  }
  notes.push(
    `the axis stops at ${Number(top.toPrecision(3))} so the curve shows: ${count(above)} loss(es) above it, up to ${Number(max.toPrecision(4))}, are drawn at its top (orange ticks)`,
  );
  return `<path data-series="clipped" data-count="${marks.length}" class="clipped" d="${marks.join('')}"/>`;
}

function stepLabel(v: number): string {
  return v >= 1e4 ? `${Number((v / 1000).toPrecision(4))}k` : String(Math.round(v));
}

/** The smoothed value at the end of each of `cols` buckets (what the line reaches at that column). */
function lastOfBuckets(smooth: Float64Array, cols: number): Float64Array {
  const n = smooth.length;
  const out = new Float64Array(cols);
  for (let c = 0; c < cols; c++) out[c] = smooth[Math.max(0, Math.floor(((c + 1) * n) / cols) - 1)]!;
  return out;
}

/** A red tick at the top for each NaN or infinite loss. */
function nonFiniteMarks(l: LossSeriesData, sx: Scale, b: Box, notes: string[]): string {
  const marks: string[] = [];
  let bad = 0;
  for (let i = 0; i < l.values.length; i++) {
    if (Number.isFinite(l.values[i]!)) continue;
    bad++;
    if (marks.length < MAX_NONFINITE_MARKS) {
      const x = px(sx.at(l.steps[i]!));
      marks.push(`M${x},${b.top}v10`);
    }
  }
  if (bad === 0) return '';
  notes.push(`${count(bad)} loss value(s) were NaN or infinite (red ticks at the top)`);
  return `<path data-series="nonfinite" data-count="${marks.length}" class="nonfinite" d="${marks.join('')}"/>`;
}

/** The loss chart of one pass. */
function lossChart(d: ReportData, pass: PassView): Chart {
  const l = d.series.losses.get(pass.index)!;
  let prep: LossPrep | null = null;
  const names: Record<string, string> = {
    csv: 'loss.csv',
    hf: 'the Trainer log',
    tqdm: 'the progress bar',
    log: 'log lines',
  };
  const src = names[l.source] ?? l.source;
  return {
    id: `loss-${pass.index + 1}`,
    title: `Loss · pass ${pass.index + 1} ${pass.name}`,
    captionHtml: esc(
      `${count(l.values.length)} losses from ${src}; thin line: each value, thick line: exponential moving average over ${count(smoothingSpan(l.values.length))} values`,
    ),
    draw: (width) => {
      prep ??= lossPrep(l);
      return lossDrawing(pass, l, prep, width);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The time axis

/** The shared time axis of a drawing. */
function timeScale(d: ReportData, b: Box): Scale {
  const { w } = areaOf(b);
  return scale(0, (d.t1 - d.t0) / 1000, b.left, b.left + w);
}

function timeAxisTicks(d: ReportData, b: Box): number[] {
  return timeTicks((d.t1 - d.t0) / 1000, Math.max(3, Math.floor(areaOf(b).w / 90)));
}

/** Seconds since the start, for times in ms. */
function elapsed(d: ReportData, times: Float64Array): Float64Array {
  return times.map((t) => (t - d.t0) / 1000);
}

const PALETTE = 8;

// ---------------------------------------------------------------------------------------------
// Seconds per step

/** One pass's s/step points: from its progress bar, else from when its loss rows came. */
function stepTimes(d: ReportData, i: number): { x: Float64Array; y: Float64Array; from: 'bar' | 'loss' } | null {
  const p = d.series.progress.get(i);
  if (p?.rate.some((r) => r > 0)) {
    const keep = [...p.rate.keys()].filter((k) => p.rate[k]! > 0);
    return {
      x: elapsed(
        d,
        Float64Array.from(keep, (k) => p.times[k]!),
      ),
      y: Float64Array.from(keep, (k) => 1 / p.rate[k]!),
      from: 'bar',
    };
  }
  const l = d.series.losses.get(i);
  if (!l || l.values.length < 3) return null;
  return lossPace(d, l);
}

/** s/step from the loss rows' arrival: over windows of at least 5 s (rows are read every 0.5 s or so). */
function lossPace(d: ReportData, l: LossSeriesData): { x: Float64Array; y: Float64Array; from: 'loss' } | null {
  const xs: number[] = [];
  const ys: number[] = [];
  let a = 0;
  for (let k = 1; k < l.times.length; k++) {
    const dt = (l.times[k]! - l.times[a]!) / 1000;
    const ds = l.steps[k]! - l.steps[a]!;
    if (dt < 5 || ds <= 0) continue;
    xs.push((l.times[k]! - d.t0) / 1000);
    ys.push(dt / ds);
    a = k;
  }
  return xs.length === 0 ? null : { x: Float64Array.from(xs), y: Float64Array.from(ys), from: 'loss' };
}

/** Each pass's s/step points, where it has any. */
type StepTimeSets = { p: PassView; s: NonNullable<ReturnType<typeof stepTimes>> }[];

function stepTimeDrawing(d: ReportData, sets: StepTimeSets, width: number): Drawing {
  const b = boxOf(width, PLOT_HEIGHT_PX);
  const { w, h } = areaOf(b);
  const ys = sets.map((x) => x.s!.y);
  const log = wantsLog(ys);
  const yr = rangeOf(ys, 0.08, log);
  if (!yr) return { svg: emptyPlot(b, 'step-time', 'no step time'), notes: [] };
  const sx = timeScale(d, b);
  const lo = log ? yr[0] / 1.2 : Math.max(0, yr[0]);
  const sy = scale(lo, log ? yr[1] * 1.2 : yr[1], b.top + h, b.top, log);
  const notes: string[] = [];
  const lines = sets.map(({ p, s }) =>
    seriesLine(`pass-${p.index + 1}`, `c${p.index % PALETTE}`, s!.x, s!.y, sx, sy, w, notes, p.name),
  );
  for (const { p, s } of sets)
    if (s!.from === 'loss')
      notes.push(`${p.name}: from when zerowiz read its loss rows (no progress bar), over windows of 5 s or more`);
  const predicted = predictedBand(d, sx, sy, b);
  if (log) notes.push('log scale');
  const svg = [
    svgOpen(b, 'step-time', sx, sy, 'seconds per step'),
    axes(
      b,
      { ticks: timeAxisTicks(d, b), label: elapsedLabel, at: sx.at },
      { ticks: yTicks(sy, 5), at: sy.at },
      's/step',
      'time since start',
    ),
    predicted,
    ...lines,
    '</svg>',
  ].join('');
  return { svg, notes };
}

/** A line, or past two points per pixel its columns' range and mean (said in `notes`). */
function seriesLine(
  name: string,
  cls: string,
  x: Float64Array,
  y: Float64Array,
  sx: Scale,
  sy: Scale,
  w: number,
  notes: string[],
  what: string,
  keep: 'mean' | 'max' = 'mean',
): string {
  if (x.length <= w * 2) return polyline(name, `line ${cls}`, x, y, sx, sy);
  const bk = bucketize(x, y, Math.floor(w));
  notes.push(
    `${what}: ${count(x.length)} points drawn as ${count(bk.x.length)} columns (${keep === 'max' ? 'each its highest' : 'each its mean, shaded: its min to max'})`,
  );
  if (keep === 'max') return polyline(name, `line ${cls}`, bk.x, bk.max, sx, sy);
  return (
    rangePolygon(`${name}-range`, `range ${cls}`, bk.x, bk.min, bk.max, sx, sy) +
    polyline(name, `line ${cls}`, bk.x, bk.mean, sx, sy)
  );
}

/** The launch's predicted step time (when the record has one), as a band across the plot. */
function predictedBand(d: ReportData, sx: Scale, sy: Scale, b: Box): string {
  const p = d.predicted;
  if (!p) return '';
  const clampY = (v: number) => Math.min(b.top + areaOf(b).h, Math.max(b.top, sy.at(Math.max(v, sy.d0))));
  const y0 = clampY(p.high);
  const y1 = clampY(p.low);
  return `<rect data-series="predicted" class="band" x="${px(sx.at(sx.d0))}" y="${px(y0)}" width="${px(sx.at(sx.d1) - sx.at(sx.d0))}" height="${px(Math.max(1, y1 - y0))}"><title>predicted ${p.low}-${p.high} s/step</title></rect>`;
}

function stepTimeChart(d: ReportData): Chart {
  let sets: StepTimeSets | null = null;
  return {
    id: 'step-time',
    title: 'Seconds per step',
    captionHtml: `each pass in its own colour (${d.passes.map((p) => key(p.index % PALETTE, `${p.index + 1} ${p.name}`)).join(', ')}), ${esc(`from its progress bar (1 / rate)${d.predicted ? `; shaded: the launch's prediction, ${d.predicted.low}-${d.predicted.high} s/step` : ''}`)}`,
    draw: (width) => {
      sets ??= d.passes.flatMap((p) => {
        const s = stepTimes(d, p.index);
        return s ? [{ p, s }] : [];
      });
      return stepTimeDrawing(d, sets, width);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// GPU memory

function gpuDrawing(d: ReportData, width: number): Drawing {
  const b = boxOf(width, PLOT_HEIGHT_PX);
  const { w, h } = areaOf(b);
  const gpus = d.series.gpus.filter((g) => g.times.length > 0);
  if (gpus.length === 0) return { svg: emptyPlot(b, 'gpu', 'no GPU telemetry'), notes: [] };
  const est = d.estimate?.bytes ?? null;
  const total = Math.max(0, ...gpus.map((g) => g.totalMiB ?? 0)) / MIB_PER_GIB;
  const used = gpus.map((g) => g.usedMiB.map((v) => v / MIB_PER_GIB));
  const top = Math.max(total, est ? (est / GIB) * (1 + ESTIMATE_BAND_FRACTION) : 0, ...used.map((u) => Math.max(...u)));
  const sx = timeScale(d, b);
  const sy = scale(0, top * 1.05 || 1, b.top + h, b.top);
  const notes: string[] = [];
  const lines = gpus.map((g, k) =>
    seriesLine(
      `gpu-${g.gpu}`,
      `c${g.gpu % PALETTE}`,
      elapsed(d, g.times),
      used[k]!,
      sx,
      sy,
      w,
      notes,
      `GPU ${g.gpu}`,
      'max',
    ),
  );
  const parts = [
    estimateBand(est, sx, sy),
    total > 0 ? hline('total', 'total', total, sx, sy, `GPU memory ${total.toFixed(1)} GiB`) : '',
  ];
  const svg = [
    svgOpen(b, 'gpu', sx, sy, 'GPU memory over time', { 'data-gpus': gpus.map((g) => g.gpu).join(',') }),
    axes(
      b,
      { ticks: timeAxisTicks(d, b), label: elapsedLabel, at: sx.at },
      { ticks: niceTicks(0, sy.d1, 5), at: sy.at },
      'GiB',
      'time since start',
    ),
    ...parts,
    ...lines,
    '</svg>',
  ].join('');
  return { svg, notes };
}

/** The estimate, dashed, inside its ±ESTIMATE_BAND_FRACTION band. */
function estimateBand(est: number | null, sx: Scale, sy: Scale): string {
  if (est === null || !(est > 0)) return '';
  const g = est / GIB;
  const y0 = sy.at(g * (1 + ESTIMATE_BAND_FRACTION));
  const y1 = sy.at(g * (1 - ESTIMATE_BAND_FRACTION));
  const x0 = sx.at(sx.d0);
  const x1 = sx.at(sx.d1);
  return `<rect data-series="estimate-band" class="band" x="${px(x0)}" y="${px(y0)}" width="${px(x1 - x0)}" height="${px(y1 - y0)}"><title>estimate ${g.toFixed(1)} GiB ±${ESTIMATE_BAND_FRACTION * 100}%</title></rect>${hline('estimate', 'estimate', g, sx, sy, `estimated peak ${g.toFixed(1)} GiB`)}`;
}

function hline(name: string, cls: string, v: number, sx: Scale, sy: Scale, title: string): string {
  const y = px(sy.at(v));
  return `<polyline data-series="${name}" class="${cls}" points="${px(sx.at(sx.d0))},${y} ${px(sx.at(sx.d1))},${y}"><title>${esc(title)}</title></polyline>`;
}

function gpuChart(d: ReportData): Chart {
  const est = d.estimate;
  const gpus = d.series.gpus;
  const band = est
    ? `; shaded: the estimate for ZeRO ${est.mode} (${formatGiB(est.bytes)}, dashed) ±${ESTIMATE_BAND_FRACTION * 100}%, the error the estimate is held to`
    : '; no estimate for this setup';
  const total = gpus.some((g) => g.totalMiB !== null) ? "; dotted: the GPU's memory" : '';
  const head = gpus.length > 0 ? `each GPU in its own colour (${legend(gpus)}), ` : '';
  return {
    id: 'gpu',
    title: 'GPU memory',
    captionHtml: `${head}${esc(`the most memory used in each few seconds, as nvidia-smi reported it${band}${total}`)}`,
    draw: (width) => gpuDrawing(d, width),
  };
}

function legend(gpus: readonly GpuData[]): string {
  return gpus.map((g) => key(g.gpu % PALETTE, `GPU ${g.gpu}`)).join(' ');
}

/** A legend entry: a swatch of the series' colour, and its name in the text's colour. */
function key(colour: number, name: string): string {
  return `<span class="key"><span class="sw c${colour}"></span>${esc(name)}</span>`;
}

// ---------------------------------------------------------------------------------------------
// Timeline: passes, alerts, checkpoints

const ROW_PX = 26;

function timelineDrawing(d: ReportData, width: number): Drawing {
  const rows = d.passes.length + 2;
  const b: Box = { ...boxOf(width, 0), top: 8, bottom: 30 };
  b.height = b.top + b.bottom + rows * ROW_PX;
  const sx = timeScale(d, b);
  const { w } = areaOf(b);
  const sy = scale(0, rows, b.top, b.top + rows * ROW_PX);
  const rowY = (r: number) => b.top + r * ROW_PX + ROW_PX / 2;
  const parts: string[] = [
    axes(
      b,
      { ticks: timeAxisTicks(d, b), label: elapsedLabel, at: sx.at },
      { ticks: [], at: sy.at },
      '',
      'time since start',
    ),
  ];
  parts.push(...d.passes.map((p, r) => passBar(d, p, sx, rowY(r), width)));
  parts.push(rowLabel('alerts', rowY(d.passes.length), b), rowLabel('saved', rowY(d.passes.length + 1), b));
  parts.push(...d.alerts.map((a, k) => alertMark(d, a, k + 1, sx, rowY(d.passes.length))));
  parts.push(...d.checkpoints.map((c) => checkpointMark(d, c, sx, rowY(d.passes.length + 1))));
  const notes = d.checkpoints.some((c) => c.at === null)
    ? ['checkpoints without a known time are listed below, not drawn']
    : [];
  return {
    svg: `${svgOpen(b, 'timeline', sx, sy, 'timeline of passes, alerts and checkpoints', { 'data-rows': String(rows) })}${parts.join('')}</svg>`,
    notes: w > 0 ? notes : [],
  };
}

function rowLabel(text: string, y: number, b: Box): string {
  return `<text class="tick" x="${b.left - 6}" y="${px(y)}" text-anchor="end" dy="0.32em">${esc(text)}</text>`;
}

/** Width a label takes, roughly (12 px system font: ~7 px a character). */
function labelWidth(text: string): number {
  return text.length * 7 + 8;
}

function passBar(d: ReportData, p: PassView, sx: Scale, y: number, width: number): string {
  const label = rowLabel(`${p.index + 1}`, y, { ...boxOf(width, 0) });
  if (p.startedAt === null) return label;
  const a = sx.at((p.startedAt - d.t0) / 1000);
  const z = sx.at(((p.endedAt ?? d.t1) - d.t0) / 1000);
  const cls = p.status === 'done' ? 'ok' : p.status === 'running' ? 'run' : p.status === 'pending' ? 'idle' : 'bad';
  const bar = `<rect data-series="pass-${p.index + 1}" class="bar ${cls}" x="${px(a)}" y="${px(y - 8)}" width="${px(Math.max(2, z - a))}" height="16"><title>${esc(`pass ${p.index + 1} ${p.name}: ${p.status}`)}</title></rect>`;
  return `${label}${bar}${barLabel(p.name, a, z, y, sx)}`;
}

/** A pass's name: inside its bar when it fits, else beside it where there is room, else left out (the title has it). */
function barLabel(name: string, a: number, z: number, y: number, sx: Scale): string {
  const need = labelWidth(name);
  const right = sx.at(sx.d1);
  const left = sx.at(sx.d0);
  if (z - a >= need) return `<text class="bar-label" x="${px(a + 4)}" y="${px(y)}" dy="0.32em">${esc(name)}</text>`;
  if (right - z >= need) return `<text class="beside" x="${px(z + 4)}" y="${px(y)}" dy="0.32em">${esc(name)}</text>`;
  if (a - left >= need)
    return `<text class="beside" x="${px(a - 4)}" y="${px(y)}" dy="0.32em" text-anchor="end">${esc(name)}</text>`;
  return '';
}

function alertMark(d: ReportData, a: AlertView, n: number, sx: Scale, y: number): string {
  const x = sx.at((a.at - d.t0) / 1000);
  return `<g class="alert ${a.fatal ? 'fatal' : 'warn'}" data-series="alert" data-at="${a.at}"><circle cx="${px(x)}" cy="${px(y)}" r="9"/><text x="${px(x)}" y="${px(y)}" dy="0.35em" text-anchor="middle">${n}</text><title>${esc(`${n}. ${a.title}`)}</title></g>`;
}

function checkpointMark(d: ReportData, c: CheckpointView, sx: Scale, y: number): string {
  if (c.at === null) return '';
  const x = sx.at((Math.min(Math.max(c.at, d.t0), d.t1) - d.t0) / 1000);
  return `<path data-series="checkpoint" data-at="${c.at}" class="ckpt ${c.verdict === 'ok' ? 'ok' : 'bad'}" d="M${px(x)},${px(y - 7)} l7,7 l-7,7 l-7,-7 z"><title>${esc(`${c.verdict === 'ok' ? 'saved' : 'BAD'}: ${c.path}`)}</title></path>`;
}

function timelineChart(d: ReportData): Chart {
  return {
    id: 'timeline',
    title: 'Timeline',
    captionHtml: esc(
      'each pass from its start to its end (green: done, red: failed or stopped); alerts numbered as in the list below; checkpoints as diamonds (green: verified, red: bad)',
    ),
    draw: (width) => timelineDrawing(d, width),
  };
}

/** Every chart of a report, in the page's order. */
export function chartsOf(d: ReportData): { loss: Chart[]; time: Chart[] } {
  return {
    loss: d.passes.filter((p) => (d.series.losses.get(p.index)?.values.length ?? 0) > 0).map((p) => lossChart(d, p)),
    time: [stepTimeChart(d), gpuChart(d), timelineChart(d)],
  };
}
