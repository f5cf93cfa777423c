import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pipeline, type StepSpec } from '../../src/launch/runner.js';
import { RunModel } from '../../src/pane/model.js';
import { groupAlive, trackedGroups } from '../../src/proc/group.js';
import { StreamPrinter } from '../../src/launch/stream.js';
import type { Progress } from '../../src/observe/logparse.js';
import { RunWatch } from '../../src/observe/watch.js';
import { ROOT } from '../helpers/pty.js';
import { running, until, removeWorkDirs } from '../helpers/proc.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-runner-'));
  dirs.push(d);
  return d;
}

function steps(dir: string, env: Record<string, string>, names = ['data_process', 'train']): StepSpec[] {
  return names.map((name, i) => ({
    name,
    file: FAKE,
    args: ['launch', 'train.py', '--task', `sft:${name}`],
    logPath: join(dir, `${String(i + 1).padStart(2, '0')}-${name}.log`),
    cwd: dir,
    env: { FAKE_ACCELERATE_LOG: join(dir, 'argv.jsonl'), FAKE_ACCELERATE_STEP_MS: '0', ...env },
  }));
}

/** The stand-in's invocations so far; only whole lines (one may be read while it is being appended). */
const invocations = (dir: string) =>
  existsSync(join(dir, 'argv.jsonl'))
    ? readFileSync(join(dir, 'argv.jsonl'), 'utf8')
        .split('\n')
        .slice(0, -1) // every whole line ends with a newline
        .map(
          (l) => JSON.parse(l) as { argv: string[]; pid: number; workerPid: number | null; daemonPid: number | null },
        )
    : [];

describe('the pipeline', () => {
  it('runs the steps in order and ends with exit code 0', async () => {
    const dir = tmp();
    const p = new Pipeline(steps(dir, { FAKE_ACCELERATE_STEPS: '50' }));
    const model = new RunModel(p.steps.map((s) => ({ name: s.name, logPath: s.logPath, command: '' })));
    const watch = new RunWatch({ steps: p.steps.map((s) => ({ name: s.name })) });
    p.subscribe(watch);
    p.subscribe(model);
    // Every finished line comes with the runner's own tqdm parse: subscribers never parse it again.
    const bars: (Progress | null)[] = [];
    p.subscribe({ line: (_i, text, progress) => void (text.includes('%|') && bars.push(progress)) });
    const o = await p.run();
    expect(o).toMatchObject({ outcome: 'succeeded', exitCode: 0, failedStep: null });
    expect(invocations(dir).map((x) => x.argv[3])).toEqual(['sft:data_process', 'sft:train']);
    expect(model.steps.map((s) => s.status)).toEqual(['done', 'done']);
    // 51 tqdm redraws became one line in the pane, but all of them are in the raw log on disk.
    const shown = model.steps[1]!.lines.tail(100).filter((l) => l.includes('%|'));
    expect(shown).toEqual([expect.stringContaining('100%|██████████| 50/50')]);
    expect(readFileSync(p.steps[1]!.logPath!, 'utf8').split('\r').length).toBeGreaterThan(50);
    expect(model.steps[1]!.progress).toMatchObject({ percent: 100, n: 50, total: 50 });
    // The loss of each of the 50 distinct tqdm states (the postfix), once each: the watch is the one loss source.
    expect(watch.steps[1]!.metrics.lossCount).toBe(50);
    expect(watch.steps[1]!.metrics.lossSource).toBe('tqdm');
    expect(bars.length).toBeGreaterThan(0);
    expect(bars.every((b) => b !== null && b.percent === 100)).toBe(true);
  });

  it('never starts the second step when the first fails, and ends with exit code 1', async () => {
    const dir = tmp();
    const p = new Pipeline(steps(dir, { FAKE_ACCELERATE_EXIT: '3', FAKE_ACCELERATE_FAIL_TASK: 'sft:data_process' }));
    const o = await p.run();
    expect(o).toMatchObject({ outcome: 'failed', exitCode: 1, failedStep: 0 });
    expect(o.results[0]).toMatchObject({ status: 'failed', exitCode: 3 });
    expect(o.results[1]).toBeNull();
    expect(p.statuses).toEqual(['failed', 'pending']);
    expect(invocations(dir)).toHaveLength(1);
  });

  it('fails a step whose executable cannot be started', async () => {
    const dir = tmp();
    const spec = { ...steps(dir, {})[0]!, file: join(dir, 'no-such-accelerate') };
    const o = await new Pipeline([spec]).run();
    expect(o.exitCode).toBe(1);
    expect(o.results[0]?.error).toMatch(/ENOENT/);
  });

  it('stops the whole process group, including a worker that ignores SIGINT, and ends with 130', async () => {
    const dir = tmp();
    const grace = { sigintMs: 300, sigtermMs: 300 };
    const p = new Pipeline(
      steps(dir, { FAKE_ACCELERATE_HANG: '1', FAKE_ACCELERATE_IGNORE_SIGINT: '1', FAKE_ACCELERATE_STEPS: '5' }),
      grace,
    );
    const started = new Promise<number>((res) =>
      p.subscribe({ line: (_i, t) => t.includes('waiting (hang)') && res(0) }),
    );
    const run = p.run();
    await started;
    const [inv] = invocations(dir);
    expect(inv?.workerPid).toBeTypeOf('number');
    expect(running(inv!.workerPid!)).toBe(true);
    const t0 = Date.now();
    await p.stop();
    const o = await run;
    expect(Date.now() - t0).toBeLessThan(grace.sigintMs + grace.sigtermMs + 1_000);
    expect(o).toMatchObject({ outcome: 'interrupted', exitCode: 130, failedStep: 0 });
    expect(o.results[0]).toMatchObject({ status: 'stopped', stopSignal: 'SIGTERM' });
    expect(o.results[1]).toBeNull();
    expect(running(inv!.pid)).toBe(false);
    expect(running(inv!.workerPid!)).toBe(false);
    expect(trackedGroups()).not.toContain(inv!.pid);
    expect(invocations(dir)).toHaveLength(1);
  });

  it('escalates to SIGKILL for a worker that ignores SIGINT and SIGTERM', async () => {
    const dir = tmp();
    const p = new Pipeline(
      steps(
        dir,
        {
          FAKE_ACCELERATE_HANG: '1',
          FAKE_ACCELERATE_IGNORE_SIGINT: '1',
          FAKE_ACCELERATE_WORKER_IGNORE_SIGTERM: '1',
          FAKE_ACCELERATE_STEPS: '1',
        },
        ['only'],
      ),
      { sigintMs: 200, sigtermMs: 200 },
    );
    const started = new Promise<void>((res) => p.subscribe({ line: (_i, t) => t.includes('waiting (hang)') && res() }));
    const run = p.run();
    await started;
    const [inv] = invocations(dir);
    await p.stop();
    const o = await run;
    expect(o.results[0]?.stopSignal).toBe('SIGKILL');
    expect(running(inv!.workerPid!)).toBe(false);
    expect(groupAlive(inv!.pid)).toBe(false);
  });

  it('records SIGKILL as the stop signal when a second Ctrl+C kills during the grace period', async () => {
    const dir = tmp();
    // Long grace periods: only the kill can end the worker that ignores SIGINT within the test.
    const p = new Pipeline(
      steps(dir, { FAKE_ACCELERATE_HANG: '1', FAKE_ACCELERATE_IGNORE_SIGINT: '1', FAKE_ACCELERATE_STEPS: '1' }, [
        'only',
      ]),
      { sigintMs: 20_000, sigtermMs: 20_000 },
    );
    const started = new Promise<void>((res) => p.subscribe({ line: (_i, t) => t.includes('waiting (hang)') && res() }));
    const run = p.run();
    await started;
    const [inv] = invocations(dir);
    const stopped = p.stop();
    // The launcher obeys SIGINT; its worker does not, so the group outlives the first signal.
    await until(() => !running(inv!.pid), 'the launcher to exit on SIGINT');
    expect(running(inv!.workerPid!)).toBe(true);
    p.killNow();
    await stopped;
    const o = await run;
    expect(o.results[0]).toMatchObject({ status: 'stopped', stopSignal: 'SIGKILL' });
    expect(running(inv!.workerPid!)).toBe(false);
  });

  it('a stop that comes after the step ended by itself leaves it done, and starts nothing more', async () => {
    const dir = tmp();
    // The daemon holds the step's output for a while after it exited: the stop lands in that window.
    const p = new Pipeline(steps(dir, { FAKE_ACCELERATE_DAEMON: '1', FAKE_ACCELERATE_DAEMON_MS: '5000' }), {
      sigintMs: 200,
      sigtermMs: 200,
    });
    const run = p.run();
    await until(() => invocations(dir).length === 1, 'the first step to start');
    const [inv] = invocations(dir);
    await until(() => !running(inv!.pid), 'the first step to exit');
    await p.stop();
    const o = await run;
    process.kill(inv!.daemonPid!, 'SIGKILL');
    expect(o).toMatchObject({ outcome: 'interrupted', exitCode: 130, failedStep: null });
    expect(o.results[0]).toMatchObject({ status: 'done', exitCode: 0 });
    expect(o.results[0]?.stopSignal).toBeUndefined();
    expect(o.results[1]).toBeNull();
    expect(invocations(dir)).toHaveLength(1);
  });

  it('ends workers a step leaves behind after it exits, before the next step starts', async () => {
    const dir = tmp();
    const p = new Pipeline(
      steps(dir, { FAKE_ACCELERATE_WORKER: '1', FAKE_ACCELERATE_LEAVE_WORKER: '1', FAKE_ACCELERATE_STEPS: '1' }, [
        'only',
      ]),
      { sigintMs: 200, sigtermMs: 200 },
    );
    const o = await p.run();
    expect(o.exitCode).toBe(0);
    const [inv] = invocations(dir);
    expect(running(inv!.workerPid!)).toBe(false);
  });
});

describe('stream mode', () => {
  it('prefixes lines with the step name and thins progress to a line per percent', async () => {
    const dir = tmp();
    const p = new Pipeline(steps(dir, { FAKE_ACCELERATE_STEPS: '1000' }, ['train']));
    let out = '';
    const printer = new StreamPrinter({ write: (s) => (out += s) }, ['train']);
    p.subscribe(printer);
    await p.run();
    printer.flush();
    const lines = out.trimEnd().split('\n');
    expect(lines.every((l) => l.startsWith('[train]') || l.startsWith('[zerowiz]'))).toBe(true);
    const bars = lines.filter((l) => l.includes('%|'));
    // 1001 redraws: one line per percent (0..100), the final 100% not repeated.
    expect(bars).toHaveLength(101);
    expect(new Set(bars.map((l) => /(\d+)%\|/.exec(l)?.[1])).size).toBe(101);
    expect(out).not.toContain('\r');
    expect(lines.at(-1)).toMatch(/^\[zerowiz\] step train done in/);
  });
});
