/// <reference lib="dom" />
/**
 * The report as a person opens it: a real run (the built bin launching the seed preset over the stand-in
 * DiffSynth trainer and nvidia-smi), its report.html opened from the file in Debian's chromium with the network
 * off. Every plot is found and its drawn points read back through its axes: they are the rows of the trainer's
 * loss.csv and of the run's telemetry. Nothing is logged as an error, nothing is requested but the file, the
 * text keeps its contrast and the layout fits at 1280 and 390 pixels, light and dark (screenshots are kept in
 * __tests__/.artifacts/report/). A 100,000-step run draws each column's min-max and says it did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { artifactDir, browserMissing, openFile, startBrowser, type BrowserSession } from '../helpers/browser.js';
import { diffsynthCheckout, launchSeed, runDirs, runEnv, SEED_OUTPUT, zerowiz } from '../helpers/diffsynth-run.js';

const missing = browserMissing();
if (missing) console.warn(`report browser tests skipped: ${missing}`);

/** GPU memory the stand-in reports, MiB, one value per loop (the last repeats). */
const USED_MIB = [20000, 26000, 31000, 36000, 41000, 43000, 39000, 42000];

/** A plot as drawn: its axes and box, and each series' points in data units. */
interface Plot {
  chart: string;
  pass: string | null;
  empty: boolean;
  series: Record<string, [number, number][]>;
  /** Marks drawn (ticks at the top: NaN losses, losses above the axis), by series. */
  marks: Record<string, number>;
  caption: string;
}

/** Reads every plot of the drawings shown (`.wide` or `.narrow`) back into data units, in the page. */
function readPlots(page: Page, which: 'wide' | 'narrow'): Promise<Plot[]> {
  return page.evaluate((w) => {
    const out: Plot[] = [];
    for (const svg of document.querySelectorAll<SVGSVGElement>(`.${w} svg.plot`)) {
      if (svg.getClientRects().length === 0) throw new Error(`a .${w} plot is not shown`);
      const num = (a: string) => (svg.getAttribute(a) ?? '').split(',').map(Number);
      const [x0, x1] = num('data-x');
      const [y0, y1] = num('data-y');
      const [left, top, width, height] = num('data-box');
      const log = svg.getAttribute('data-yscale') === 'log';
      const f = (v: number) => (log ? Math.log10(v) : v);
      const fi = (v: number) => (log ? 10 ** v : v);
      const toData = (px: number, py: number): [number, number] => [
        x0! + ((px - left!) / width!) * (x1! - x0!),
        fi(f(y0!) + ((top! + height! - py) / height!) * (f(y1!) - f(y0!))),
      ];
      const series: Record<string, [number, number][]> = {};
      const marks: Record<string, number> = {};
      for (const el of svg.querySelectorAll('[data-series]')) {
        const count = el.getAttribute('data-count');
        if (count !== null) marks[el.getAttribute('data-series')!] = Number(count);
        const pts = el.getAttribute('points');
        if (!pts) continue;
        series[el.getAttribute('data-series')!] = pts
          .trim()
          .split(/\s+/)
          .map((p) => {
            const [a, b] = p.split(',').map(Number);
            return toData(a!, b!);
          });
      }
      out.push({
        chart: svg.getAttribute('data-chart') ?? '',
        pass: svg.getAttribute('data-pass'),
        empty: svg.getAttribute('data-empty') === 'true',
        series,
        marks,
        caption: svg.closest('figure')?.querySelector('figcaption')?.textContent ?? '',
      });
    }
    return out;
  }, which);
}

/** The data a pixel stands for on each axis of a plot (for the tolerance of a read-back point). */
function pixel(span: number, px: number): number {
  return Math.abs(span) / px;
}

function csvRows(path: string): string[][] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','));
}

describe.skipIf(missing !== null)('the report in a real browser, from a real run', { timeout: 120_000 }, () => {
  let d = '';
  let dir = '';
  let report = '';
  let browser: BrowserSession;

  beforeAll(async () => {
    d = diffsynthCheckout('zw-report-');
    const r = await launchSeed(d, runEnv(d, { ZW_FAKE_GPU_USED_MIB: USED_MIB.join(','), FAKE_TRAIN_STEP_MS: '15' }));
    if (r.code !== 0) throw new Error(`the run failed:\n${r.stderr}`);
    dir = runDirs(d)[0]!;
    report = join(dir, 'report.html');
    browser = await startBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  it('finds every plot with points that are the rows of loss.csv and of the telemetry; no error, no request', async () => {
    const { page, watch } = await openFile(browser, report, { width: 1280 });
    const plots = await readPlots(page, 'wide');
    expect(plots.map((p) => p.chart)).toEqual(['loss', 'step-time', 'gpu', 'timeline']);
    expect(plots.filter((p) => p.empty)).toEqual([]);

    // The loss: one point per row of the trainer's loss.csv, at its step and value.
    const loss = plots[0]!;
    expect(loss.pass).toBe('2');
    const rows = csvRows(join(d, SEED_OUTPUT, 'loss.csv')).map((r) => [Number(r[0]), Number(r[2])] as const);
    const raw = loss.series.raw!;
    expect(raw).toHaveLength(rows.length);
    const steps = rows.map((r) => r[0]);
    const values = rows.map((r) => r[1]);
    const dx = pixel(Math.max(...steps) - Math.min(...steps), 808);
    const dy = pixel(Math.max(...values) - Math.min(...values), 186) * 1.2;
    raw.forEach(([s, v], i) => {
      expect(Math.abs(s - rows[i]![0])).toBeLessThan(dx);
      expect(Math.abs(v - rows[i]![1])).toBeLessThan(dy);
    });
    expect(loss.series.smooth).toHaveLength(rows.length);

    // Each GPU's memory: the run's gpu.csv, whose values are the ones the stand-in nvidia-smi printed.
    const gpu = plots[2]!;
    const gpuRows = csvRows(join(dir, 'gpu.csv')).filter((r) => r[2] === '0');
    expect(gpuRows.length).toBeGreaterThan(5);
    for (const r of gpuRows) expect(USED_MIB).toContain(Number(r[3]));
    const started = Date.parse(JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).startedAt);
    const drawn = gpu.series['gpu-0']!;
    const inAxis = gpuRows.filter(
      (r) => drawn.length > 0 && (Number(r[0]) - started) / 1000 <= drawn.at(-1)![0] + 0.05,
    );
    expect(drawn).toHaveLength(inAxis.length);
    drawn.forEach(([t, gib], i) => {
      expect(Math.abs(t - (Number(inAxis[i]![0]) - started) / 1000)).toBeLessThan(0.1);
      expect(Math.abs(gib - Number(inAxis[i]![3]) / 1024)).toBeLessThan(0.6);
    });
    expect(gpu.series.estimate).toHaveLength(2);
    expect(gpu.series.total).toHaveLength(2);

    // Seconds per step: 1 / the rate of each row of progress.csv, pass by pass.
    const st = plots[1]!;
    const prog = csvRows(join(dir, 'progress.csv'));
    for (const pass of ['0', '1']) {
      const mine = prog.filter((r) => r[0] === pass && Number(r[3]) > 0);
      const line = st.series[`pass-${Number(pass) + 1}`]!;
      expect(line).toHaveLength(mine.length);
      const ys = mine.map((r) => 1 / Number(r[3]));
      const tol = pixel(Math.max(...ys) - Math.min(...ys) || 1, 186) * 3;
      for (const [i, [, y]] of line.entries()) expect(Math.abs(y - ys[i]!)).toBeLessThan(tol);
    }

    // Nothing went wrong, and nothing but the file was asked for.
    expect(watch.errors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    expect(watch.requests).toEqual([`file://${report}`]);
    await page.close();
  });

  it('reads well at 1280 and 390 pixels, light and dark: contrast, nothing wider than the screen, no tiny text', async () => {
    const shots = artifactDir('report');
    for (const width of [1280, 390])
      for (const colorScheme of ['light', 'dark'] as const) {
        const { page, watch } = await openFile(browser, report, {
          width,
          colorScheme,
          height: width < 500 ? 844 : 900,
        });
        const layout = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          client: document.documentElement.clientWidth,
        }));
        expect(layout.scroll, `${width}px ${colorScheme}: the page scrolls sideways`).toBeLessThanOrEqual(
          layout.client,
        );
        // The drawing made for the width is the one shown.
        const shown = await readPlots(page, width < 700 ? 'narrow' : 'wide');
        expect(shown.length).toBe(4);
        const problems = await page.evaluate(contrastProblems);
        expect(problems, `${width}px ${colorScheme}`).toEqual([]);
        expect(watch.errors).toEqual([]);
        await page.screenshot({ path: join(shots, `report-${width}-${colorScheme}.png`), fullPage: true });
        await page.close();
      }
  });

  it('a run of 100,000 steps: built in one go, well under 5 MB, each column its rows’ min and max, and said so', async () => {
    const big = join(d, '.zerowiz', 'runs', `${readdirSync(join(d, '.zerowiz', 'runs'))[0]}-big`);
    mkdirSync(big);
    for (const f of readdirSync(dir)) if (statSync(join(dir, f)).isFile()) copyFileSync(join(dir, f), join(big, f));
    const json = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    json.id = `${json.id}-big`;
    writeFileSync(join(big, 'run.json'), JSON.stringify(json));
    const t0 = Date.parse(json.startedAt);
    const n = 100_000;
    const values: number[] = [];
    let text = 'pass,source,step,loss,t_ms\n';
    for (let i = 1; i <= n; i++) {
      // A decaying loss with noise and a few spikes: what the shaded range must keep.
      const v = 0.02 + 0.3 / Math.sqrt(i) + 0.01 * Math.sin(i * 12.9898) ** 2 + (i % 9973 === 0 ? 0.5 : 0);
      values.push(v);
      text += `1,csv,${i},${v},${t0 + i * 10}\n`;
    }
    writeFileSync(join(big, 'losses.csv'), text);
    const r = await zerowiz(['report', json.id], d, runEnv(d));
    expect(r.code, r.stderr).toBe(0);
    const path = join(big, 'report.html');
    expect(statSync(path).size).toBeLessThan(5 * 1024 * 1024);
    const { page, watch } = await openFile(browser, path, { width: 1280 });
    const loss = (await readPlots(page, 'wide')).find((p) => p.chart === 'loss')!;
    expect(loss.caption).toMatch(/sampled: 100,000 losses drawn as 808 columns of about 124/);
    // The first steps and ten spikes would flatten the curve: the axis stops above the rest, and says so.
    const said = loss.caption.match(
      /the axis stops at ([\d.]+) so the curve shows: ([\d,]+) loss\(es\) above it, up to ([\d.]+)/,
    )!;
    const top = Number(said[1]);
    const above = values.filter((v) => v > top * 1.001);
    expect(Number(said[2]!.replace(/,/g, ''))).toBeGreaterThanOrEqual(above.length);
    expect(Number(said[3])).toBeCloseTo(Math.max(...values), 3);
    expect(loss.marks.clipped).toBe(Math.min(200, Number(said[2]!.replace(/,/g, ''))));
    const range = loss.series.range!;
    const cols = range.length / 2;
    expect(cols).toBe(808);
    const dy = pixel(top - Math.min(...values), 186) * 1.5;
    for (let c = 0; c < cols; c++) {
      const part = values.slice(Math.floor((c * n) / cols), Math.floor(((c + 1) * n) / cols));
      expect(Math.abs(range[c]![1] - Math.min(top, Math.max(...part)))).toBeLessThan(dy * 1.01 + top * 1e-3);
      expect(Math.abs(range[range.length - 1 - c]![1] - Math.min(...part))).toBeLessThan(dy);
    }
    expect(watch.errors).toEqual([]);
    await page.screenshot({ path: join(artifactDir('report'), 'report-100k-1280.png'), fullPage: false });
    await page.close();
  });
});

/**
 * In the page: every visible text whose contrast with what is behind it is below WCAG AA (4.5:1; 3:1 for large
 * text), and every text smaller than 11 px. Behind HTML text: the nearest background colour; behind SVG text:
 * the shape it is drawn on (a pass's bar, an alert's circle), else the plot's area.
 */
function contrastProblems(): string[] {
  const rgb = (c: string): [number, number, number, number] => {
    const m = c.match(/[\d.]+/g)?.map(Number) ?? [0, 0, 0];
    return [m[0]!, m[1]!, m[2]!, m[3] ?? 1];
  };
  const lum = ([r, g, b]: number[]) => {
    const f = (v: number) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
  };
  const ratio = (a: number[], b: number[]) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x! + 0.05) / (y! + 0.05);
  };
  const pageBg = rgb(getComputedStyle(document.body).backgroundColor);
  const bgOf = (el: Element | null): number[] => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c[3] > 0.5) return c;
    }
    return pageBg;
  };
  const out: string[] = [];
  const check = (el: Element, fg: number[], bg: number[], what: string) => {
    const cs = getComputedStyle(el);
    const size = Number.parseFloat(cs.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
    const r = ratio(fg, bg);
    if (r < (large ? 3 : 4.5)) out.push(`${what} "${(el.textContent ?? '').slice(0, 40)}": contrast ${r.toFixed(2)}`);
    if (size < 11) out.push(`${what} "${(el.textContent ?? '').slice(0, 40)}": ${size}px`);
  };
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg') || el.getClientRects().length === 0) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && (n.textContent ?? '').trim() !== '');
    if (own) check(el, rgb(getComputedStyle(el).color), bgOf(el), el.tagName.toLowerCase());
  }
  for (const t of document.querySelectorAll('svg.plot text')) {
    if (t.getClientRects().length === 0 || (t.textContent ?? '').trim() === '') continue;
    // A pass's name inside its bar, an alert's number in its circle: the shape just before it.
    const inside = t.matches('.bar-label') || t.parentElement?.matches('.alert');
    const shape = inside ? t.previousElementSibling : null;
    const area = t.closest('svg')!.querySelector('.area')!;
    const bg = rgb(getComputedStyle(shape ?? area).fill);
    check(t, rgb(getComputedStyle(t).fill), bg, 'svg text');
  }
  return out;
}
