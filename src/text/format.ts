/**
 * How zerowiz writes quantities for people: the one home of each format, so a duration, a size, a count or a time
 * reads the same in the pane, stream mode, `runs`, the wizard, `estimate` and every message.
 */
import { BINARY_EXP, DECIMAL_EXP, NUMBER_RE, parseBytes, parseCount } from './units.js';

const KIB = 2 ** 10;
const MIB = 2 ** 20;
const GIB = 2 ** 30;
const TIB = 2 ** 40;
/** The binary units, largest first. */
const BINARY_UNITS: readonly [number, string][] = [
  [TIB, 'TiB'],
  [GIB, 'GiB'],
  [MIB, 'MiB'],
  [KIB, 'KiB'],
];

// ---------------------------------------------------------------------------------------------
// Durations and times

/** `1h02m`, `3m07s`, `12.3s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Seconds as a step time reads: `0.42 s`, `3.1 s`, `12 s`, `1m05s`. */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '?';
  if (s >= 60) {
    const m = Math.floor(s / 60);
    return `${m}m${String(Math.round(s - m * 60)).padStart(2, '0')}s`;
  }
  return `${s >= 10 ? Math.round(s) : s >= 1 ? s.toFixed(1) : s >= 0.01 ? s.toFixed(2) : '<0.01'} s`;
}

/** `2026-11-30 10:01 UTC`: a moment in records and files, the same on every host whatever its time zone. */
export function formatUtcMinute(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** `1 step`, `3 steps`, `1 process`, `2 processes`: a count with its noun in the number it takes. */
export function plural(n: number, noun: string, many = /(s|x|ch|sh)$/.test(noun) ? `${noun}es` : `${noun}s`): string {
  return `${n} ${n === 1 ? noun : many}`;
}

/** `1:02:03` / `02:03` for seconds (tqdm's style), `--:--` when unknown. */
export function formatClock(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const mm = String(m).padStart(2, '0');
  const ss = String(sec).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** A sortable local timestamp, YYYYmmdd-HHMMSS (backups, run directories, files set aside). */
export function timestamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

// ---------------------------------------------------------------------------------------------
// Counts

/** A compact count of iterations (tqdm's style): `1000` -> `1000`, `12500` -> `12.5k`, `3.2M`. */
export function formatTally(n: number): string {
  if (n < 10_000) return String(Math.round(n * 100) / 100);
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

/** A rate of iterations (tqdm's style): `6.00it/s`, or `12.3s/it` below one per second; `?it/s` when unknown. */
export function formatTallyRate(ratePerS: number | null): string {
  if (ratePerS === null || !Number.isFinite(ratePerS) || ratePerS <= 0) return '?it/s';
  return ratePerS >= 1 ? `${ratePerS.toFixed(2)}it/s` : `${(1 / ratePerS).toFixed(2)}s/it`;
}

// ---------------------------------------------------------------------------------------------
// Sizes

/** `1.9 GB/s`: a transfer rate in decimal units, as drives are rated. */
export function formatByteRate(bytesPerS: number): string {
  return `${(bytesPerS / 1e9).toFixed(bytesPerS >= 1e10 ? 0 : 2)} GB/s`;
}

/** Formats bytes in binary units, as DeepSpeed's estimator does (it prints GiB and labels them "GB"). */
export function formatBytes(bytes: number, digits = 2): string {
  const abs = Math.abs(bytes);
  for (const [size, unit] of BINARY_UNITS) if (abs >= size) return `${(bytes / size).toFixed(digits)} ${unit}`;
  return `${bytes} B`;
}

/** Formats a parameter count: 20.4B, 350M, 120K. */
export function formatCount(n: number): string {
  const trim = (x: number) => String(Number(x.toFixed(2)));
  if (n >= 1e12) return `${trim(n / 1e12)}T`;
  if (n >= 1e9) return `${trim(n / 1e9)}B`;
  if (n >= 1e6) return `${trim(n / 1e6)}M`;
  if (n >= 1e3) return `${trim(n / 1e3)}K`;
  return String(n);
}

/**
 * Short binary size for sentences: `80 GiB`, `31.4 GiB`, `512 MiB`, `1 TiB` (at most `digits` decimals, one by
 * default, trailing zeros dropped; the review uses two: `79.65 GiB`).
 */
export function formatBytesShort(bytes: number, digits = 1): string {
  const sign = bytes < 0 ? '-' : '';
  const abs = Math.abs(bytes);
  for (const [size, unit] of BINARY_UNITS) {
    if (abs >= size) return `${sign}${String(Number((abs / size).toFixed(digits)))} ${unit}`;
  }
  return `${bytes} B`;
}

/** Bytes in at most 8 characters (the wizard's tables and picture): `79.6 GiB`, `312 GiB`, `1.2 TiB`, `640 MiB`, `0`. */
export function formatBytesCompact(bytes: number): string {
  for (const [size, unit] of BINARY_UNITS) {
    if (bytes >= size) {
      const v = bytes / size;
      return `${v >= 100 ? Math.round(v) : Number(v.toFixed(1))} ${unit}`;
    }
  }
  return bytes === 0 ? '0' : `${bytes} B`;
}

/** Bytes as a GiB figure without the unit (said once per row or column): `61.2` (`digits` decimals). */
export function gibFigure(bytes: number, digits = 1): string {
  return (bytes / GIB).toFixed(digits);
}

/** `61.2 GiB`: GiB with `digits` decimals (one by default), as the summaries print memory. */
export function formatGiB(bytes: number, digits = 1): string {
  return `${gibFigure(bytes, digits)} GiB`;
}

/** A GiB figure as short as it reads (line items): `15`, `1.9`, `0.09`, `0`. */
export function gibFigureShort(bytes: number): string {
  const v = bytes / GIB;
  if (v === 0) return '0';
  return v >= 10 ? String(Math.round(v)) : v >= 0.1 ? String(Number(v.toFixed(1))) : String(Number(v.toFixed(2)));
}

/** Whole GiB, rounded up: what a flag such as `--mem=NG` or a "needs about N GiB" must say. */
export function wholeGiBUp(bytes: number): number {
  return Math.ceil(bytes / GIB);
}

/** A size cap in words: `1 MiB`, `4.5 MiB` (exact), or `512 bytes` below a MiB. */
export function formatCap(bytes: number): string {
  return bytes >= MIB ? `${bytes / MIB} MiB` : `${bytes} bytes`;
}

/**
 * A memory size written so that parseBytes reads back exactly the same bytes: `80GiB`, `79.65GiB` only
 * when that is exact, else whole MiB (`81559MiB`, as nvidia-smi counts) or bytes (`123B`).
 */
export function formatBytesExact(bytes: number): string {
  for (const [unit, size] of [
    ['TiB', 2 ** 40],
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes < size) continue;
    for (const digits of [0, 1, 2]) {
      const text = `${Number((bytes / size).toFixed(digits))}${unit}`;
      if (parseBytes(text) === bytes) return text;
    }
  }
  return `${bytes}B`;
}

/** A parameter count written so that parseCount reads back exactly the same number: 20.4B, else in full. */
export function formatCountExact(n: number): string {
  const short = formatCount(n);
  try {
    if (parseCount(short) === n) return short;
  } catch {
    // fall through to the full number
  }
  return String(n);
}

/**
 * What a size in decimal units means, said when one is typed: `80GB` is 80 x 10^9 bytes = 74.51 GiB, not the
 * 80 GiB a GPU's "80GB" name suggests (an H100 80GB has 79.6 GiB). Null for any other size.
 */
export function decimalSizeNote(text: string): string | null {
  const m = NUMBER_RE.exec(text);
  const unit = m ? /^([KMGT])B$/i.exec(m[2]!) : null;
  if (!m || !unit || m[2]!.endsWith('b')) return null;
  const letter = unit[1]!.toUpperCase();
  const bytes = Number(m[1]) * 10 ** DECIMAL_EXP[letter]!;
  return `${m[1]}${letter}B = ${formatBytes(bytes)} (${letter}B counts 10^${DECIMAL_EXP[letter]}; ${m[1]}${letter} or ${m[1]}${letter}iB counts 2^${BINARY_EXP[letter]})`;
}
