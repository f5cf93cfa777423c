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

/** The powers of ten and of two of the size letters. */
export const DECIMAL_EXP: Record<string, number> = { K: 3, M: 6, G: 9, T: 12 };
export const BINARY_EXP: Record<string, number> = { K: 10, M: 20, G: 30, T: 40 };

/** A number and its unit letters, as the size and count flags take them. */
export const NUMBER_RE = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$/i;

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
  const bits = m ? /^([KMGT])i?b$/.exec(m[2]!) : null;
  if (m && bits)
    throw new UsageError(
      `${what} '${text}' is in bits (a lowercase b is a bit, so ${m[2]} is ${bits[1]}bit)`,
      `write ${m[1]}${bits[1]}B for ${m[1]} x 10^${DECIMAL_EXP[bits[1]!]} bytes or ${m[1]}${bits[1]}iB for ${m[1]} x 2^${BINARY_EXP[bits[1]!]}`,
    );
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
