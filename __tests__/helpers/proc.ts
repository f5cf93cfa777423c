/** Whether a process runs, read from /proc (a zombie waiting to be reaped does not run). */
import { readFileSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';

export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Every running process whose environment holds `NAME=value` (a run's steps and everything they started
 * carry ZEROWIZ_RUN_DIR, so this finds a run's processes even after they left its process groups).
 */
export function processesWithEnv(name: string, value: string): number[] {
  const want = `${name}=${value}`;
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (readFileSync(`/proc/${n}/environ`, 'utf8').split('\0').includes(want) && running(Number(n)))
        out.push(Number(n));
    } catch {}
  }
  return out;
}

/** Resolves once `pred()` holds; rejects with `what` after `timeoutMs`. Polls, never asserts a time. */
export async function until(pred: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every running process (other than this one) whose working directory or run folder (ZEROWIZ_RUN_DIR) lies in one of `roots`. */
export function processesUnder(roots: string[]): number[] {
  const inside = (p: string) => roots.some((r) => p === r || p.startsWith(`${r}/`));
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      let hit = inside(readlinkSync(`/proc/${n}/cwd`));
      if (!hit) {
        const env = readFileSync(`/proc/${n}/environ`, 'utf8').split('\0');
        hit = env.some((e) => e.startsWith('ZEROWIZ_RUN_DIR=') && inside(e.slice('ZEROWIZ_RUN_DIR='.length)));
      }
      if (hit && running(Number(n))) out.push(Number(n));
    } catch {}
  }
  return out;
}

/**
 * Removes a test's folders once nothing runs in them. A run's supervisor writes its last files (the report, the
 * record's end) after the run has ended, and a run a test left going keeps writing: both made `rmSync` fail with
 * ENOTEMPTY under load. Waits up to `graceMs` for every process in the folders to end, kills what is left, then removes.
 */
export async function removeWorkDirs(dirs: string[], graceMs = 10_000): Promise<void> {
  const roots = dirs.flatMap((d) => {
    try {
      return [realpathSync(d)];
    } catch {
      return [];
    }
  });
  const deadline = Date.now() + graceMs;
  while (processesUnder(roots).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const killBy = Date.now() + 5_000;
  for (let left = processesUnder(roots); left.length > 0 && Date.now() < killBy; left = processesUnder(roots)) {
    for (const p of left) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {}
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
