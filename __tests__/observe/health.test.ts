/**
 * The run's health watch (src/observe/health.ts) with real processes: a trainer that stops printing while it
 * lives (the stall), a cgroup memory limit filling up, /dev/shm and an NVMe folder filling up (real tmpfs).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/observe/alerts.js';
import { RunHealth } from '../../src/observe/health.js';
import { whichSync } from '../../src/proc/executables.js';
import { makeMemoryCgroup, removeCgroup } from '../helpers/cgroup.js';
import { mountTmpfs, unmountAll } from '../helpers/tmpfs.js';

/** The real Python (not a version manager's shim script: its wrappers would be processes of the group too). */
const PY = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) {
    try {
      if (c.pid) process.kill(-c.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});
afterAll(() => unmountAll());

/** Spawns `sh -c script` in its own process group, its stdout lines fed to `onLine`. */
function group(script: string, onLine: (line: string) => void, env: Record<string, string> = {}): ChildProcess {
  const c = spawn('sh', ['-c', script], {
    detached: true,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  children.push(c);
  let buf = '';
  c.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      nl = buf.indexOf('\n');
    }
  });
  return c;
}

/** Ticks every 50 ms until an alert with `id` comes (or `ms` pass: then the test fails with what came). */
async function waitForAlert(h: RunHealth, pgid: number, id: Alert['id'], ms = 15_000): Promise<Alert> {
  const seen: Alert[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    seen.push(...(await h.tick(Date.now(), { pgid })));
    const a = seen.find((x) => x.id === id);
    if (a) return a;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${id} alert within ${ms} ms; alerts: ${JSON.stringify(seen)}`);
}

describe('the stall watchdog on a real trainer that stops printing while alive', () => {
  it('names the rank that stopped writing, what it does (state and wchan from /proc), and the one still writing', async () => {
    const out = join(spawnSync('mktemp', ['-d']).stdout.toString().trim(), 'rank1.log');
    // Rank 0 prints 6 steps, then blocks reading a pipe nobody writes (alive, silent: as a rank waiting on a
    // peer); rank 1 keeps writing a file. (A background job's stdin is /dev/null, so the pipe is its own.)
    const script = [
      `RANK=0 LOCAL_RANK=0 ${PY} -u -c 'import os, time\nfor i in range(6):\n    print(f"step {i}/100", flush=True); time.sleep(0.08)\nr, w = os.pipe()\nos.read(r, 1)' &`,
      `RANK=1 LOCAL_RANK=1 ${PY} -u -c 'import time\nf = open("${out}", "w")\nwhile True:\n    f.write("x"); f.flush(); time.sleep(0.02)' < /dev/null &`,
      'wait',
    ].join('\n');
    const h = new RunHealth({ step: 1, stall: { factor: 3, minMs: 1500, startupMs: 5000 }, spacePaths: [] });
    h.start(Date.now());
    const c = group(script, (l) => {
      const m = /^step (\d+)\//.exec(l);
      if (m) h.progress(Date.now(), Number(m[1]));
      else h.line(Date.now());
    });
    const a = await waitForAlert(h, c.pid!, 'stall');
    expect(a.step).toBe(1);
    expect(a.fatal).toBe(false);
    expect(a.title).toMatch(/^no progress for \d/);
    expect(a.title).toContain('while the processes live: 1 of 2 ranks stopped writing');
    expect(a.line).toMatch(/rank 0 \(pid \d+\) stopped writing: sleeping in \S*pipe_read/);
    expect(a.line).toMatch(/rank 1 \(pid \d+\) still writes/);
    const rank0 = /rank 0 \(pid (\d+)\)/.exec(a.line)![1];
    expect(a.fix).toContain(`py-spy dump --pid ${rank0}`);
    if (whichSync('py-spy') === null) expect(a.fix).toContain('pip install py-spy');
    // One alert per silence: the next ticks bring no second one.
    expect(await h.tick(Date.now(), { pgid: c.pid! })).toEqual([]);
  });

  it('says nothing while the processes are gone (the pass ended), whatever the silence', async () => {
    const h = new RunHealth({ step: 0, stall: { factor: 3, minMs: 100, startupMs: 100 }, spacePaths: [] });
    const c = group('echo step 1/2; exit 0', () => h.line(Date.now()));
    h.start(Date.now());
    await new Promise<void>((r) => c.on('exit', () => r()));
    await new Promise((r) => setTimeout(r, 300));
    expect(await h.tick(Date.now(), { pgid: c.pid! })).toEqual([]);
  });
});

describe('resources during the pass (real limits)', () => {
  it('host memory near the cgroup limit of the pass raises memory-pressure with the figures', async () => {
    const cg = makeMemoryCgroup(256 * 2 ** 20);
    if (!cg.ok) {
      console.log(`skipped: ${cg.reason}`);
      return;
    }
    try {
      // A "rank" that fills 240 MiB of its 256 MiB cgroup and stays alive.
      const c = group(
        `echo $$ > ${cg.procs} && exec ${PY} -c 'import sys\nb = bytearray(240 * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint("filled", flush=True)\nsys.stdin.read()'`,
        () => {},
      );
      const h = new RunHealth({ step: 0, stall: { minMs: 3_600_000 }, spacePaths: [] });
      h.start(Date.now());
      const a = await waitForAlert(h, c.pid!, 'memory-pressure');
      expect(a.title).toMatch(/memory at (9\d|100)% of the cgroup limit \(2\d\d(\.\d)? MiB of 256 MiB\)/);
      expect(a.fix).toMatch(/pin_memory|less CPU memory|--mode/);
    } finally {
      for (const c of children.splice(0)) {
        try {
          process.kill(-c.pid!, 'SIGKILL');
        } catch {}
      }
      await removeCgroup(cg);
    }
  });

  it('/dev/shm filling up raises shm-full; an NVMe folder losing space fast raises space-low with when it is full', async () => {
    const shm = mountTmpfs('8m');
    const nvme = mountTmpfs('32m');
    if (!shm.ok || !nvme.ok) {
      console.log(`skipped: ${shm.ok ? '' : shm.reason} ${nvme.ok ? '' : nvme.reason}`);
      return;
    }
    const c = group('exec sleep 60', () => {});
    const h = new RunHealth({
      step: 2,
      stall: { minMs: 3_600_000 },
      shmPath: shm.dir,
      spacePaths: [{ path: nvme.dir, what: 'NVMe offload' }],
    });
    h.start(Date.now());
    expect(await h.tick(Date.now(), { pgid: c.pid! })).toEqual([]);
    writeFileSync(join(shm.dir, 'nccl-seg'), Buffer.alloc(7.6 * 2 ** 20, 1));
    const full = await waitForAlert(h, c.pid!, 'shm-full');
    expect(full.title).toMatch(/\/dev\/shm|shm/);
    expect(full.line).toContain(shm.dir);
    // The NVMe folder loses 4 MiB per tick: space-low comes with the rate and the time left.
    let n = 0;
    const grow = setInterval(() => {
      if (n < 7) writeFileSync(join(nvme.dir, `swap${n++}`), Buffer.alloc(4 * 2 ** 20, 1));
    }, 60);
    try {
      const low = await waitForAlert(h, c.pid!, 'space-low');
      expect(low.line).toContain(nvme.dir);
      expect(low.title).toMatch(/NVMe offload/);
      expect(low.title).toMatch(/free/);
    } finally {
      clearInterval(grow);
    }
  });
});
