/** Whether a process runs, read from /proc (a zombie waiting to be reaped does not run). */
import { readFileSync, readdirSync } from 'node:fs';

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
