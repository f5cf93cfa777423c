import { describe, expect, it } from 'vitest';
import { formatPeakVsEstimate, highestPeak } from '../../src/observe/peaks.js';

const GIB = 2 ** 30;
const peak = (index: number, gib: number) => ({ index, usedBytes: Math.round(gib * GIB), totalBytes: 80 * GIB, at: 0 });

describe('the end summary: measured GPU peak against the estimate', () => {
  it('names the GPU with the highest peak and the gap to the estimate', () => {
    const peaks = [peak(0, 55.1), peak(1, 60.9), peak(2, 59), peak(3, 61.2)];
    expect(formatPeakVsEstimate(peaks, 58 * GIB)).toBe('peak 61.2 GiB on GPU 3 vs estimated 58.0 GiB (+6%)');
    expect(formatPeakVsEstimate(peaks, 70 * GIB)).toBe('peak 61.2 GiB on GPU 3 vs estimated 70.0 GiB (-13%)');
    expect(formatPeakVsEstimate([peak(5, 40)], 40 * GIB)).toBe('peak 40.0 GiB on GPU 5 vs estimated 40.0 GiB (±0%)');
  });

  it('says only the peak without an estimate, and nothing without telemetry', () => {
    expect(formatPeakVsEstimate([peak(2, 12.34)], null)).toBe('peak 12.3 GiB on GPU 2');
    expect(formatPeakVsEstimate([peak(2, 12.34)], 0)).toBe('peak 12.3 GiB on GPU 2');
    expect(formatPeakVsEstimate([], 58 * GIB)).toBeNull();
  });

  it('takes the lowest index on a tie', () => {
    expect(highestPeak([peak(4, 30), peak(1, 30), peak(2, 10)])?.index).toBe(1);
  });
});
