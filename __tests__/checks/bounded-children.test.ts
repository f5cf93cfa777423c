/**
 * Every child zerowiz starts is bounded in time and in its process group. The Python behind `accelerate` here
 * is a shell script named `python` that never answers and leaves a child holding its output (as a Python whose
 * import starts a helper does): `zerowiz check` gives up at its timeout and leaves nothing running, SIGTERM
 * ends it at once, and `zerowiz stop` ends a launch whose checks before the pass are waiting on it. A Python
 * that answers something else than the probe's answer is named, never a crash.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/pty.js';
import { removeWorkDirs, running, until } from '../helpers/proc.js';
import { barePath } from '../helpers/seal.js';

const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) {
    try {
      await f();
    } catch {}
  }
});

/** A folder with a preset, and an `accelerate` whose interpreter is `body` (a shell script named python). */
function box(body: string): { dir: string; accelerate: string; mark: string; env: Record<string, string> } {
  const dir = tempDir('zw-bounded-');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'python'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  const accelerate = join(bin, 'accelerate');
  writeFileSync(accelerate, `#!${join(bin, 'python')}\n# accelerate's entry point\n`, { mode: 0o755 });
  writeFileSync(join(dir, 'train.py'), '# stand-in\n');
  writeFileSync(
    join(dir, 'run.yaml'),
    'name: run\nanswers:\n  num_processes: 1\n  mode: "2"\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py]\n',
  );
  const mark = `zw-bounded-${process.pid}-${Math.random().toString(36).slice(2)}`;
  cleanup.push(() => {
    for (const p of marked(mark)) process.kill(p, 'SIGKILL');
    return removeWorkDirs([dir]);
  });
  return { dir, accelerate, mark, env: { ZW_TEST_MARK: mark, NO_COLOR: '1', PATH: barePath() } };
}

/** The processes this test started under zerowiz (they carry its mark in their environment). */
function marked(mark: string): number[] {
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8');
      if (cmd.includes('zerowiz.js')) continue;
      if (readFileSync(`/proc/${n}/environ`, 'utf8').includes(`ZW_TEST_MARK=${mark}`) && running(Number(n)))
        out.push(Number(n));
    } catch {}
  }
  return out;
}

function start(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): { child: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  cleanup.push(() => {
    child.kill('SIGKILL');
  });
  return { child, done: new Promise((res) => child.on('exit', (code) => res({ code, out }))) };
}

/** A Python that never answers, with a child that holds its output (in its group, or in a session of its own). */
const HANGS = 'sleep 300 &\nexec sleep 300';
const HANGS_SETSID = 'setsid sleep 300 &\nexec sleep 300';

describe('zerowiz check over a Python that never answers and leaves a child holding its output', () => {
  for (const [what, body] of [
    ['in its process group', HANGS],
    ['in a session of its own', HANGS_SETSID],
  ] as const) {
    it(`gives up at the probe's timeout (the child ${what}): exit 2, the python check says why`, async () => {
      const b = box(body);
      const t0 = Date.now();
      const r = await start(['check', 'run.yaml', '--accelerate', b.accelerate], b.dir, {
        ...b.env,
        ZEROWIZ_PROBE_TIMEOUT_MS: '1500',
      }).done;
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(r.code, r.out).toBe(2);
      expect(r.out).toMatch(/python.*did not answer within 1\.5 s/);
      // Its process group is gone with it (a child that left the group is not zerowiz's to wait for).
      if (body === HANGS) await until(() => marked(b.mark).length === 0, 'the probe and its child to be gone');
    }, 40_000);
  }

  it('SIGTERM ends it at once, and the probe with it', async () => {
    const b = box(HANGS);
    const c = start(['check', 'run.yaml', '--accelerate', b.accelerate], b.dir, b.env);
    await until(() => marked(b.mark).length >= 2, 'the probe to start');
    c.child.kill('SIGTERM');
    const r = await c.done;
    expect(r.code === null || r.code === 143).toBe(true);
    await until(() => marked(b.mark).length === 0, 'the probe and its child to be gone', 5_000);
  }, 40_000);

  it('an answer of another shape is named as such: exit 2, no crash', async () => {
    const b = box(`echo '{"python": 5, "packages": "torch"}'`);
    const r = await start(['check', 'run.yaml', '--accelerate', b.accelerate], b.dir, b.env).done;
    expect(r.code, r.out).toBe(2);
    expect(r.out).toMatch(/python.*its answer is not the probe's \(python: /);
    expect(r.out).not.toMatch(/unexpected error|\n\s+at /);
  });
});

describe('a launch whose checks before the first pass wait on that Python', () => {
  // The first pass's checks run in the launch itself, before a record exists (the pane never opens on a refused
  // pass): a stop then is a signal to the launch, and it ends them.
  it('SIGTERM ends it: the probe is killed, nothing starts, no record, exit 130', async () => {
    const b = box(HANGS);
    const env = { ...b.env, ZEROWIZ_SKIP_CHECKS: 'gpus,cuda-driver,nvme,nvme-speed,shm,host-memory,disk' };
    const launch = start(['launch', 'run.yaml', '--no-tui', '--accelerate', b.accelerate], b.dir, env);
    await until(() => marked(b.mark).length >= 2, 'the probe to start', 20_000);
    launch.child.kill('SIGTERM');
    const r = await launch.done;
    expect(r.code, r.out).toBe(130);
    expect(r.out).toMatch(/stopped before the run started \(during the checks of its first pass\)/);
    await until(() => marked(b.mark).length === 0, 'the probe and its child to be gone', 5_000);
    expect(existsSync(join(b.dir, '.zerowiz', 'runs'))).toBe(false);
  }, 60_000);
});

/** spawnSync's `setsid` exists on this box (util-linux). */
if (spawnSync('setsid', ['true']).status !== 0) throw new Error('setsid (util-linux) is needed by this test');
