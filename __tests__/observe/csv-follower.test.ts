import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CSV_READ_CHUNK_BYTES, LossCsvFollower } from '../../src/observe/metrics/csv-follower.js';
import type { CsvLogRow } from '../../src/observe/metrics/sources.js';
import { tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

const DIFFSYNTH = join(ROOT, '__tests__', 'fixtures', 'trainers', 'accelerate-diffsynth');
const followers: LossCsvFollower[] = [];

function follow(path: string, from?: 'start' | 'end') {
  const rows: CsvLogRow[] = [];
  // A poll interval far beyond any test: the tests drive poll() themselves.
  const f = new LossCsvFollower(path, { onRow: (r) => rows.push(r), pollMs: 3_600_000, from });
  followers.push(f);
  return { f, rows };
}

async function until(pred: () => boolean, what: string, poll?: () => Promise<void>): Promise<void> {
  const end = Date.now() + 20_000;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    if (poll) await poll();
    await new Promise((r) => setTimeout(r, 10));
  }
}

afterEach(async () => {
  for (const f of followers.splice(0)) await f.stop();
});

describe('following loss.csv as DiffSynth writes it', () => {
  it('skips the rows of an earlier run and reads only what this step appends', async () => {
    const dir = tempDir('zw-csv-');
    const path = join(dir, 'loss.csv');
    // An earlier run into the same output_path: 200k rows (about 5 MB).
    let old = 'step,key,value\n';
    for (let i = 1; i <= 200_000; i++) old += `${i},loss,0.${i}\n`;
    writeFileSync(path, old);
    const { f, rows } = follow(path);
    await f.start();
    await f.poll();
    expect(rows).toEqual([]);
    expect(f.bytesRead).toBe(0);
    // DiffSynth appends without a header, numbering from 1 again.
    appendFileSync(path, '1,loss,0.5\n2,loss,0.25\n');
    await f.poll();
    expect(rows).toEqual([
      { step: 1, key: 'loss', value: 0.5 },
      { step: 2, key: 'loss', value: 0.25 },
    ]);
    expect(f.bytesRead).toBe('1,loss,0.5\n2,loss,0.25\n'.length);
  });

  it("takes where the file ends when start() is called: rows written before its promise settles are this step's", async () => {
    const dir = tempDir('zw-csv-');
    const path = join(dir, 'loss.csv');
    writeFileSync(path, 'step,key,value\n1,loss,0.9\n');
    const { f, rows } = follow(path);
    const started = f.start();
    // Fixed before start() returns: no stat left in flight for the step's first rows to race.
    expect(f.state).toBe('following');
    // The step writes at once (a fast step, or a slow event loop): these rows are its own.
    appendFileSync(path, '1,loss,0.5\n2,loss,0.25\n');
    await started;
    await f.poll();
    expect(rows.map((r) => r.value)).toEqual([0.5, 0.25]);
  });

  it('waits for a file that appears late, and keeps an unfinished last row until its newline', async () => {
    const dir = tempDir('zw-csv-');
    const path = join(dir, 'out', 'loss.csv');
    const { f, rows } = follow(path);
    await f.start();
    await f.poll();
    expect(f.state).toBe('waiting');
    mkdirSync(join(dir, 'out'));
    writeFileSync(path, 'step,key,value\n1,loss,0.17000000178813934\n2,loss,0.126');
    await f.poll();
    expect(f.state).toBe('following');
    expect(rows).toEqual([{ step: 1, key: 'loss', value: 0.17000000178813934 }]);
    appendFileSync(path, '06601417064667\n');
    await f.poll();
    expect(rows[1]).toEqual({ step: 2, key: 'loss', value: 0.12606601417064667 });
  });

  it('starts again from the top when the file is truncated or replaced', async () => {
    const dir = tempDir('zw-csv-');
    const path = join(dir, 'loss.csv');
    const { f, rows } = follow(path, 'start');
    writeFileSync(path, 'step,key,value\n1,loss,0.9\n2,loss,0.8\n3,loss,0.7\n');
    await f.start();
    await f.poll();
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3]);
    writeFileSync(path, 'step,key,value\n1,loss,0.6\n'); // truncated and rewritten: shorter than before
    await f.poll();
    expect(rows.map((r) => r.value)).toEqual([0.9, 0.8, 0.7, 0.6]);
    expect(f.restarts).toBe(1);
    // Replaced by rename (another inode), longer than what was read so far.
    const next = join(dir, 'loss.csv.new');
    writeFileSync(next, 'step,key,value\n1,loss,0.11\n2,loss,0.22\n3,loss,0.33\n4,loss,0.44\n');
    renameSync(next, path);
    await f.poll();
    expect(rows.slice(4).map((r) => r.value)).toEqual([0.11, 0.22, 0.33, 0.44]);
    expect(f.restarts).toBe(2);
  });

  it('reads a backlog larger than one read (several chunks) and drops an endless line without a newline', async () => {
    const dir = tempDir('zw-csv-');
    const path = join(dir, 'loss.csv');
    const { f, rows } = follow(path, 'start');
    let text = '';
    const n = Math.ceil((3 * CSV_READ_CHUNK_BYTES) / 24);
    for (let i = 1; i <= n; i++) text += `${i},loss,0.${String(i).padStart(12, '0')}\n`;
    writeFileSync(path, `${'x'.repeat(100_000)}\n${text}${'y'.repeat(100_000)}`);
    await f.start();
    await f.poll();
    expect(rows.length).toBe(n);
    expect(rows[n - 1]!.step).toBe(n);
    appendFileSync(path, '\n7,loss,0.5\n');
    await f.poll();
    expect(rows.length).toBe(n + 1); // the endless line was dropped up to its newline, the next row is read
  });

  it('follows the DiffSynth stand-in: no file until the first step ends, a half-written row, every step', async () => {
    const dir = tempDir('zw-csv-');
    const out = join(dir, 'models', 'train', 'lora');
    const go = join(dir, 'go');
    const partialGo = join(dir, 'partial-go');
    const { f, rows } = follow(join(out, 'loss.csv'));
    await f.start();
    const child = spawn(
      process.execPath,
      [
        DIFFSYNTH,
        'launch',
        'examples/qwen_image/model_training/train.py',
        '--output_path',
        out,
        '--task',
        'sft:train',
        '--enable_csv_log',
      ],
      {
        env: {
          ...process.env,
          FAKE_TRAIN_STEPS: '6',
          FAKE_TRAIN_STEP_MS: '1',
          FAKE_TRAIN_GO_FILE: go,
          FAKE_TRAIN_PARTIAL_AT: '3',
          FAKE_TRAIN_PARTIAL_GO: partialGo,
        },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((r) => child.on('exit', r));
    await until(() => existsSync(join(out, 'training_args.json')), 'training_args.json');
    await f.poll();
    expect(f.state).toBe('waiting'); // the logger is created at the end of the first step
    writeFileSync(go, '');
    const csv = join(out, 'loss.csv');
    await until(() => existsSync(csv) && /\n3,lo/.test(readFileSync(csv, 'utf8')), 'the half-written row 3');
    await f.poll();
    expect(rows.map((r) => r.step)).toEqual([1, 2]);
    writeFileSync(partialGo, '');
    await exited;
    await f.stop();
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows.every((r) => r.key === 'loss' && r.value > 0 && r.value < 1)).toBe(true);
  });
});

describe("a viewer's follower and what is in loss.csv's place", () => {
  it("reads from the offset the run's supervisor saw at the step's start (a viewer that attaches later)", async () => {
    const dir = tempDir('zw-csv-');
    const path = join(dir, 'loss.csv');
    writeFileSync(path, 'step,key,value\n1,loss,0.9\n');
    const offset = readFileSync(path).length;
    appendFileSync(path, '1,loss,0.5\n2,loss,0.4\n');
    const rows: CsvLogRow[] = [];
    const f = new LossCsvFollower(path, { onRow: (r) => rows.push(r), pollMs: 3_600_000, from: offset });
    followers.push(f);
    await f.start();
    f.pollSync();
    expect(rows.map((r) => r.value)).toEqual([0.5, 0.4]);
  });

  it('a FIFO named loss.csv is never opened to wait for a writer: polls return at once, stop() too, and it is named', async () => {
    const dir = tempDir('zw-csv-');
    const path = join(dir, 'loss.csv');
    expect(spawn('mkfifo', [path]).pid).toBeGreaterThan(0);
    await until(() => existsSync(path), 'the FIFO');
    const { f, rows } = follow(path, 'start');
    await f.start();
    await f.poll();
    f.pollSync();
    await f.stop();
    expect(rows).toEqual([]);
    expect(f.error).toMatch(/not a regular file/);
  });
});
