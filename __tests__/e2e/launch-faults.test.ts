/**
 * The run and its processes under faults, as users meet them: a full disk, a step that leaves a daemon
 * holding its output, damaged run records (the terminal closing and killed processes: run-owned.test.ts). Each test drives the built bin (a real pseudo-terminal or a subprocess) and checks /proc.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_ACCELERATE as FAKE, TWO_STEP } from '../helpers/launch.js';
import { BIN, ROOT } from '../helpers/pty.js';
import { running, removeWorkDirs } from '../helpers/proc.js';
import type { RunJson } from '../../src/records/record.js';

const GRACE = { ZEROWIZ_SIGINT_GRACE_MS: '300', ZEROWIZ_SIGTERM_GRACE_MS: '300' };

const dirs: string[] = [];
const pids: number[] = [];
const mounts: string[] = [];
afterEach(async () => {
  // Whatever a failed test left running is ended here, so one failure does not leak into the next test.
  for (const p of pids.splice(0)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  }
  for (const m of mounts.splice(0)) {
    spawnSync('umount', ['-l', m]);
    try {
      rmdirSync(m);
    } catch {}
  }
  await removeWorkDirs(dirs.splice(0));
});
beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

function workDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-faults-'));
  dirs.push(d);
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  return d;
}

interface Invocation {
  pid: number;
  workerPid: number | null;
  daemonPid: number | null;
  argv: string[];
}
function invocations(log: string): Invocation[] {
  if (!existsSync(log)) return [];
  const out = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Invocation);
  for (const x of out) for (const p of [x.pid, x.workerPid, x.daemonPid]) if (p) pids.push(p);
  return out;
}

function recordDirs(cwd: string): string[] {
  const root = join(cwd, '.zerowiz', 'runs');
  return existsSync(root) ? readdirSync(root).map((n) => join(root, n)) : [];
}
function readRecord(dir: string): RunJson {
  return JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunJson;
}

/** `zerowiz launch TWO_STEP --no-tui` as a subprocess, the stand-in's argv log in `cwd`, short grace periods. */
function streamLaunch(cwd: string, env: Record<string, string>): { child: ChildProcess; out: () => string } {
  return startCli(['launch', TWO_STEP, '--no-tui', '--accelerate', FAKE], cwd, {
    FAKE_ACCELERATE_LOG: join(cwd, 'argv.jsonl'),
    FAKE_ACCELERATE_STEPS: '3',
    ...GRACE,
    ...env,
  });
}

function startCli(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): { child: ChildProcess; out: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, FAKE_ACCELERATE_STEP_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pids.push(child.pid!);
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  return { child, out: () => text };
}
const exitOf = (c: ChildProcess) =>
  new Promise<number>((res) => (c.exitCode !== null ? res(c.exitCode) : c.on('exit', (code) => res(code ?? 128))));

describe('the run when its output or its disk fails', () => {
  it('a step that leaves a daemon holding its output ends once its group is gone, and names the holder', async () => {
    const d = workDir();
    const log = join(d, 'argv.jsonl');
    const z = streamLaunch(d, {
      FAKE_ACCELERATE_DAEMON: '1',
      FAKE_ACCELERATE_DAEMON_MS: '25000',
    });
    expect(await exitOf(z.child)).toBe(0);
    const inv = invocations(log);
    expect(inv).toHaveLength(2);
    const daemon = inv[0]!.daemonPid!;
    expect(running(daemon)).toBe(true); // it left the step's process group on purpose: reported, not killed
    expect(z.out()).toMatch(new RegExp(`step data_process: its output is still held open by pid ${daemon} \\(`));
    const j = readRecord(recordDirs(d)[0]!);
    expect(j.steps.map((s) => s.status)).toEqual(['done', 'done']);
    expect(j.steps[0]!.warning).toMatch(new RegExp(`pid ${daemon}`));
  });

  it('a full disk stops the logging, never the run; the record ends and no temporary file is left', async (ctx) => {
    const mnt = mkdtempSync(join(tmpdir(), 'zw-full-'));
    const m = process.getuid?.() === 0 ? spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=384k', 'tmpfs', mnt]) : null;
    if (m?.status !== 0) {
      rmdirSync(mnt);
      const why = m ? `mount failed: ${String(m.stderr).trim()}` : 'not root';
      console.log(`skipped the full-disk test: it mounts a small tmpfs (${why})`);
      ctx.skip();
      return;
    }
    mounts.push(mnt);
    writeFileSync(join(mnt, 'train.py'), '# stand-in\n');
    const side = workDir();
    const log = join(side, 'argv.jsonl');
    const z = startCli(['launch', TWO_STEP, '--no-tui', '--accelerate', FAKE], mnt, {
      FAKE_ACCELERATE_LOG: log,
      FAKE_ACCELERATE_FLOOD_LINES: '8000', // ~800 KB per step: the first one fills the disk
    });
    const code = await exitOf(z.child);
    expect(z.out()).not.toMatch(/unexpected error|\n\s+at /);
    expect(code).toBe(0);
    expect(invocations(log)).toHaveLength(2);
    const [dir] = recordDirs(mnt);
    const j = readRecord(dir!);
    expect(j).toMatchObject({ ended: 'succeeded', exitCode: 0 });
    expect(j.steps.map((s) => s.status)).toEqual(['done', 'done']);
    expect(j.logError).toMatch(/ENOSPC|no space/i);
    expect(readdirSync(dir!).filter((f) => f.includes('.tmp') || f.startsWith('.'))).toEqual([]);
    expect(z.out()).toMatch(/logging stopped .*no space left on device.*the run goes on/i);
  });
});

describe('damaged run records', () => {
  it('`runs` and `launch --last` skip and name a damaged run.json instead of crashing', async () => {
    const d = workDir();
    const env = { ...process.env, ZEROWIZ_ACCELERATE: FAKE, FAKE_ACCELERATE_STEP_MS: '0' };
    const cli = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: d, env, encoding: 'utf8' });
    expect(cli(['launch', TWO_STEP]).status).toBe(0);
    const [good] = recordDirs(d);
    const goodId = readRecord(good!).id;
    const runs = join(d, '.zerowiz', 'runs');
    // Newer than the good one: a record whose fields are missing, and a cut-off file.
    mkdirSync(join(runs, '20990101-000000-bad'));
    writeFileSync(
      join(runs, '20990101-000000-bad', 'run.json'),
      JSON.stringify({
        startedAt: '2099-01-01T00:00:00.000Z',
        steps: [],
        setup: { name: 'x', steps: [{ name: 'a', args: ['train.py'], usesConfig: false }] },
      }),
    );
    mkdirSync(join(runs, '20990102-000000-cut'));
    writeFileSync(join(runs, '20990102-000000-cut', 'run.json'), '{"version": 1, "id": "20990102-0');

    const list = cli(['runs']);
    expect(list.stderr).not.toMatch(/TypeError|unexpected|\n\s+at /);
    expect(list.status).toBe(0);
    expect(list.stdout).toContain(goodId);
    expect(list.stderr).toMatch(/skipped a damaged run record: \.zerowiz\/runs\/20990101-000000-bad\/run\.json: /);
    expect(list.stderr).toMatch(/skipped a damaged run record: \.zerowiz\/runs\/20990102-000000-cut\/run\.json: /);

    const json = cli(['runs', '--json']);
    expect(json.status).toBe(0);
    expect((JSON.parse(json.stdout) as { id: string }[]).map((r) => r.id)).toEqual([goodId]);

    const last = cli(['launch', '--last']);
    expect(last.stderr).not.toMatch(/TypeError|unexpected|\n\s+at /);
    expect(last.status).toBe(0);
    expect(last.stderr).toMatch(/skipped a damaged run record: .*20990101-000000-bad/);
    expect(last.stdout).toContain(`run `);
    const sources = recordDirs(d).map((dir) => readRecordSafe(dir)?.source);
    expect(sources.filter((x) => x?.startsWith('--last'))).toEqual([`--last (${goodId})`]);
  });
});

function readRecordSafe(dir: string): RunJson | null {
  try {
    return readRecord(dir);
  } catch {
    return null;
  }
}
