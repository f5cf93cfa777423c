/**
 * A real memory cgroup for tests that need a memory limit (the host-memory check, the memory watch): a child
 * of this process's own memory cgroup, v1 (`memory.limit_in_bytes`) or v2 (`memory.max`), as root. Without
 * root or a writable cgroup hierarchy the caller skips with the reason this returns.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A cgroup made for a test: its folder and the file a process writes its pid into to join it. */
export interface TestCgroup {
  ok: true;
  dir: string;
  procs: string;
  version: 1 | 2;
}

let made = 0;

/** Makes a memory cgroup limited to `limitBytes` under this process's own. */
export function makeMemoryCgroup(limitBytes: number): TestCgroup | { ok: false; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'a cgroup memory limit needs root' };
  const self = readFileSync('/proc/self/cgroup', 'utf8');
  const name = `zw-test-${process.pid}-${made++}`;
  const v1 = /^\d+:[^:]*\bmemory\b[^:]*:(.*)$/m.exec(self);
  try {
    if (v1 && existsSync('/sys/fs/cgroup/memory')) {
      const dir = join('/sys/fs/cgroup/memory', v1[1]!, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
      return { ok: true, dir, procs: join(dir, 'cgroup.procs'), version: 1 };
    }
    const v2 = /^0::(.*)$/m.exec(self);
    if (v2 && existsSync('/sys/fs/cgroup/cgroup.controllers')) {
      const parent = join('/sys/fs/cgroup', v2[1]!);
      if (!readFileSync(join(parent, 'cgroup.subtree_control'), 'utf8').includes('memory'))
        writeFileSync(join(parent, 'cgroup.subtree_control'), '+memory');
      const dir = join(parent, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.max'), String(limitBytes));
      writeFileSync(join(dir, 'memory.swap.max'), '0');
      return { ok: true, dir, procs: join(dir, 'cgroup.procs'), version: 2 };
    }
    return { ok: false, reason: 'no memory cgroup hierarchy (v1 or v2) is mounted here' };
  } catch (e) {
    return { ok: false, reason: `cannot make a memory cgroup here: ${(e as Error).message}` };
  }
}

/** Removes the cgroup once its processes are gone (waits for them, at most 5 s). */
export async function removeCgroup(cg: TestCgroup): Promise<void> {
  const end = Date.now() + 5000;
  for (;;) {
    try {
      rmdirSync(cg.dir);
      return;
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
