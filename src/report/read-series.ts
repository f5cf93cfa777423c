/**
 * A run's series files (./series.ts) read back for the report, as untrusted input: each file read without
 * following a link, at most SERIES_READ_MAX_BYTES of it, every row checked field by field (a row that is not
 * what the header says, such as HTML written into it, is left out and counted), and the numbers kept in
 * typed arrays so a run of millions of steps costs a few arrays.
 */
import { join } from 'node:path';
import { readFirstBytes } from '../fs/index.js';
import { GPU_FILE, GPU_HEADER, LOSSES_FILE, LOSSES_HEADER, PROGRESS_FILE, PROGRESS_HEADER } from './series.js';

/** The most of one series file the report reads (its start; the rest is said to be left out). */
export const SERIES_READ_MAX_BYTES = 128 * 1024 * 1024;

/** Loss sources a row may name. */
const SOURCES = new Set(['csv', 'hf', 'tqdm', 'log']);

/** A pass's losses, in the order they came, from its last source. */
export interface LossSeriesData {
  source: string;
  steps: Float64Array;
  values: Float64Array;
  times: Float64Array;
}

/** A pass's progress rows. */
export interface ProgressData {
  n: Float64Array;
  total: (number | null)[];
  rate: Float64Array;
  times: Float64Array;
}

/** One GPU's memory over time (MiB). */
export interface GpuData {
  gpu: number;
  times: Float64Array;
  usedMiB: Float64Array;
  totalMiB: number | null;
}

/** What was read, and what was not. */
export interface SeriesData {
  losses: Map<number, LossSeriesData>;
  progress: Map<number, ProgressData>;
  gpus: GpuData[];
  /** Per file: present, rows taken, rows left out, whether it was cut at SERIES_READ_MAX_BYTES. */
  files: Record<string, { present: boolean; rows: number; bad: number; cut: boolean }>;
}

/** The rows of a file (header checked), or null when absent; `cut` when it was longer than the limit. */
function rowsOf(
  dir: string,
  name: string,
  header: string,
): { lines: string[]; cut: boolean; badHeader: boolean } | null {
  const got = readFirstBytes(join(dir, name), SERIES_READ_MAX_BYTES);
  if (!got) return null;
  const cut = got.size > SERIES_READ_MAX_BYTES;
  let text = got.bytes.toString('utf8');
  if (cut) text = text.slice(0, text.lastIndexOf('\n') + 1);
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const first = lines.shift();
  return { lines, cut, badHeader: first !== header };
}

/**
 * A field that must be a decimal number (JavaScript's spelling of the non-finite ones allowed when `nonFinite`):
 * digits, a sign, a point, an exponent; never hex, binary or octal, never blank. Cheap: one character test and
 * one conversion per field, so a file of millions of rows reads in a blink.
 */
function number(text: string | undefined, nonFinite = false): number | null {
  if (text === undefined || text.length === 0 || text.length > 40) return null;
  const c = text.charCodeAt(0);
  const lead = (c >= 48 && c <= 57) || c === 45 || c === 46;
  if (!lead) return nonFinite && (text === 'NaN' || text === 'Infinity') ? Number(text) : null;
  // 0x10, 0b1, 0o7 are numbers to JavaScript, not to a CSV of decimals.
  if (c === 48 && text.length > 1 && (text.charCodeAt(1) | 32) >= 98 && (text.charCodeAt(1) | 32) <= 120) return null;
  const v = +text;
  if (Number.isFinite(v)) return v;
  return nonFinite && text === '-Infinity' ? v : null;
}

/** A pass index as a row gives it (0-1000). */
function passOf(text: string | undefined): number | null {
  const v = number(text);
  return v !== null && Number.isInteger(v) && v >= 0 && v <= 1000 ? v : null;
}

/** Fixed-size number columns, filled row by row, cut to the rows taken. */
class Columns {
  private readonly cols: Float64Array[];
  n = 0;
  constructor(k: number, capacity: number) {
    this.cols = Array.from({ length: k }, () => new Float64Array(Math.max(1, capacity)));
  }
  push3(a: number, b: number, c: number): void {
    this.cols[0]![this.n] = a;
    this.cols[1]![this.n] = b;
    if (this.cols[2]) this.cols[2][this.n] = c;
    this.n++;
  }
  col(k: number): Float64Array {
    return this.cols[k]!.slice(0, this.n);
  }
}

/** The per-file tally, once the file is read (or found absent). */
function tally(files: SeriesData['files'], name: string, got: { cut: boolean } | null) {
  const f = { present: got !== null, rows: 0, bad: 0, cut: got?.cut ?? false };
  files[name] = f;
  return f;
}

function readLosses(dir: string, files: SeriesData['files']): Map<number, LossSeriesData> {
  const out = new Map<number, LossSeriesData>();
  const got = rowsOf(dir, LOSSES_FILE, LOSSES_HEADER);
  const f = tally(files, LOSSES_FILE, got);
  if (!got) return out;
  if (got.badHeader) {
    f.bad = got.lines.length;
    return out;
  }
  // Per pass: its rows of the last source seen (a better source restarts the series, as the pane's does).
  const byPass = new Map<number, { source: string; cols: Columns }>();
  for (const line of got.lines) {
    const p = line.split(',');
    const pass = passOf(p[0]);
    const source = p[1]!;
    const step = number(p[2]);
    const value = number(p[3], true);
    const t = number(p[4]);
    if (p.length !== 5 || pass === null || !SOURCES.has(source) || step === null || value === null || t === null) {
      f.bad++;
      continue;
    }
    let cur = byPass.get(pass);
    if (cur?.source !== source) {
      cur = { source, cols: new Columns(3, got.lines.length) };
      byPass.set(pass, cur);
    }
    cur.cols.push3(step, value, t);
    f.rows++;
  }
  for (const [pass, c] of byPass)
    out.set(pass, { source: c.source, steps: c.cols.col(0), values: c.cols.col(1), times: c.cols.col(2) });
  return out;
}

function readProgress(dir: string, files: SeriesData['files']): Map<number, ProgressData> {
  const out = new Map<number, ProgressData>();
  const got = rowsOf(dir, PROGRESS_FILE, PROGRESS_HEADER);
  const f = tally(files, PROGRESS_FILE, got);
  if (!got) return out;
  if (got.badHeader) {
    f.bad = got.lines.length;
    return out;
  }
  const byPass = new Map<number, { cols: Columns; total: (number | null)[] }>();
  for (const line of got.lines) {
    const p = line.split(',');
    const pass = passOf(p[0]);
    const n = number(p[1]);
    const total = p[2] === '' ? null : number(p[2]);
    const rate = p[3] === '' ? Number.NaN : number(p[3]);
    const t = number(p[4]);
    if (
      p.length !== 5 ||
      pass === null ||
      n === null ||
      (p[2] !== '' && total === null) ||
      rate === null ||
      t === null
    ) {
      f.bad++;
      continue;
    }
    let cur = byPass.get(pass);
    if (!cur) {
      cur = { cols: new Columns(3, got.lines.length), total: [] };
      byPass.set(pass, cur);
    }
    cur.cols.push3(n, rate, t);
    cur.total.push(total);
    f.rows++;
  }
  for (const [pass, c] of byPass)
    out.set(pass, { n: c.cols.col(0), rate: c.cols.col(1), times: c.cols.col(2), total: c.total });
  return out;
}

function readGpus(dir: string, files: SeriesData['files']): GpuData[] {
  const got = rowsOf(dir, GPU_FILE, GPU_HEADER);
  const f = tally(files, GPU_FILE, got);
  if (!got) return [];
  if (got.badHeader) {
    f.bad = got.lines.length;
    return [];
  }
  const byGpu = new Map<number, { cols: Columns; total: number | null }>();
  for (const line of got.lines) {
    const p = line.split(',');
    const t = number(p[0]);
    const gpu = number(p[2]);
    const used = number(p[3]);
    const total = p[4] === '' ? null : number(p[4]);
    if (
      p.length !== 6 ||
      t === null ||
      gpu === null ||
      !Number.isInteger(gpu) ||
      gpu < 0 ||
      gpu > 1023 ||
      used === null ||
      used < 0 ||
      (p[4] !== '' && total === null)
    ) {
      f.bad++;
      continue;
    }
    let cur = byGpu.get(gpu);
    if (!cur) {
      cur = { cols: new Columns(2, got.lines.length), total: null };
      byGpu.set(gpu, cur);
    }
    cur.cols.push3(t, used, 0);
    if (total !== null) cur.total = total;
    f.rows++;
  }
  return [...byGpu]
    .sort((a, b) => a[0] - b[0])
    .map(([gpu, c]) => ({ gpu, times: c.cols.col(0), usedMiB: c.cols.col(1), totalMiB: c.total }));
}

/** Reads a run directory's series files. */
export function readSeries(dir: string): SeriesData {
  const files: SeriesData['files'] = {};
  return { losses: readLosses(dir, files), progress: readProgress(dir, files), gpus: readGpus(dir, files), files };
}
