/**
 * A run belongs to no terminal (issue 17): the training never waits for the screen that watches it and never
 * dies with it. Each test drives the built bin as a user would (a real pseudo-terminal, or a subprocess with
 * pipes), runs a Python trainer that writes as a real one does (blocking writes to its stdout and stderr) and
 * records the wall-clock time of each of its steps, then does to the viewer what terminals and users do: stop
 * it, pause its terminal, stop reading its output, hang up, kill it. The trainer must show no gap above 1 s
 * beyond its own period, and the run must end `succeeded` with every step's output in its log.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, KEYS, ROOT, spawnPty, type PtySession } from '../helpers/pty.js';
import { running, until, removeWorkDirs } from '../helpers/proc.js';
import type { RunJson } from '../../src/records/record.js';

/** The trainer's period and its output per step: 4 KB every 20 ms fills any pipe or socket buffer in about 1 s. */
const PERIOD_MS = 20;
const BYTES = 4000;
/** How long each fault lasts: a run held up by it would show a gap of several seconds. */
const FAULT_MS = 4_000;
/** The gap a run may show at most: its own period, plus 1 s. */
const MAX_GAP_MS = PERIOD_MS + 1_000;

/** The Python that runs the trainer stand-in: the real interpreter behind `python3` (no shim in between). */
function realPython(): string | null {
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}
const PYTHON = realPython();

const dirs: string[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const p of pids.splice(0)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  }
  await removeWorkDirs(dirs.splice(0));
});
beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

const PRESET = `name: tick
answers:
  num_processes: 1
  mode: "2"
  mixed_precision: bf16
files:
  accelerate_config: cfg/accelerate_config.yaml
  ds_config: cfg/ds_config.json
steps:
  - name: train
    uses_config: true
    args: [train.py, --task, "sft:train"]
`;

interface Work {
  dir: string;
  /** The trainer stand-in (as `accelerate`). */
  accelerate: string;
  ticks: string;
  env: Record<string, string>;
}

/** A launch directory with the preset, train.py and the Python trainer, for `steps` steps. */
function work(steps: number, more: Record<string, string> = {}): Work {
  const dir = mkdtempSync(join(tmpdir(), 'zw-owned-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'tick.yaml'), PRESET);
  writeFileSync(join(dir, 'train.py'), '# stand-in\n');
  const src = readFileSync(join(ROOT, '__tests__', 'fixtures', 'trainers', 'accelerate-ticker'), 'utf8');
  const accelerate = join(dir, 'accelerate');
  writeFileSync(accelerate, src.replace(/^#!.*\n/, `#!${PYTHON}\n`), { mode: 0o755 });
  const ticks = join(dir, 'ticks');
  return {
    dir,
    accelerate,
    ticks,
    env: {
      TICKER_STEPS: String(steps),
      TICKER_PERIOD_MS: String(PERIOD_MS),
      TICKER_BYTES: String(BYTES),
      TICKER_TICKS: ticks,
      TICKER_PID: join(dir, 'trainer.pid'),
      ZEROWIZ_SIGINT_GRACE_MS: '2000',
      ZEROWIZ_SIGTERM_GRACE_MS: '1000',
      ...more,
    },
  };
}

function tickTimes(w: Work): number[] {
  try {
    return readFileSync(w.ticks, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** The longest time between two steps of the trainer. */
function maxGap(w: Work): number {
  const t = tickTimes(w);
  let gap = 0;
  for (let i = 1; i < t.length; i++) gap = Math.max(gap, t[i]! - t[i - 1]!);
  return gap;
}

function recordDir(w: Work): string {
  const root = join(w.dir, '.zerowiz', 'runs');
  const [id] = existsSync(root) ? readdirSync(root).filter((n) => !n.startsWith('.')) : [];
  if (!id) throw new Error('no run record');
  return join(root, id);
}

function runJson(w: Work): RunJson {
  return JSON.parse(readFileSync(join(recordDir(w), 'run.json'), 'utf8')) as RunJson;
}

function ended(w: Work): string {
  try {
    return runJson(w).ended;
  } catch {
    return 'none';
  }
}

/** The run ended by itself: succeeded, every step's line in the log, no gap. */
async function expectUnhindered(w: Work, steps: number): Promise<void> {
  await until(() => ended(w) !== 'running' && ended(w) !== 'none', 'the run to end', 60_000);
  const j = runJson(w);
  expect(j.ended).toBe('succeeded');
  const log = readFileSync(join(recordDir(w), j.steps[0]!.log), 'utf8');
  for (const n of [1, Math.floor(steps / 2), steps]) expect(log).toContain(`step ${n} x`);
  expect(tickTimes(w)).toHaveLength(steps);
  expect(maxGap(w)).toBeLessThan(MAX_GAP_MS);
}

/** Waits until the trainer has made `n` steps (it runs, and the fault can begin). */
function started(w: Work, n = 20): Promise<void> {
  return until(() => tickTimes(w).length >= n, 'the trainer to run', 30_000);
}

/** `zerowiz launch tick.yaml --no-tui` as a subprocess; stdout is a pipe this test reads (or not). */
function streamLaunch(w: Work, opts: { readStdout?: boolean } = {}): ChildProcess {
  const child = spawn(process.execPath, [BIN, 'launch', 'tick.yaml', '--no-tui', '--accelerate', w.accelerate], {
    cwd: w.dir,
    env: { ...process.env, ...w.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pids.push(child.pid!);
  if (opts.readStdout !== false) child.stdout!.resume();
  child.stderr!.resume();
  return child;
}

function paneLaunch(w: Work, args: string[] = []): PtySession {
  const s = spawnPty({
    args: ['launch', 'tick.yaml', '--accelerate', w.accelerate, ...args],
    cwd: w.dir,
    cols: 100,
    rows: 24,
    env: w.env,
  });
  pids.push(s.pid);
  return s;
}

const exitOf = (c: ChildProcess) =>
  new Promise<number>((res) =>
    c.exitCode !== null
      ? res(c.exitCode)
      : c.on('exit', (code, sig) => res(code ?? 128 + (sig === 'SIGKILL' ? 9 : sig === 'SIGHUP' ? 1 : 15))),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(PYTHON === null)('a paused or stopped viewer never holds the training up', () => {
  it('kill -STOP of the stream viewer, then -CONT', async () => {
    const w = work(400);
    const z = streamLaunch(w);
    await started(w);
    process.kill(z.pid!, 'SIGSTOP');
    await sleep(FAULT_MS);
    process.kill(z.pid!, 'SIGCONT');
    expect(await exitOf(z)).toBe(0);
    await expectUnhindered(w, 400);
  }, 90_000);

  it("a stdout pipe that stops being read: the run goes on, zerowiz's memory stays bounded, it says what it dropped", async () => {
    // 4 KB lines every 5 ms (800 KB/s): what the reader leaves unread passes the limit during the pause.
    const w = work(2000, { TICKER_PERIOD_MS: '5' });
    const z = streamLaunch(w, { readStdout: false });
    await started(w);
    await sleep(FAULT_MS);
    const rssMb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${z.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    expect(rssMb).toBeLessThan(150);
    let out = '';
    z.stdout!.setEncoding('utf8');
    z.stdout!.on('data', (d: string) => (out += d));
    expect(await exitOf(z)).toBe(0);
    await expectUnhindered(w, 2000);
    expect(out).toMatch(/\[zerowiz\] \d+ line\(s\) not shown here: stdout was not read fast enough/);
    expect(out).toMatch(/\[zerowiz\] 1 step done/);
  }, 90_000);

  it('Ctrl+S (XOFF) on the terminal of stream mode, then Ctrl+Q', async () => {
    const w = work(400);
    const s = spawnPty({
      args: ['launch', 'tick.yaml', '--no-tui', '--accelerate', w.accelerate],
      cwd: w.dir,
      env: w.env,
    });
    pids.push(s.pid);
    await started(w);
    s.write('\x13');
    await sleep(FAULT_MS);
    s.write('\x11');
    expect(await s.exited).toBe(0);
    await expectUnhindered(w, 400);
  }, 90_000);

  it('Ctrl+Z of stream mode in an interactive shell (the job is stopped), then fg', async () => {
    const w = work(400);
    // A shell with job control, as a user has: Ctrl+Z stops the foreground job, `fg` continues it.
    const s = spawnPty({
      file: '/bin/bash',
      args: ['--norc', '--noprofile', '-i'],
      cwd: w.dir,
      env: { ...w.env, PS1: '$ ' },
      cols: 120,
    });
    pids.push(s.pid);
    s.write(`'${process.execPath}' '${BIN}' launch tick.yaml --no-tui --accelerate '${w.accelerate}'\r`);
    await started(w);
    s.write('\x1a');
    await s.waitFor(/Stopped/);
    await sleep(FAULT_MS);
    s.write('fg\r');
    await s.waitFor(/\[zerowiz\] run record:/, 60_000);
    s.write('exit\r');
    await s.exited;
    await expectUnhindered(w, 400);
  }, 90_000);

  it("the pane's terminal stops being read (a hung SSH link), then reads again; the pane takes its keys back after kill -STOP/-CONT", async () => {
    const w = work(400);
    const s = paneLaunch(w);
    await s.waitFor(/▶ 1\. train +running/, 30_000);
    await started(w);
    s.pauseReading();
    await sleep(FAULT_MS);
    s.resumeReading();
    // Stopped and continued from outside: the shell would have put the terminal back in cooked mode; the
    // pane puts it in raw mode again (a key is read at once, unechoed).
    process.kill(s.pid, 'SIGSTOP');
    await sleep(200);
    process.kill(s.pid, 'SIGCONT');
    await s.waitFor(/\[all steps done: q to close\]/, 60_000);
    s.write('q');
    expect(await s.exited).toBe(0);
    await expectUnhindered(w, 400);
  }, 90_000);

  it('kill -STOP of the pane, then -CONT', async () => {
    const w = work(400);
    const s = paneLaunch(w);
    await started(w);
    process.kill(s.pid, 'SIGSTOP');
    await sleep(FAULT_MS);
    process.kill(s.pid, 'SIGCONT');
    await s.waitFor(/\[all steps done: q to close\]/, 60_000);
    s.write('q');
    expect(await s.exited).toBe(0);
    await expectUnhindered(w, 400);
  }, 90_000);
});

describe.skipIf(PYTHON === null)('the run outlives its viewer', () => {
  it('closing the terminal under the pane: the run goes on; `runs` lists it as running; `attach` follows it to its end (exit 0)', async () => {
    const w = work(300);
    const s = paneLaunch(w);
    await started(w);
    s.hangUp();
    await s.exited;
    expect(running(s.pid)).toBe(false);
    // The viewer is gone; the run is not.
    expect(ended(w)).toBe('running');
    const runs = spawnSync(process.execPath, [BIN, 'runs', '--json'], { cwd: w.dir, encoding: 'utf8' });
    const listed = JSON.parse(runs.stdout) as { id: string; ended: string; supervisor: { pid: number } | null }[];
    expect(listed[0]).toMatchObject({ ended: 'running', supervisor: { pid: expect.any(Number) } });
    const text = spawnSync(process.execPath, [BIN, 'runs'], { cwd: w.dir, encoding: 'utf8' }).stdout;
    expect(text).toMatch(new RegExp(`zerowiz attach ${listed[0]!.id} · zerowiz stop ${listed[0]!.id}`));
    const a = spawnSync(process.execPath, [BIN, 'attach', listed[0]!.id, '--no-tui'], {
      cwd: w.dir,
      encoding: 'utf8',
      env: { ...process.env, ...w.env },
      // The replay prints the whole log so far; spawnSync would end attach with SIGTERM past its 1 MB.
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(a.status, `${a.stderr}\n${a.stdout.slice(-2000)}`).toBe(0);
    expect(a.stdout).toMatch(/\[zerowiz\] 1 step done/);
    await expectUnhindered(w, 300);
  }, 90_000);

  it('kill -9 of the stream viewer: the run ends and records exactly as if it had been watched', async () => {
    const w = work(300);
    const z = streamLaunch(w);
    await started(w);
    process.kill(z.pid!, 'SIGKILL');
    await exitOf(z);
    await expectUnhindered(w, 300);
    const j = runJson(w);
    expect(j.steps[0]).toMatchObject({ status: 'done', exitCode: 0 });
  }, 90_000);

  it('d in the pane leaves the run running and says how to follow it again', async () => {
    const w = work(300);
    const s = paneLaunch(w);
    await s.waitFor(/d leave running/, 30_000);
    await started(w);
    s.write('d');
    expect(await s.exited).toBe(0);
    const id = runJson(w).id;
    await s.waitFor(`zerowiz attach ${id}`);
    expect(s.raw()).toContain(`zerowiz stop ${id}`);
    await expectUnhindered(w, 300);
  }, 90_000);

  it('two launches of one preset in one directory: two run directories, each with its own logs and record', async () => {
    const w = work(60);
    const [a, b] = [streamLaunch(w), streamLaunch(w)];
    expect(await exitOf(a)).toBe(0);
    expect(await exitOf(b)).toBe(0);
    const root = join(w.dir, '.zerowiz', 'runs');
    const ids = readdirSync(root).filter((n) => !n.startsWith('.'));
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const j = JSON.parse(readFileSync(join(root, id, 'run.json'), 'utf8')) as RunJson;
      expect(j.ended).toBe('succeeded');
      const log = readFileSync(join(root, id, j.steps[0]!.log), 'utf8');
      // One trainer's output in each log: its steps once each.
      expect(log.match(/step 60 x/g)).toHaveLength(1);
    }
  }, 90_000);
});

describe.skipIf(PYTHON === null)('stopping a run', () => {
  it('`zerowiz stop RUN` from another terminal returns once the run has ended; the viewer exits 130', async () => {
    const w = work(5000);
    const z = streamLaunch(w);
    await started(w);
    const id = runJson(w).id;
    const trainer = Number(readFileSync(join(w.dir, 'trainer.pid'), 'utf8'));
    const r = spawnSync(process.execPath, [BIN, 'stop', id], { cwd: w.dir, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`run ${id} interrupted \\(exit 130\\)`));
    // Returned once the run had ended: the trainer is gone, the record final.
    expect(running(trainer)).toBe(false);
    expect(runJson(w)).toMatchObject({ ended: 'interrupted', exitCode: 130 });
    expect(runJson(w).steps[0]).toMatchObject({ status: 'stopped', stopSignal: 'SIGINT' });
    expect(await exitOf(z)).toBe(130);
    // Stopping a run that has ended is no error.
    expect(spawnSync(process.execPath, [BIN, 'stop', id], { cwd: w.dir, encoding: 'utf8' }).status).toBe(0);
  }, 90_000);

  it('without a terminal, SIGTERM to zerowiz stops the run (batch use) and it exits 130 once the run has ended', async () => {
    const w = work(5000);
    const z = streamLaunch(w);
    await started(w);
    z.kill('SIGTERM');
    expect(await exitOf(z)).toBe(130);
    expect(runJson(w)).toMatchObject({ ended: 'interrupted' });
    expect(running(Number(readFileSync(join(w.dir, 'trainer.pid'), 'utf8')))).toBe(false);
  }, 90_000);

  it('q then y in the pane stops the run and closes the pane (exit 130)', async () => {
    const w = work(5000);
    const s = paneLaunch(w);
    await started(w);
    s.write('q');
    await s.waitFor('Stop the run?');
    s.write('y');
    expect(await s.exited).toBe(130);
    expect(runJson(w)).toMatchObject({ ended: 'interrupted' });
  }, 90_000);

  it('kill -9 of the supervisor: its watchdog stops every step process with the ladder and ends the record', async () => {
    const w = work(5000);
    const z = streamLaunch(w);
    await started(w);
    const sup = runJson(w).supervisor!.pid;
    const trainer = Number(readFileSync(join(w.dir, 'trainer.pid'), 'utf8'));
    process.kill(sup, 'SIGKILL');
    await until(() => !running(trainer), 'the trainer to be stopped', 20_000);
    await until(() => ended(w) !== 'running', 'the watchdog to end the record', 20_000);
    const j = runJson(w);
    expect(j).toMatchObject({ ended: 'interrupted', exitCode: null });
    expect(j.note).toMatch(/watchdog/);
    // The trainer obeyed SIGINT (Python's KeyboardInterrupt): the ladder's first rung.
    expect(j.steps[0]).toMatchObject({ status: 'stopped', stopSignal: 'SIGINT' });
    // The viewer saw the end the watchdog wrote, and exits as a stopped run does.
    expect(await exitOf(z)).toBe(130);
  }, 90_000);
});

describe.skipIf(PYTHON === null)('what a run reads never holds zerowiz', () => {
  it('a loss.csv that is a FIFO: the run ends, the viewer exits, and SIGTERM still works while it runs', async () => {
    const w = work(100);
    const preset = PRESET.replace(
      'args: [train.py, --task, "sft:train"]',
      'args: [examples/qwen_image/model_training/train.py, --output_path, out, --enable_csv_log]',
    );
    writeFileSync(join(w.dir, 'tick.yaml'), preset);
    mkdirSync(join(w.dir, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(w.dir, 'examples/qwen_image/model_training/train.py'), '# stand-in\n');
    mkdirSync(join(w.dir, 'out'));
    expect(spawnSync('mkfifo', [join(w.dir, 'out', 'loss.csv')]).status).toBe(0);
    const z = streamLaunch(w);
    expect(await exitOf(z)).toBe(0);
    expect(runJson(w).ended).toBe('succeeded');

    const w2 = work(5000);
    writeFileSync(join(w2.dir, 'tick.yaml'), preset);
    mkdirSync(join(w2.dir, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(w2.dir, 'examples/qwen_image/model_training/train.py'), '# stand-in\n');
    mkdirSync(join(w2.dir, 'out'));
    expect(spawnSync('mkfifo', [join(w2.dir, 'out', 'loss.csv')]).status).toBe(0);
    const z2 = streamLaunch(w2);
    await started(w2);
    z2.kill('SIGTERM');
    expect(await exitOf(z2)).toBe(130);
  }, 90_000);
});

describe('Ctrl+C while `zerowiz stop` waits', () => {
  it('says it stopped waiting, that the run goes on stopping, and exits 130; the run still ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-owned-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'tick.yaml'), PRESET);
    writeFileSync(join(dir, 'train.py'), '# stand-in\n');
    // A trainer that lets SIGINT pass: the stop ladder waits its grace period before SIGTERM.
    const trainer = join(dir, 'accelerate');
    writeFileSync(
      trainer,
      `#!${process.execPath}\nprocess.on('SIGINT', () => {});\nconsole.log('training');\nsetInterval(() => {}, 1000);\n`,
      { mode: 0o755 },
    );
    const z = spawn(process.execPath, [BIN, 'launch', 'tick.yaml', '--no-tui', '--accelerate', trainer], {
      cwd: dir,
      env: { ...process.env, ZEROWIZ_SIGINT_GRACE_MS: '60000', ZEROWIZ_SIGTERM_GRACE_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    pids.push(z.pid!);
    z.stdout!.resume();
    z.stderr!.resume();
    const root = join(dir, '.zerowiz', 'runs');
    const idNow = () => (existsSync(root) ? readdirSync(root).find((n) => !n.startsWith('.')) : undefined);
    await until(() => idNow() !== undefined, 'the run record', 30_000);
    const id = idNow()!;
    await until(
      () =>
        existsSync(join(root, id, '01-train.log')) &&
        readFileSync(join(root, id, '01-train.log'), 'utf8').includes('training'),
      'the trainer to start',
      30_000,
    );
    const s = spawnPty({ args: ['stop', id], cwd: dir, cols: 120, rows: 10 });
    await s.waitFor('waiting for it to end');
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
    await s.waitFor(/stopped waiting \(Ctrl\+C\); run \S+ goes on stopping as asked/);
    // The stop goes on without it: a second, forceful stop ends the run now.
    expect(spawnSync(process.execPath, [BIN, 'stop', id, '--now'], { cwd: dir, encoding: 'utf8' }).status).toBe(0);
  }, 90_000);
});
