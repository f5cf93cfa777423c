/** The GPU memory line of the end summary: measured peak against zerowiz's estimate. Pure functions. */
import type { GpuPeak } from './telemetry.js';
import { formatGiB } from '../text/index.js';

/** The GPU that used the most memory (the lowest index on a tie), or null without peaks. */
export function highestPeak(peaks: readonly GpuPeak[]): GpuPeak | null {
  let best: GpuPeak | null = null;
  for (const p of peaks) {
    if (best === null || p.usedBytes > best.usedBytes || (p.usedBytes === best.usedBytes && p.index < best.index)) {
      best = p;
    }
  }
  return best;
}

/**
 * `peak 61.2 GiB on GPU 3 vs estimated 58.0 GiB (+6%)`; without an estimate `peak 61.2 GiB on GPU 3`; null
 * without peaks. The percentage is (peak - estimate) / estimate, rounded. nvidia-smi's memory.used counts
 * the whole device (CUDA context and any other process), so a small positive gap is expected.
 */
export function formatPeakVsEstimate(peaks: readonly GpuPeak[], estimateBytes: number | null): string | null {
  const top = highestPeak(peaks);
  if (!top) return null;
  const head = `peak ${formatGiB(top.usedBytes)} on GPU ${top.index}`;
  if (estimateBytes === null || !(estimateBytes > 0)) return head;
  const pct = Math.round(((top.usedBytes - estimateBytes) / estimateBytes) * 100);
  const sign = pct > 0 ? '+' : pct < 0 ? '-' : '±';
  return `${head} vs estimated ${formatGiB(estimateBytes)} (${sign}${Math.abs(pct)}%)`;
}
