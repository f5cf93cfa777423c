/**
 * How zerowiz writes quantities for people: the one home of each format, so a duration or a size reads the same
 * in the pane, stream mode, `runs` and every message.
 */

/** `1h02m`, `3m07s`, `12.3s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
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
