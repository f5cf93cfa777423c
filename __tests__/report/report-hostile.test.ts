/// <reference lib="dom" />
/**
 * A hostile run directory gives a report that shows it as text and runs nothing: a trainer whose loss.csv
 * holds HTML and whose log is huge and full of markup and escapes (a real run of the built bin), then a
 * neighbour who rewrites the record: a step named `<script>`, markup in the setup's name, an alert and a
 * series file. The report, opened in Debian's chromium with the network off, shows every one of them as text,
 * runs no script, opens no dialog, requests nothing, and stays small.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { browserMissing, openFile, startBrowser, type BrowserSession } from '../helpers/browser.js';
import { removeWorkDirs } from '../helpers/proc.js';
import { diffsynthCheckout, runDirs, runEnv, zerowiz } from '../helpers/diffsynth-run.js';

const missing = browserMissing();
if (missing) console.warn(`hostile report tests skipped: ${missing}`);

const SCRIPT = '<script>window.__pwned = 1; alert("pwned")</script>';
const IMG = '"><img src="http://127.0.0.1:9/x.png" onerror="window.__pwned=2;alert(2)">';
/** Lines of the trainer's log (about 60 MB). */
const LOG_LINES = 400_000;

/** A DiffSynth-like trainer that writes HTML into loss.csv and a huge log of markup, then fails. */
function hostileTrainer(d: string): string {
  const p = join(d, 'accelerate-hostile');
  const logLine = `step <b>bold</b> \x1b[31mred\x1b[0m ${SCRIPT} ${IMG} ${'x'.repeat(60)}\n`;
  writeFileSync(
    p,
    `#!/usr/bin/env node
const fs = require('node:fs');
const SCRIPT = ${JSON.stringify(SCRIPT)};
const IMG = ${JSON.stringify(IMG)};
const args = process.argv.slice(2);
const out = args[args.indexOf('--output_path') + 1] || './models';
if (args.some((a) => a.includes('data_process'))) { console.log('data pass'); process.exit(0); }
fs.mkdirSync(out, { recursive: true });
let rows = 'step,key,value\\n';
for (let i = 1; i <= 50; i++) rows += i % 10 === 0 ? i + ',loss,' + SCRIPT + '\\n' : i + ',loss,' + 1 / i + '\\n';
rows += '51,' + IMG + ',0.5\\n';
fs.writeFileSync(out + '/loss.csv', rows);
const chunk = ${JSON.stringify(logLine)}.repeat(1000);
for (let i = 0; i < ${LOG_LINES / 1000}; i++) fs.writeSync(1, chunk);
fs.writeSync(2, 'RuntimeError: ' + SCRIPT + '\\n');
process.exit(1);
`,
  );
  chmodSync(p, 0o755);
  return p;
}

describe.skipIf(missing !== null)('a hostile run directory', { timeout: 180_000 }, () => {
  let d = '';
  let dir = '';
  let browser: BrowserSession;

  beforeAll(async () => {
    d = diffsynthCheckout('zw-hostile-');
    const acc = hostileTrainer(d);
    const r = await zerowiz(['launch', './mine.yaml', '--csv-log', '--no-tui', '--accelerate', acc], d, runEnv(d));
    if (r.code !== 1) throw new Error(`the hostile run should fail (exit 1), got ${r.code}:\n${r.stderr}`);
    dir = runDirs(d)[0]!;
    // A neighbour rewrites the record: markup where names and messages go, a series row of HTML.
    const path = join(dir, 'run.json');
    const json = JSON.parse(readFileSync(path, 'utf8'));
    json.name = `${SCRIPT}${IMG}`;
    json.steps[1].name = SCRIPT;
    json.steps[1].command = `accelerate launch </pre>${SCRIPT}`;
    json.steps[1].error = IMG;
    json.steps[1].live = json.steps[1].live ?? {
      metrics: {
        lossSource: null,
        lastLoss: null,
        minLoss: null,
        lossCount: 0,
        nonFiniteLosses: 0,
        learningRate: null,
        ratePerS: null,
        skippedSteps: 0,
        lossScale: null,
        dsPeakAllocatedBytes: null,
      },
      gpu: { telemetry: 'off', reason: null, peaks: [] },
      alerts: [],
    };
    json.steps[1].live.alerts.push({
      id: 'cuda-oom',
      step: 1,
      line: IMG,
      at: json.startedAt,
      title: SCRIPT,
      fix: IMG,
      fatal: true,
    });
    writeFileSync(path, JSON.stringify(json));
    appendFileSync(join(dir, 'losses.csv'), `1,csv,99,${SCRIPT},1\n1,csv,100,0.5,${IMG}\n`);
    browser = await startBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await removeWorkDirs([d]);
  });

  it('the log is huge; the report stays small, and `zerowiz report` writes it again from the rewritten record', async () => {
    expect(statSync(join(dir, '02-train.log')).size).toBeGreaterThan(50 * 1024 * 1024);
    const r = await zerowiz(['report', dir], d, runEnv(d));
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(dir, 'report.html')).size).toBeLessThan(1024 * 1024);
  });

  it('shows every hostile text as text and runs nothing', async () => {
    const report = join(dir, 'report.html');
    const html = readFileSync(report, 'utf8');
    // No markup from the run survives as markup; the only <script is none at all.
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toContain('\x1b');
    const { page, watch } = await openFile(browser, report, { width: 1280 });
    // What a reader sees (innerText: rendered text, not the nodes' raw text).
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is asserted.
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain(SCRIPT);
    expect(text).toContain('"><img src="http://127.0.0.1:9/x.png"');
    // The failing pass's last lines, as text (the terminal's colours left out, the markup shown).
    expect(text).toContain('RuntimeError: <script>');
    expect(text).toContain(`step <b>bold</b> red ${SCRIPT}`);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.evaluate(() => document.querySelectorAll('script, img, iframe, object, embed').length)).toBe(0);
    expect(watch.dialogs).toEqual([]);
    expect(watch.requests).toEqual([`file://${report}`]);
    expect(watch.errors).toEqual([]);
    // The series rows that were not numbers are left out, and counted.
    expect(text).toMatch(/losses\.csv: [\d,]+ rows, 2 left out \(not what the header says\)/);
    await page.close();
  });
});
