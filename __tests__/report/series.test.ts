/**
 * The run's series files: what the supervisor appends (losses as they come, the progress bar at most every 5 s
 * per pass, each GPU's highest memory per window) and how the report reads them back, as untrusted input: rows
 * that are not what the header says (HTML, hex, a blank) are left out and counted; a file with another header
 * is not read; a link in a file's place is not followed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSeries, SeriesRecorder } from '../../src/report/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-series-'));
  dirs.push(d);
  return d;
}

const GIB = 2 ** 30;
const gpu = (index: number, gib: number) => ({ index, usedBytes: gib * GIB, totalBytes: 80 * GIB, utilPercent: 90 });

describe('the recorder', () => {
  it('writes the losses, the progress bar at most every 5 s, and each GPU’s highest use per window', () => {
    const d = dir();
    let now = 1_000_000;
    const r = new SeriesRecorder(d, { gpuWindowMs: 5_000, now: () => now });
    r.stepStart(1);
    r.loss(1, 0.5, 'csv', 1, 1);
    r.loss(1, Number.NaN, 'csv', 2, 2);
    for (let s = 0; s < 12; s++) {
      r.progress(1, { n: s, total: 100, ratePerS: 2 });
      r.gpu([gpu(0, 10 + s), gpu(1, 30 - s)]);
      now += 1_000;
    }
    r.stepEnd(1);
    r.close();
    expect(readFileSync(join(d, 'losses.csv'), 'utf8')).toBe(
      'pass,source,step,loss,t_ms\n1,csv,1,0.5,1000000\n1,csv,2,NaN,1000000\n',
    );
    const progress = readFileSync(join(d, 'progress.csv'), 'utf8').trim().split('\n');
    // At 0 s, 5 s, 10 s, and the bar's last state when the pass ended.
    expect(progress.slice(1).map((l) => l.split(',')[1])).toEqual(['0', '5', '10', '11']);
    const rows = readFileSync(join(d, 'gpu.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    // Windows of 5 s: GPU 0 climbs (its highest is the window's last), GPU 1 falls (its first).
    expect(rows.filter((x) => x[2] === '0').map((x) => Number(x[3]) / 1024)).toEqual([14, 19, 21]);
    expect(rows.filter((x) => x[2] === '1').map((x) => Number(x[3]) / 1024)).toEqual([30, 25, 20]);
    expect(rows.every((x) => x[1] === '1' || x[1] === '-1')).toBe(true);
  });
});

describe('the reader', () => {
  it('takes what the recorder writes, leaves out what is not (and counts it), keeps the last source of a pass', () => {
    const d = dir();
    writeFileSync(
      join(d, 'losses.csv'),
      [
        'pass,source,step,loss,t_ms',
        '0,tqdm,1,0.9,10',
        '0,csv,1,0.8,20',
        '0,csv,2,NaN,30',
        '0,csv,3,<script>alert(1)</script>,40',
        '0,csv,0x10,0.5,50',
        '0,html,4,0.5,60',
        '0,csv,5,0.4',
        '0,csv,6,-Infinity,70',
        '',
      ].join('\n'),
    );
    writeFileSync(join(d, 'gpu.csv'), 'not,the,header\n1,2,3,4,5,6\n');
    const s = readSeries(d);
    const l = s.losses.get(0)!;
    expect(l.source).toBe('csv');
    expect([...l.steps]).toEqual([1, 2, 6]);
    expect([...l.values]).toEqual([0.8, Number.NaN, Number.NEGATIVE_INFINITY]);
    expect(s.files['losses.csv']).toEqual({ present: true, rows: 4, bad: 4, cut: false });
    expect(s.files['gpu.csv']).toMatchObject({ present: true, rows: 0, bad: 1 });
    expect(s.files['progress.csv']).toMatchObject({ present: false });
  });

  it('does not follow a link in a series file’s place', () => {
    const d = dir();
    const elsewhere = join(dir(), 'secret.csv');
    writeFileSync(elsewhere, 'pass,source,step,loss,t_ms\n0,csv,1,0.5,1\n');
    symlinkSync(elsewhere, join(d, 'losses.csv'));
    expect(readSeries(d).losses.size).toBe(0);
    expect(readSeries(d).files['losses.csv']!.present).toBe(false);
  });
});
