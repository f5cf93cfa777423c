import { UsageError } from './errors.js';

const COUNT_SUFFIX: Record<string, number> = { '': 1, K: 1e3, M: 1e6, B: 1e9, G: 1e9, T: 1e12 };
// Memory: binary units for KiB..TiB and for the bare K/M/G/T letters (as nvidia-smi, free -g and
// DeepSpeed's estimator all count in 2^30), decimal units only when spelled KB/MB/GB/TB.
const BYTE_SUFFIX: Record<string, number> = {
  B: 1,
  '': 2 ** 30,
  K: 2 ** 10,
  KI: 2 ** 10,
  KIB: 2 ** 10,
  KB: 1e3,
  M: 2 ** 20,
  MI: 2 ** 20,
  MIB: 2 ** 20,
  MB: 1e6,
  G: 2 ** 30,
  GI: 2 ** 30,
  GIB: 2 ** 30,
  GB: 1e9,
  T: 2 ** 40,
  TI: 2 ** 40,
  TIB: 2 ** 40,
  TB: 1e12,
};

const NUMBER_RE = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$/i;

/** Parses a parameter count such as `20.4B`, `7e9`, `350M`, `1.3T`, `120k` or `1000000`. */
export function parseCount(text: string, what = 'parameter count'): number {
  const m = NUMBER_RE.exec(text);
  const mult = m ? COUNT_SUFFIX[m[2]!.toUpperCase()] : undefined;
  if (!m || mult === undefined) {
    throw new UsageError(`${what} '${text}' is not a number`, 'write it like 20.4B, 7e9, 350M or 1.3T');
  }
  const value = Math.round(Number(m[1]) * mult);
  if (!Number.isFinite(value))
    throw new UsageError(`${what} '${text}' is too large to be a number`, 'write it like 20.4B, 7e9 or 350M');
  if (value <= 0) {
    throw new UsageError(`${what} '${text}' must be greater than zero`, 'write it like 20.4B, 7e9 or 350M');
  }
  return value;
}

/**
 * Parses a memory size: `80GiB`, `80G` and a bare `80` mean GiB (2^30 bytes), `80GB` means 10^9 bytes,
 * likewise K/M/T; `B` alone means bytes.
 */
export function parseBytes(text: string, what = 'memory size'): number {
  const m = NUMBER_RE.exec(text);
  const mult = m ? BYTE_SUFFIX[m[2]!.toUpperCase()] : undefined;
  if (!m || mult === undefined) {
    throw new UsageError(
      `${what} '${text}' is not a size`,
      'write it like 80GiB, 80GB, 141G or 1.5TiB (G and GiB mean 2^30 bytes, GB 10^9)',
    );
  }
  const value = Math.round(Number(m[1]) * mult);
  if (!Number.isFinite(value))
    throw new UsageError(`${what} '${text}' is too large to be a number`, 'write it like 80GiB');
  if (value <= 0) {
    throw new UsageError(`${what} '${text}' must be greater than zero`, 'write it like 80GiB');
  }
  return value;
}

/** Formats bytes in binary units, as DeepSpeed's estimator does (it prints GiB and labels them "GB"). */
export function formatBytes(bytes: number, digits = 2): string {
  const abs = Math.abs(bytes);
  if (abs >= 2 ** 40) return `${(bytes / 2 ** 40).toFixed(digits)} TiB`;
  if (abs >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(digits)} GiB`;
  if (abs >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(digits)} MiB`;
  if (abs >= 2 ** 10) return `${(bytes / 2 ** 10).toFixed(digits)} KiB`;
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
  const units: [number, string][] = [
    [2 ** 40, 'TiB'],
    [2 ** 30, 'GiB'],
    [2 ** 20, 'MiB'],
    [2 ** 10, 'KiB'],
  ];
  const sign = bytes < 0 ? '-' : '';
  const abs = Math.abs(bytes);
  for (const [size, unit] of units) {
    if (abs >= size) return `${sign}${String(Number((abs / size).toFixed(digits)))} ${unit}`;
  }
  return `${bytes} B`;
}

/** Parses a whole number flag such as `--nodes 2` within [min, max]; UsageError otherwise. */
export function parseInteger(text: string, what: string, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const t = text.trim();
  if (!/^[+-]?[0-9]+$/.test(t)) {
    throw new UsageError(`${what} '${text}' is not a whole number`, `write a whole number from ${min} to ${max}`);
  }
  const value = Number(t);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${what} '${text}' is out of range`, `write a whole number from ${min} to ${max}`);
  }
  return value;
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
