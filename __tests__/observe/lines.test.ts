// The byte-level line splitter, the \r segment thinner, the open-line merge and the fast loss parser:
// the pieces the launch flood goes through, checked for behaviour (speed lives in the bench).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineSplitter, MAX_DISPLAY_LINE_CHARS, type LineSink } from '../../src/observe/lines.js';
import { decimal, parseLoss } from '../../src/observe/logparse.js';
import { SegmentThinner } from '../../src/observe/step-output.js';
import { LOG_BATCH_BYTES, StepLog } from '../../src/launch/runner.js';
import { until } from '../helpers/proc.js';
import { FrameStats, LOG_FRAME_INTERVAL_MS, MAX_LOG_FRAME_INTERVAL_MS } from '../../src/pane/frames.js';

interface Seen {
  lines: string[];
  partials: string[];
  segments: string[];
}

function sink(seen: Seen, withSegments = true): LineSink {
  const s: LineSink = { line: (t) => seen.lines.push(t), partial: (t) => seen.partials.push(t) };
  if (withSegments) s.segment = (b, start, end) => seen.segments.push(b.toString('utf8', start, end));
  return s;
}

/** Feeds chunks (Buffers as given, strings as UTF-8) and flushes. */
function run(chunks: (string | Buffer)[], withSegments = true): Seen {
  const seen: Seen = { lines: [], partials: [], segments: [] };
  const splitter = new LineSplitter();
  const k = sink(seen, withSegments);
  for (const c of chunks) splitter.feed(typeof c === 'string' ? Buffer.from(c) : c, k);
  splitter.flush(k);
  return seen;
}

/** A byte string cut into chunks at every position in `cuts`. */
function cutAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const out: Buffer[] = [];
  let s = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(bytes.subarray(s, c));
    s = c;
  }
  return out;
}

describe('the byte line splitter', () => {
  it('gives the same lines however the bytes are cut into chunks', () => {
    const text =
      'alpha\nbeta\r\n\ngamma \x1b[32mgreen\x1b[0m\n\rSteps:  1%|▏| 1/100\rSteps:  2%|▎| 2/100\ndelta █ done\n';
    const bytes = Buffer.from(text);
    const whole = run([bytes]).lines;
    expect(whole).toEqual(['alpha', 'beta', '', 'gamma green', 'Steps:  2%|▎| 2/100', 'delta █ done']);
    for (let a = 1; a < bytes.length; a++) {
      for (const b of [a + 1, a + 7, bytes.length - 1]) {
        if (b <= a || b >= bytes.length) continue;
        expect(run(cutAt(bytes, [a, b])).lines).toEqual(whole);
      }
    }
  });

  it('keeps a multibyte character that a chunk boundary cuts in two', () => {
    const bytes = Buffer.from('bar █▉ ok\n');
    const at = bytes.indexOf(0xe2) + 1; // inside █ (e2 96 88)
    const seen = run(cutAt(bytes, [at]));
    expect(seen.lines).toEqual(['bar █▉ ok']);
    expect(seen.lines.join('')).not.toContain('\ufffd');
  });

  it('never shows half a character in the open line', () => {
    const bytes = Buffer.from('\rSteps: █▉');
    const seen = run([bytes.subarray(0, bytes.length - 1)]);
    expect(seen.partials).toEqual(['Steps: █']);
  });

  it('reports each \\r segment once it is complete, and the open line once per chunk', () => {
    const seen = run(['\ra 1\ra 2\ra', ' 3\r', 'a 4']);
    // 'a 3' arrives in two chunks: it is reported whole, never as 'a' or ' 3'.
    expect(seen.segments).toEqual(['a 1', 'a 2', 'a 3', 'a 4']);
    expect(seen.partials).toEqual(['a', 'a 3', 'a 4']);
    expect(seen.lines).toEqual(['a 4']);
  });

  it('collapses a run of redraws that spans many chunks into the last non-empty segment', () => {
    const redraws = Array.from({ length: 500 }, (_, i) => `\r${i}/499`).join('');
    const bytes = Buffer.from(`${redraws}\r\nnext\n`);
    const chunks = cutAt(bytes, [3, 100, 101, 2000, bytes.length - 7]);
    const seen = run(chunks);
    expect(seen.lines).toEqual(['499/499', 'next']);
    expect(seen.segments).toHaveLength(500); // every redraw; 'next' has no \r, so it is no redraw
  });

  it('clears the open line once it has finished', () => {
    const seen = run(['\rSteps 5%', '\rSteps 6%\n', 'log\n']);
    expect(seen.partials).toEqual(['Steps 5%', '']);
    expect(seen.lines).toEqual(['Steps 6%', 'log']);
  });

  it('strips ANSI sequences and control characters in plain lines and in redraws', () => {
    const seen = run([
      '\x1b[1mbold\x1b[0m and bell\x07\n',
      'tab\there\n',
      '\r\x1b[36m 50%|█\x1b[0m\r\x1b[36m 60%|█\x1b[0m\n',
    ]);
    expect(seen.lines).toEqual(['bold and bell', 'tab     here', ' 60%|█']);
    expect(seen.lines.join('')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it('caps a very long line for display', () => {
    const long = 'x'.repeat(MAX_DISPLAY_LINE_CHARS * 10);
    const bytes = Buffer.from(`${long}\nshort\n`);
    const seen = run(cutAt(bytes, [5000, 20_000, 30_000]));
    expect(seen.lines[0]).toBe(`${'x'.repeat(MAX_DISPLAY_LINE_CHARS)}…`);
    expect(seen.lines[1]).toBe('short');
    const one = run([bytes]);
    expect(one.lines).toEqual(seen.lines);
  });

  it('reports no segments for lines without \r, even when they span chunks', () => {
    expect(run(['plain li', 'ne\nand more\n', 'last']).segments).toEqual([]);
  });

  it('works without a segment listener, and keeps a final line without newline', () => {
    expect(run(['one\ntw', 'o'], false).lines).toEqual(['one', 'two']);
  });
});

describe('thinning \\r redraws', () => {
  it('parses a bar once per percent, whatever the number of redraws', () => {
    const parsed: string[] = [];
    const t = new SegmentThinner(
      (text) => parsed.push(text),
      () => 0,
    );
    const redraws = Array.from(
      { length: 1000 },
      (_, i) => `Steps: ${String(Math.floor(i / 10)).padStart(3)}%|█| ${i}/1000`,
    );
    const bytes = Buffer.from(redraws.join('\r'));
    let s = 0;
    for (const r of redraws) {
      const e = s + Buffer.byteLength(r);
      t.segment(bytes, s, e);
      s = e + 1;
    }
    expect(parsed).toHaveLength(100);
    expect(parsed[0]).toBe('Steps:   0%|█| 0/1000');
    expect(parsed[99]).toBe('Steps:  99%|█| 990/1000');
  });

  it('parses a counter without a total at most every 200 ms of its clock', () => {
    let now = 1_000;
    const parsed: string[] = [];
    const t = new SegmentThinner(
      (text) => parsed.push(text),
      () => now,
    );
    for (let i = 0; i < 10; i++) {
      const b = Buffer.from(`Steps: ${i}it [00:01, 9.00it/s]`);
      t.segment(b, 0, b.length);
      now += 50;
    }
    expect(parsed).toEqual([
      'Steps: 0it [00:01, 9.00it/s]',
      'Steps: 4it [00:01, 9.00it/s]',
      'Steps: 8it [00:01, 9.00it/s]',
    ]);
  });

  it('decodes and cleans only the redraws it parses', () => {
    const parsed: string[] = [];
    const t = new SegmentThinner(
      (text) => parsed.push(text),
      () => 0,
    );
    const b = Buffer.from('\x1b[32m 7%|▋\x1b[0m| 7/100 [00:01<00:10, 7.00it/s]');
    t.segment(b, 0, b.length);
    expect(parsed).toEqual([' 7%|▋| 7/100 [00:01<00:10, 7.00it/s]']);
  });
});

describe('loss parsing, fast path', () => {
  // The single regex parseLoss used to run over every line: the fast path must agree with it.
  const REFERENCE =
    /(?<![A-Za-z0-9_])(?:train[_ ])?loss['"]?\s*[=:]\s*['"]?(?<v>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)(?![\w.])/i;
  const reference = (line: string): number | null => {
    if (!line.includes('oss')) return null;
    const m = REFERENCE.exec(line);
    if (!m) return null;
    const v = Number(m.groups!.v!.toLowerCase() === 'inf' ? Infinity : m.groups!.v);
    return Number.isNaN(v) && m.groups!.v!.toLowerCase() !== 'nan' ? null : v;
  };

  it('agrees with the reference regex on log and tqdm shapes', () => {
    const lines = [
      'loss=0.1234',
      'Loss: 2',
      "{'loss': 1.0453, 'grad_norm': 0.52}",
      '{"train_loss": "0.25"}',
      'train loss = 3e-2',
      'xtrain_loss=1',
      'val_loss=0.3 loss=0.2',
      'loss_scale=1 loss=5',
      'gloss=1 loss=.5',
      'loss=1.',
      'loss=-0.5',
      'loss=+7',
      'loss=inf',
      'loss=NaN',
      'loss=1.5.2',
      'loss=1e400',
      'loss=0.00000000000000000000000123',
      'loss=12345678901234567890',
      'oss=1',
      'loss=abc',
      'Attempted loss scale: 65536',
      '[INFO] step=9 loss=0.9091 lr=1.00e-04',
      'boss=1',
      'lossy=2',
      'loss',
      'loss=',
      'loss: 1_000',
      '  3%|▎| 30/1000 [00:05<02:41, 6.00it/s, loss=0.1234]',
    ];
    for (const l of lines) expect([l, parseLoss(l)]).toEqual([l, reference(l)]);
  });

  it('converts decimals exactly as Number() does', () => {
    const samples = [
      '0',
      '0.1',
      '0.1234',
      '1.',
      '.5',
      '-0.5',
      '+7',
      '2.5e-3',
      '1E+5',
      '123456789012345',
      '1234567890123456',
      '0.30000000000000004',
      '9.999999999999999e22',
      '1e-30',
      '5e-324',
    ];
    for (let i = 0; i < 2000; i++)
      samples.push((i / 7).toFixed(i % 9), (i * 1.37e-5).toExponential(i % 7), String(i / 3));
    for (const s of samples) expect([s, decimal(s)]).toEqual([s, Number(s)]);
  });
});

describe('the step log file', () => {
  it('appends the original chunks in order and has them all on disk once closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-steplog-'));
    try {
      const path = join(dir, 'step.log');
      writeFileSync(path, 'before\n');
      const log = new StepLog(path);
      const chunks = Array.from({ length: 200 }, (_, i) =>
        Buffer.from(`\r${i}% ${'█'.repeat(i % 7)}${i % 10 === 0 ? '\n' : ''}`),
      );
      for (const c of chunks) log.write(c);
      await log.close();
      expect(readFileSync(path)).toEqual(Buffer.concat([Buffer.from('before\n'), ...chunks]));
      expect(log.error).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  });

  it('gathers the chunks of one turn of the event loop into one write, made once LOG_BATCH_BYTES have come', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-steplog-'));
    try {
      const path = join(dir, 'step.log');
      // A flush interval no test waits for: only the batch size can start the write.
      const log = new StepLog(path, { flushMs: 3_600_000 });
      const chunk = Buffer.alloc(20_000, 'a');
      const n = Math.ceil(LOG_BATCH_BYTES / chunk.length) - 1;
      for (let i = 0; i < n; i++) log.write(chunk);
      // Below the batch size nothing was handed to the disk: the chunks wait for each other.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 50));
      expect(readFileSync(path).length).toBe(0);
      log.write(chunk);
      await until(() => readFileSync(path).length === (n + 1) * chunk.length, 'the batch on disk');
      await log.close();
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  });

  it('writes a lone chunk within the flush interval, without a close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-steplog-'));
    try {
      const path = join(dir, 'step.log');
      const log = new StepLog(path, { flushMs: 5 });
      log.write(Buffer.from('one line\n'));
      await until(() => readFileSync(path, 'utf8') === 'one line\n', 'the line on disk');
      await log.close();
      expect(readFileSync(path, 'utf8')).toBe('one line\n');
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  });

  it('stops logging on a write error instead of failing the run', async () => {
    const log = new StepLog('/dev/full'); // every write fails with ENOSPC
    log.write(Buffer.from('x'.repeat(1000)));
    const drained = new Promise<void>((res) => log.onDrain(res));
    await log.close();
    await drained;
    expect(log.error).toMatch(/ENOSPC/);
    expect(log.write(Buffer.from('more'))).toBe(true);
  });

  it('writes nothing and closes at once without a path', async () => {
    const log = new StepLog(null);
    expect(log.write(Buffer.from('x'))).toBe(true);
    await log.close();
  });
});

describe('pane frame pacing', () => {
  it('redraws for output every 100 ms while frames are cheap, further apart when they are slow, never beyond 500 ms', () => {
    const f = new FrameStats();
    expect(f.interval()).toBe(LOG_FRAME_INTERVAL_MS);
    for (let i = 0; i < 20; i++) f.record(3);
    expect(f.interval()).toBe(LOG_FRAME_INTERVAL_MS);
    for (let i = 0; i < 20; i++) f.record(25);
    expect(f.interval()).toBeGreaterThan(200);
    expect(f.interval()).toBeLessThanOrEqual(MAX_LOG_FRAME_INTERVAL_MS);
    for (let i = 0; i < 20; i++) f.record(400);
    expect(f.interval()).toBe(MAX_LOG_FRAME_INTERVAL_MS);
    f.record(Number.NaN);
    expect(f.frames).toBe(60);
  });
});
