/**
 * Process groups: every step runs as the leader of its own group (spawned `detached`), so one
 * `process.kill(-pgid, sig)` reaches accelerate and every worker it started. zerowiz keeps a registry of
 * live groups; when it exits with groups still running they are stopped: by its watchdog (./watchdog.ts),
 * which also covers a SIGKILL of zerowiz, or else by SIGKILL from the exit hook.
 */

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { envNumber } from '../text/index.js';

/** How long a stop waits after SIGINT before sending SIGTERM (override: ZEROWIZ_SIGINT_GRACE_MS). */
export const SIGINT_GRACE_MS = 10_000;
/** How long a stop waits after SIGTERM before sending SIGKILL (override: ZEROWIZ_SIGTERM_GRACE_MS). */
export const SIGTERM_GRACE_MS = 5_000;
/** How often a stop checks whether the group is gone. */
const GROUP_POLL_MS = 50;

/** The grace periods in effect (environment overrides for tests and impatient users). */
export function gracePeriods(env: NodeJS.ProcessEnv = process.env): { sigintMs: number; sigtermMs: number } {
  return {
    sigintMs: envNumber(env, 'ZEROWIZ_SIGINT_GRACE_MS', SIGINT_GRACE_MS),
    sigtermMs: envNumber(env, 'ZEROWIZ_SIGTERM_GRACE_MS', SIGTERM_GRACE_MS),
  };
}

const live = new Set<number>();
let hooked = false;
/** Whether something outside this process (the watchdog) will stop the groups left at exit. */
let handedOff: () => boolean = () => false;

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

/** Which signal ended a stop: the last one sent before the group was gone. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'none';

/**
 * A stop in progress: SIGINT, then SIGTERM after `sigintMs`, then SIGKILL after `sigtermMs`, until no
 * process of the group is left. `killNow()` (a second Ctrl+C) cuts the ladder short with SIGKILL, and the
 * stop then reports SIGKILL: the signal that really ended the group.
 */
export class GroupStop {
  /** Resolves with the signal that ended the group once it is gone (or right after SIGKILL). */
  readonly done: Promise<StopSignal>;
  private last: StopSignal = 'none';

  constructor(
    readonly pgid: number,
    grace = gracePeriods(),
    firstSignal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
  ) {
    this.done = this.ladder(grace, firstSignal);
  }

  /** SIGKILL to the group now. */
  killNow(): void {
    this.send('SIGKILL');
  }

  private send(sig: 'SIGINT' | 'SIGTERM' | 'SIGKILL'): void {
    if (this.last === 'SIGKILL') return;
    this.last = sig;
    signalGroup(this.pgid, sig);
  }

  private async ladder(
    grace: { sigintMs: number; sigtermMs: number },
    first: 'SIGINT' | 'SIGTERM',
  ): Promise<StopSignal> {
    if (!groupAlive(this.pgid)) return 'none';
    if (first === 'SIGINT') {
      this.send('SIGINT');
      if (await waitGroupGone(this.pgid, grace.sigintMs)) return this.last;
    }
    this.send('SIGTERM');
    if (await waitGroupGone(this.pgid, grace.sigtermMs)) return this.last;
    this.send('SIGKILL');
    await waitGroupGone(this.pgid, 1_000);
    return this.last;
  }
}

/** Stops a group with the ladder (see GroupStop); resolves with the signal that ended it. */
export function stopGroup(
  pgid: number,
  grace = gracePeriods(),
  firstSignal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
): Promise<StopSignal> {
  return new GroupStop(pgid, grace, firstSignal).done;
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

/**
 * Says who stops the groups still running when zerowiz exits: `check()` true means the watchdog holds
 * them and will run the ladder (so training can save); false (or no watchdog) means SIGKILL at exit.
 */
export function handOffAtExit(check: () => boolean): void {
  handedOff = check;
}

function installExitHooks(): void {
  if (hooked) return;
  hooked = true;
  // 'exit' runs for a normal exit, process.exit() and an uncaught exception; only sync work is possible.
  // With a live watchdog the groups left are its to stop (SIGINT, SIGTERM, SIGKILL, as a stop from the
  // pane); without one they get SIGKILL now (a clean stop already ran the ladder).
  process.on('exit', () => {
    if (!handedOff()) killAllGroupsNow();
  });
}

/** What a file descriptor of a process points at (`socket:[123]`, `pipe:[45]`, a path); null if gone. */
export function fdTarget(pid: number, fd: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return null;
  }
}

/** A process, as the user should be told about it. */
export interface ProcessInfo {
  pid: number;
  /** Its command line, printable (control characters dropped), at most PROCESS_COMMAND_CHARS long. */
  command: string;
}

/** How much of a command line is shown when naming a process. */
export const PROCESS_COMMAND_CHARS = 80;

/** A process's command line from /proc, printable. */
export function processCommand(pid: number): string {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ');
  } catch {
    return '?';
  }
  const clean = text.replace(/[\x00-\x1f\x7f-\x9f]/g, '');
  return clean.length > PROCESS_COMMAND_CHARS ? `${clean.slice(0, PROCESS_COMMAND_CHARS - 1)}…` : clean;
}

/**
 * The processes that hold any of `targets` (fdTarget values) open, from /proc; null without /proc. Only
 * this user's processes can be looked into: another user's holder is not found.
 */
export function processesHolding(targets: ReadonlySet<string>): ProcessInfo[] | null {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return null;
  }
  const out: ProcessInfo[] = [];
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${n}/fd`);
    } catch {
      continue;
    }
    if (fds.some((fd) => targets.has(fdTarget(Number(n), Number(fd)) ?? ''))) {
      out.push({ pid: Number(n), command: processCommand(Number(n)) });
    }
  }
  return out;
}

/** The processes whose environment holds `name=value` (inherited by every descendant unless it was cleared). */
export function processesWithEnv(name: string, value: string): { pid: number; pgid: number }[] {
  const want = `${name}=${value}`;
  const out: { pid: number; pgid: number }[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      if (!readFileSync(`/proc/${n}/environ`, 'utf8').split('\0').includes(want)) continue;
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (rest[0] !== 'Z') out.push({ pid: Number(n), pgid: Number(rest[2]) });
    } catch {}
  }
  return out;
}

/** What a run tells its process guard (the watchdog): the pipeline calls these around each step (the watchdog, ./watchdog.ts, is one). */
export interface ProcessGuard {
  /** Step `index` is about to be spawned. */
  willSpawn(index: number): void;
  /** Step `index` runs as process group `pgid`. */
  spawned(index: number, pgid: number): void;
  /** Group `pgid` is gone. */
  gone(pgid: number): void;
  /** A helper of the run (not a step: the GPU telemetry) is about to be spawned, with HELPER_OF_ENV set. */
  helperWillSpawn?(): void;
  /** A helper runs as process group `pgid` (stopped with the steps; its end is `gone`). */
  helperSpawned?(pgid: number): void;
}
