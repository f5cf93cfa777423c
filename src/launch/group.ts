/**
 * Process groups: every step runs as the leader of its own group (spawned `detached`), so one
 * `process.kill(-pgid, sig)` reaches accelerate and every worker it started. zerowiz keeps a registry of
 * live groups and kills them when it exits for any reason (normal exit, uncaught exception, SIGTERM,
 * SIGHUP), so no step process outlives it.
 */

import { readFileSync, readdirSync } from 'node:fs';

/** How long a stop waits after SIGINT before sending SIGTERM (override: ZEROWIZ_SIGINT_GRACE_MS). */
export const SIGINT_GRACE_MS = 10_000;
/** How long a stop waits after SIGTERM before sending SIGKILL (override: ZEROWIZ_SIGTERM_GRACE_MS). */
export const SIGTERM_GRACE_MS = 5_000;
/** How often a stop checks whether the group is gone. */
const GROUP_POLL_MS = 50;

/** The grace periods in effect (environment overrides for tests and impatient users). */
export function gracePeriods(env: NodeJS.ProcessEnv = process.env): { sigintMs: number; sigtermMs: number } {
  const num = (v: string | undefined, d: number) => {
    const n = v === undefined || v === '' ? Number.NaN : Number(v);
    return Number.isFinite(n) && n >= 0 ? n : d;
  };
  return {
    sigintMs: num(env.ZEROWIZ_SIGINT_GRACE_MS, SIGINT_GRACE_MS),
    sigtermMs: num(env.ZEROWIZ_SIGTERM_GRACE_MS, SIGTERM_GRACE_MS),
  };
}

const live = new Set<number>();
let hooked = false;

/** Sends `signal` to the whole group; false if the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EPERM') return true; // exists, but not ours to signal
    return false;
  }
}

/**
 * Whether any process of the group is still alive. A zombie (exited, not yet reaped by whoever adopted
 * it) still answers `kill(-pgid, 0)` but runs nothing, so on Linux /proc decides.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const members = groupMembers(pgid);
  return members === null ? true : members.some((m) => m.state !== 'Z');
}

/** The processes of a group with their state letter (R, S, Z, ...), from /proc; null without /proc. */
export function groupMembers(pgid: number): { pid: number; state: string }[] | null {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return null;
  }
  const out: { pid: number; state: string }[] = [];
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${n}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so parse after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(rest[2]) === pgid) out.push({ pid: Number(n), state: rest[0] ?? '?' });
  }
  return out;
}

/** Resolves true once the group is gone, false if `ms` passed first. */
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, Math.min(GROUP_POLL_MS, Math.max(1, deadline - Date.now()))));
  }
  return true;
}

/** Which signal ended a stop: the first one the group did not survive. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'none';

/**
 * Stops a group: SIGINT, then SIGTERM after `sigintMs`, then SIGKILL after `sigtermMs`. Resolves when no
 * process of the group is left (or right after SIGKILL, which cannot be ignored).
 */
export async function stopGroup(
  pgid: number,
  grace = gracePeriods(),
  firstSignal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
): Promise<StopSignal> {
  if (!groupAlive(pgid)) return 'none';
  if (firstSignal === 'SIGINT') {
    signalGroup(pgid, 'SIGINT');
    if (await waitGroupGone(pgid, grace.sigintMs)) return 'SIGINT';
  }
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, grace.sigtermMs)) return 'SIGTERM';
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, 1_000);
  return 'SIGKILL';
}

/** Registers a live group so zerowiz's own exit kills it. */
export function trackGroup(pgid: number): void {
  installExitHooks();
  live.add(pgid);
}

/** Forgets a group (its processes are all gone). */
export function untrackGroup(pgid: number): void {
  live.delete(pgid);
}

/** Groups still registered (for tests and the exit hook). */
export function trackedGroups(): number[] {
  return [...live];
}

/** SIGKILLs every registered group at once; for exit paths that cannot wait. */
export function killAllGroupsNow(): void {
  for (const pgid of live) signalGroup(pgid, 'SIGKILL');
  live.clear();
}

function installExitHooks(): void {
  if (hooked) return;
  hooked = true;
  // 'exit' runs for a normal exit, process.exit() and an uncaught exception; only sync work is possible,
  // so whatever is still running gets SIGKILL (a clean stop already ran the SIGINT/SIGTERM ladder).
  process.on('exit', killAllGroupsNow);
}
