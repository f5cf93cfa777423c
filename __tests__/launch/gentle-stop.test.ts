/**
 * A stop is always gentle, and no training outlives its record. Each test launches the built bin over a real
 * Python trainer that saves a checkpoint when SIGINT asks it to stop (and whose save a second SIGINT cuts, as a
 * KeyboardInterrupt would), then does what users, scripts and the machine do: `zerowiz stop` from several
 * terminals at once, `kill -9` of the run's supervisor, of its watchdog or of both, `kill -STOP` of the
 * supervisor. What must hold: only `--now` kills at once; a save is never cut by a gentle stop; a run whose steps
 * outlive their supervisor and watchdog is shown as orphaned (with the pids), never as ended, and `stop` ends it
 * with the ladder; a stop that waits says what it waits for.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/pty.js';
import { running, until } from '../helpers/proc.js';
import type { RunJson } from '../../src/records/record.js';

const SAVER = join(ROOT, '__tests__', 'fixtures', 'trainers', 'accelerate-saver');
const HAS_PYTHON = spawnSync('python3', ['-c', 'pass']).status === 0;
/** The ladder's grace periods here: long enough for the trainer's 1 s save, short enough for a test. */
const SIGINT_GRACE_MS = 6_000;
const SIGTERM_GRACE_MS = 2_000;

const PRESET = `name: saver
answers:
  num_processes: 1
  mode: "2"
steps:
  - name: train
    uses_config: true
    args: [train.py]
`;

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0).reverse()) {
    try {
      f();
    } catch {}
  }
});

interface Run {
  dir: string;
  env: Record<string, string>;
  viewer: ChildProcess;
  viewerExit: Promise<number | null>;
  record: string;
  id: string;
}

function notes(r: Pick<Run, 'dir'>): string[] {
  try {
    return readFileSync(join(r.dir, 'out', 'notes.log'), 'utf8')
      .trim()
      .split('\n');
  } catch {
    return [];
  }
}

function runJson(r: Pick<Run, 'record'>): RunJson {
  return JSON.parse(readFileSync(join(r.record, 'run.json'), 'utf8')) as RunJson;
}

/** The trainer's processes still alive (the launcher and its workers). */
function alive(r: Pick<Run, 'dir'>): number[] {
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${n}/environ`, 'utf8');
      const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8');
      const trainer = cmd.includes('accelerate-saver') && !cmd.includes('zerowiz.js');
      if (env.includes(`SAVER_DIR=${r.dir}/out`) && trainer && running(Number(n))) out.push(Number(n));
    } catch {}
  }
  return out;
}

/** `zerowiz launch saver.yaml --no-tui` over the saving trainer, waiting until it trains. */
async function launch(more: Record<string, string> = {}): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'zw-gentle-'));
  mkdirSync(join(dir, 'out'));
  writeFileSync(join(dir, 'saver.yaml'), PRESET);
  writeFileSync(join(dir, 'train.py'), '# stand-in\n');
  const env = {
    ZEROWIZ_SIGINT_GRACE_MS: String(SIGINT_GRACE_MS),
    ZEROWIZ_SIGTERM_GRACE_MS: String(SIGTERM_GRACE_MS),
    ZEROWIZ_SKIP_CHECKS: 'all',
    SAVER_DIR: join(dir, 'out'),
    NO_COLOR: '1',
    ...more,
  };
  const viewer = spawn(process.execPath, [BIN, 'launch', 'saver.yaml', '--no-tui', '--accelerate', SAVER], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  viewer.stdout!.resume();
  viewer.stderr!.resume();
  const viewerExit = new Promise<number | null>((res) => viewer.on('exit', (code) => res(code)));
  const run = { dir, env, viewer, viewerExit, record: '', id: '' };
  cleanup.push(() => {
    for (const p of alive(run)) process.kill(p, 'SIGKILL');
    viewer.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  // A Node start, the supervisor's and Python's: seconds on a loaded 2-core machine.
  await until(() => notes(run).some((l) => l.startsWith('start 0')), 'the trainer to start', 90_000);
  const root = join(dir, '.zerowiz', 'runs');
  run.id = readdirSync(root).find((n) => !n.startsWith('.'))!;
  run.record = join(root, run.id);
  await until(() => runJson(run).steps[0]?.status === 'running', 'the record to say the step runs');
  return run;
}

/** `zerowiz ARGS` in the run's folder; resolves with its exit code and output. */
function zerowiz(r: Run, args: string[]): Promise<{ code: number | null; err: string; out: string }> {
  return new Promise((res) => {
    const c = spawn(process.execPath, [BIN, ...args], {
      cwd: r.dir,
      env: { ...process.env, ...r.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let out = '';
    c.stderr!.on('data', (d) => {
      err += d;
    });
    c.stdout!.on('data', (d) => {
      out += d;
    });
    cleanup.push(() => c.kill('SIGKILL'));
    c.on('exit', (code) => res({ code, err, out }));
  });
}

/** A `zerowiz stop` that is still running, its stderr read as it comes. */
function stopping(r: Run, args: string[] = []): { err: () => string; done: Promise<number | null> } {
  const c = spawn(process.execPath, [BIN, 'stop', r.id, ...args], {
    cwd: r.dir,
    env: { ...process.env, ...r.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  c.stderr!.on('data', (d) => {
    err += d;
  });
  cleanup.push(() => c.kill('SIGKILL'));
  return { err: () => err, done: new Promise((res) => c.on('exit', (code) => res(code))) };
}

const ended = (r: Run) => runJson(r).ended !== 'running';

describe.skipIf(!HAS_PYTHON)('a stop is always gentle: a second stop joins the first, only --now kills', () => {
  it('two stops at once, and a third a moment later: one ladder, and the save completes', async () => {
    const r = await launch();
    const first = [zerowiz(r, ['stop', r.id]), zerowiz(r, ['stop', r.id])];
    await until(() => notes(r).some((l) => l.startsWith('saving 0')), 'the trainer to start saving');
    const third = await zerowiz(r, ['stop', r.id]);
    const all = [...(await Promise.all(first)), third];
    for (const s of all) expect(s.code, s.err).toBe(0);
    expect(all.map((s) => s.err).join('')).toMatch(/already being stopped; this stop joins it/);
    expect(notes(r).filter((l) => l.startsWith('sigint'))).toHaveLength(1);
    expect(notes(r)).toContainEqual(expect.stringMatching(/^saved 0/));
    expect(notes(r)).not.toContainEqual(expect.stringMatching(/^cut/));
    const j = runJson(r);
    expect(j.ended).toBe('interrupted');
    expect(j.steps[0]!.stopSignal).toBe('SIGINT');
    expect(await r.viewerExit).toBe(130);
  }, 150_000);

  it('SIGTERM to the supervisor twice is one stop too', async () => {
    const r = await launch();
    const sup = runJson(r).supervisor!.pid;
    process.kill(sup, 'SIGTERM');
    await until(() => notes(r).some((l) => l.startsWith('saving 0')), 'the trainer to start saving');
    process.kill(sup, 'SIGTERM');
    await until(() => ended(r), 'the run to end', 30_000);
    expect(notes(r)).toContainEqual(expect.stringMatching(/^saved 0/));
    expect(runJson(r).steps[0]!.stopSignal).toBe('SIGINT');
  }, 150_000);

  it('stop --now after a stop kills at once (the record says SIGKILL)', async () => {
    const r = await launch({ SAVER_SAVE_MS: '5000' });
    const gentle = zerowiz(r, ['stop', r.id]);
    await until(() => notes(r).some((l) => l.startsWith('saving 0')), 'the trainer to start saving');
    const now = await zerowiz(r, ['stop', r.id, '--now']);
    expect(now.code, now.err).toBe(0);
    expect((await gentle).code).toBe(0);
    expect(notes(r)).not.toContainEqual(expect.stringMatching(/^saved/));
    expect(runJson(r).steps[0]!.stopSignal).toBe('SIGKILL');
    expect(alive(r)).toEqual([]);
  }, 150_000);

  it('a supervisor killed while its ladder waits: the watchdog goes on with the same ladder, no second SIGINT', async () => {
    const r = await launch();
    void zerowiz(r, ['stop', r.id]);
    await until(() => notes(r).some((l) => l.startsWith('saving 0')), 'the trainer to start saving');
    process.kill(runJson(r).supervisor!.pid, 'SIGKILL');
    await until(() => ended(r) && alive(r).length === 0, 'the watchdog to end the run', 30_000);
    expect(notes(r).filter((l) => l.startsWith('sigint'))).toHaveLength(1);
    expect(notes(r)).toContainEqual(expect.stringMatching(/^saved 0/));
    expect(runJson(r).note ?? '').toMatch(/watchdog/);
  }, 150_000);
});

describe.skipIf(!HAS_PYTHON)('no training outlives its record', () => {
  it('supervisor and watchdog killed together: runs shows the run orphaned with its pids, stop ends it with the ladder', async () => {
    const r = await launch({ SAVER_WORKERS: '1' });
    await until(() => notes(r).some((l) => l.startsWith('start 1')), 'the worker to start');
    const trainers = alive(r);
    const { pid, watchdog } = runJson(r).supervisor!;
    process.kill(pid, 'SIGKILL');
    process.kill(watchdog!.pid, 'SIGKILL');
    await until(() => !running(pid) && !running(watchdog!.pid), 'both to be gone');

    const runs = await zerowiz(r, ['runs']);
    expect(runs.code).toBe(0);
    expect(runs.out).toMatch(new RegExp(`${r.id}\\s+orphaned`));
    for (const p of trainers) expect(runs.out).toContain(String(p));
    const json = JSON.parse((await zerowiz(r, ['runs', '--json'])).out)[0];
    expect(json.ended).toBe('running');
    expect(json.orphans.map((o: { pid: number }) => o.pid).sort()).toEqual([...trainers].sort());
    expect(runJson(r).ended).toBe('running');

    const stop = await zerowiz(r, ['stop', r.id]);
    expect(stop.code, stop.err).toBe(0);
    expect(stop.err).toMatch(/orphaned/);
    expect(alive(r)).toEqual([]);
    expect(notes(r).filter((l) => l.startsWith('saved'))).toHaveLength(2);
    const j = runJson(r);
    expect(j.ended).toBe('interrupted');
    expect(j.steps[0]!.status).toBe('stopped');
    expect(j.steps[0]!.stopSignal).toBe('SIGINT');
    expect(j.note).toMatch(/zerowiz stop/);
    expect(readdirSync(r.record)).not.toContain('.space-reserve');
    // The viewer followed the orphaned run to its end.
    expect(await r.viewerExit).toBe(130);
  }, 150_000);

  it('attach follows an orphaned run, says so, and ends with it', async () => {
    const r = await launch();
    const { pid, watchdog } = runJson(r).supervisor!;
    process.kill(pid, 'SIGKILL');
    process.kill(watchdog!.pid, 'SIGKILL');
    await until(() => !running(pid) && !running(watchdog!.pid), 'both to be gone');
    const attach = zerowiz(r, ['attach', r.id, '--no-tui']);
    await new Promise((res) => setTimeout(res, 1500));
    expect(alive(r).length).toBeGreaterThan(0);
    const stop = await zerowiz(r, ['stop', r.id]);
    expect(stop.code, stop.err).toBe(0);
    const a = await attach;
    expect(a.err + a.out).toMatch(/orphaned/);
    expect(a.code).toBe(130);
  }, 150_000);

  it('the watchdog killed first: the supervisor starts another, which ends the run when the supervisor is killed', async () => {
    const r = await launch();
    const first = runJson(r).supervisor!.watchdog!.pid;
    process.kill(first, 'SIGKILL');
    await until(() => {
      const w = runJson(r).supervisor!.watchdog;
      return w !== null && w !== undefined && w.pid !== first && running(w.pid);
    }, 'a new watchdog in the record');
    process.kill(runJson(r).supervisor!.pid, 'SIGKILL');
    await until(() => ended(r) && alive(r).length === 0, 'the new watchdog to end the run', 30_000);
    expect(runJson(r).note ?? '').toMatch(/watchdog/);
    expect(notes(r)).toContainEqual(expect.stringMatching(/^saved 0/));
  }, 150_000);
});

describe.skipIf(!HAS_PYTHON)('a stop that waits says what it waits for', () => {
  it('a stopped supervisor (SIGSTOP): stop says so; stop --now kills the steps directly', async () => {
    const r = await launch();
    const sup = runJson(r).supervisor!.pid;
    process.kill(sup, 'SIGSTOP');
    cleanup.push(() => process.kill(sup, 'SIGCONT'));
    const gentle = stopping(r);
    await until(() => /supervisor \(pid \d+\) is stopped/.test(gentle.err()), 'stop to say what it waits for', 15_000);
    expect(gentle.err()).toMatch(/zerowiz stop \S+ --now/);
    const now = await zerowiz(r, ['stop', r.id, '--now']);
    expect(now.code, now.err).toBe(0);
    // Killed: gone as soon as the kernel has reaped them (a loaded machine takes a moment).
    await until(() => alive(r).length === 0, 'the killed steps to be gone', 5_000);
    process.kill(sup, 'SIGCONT');
    expect(await gentle.done).toBe(0);
    await until(() => ended(r), 'the supervisor to finish the record');
    expect(runJson(r).steps[0]!.stopSignal).toBe('SIGKILL');
  }, 150_000);

  const freezer = existsSync('/sys/fs/cgroup/freezer/cgroup.procs')
    ? '/sys/fs/cgroup/freezer'
    : existsSync('/sys/fs/cgroup/cgroup.controllers')
      ? '/sys/fs/cgroup'
      : null;
  it.skipIf(freezer === null || process.getuid?.() !== 0)(
    'a frozen supervisor (a frozen cgroup): stop says so; stop --now kills the steps directly',
    async () => {
      const r = await launch();
      const sup = runJson(r).supervisor!.pid;
      const cg = join(freezer!, `zw-test-freeze-${process.pid}`);
      mkdirSync(cg);
      cleanup.push(() => rmSync(cg, { recursive: false, force: true }));
      writeFileSync(join(cg, 'cgroup.procs'), String(sup));
      const v1 = existsSync(join(cg, 'freezer.state'));
      writeFileSync(join(cg, v1 ? 'freezer.state' : 'cgroup.freeze'), v1 ? 'FROZEN' : '1');
      cleanup.push(() => writeFileSync(join(cg, v1 ? 'freezer.state' : 'cgroup.freeze'), v1 ? 'THAWED' : '0'));
      const gentle = stopping(r);
      await until(() => /supervisor \(pid \d+\) is frozen/.test(gentle.err()), 'stop to say it is frozen', 15_000);
      const now = await zerowiz(r, ['stop', r.id, '--now']);
      expect(now.code, now.err).toBe(0);
      await until(() => alive(r).length === 0, 'the killed steps to be gone', 5_000);
      writeFileSync(join(cg, v1 ? 'freezer.state' : 'cgroup.freeze'), v1 ? 'THAWED' : '0');
      expect(await gentle.done).toBe(0);
      await until(() => ended(r), 'the supervisor to finish the record');
    },
    150_000,
  );
});
