/**
 * The report's plots, drawn as inline SVG (no script, no font, no image to fetch): axes with readable ticks,
 * lines, a shaded min-max range where a series has more points than the plot has pixels, bands and markers.
 * Each plot is drawn at a given pixel width (the page carries a wide and a narrow drawing of each, so a phone
 * gets text of the same size as a desktop), and says how to read its data back: the `data-*` attributes of
 * its `<svg>` give the axes' domains and the plot box, every drawn series is a `<polyline>` or `<polygon>`
 * named by `data-series`. Pure: strings in, a string out.
 */
import { esc } from './escape.js';

/** The plot box inside an SVG of a given width. */
export interface Box {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** A box for a drawing `width` pixels wide and `height` high, with room for the axes' labels. */
export function boxOf(width: number, height: number): Box {
  return { width, height, left: width < 500 ? 46 : 58, right: 14, top: 14, bottom: 30 };
}

/** The plot area's size. */
function inner(b: Box): { w: number; h: number } {
  return { w: b.width - b.left - b.right, h: b.height - b.top - b.bottom };
}

/** A mapping from data to pixels. */
export interface Scale {
  d0: number;
  d1: number;
  log: boolean;
  at(v: number): number;
}

/** A linear (or log10) scale from [d0, d1] onto [r0, r1]. */
export function scale(d0: number, d1: number, r0: number, r1: number, log = false): Scale {
  const f = log ? Math.log10 : (v: number) => v;
  const a = f(d0);
  const span = f(d1) - a || 1;
  return { d0, d1, log, at: (v) => r0 + ((f(v) - a) / span) * (r1 - r0) };
}

/** A pixel coordinate as written (one decimal). */
export function px(v: number): string {
  return (Math.round(v * 10) / 10).toString();
}

/** Round tick values across [min, max], about `count` of them. */
export function niceTicks(min: number, max: number, count: number): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** Powers of ten across [min, max] (a log axis), with 2 and 5 between when there are few. */
export function logTicks(min: number, max: number): number[] {
  const out: number[] = [];
  const lo = Math.floor(Math.log10(min));
  const hi = Math.ceil(Math.log10(max));
  const mults = hi - lo <= 2 ? [1, 2, 5] : [1];
  for (let e = lo; e <= hi; e++) for (const m of mults) out.push(Number((m * 10 ** e).toPrecision(6)));
  return out.filter((v) => v >= min * 0.999 && v <= max * 1.001);
}

/** A tick label: short, and never in exponent form for everyday numbers. */
export function tickLabel(v: number): string {
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e6 || a < 1e-3) return v.toExponential(1).replace('e+', 'e');
  if (a >= 1e4) return `${Number((v / 1000).toPrecision(4))}k`;
  return Number(v.toPrecision(4)).toString();
}

const TIME_STEPS_S = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
];

/** Ticks of elapsed time (seconds since the start) across [0, span], about `count` of them. */
export function timeTicks(spanS: number, count: number): number[] {
  const step = TIME_STEPS_S.find((s) => spanS / s <= count) ?? 604800;
  const out: number[] = [];
  for (let v = 0; v <= spanS + 1e-9; v += step) out.push(v);
  return out;
}

/** Elapsed seconds as a tick says them: `0`, `45s`, `12m`, `3h`, `1d 6h`. */
export function elapsedLabel(s: number): string {
  if (s === 0) return '0';
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return s % 3600 === 0 ? `${s / 3600}h` : `${Math.floor(s / 3600)}h${Math.round((s % 3600) / 60)}m`;
  const d = Math.floor(s / 86400);
  const h = Math.round((s % 86400) / 3600);
  return h === 0 ? `${d}d` : `${d}d ${h}h`;
}

/** The axes, grid and labels of a plot. */
export function axes(
  b: Box,
  x: { ticks: number[]; label: (v: number) => string; at: (v: number) => number },
  y: { ticks: number[]; at: (v: number) => number },
  yTitle: string,
  xTitle: string,
): string {
  const { w, h } = inner(b);
  const parts: string[] = [`<rect class="area" x="${b.left}" y="${b.top}" width="${px(w)}" height="${px(h)}"/>`];
  for (const t of y.ticks) {
    const yy = px(y.at(t));
    parts.push(
      `<line class="grid" x1="${b.left}" x2="${px(b.left + w)}" y1="${yy}" y2="${yy}"/>`,
      `<text class="tick" x="${b.left - 6}" y="${yy}" text-anchor="end" dy="0.32em">${esc(tickLabel(t))}</text>`,
    );
  }
  for (const t of x.ticks) {
    const xx = px(x.at(t));
    parts.push(
      `<line class="grid" x1="${xx}" x2="${xx}" y1="${b.top}" y2="${px(b.top + h)}"/>`,
      `<text class="tick" x="${xx}" y="${px(b.top + h + 16)}" text-anchor="middle">${esc(x.label(t))}</text>`,
    );
  }
  parts.push(
    `<text class="axis-title" x="${b.left + 2}" y="${b.top - 3}">${esc(yTitle)}</text>`,
    `<text class="axis-title" x="${px(b.left + w)}" y="${px(b.top + h + 28)}" text-anchor="end">${esc(xTitle)}</text>`,
  );
  return parts.join('');
}

/** A series of points as a polyline (points outside the domain or not finite are skipped). */
export function polyline(
  name: string,
  cls: string,
  xs: ArrayLike<number>,
  ys: ArrayLike<number>,
  sx: Scale,
  sy: Scale,
): string {
  const pts: string[] = [];
  const lo = Math.min(sx.d0, sx.d1);
  const hi = Math.max(sx.d0, sx.d1);
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i]!;
    const x = xs[i]!;
    // A point outside the x axis (a sample taken after the run's recorded end) is not drawn past the frame.
    if (!Number.isFinite(y) || (sy.log && y <= 0) || x < lo || x > hi) continue;
    pts.push(`${px(sx.at(x))},${px(sy.at(y))}`);
  }
  return pts.length === 0 ? '' : `<polyline data-series="${esc(name)}" class="${cls}" points="${pts.join(' ')}"/>`;
}

/** A shaded range: the upper values left to right, then the lower right to left. */
export function rangePolygon(
  name: string,
  cls: string,
  xs: ArrayLike<number>,
  lo: ArrayLike<number>,
  hi: ArrayLike<number>,
  sx: Scale,
  sy: Scale,
): string {
  const top: string[] = [];
  const bottom: string[] = [];
  for (let i = 0; i < xs.length; i++) {
    if (!Number.isFinite(lo[i]!) || !Number.isFinite(hi[i]!)) continue;
    const x = px(sx.at(xs[i]!));
    top.push(`${x},${px(sy.at(hi[i]!))}`);
    bottom.push(`${x},${px(sy.at(lo[i]!))}`);
  }
  if (top.length === 0) return '';
  return `<polygon data-series="${esc(name)}" class="${cls}" points="${[...top, ...bottom.reverse()].join(' ')}"/>`;
}

/** The opening tag of a plot's SVG, with the attributes that read its data back. */
export function svgOpen(
  b: Box,
  kind: string,
  sx: Scale,
  sy: Scale,
  label: string,
  more: Record<string, string> = {},
): string {
  const data = {
    'data-chart': kind,
    'data-x': `${sx.d0},${sx.d1}`,
    'data-y': `${sy.d0},${sy.d1}`,
    'data-yscale': sy.log ? 'log' : 'linear',
    'data-box': `${b.left},${b.top},${b.width - b.left - b.right},${b.height - b.top - b.bottom}`,
    ...more,
  };
  const attrs = Object.entries(data)
    .map(([k, v]) => ` ${k}="${esc(v)}"`)
    .join('');
  return `<svg class="plot" role="img" aria-label="${esc(label)}" viewBox="0 0 ${b.width} ${b.height}" width="${b.width}" height="${b.height}"${attrs}>`;
}

/** Buckets of a long series: per column the min, max and mean of its finite values, and its last x. */
export interface Buckets {
  x: Float64Array;
  min: Float64Array;
  max: Float64Array;
  mean: Float64Array;
  /** Values per column (the last may hold fewer). */
  per: number;
}

/** Splits `ys` (with `xs`) into `columns` buckets of consecutive points. */
export function bucketize(xs: ArrayLike<number>, ys: ArrayLike<number>, columns: number): Buckets {
  const n = ys.length;
  const cols = Math.max(1, Math.min(columns, n));
  const out: Buckets = {
    x: new Float64Array(cols),
    min: new Float64Array(cols),
    max: new Float64Array(cols),
    mean: new Float64Array(cols),
    per: Math.ceil(n / cols),
  };
  for (let c = 0; c < cols; c++) {
    const from = Math.floor((c * n) / cols);
    const to = Math.floor(((c + 1) * n) / cols);
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    let sum = 0;
    let k = 0;
    for (let i = from; i < to; i++) {
      const v = ys[i]!;
      if (!Number.isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
      sum += v;
      k++;
    }
    out.x[c] = xs[Math.max(from, to - 1)]!;
    out.min[c] = k > 0 ? lo : Number.NaN;
    out.max[c] = k > 0 ? hi : Number.NaN;
    out.mean[c] = k > 0 ? sum / k : Number.NaN;
  }
  return out;
}

/** An exponential moving average over `span` points (bias-corrected at the start; non-finite values skipped). */
export function ema(ys: ArrayLike<number>, span: number): Float64Array {
  const a = 2 / (span + 1);
  const out = new Float64Array(ys.length);
  let m = 0;
  let weight = 0;
  for (let i = 0; i < ys.length; i++) {
    const v = ys[i]!;
    if (Number.isFinite(v)) {
      m = m * (1 - a) + v * a;
      weight = weight * (1 - a) + a;
    }
    out[i] = weight > 0 ? m / weight : Number.NaN;
  }
  return out;
}

/** The finite range of some arrays, padded by `pad` of its span (a flat range gets room around it). */
export function rangeOf(arrays: ArrayLike<number>[], pad = 0.05, positiveOnly = false): [number, number] | null {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const a of arrays)
    for (let i = 0; i < a.length; i++) {
      const v = a[i]!;
      if (!Number.isFinite(v) || (positiveOnly && v <= 0)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  if (lo === Number.POSITIVE_INFINITY) return null;
  const span = hi - lo || Math.abs(hi) || 1;
  return [positiveOnly ? lo : lo - span * pad, hi + span * pad];
}

/** A plot that has nothing to draw: its frame and a short word (its caption says why), so nothing is hidden. */
export function emptyPlot(b: Box, kind: string, why: string, word = 'no data'): string {
  const { w, h } = inner(b);
  return `<svg class="plot empty" role="img" aria-label="${esc(why)}" viewBox="0 0 ${b.width} ${b.height}" width="${b.width}" height="${b.height}" data-chart="${esc(kind)}" data-empty="true"><rect class="area" x="${b.left}" y="${b.top}" width="${px(w)}" height="${px(h)}"/><text class="missing" x="${px(b.left + w / 2)}" y="${px(b.top + h / 2)}" text-anchor="middle">${esc(word)}</text></svg>`;
}

/** The plot area's width and height of a box. */
export function areaOf(b: Box): { w: number; h: number } {
  return inner(b);
}
