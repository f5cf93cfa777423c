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

/** A signal of the ladder. */
export type LadderSignal = Exclude<StopSignal, 'none'>;

/** How long SIGKILL is given to end a group before the stop reports it anyway. */
const AFTER_SIGKILL_MS = 1_000;

/**
 * What a stop tells about itself and where it starts: `onSignal` hears each signal before it is sent, with the
 * time it gives the group before the next one (a ledger: src/launch/ladder.ts writes it into events.jsonl, so
 * that whoever goes on with the stop after this process died never sends a signal twice); `resume` is the
 * last signal a stop before this one sent, and when: the ladder goes on from there instead of starting again.
 */
export interface LadderHooks {
  onSignal?: (signal: LadderSignal, graceMs: number) => void;
  resume?: { signal: LadderSignal; at: number; graceMs: number };
}

/**
 * A stop in progress: SIGINT, then SIGTERM after `sigintMs`, then SIGKILL after `sigtermMs`, until no
 * process of the group is left. `killNow()` (`zerowiz stop --now`, a second Ctrl+C) cuts the ladder short
 * with SIGKILL, and the stop then reports SIGKILL: the signal that really ended the group. Each signal is sent
 * once: asking again joins the stop under way.
 */
export class GroupStop {
  /** Resolves with the signal that ended the group once it is gone (or right after SIGKILL). */
  readonly done: Promise<StopSignal>;
  private last: StopSignal = 'none';

  constructor(
    readonly pgid: number,
    grace = gracePeriods(),
    firstSignal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
    private readonly hooks: LadderHooks = {},
  ) {
    this.done = this.ladder(grace, firstSignal);
  }

  /** SIGKILL to the group now. */
  killNow(): void {
    this.send('SIGKILL', AFTER_SIGKILL_MS);
  }

  private send(sig: LadderSignal, graceMs: number): void {
    if (this.last === 'SIGKILL') return;
    this.last = sig;
    this.hooks.onSignal?.(sig, graceMs);
    signalGroup(this.pgid, sig);
  }

  private async ladder(
    grace: { sigintMs: number; sigtermMs: number },
    first: 'SIGINT' | 'SIGTERM',
  ): Promise<StopSignal> {
    if (!groupAlive(this.pgid)) return 'none';
    const rungs: [LadderSignal, number][] = [
      ['SIGINT', grace.sigintMs],
      ['SIGTERM', grace.sigtermMs],
      ['SIGKILL', AFTER_SIGKILL_MS],
    ];
    let next = first === 'SIGINT' ? 0 : 1;
    const resume = this.hooks.resume;
    if (resume) {
      // A stop before this one sent `resume.signal`: its grace runs from then, and nothing is sent twice.
      this.last = resume.signal;
      next = rungs.findIndex(([s]) => s === resume.signal) + 1;
      if (await waitGroupGone(this.pgid, Math.max(0, resume.at + resume.graceMs - Date.now()))) return this.last;
    }
    for (; next < rungs.length; next++) {
      const [sig, ms] = rungs[next]!;
      this.send(sig, ms);
      if (await waitGroupGone(this.pgid, ms)) return this.last;
    }
    return this.last;
  }
}

/** Stops a group with the ladder (see GroupStop); resolves with the signal that ended it. */
export function stopGroup(
  pgid: number,
  grace = gracePeriods(),
  firstSignal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
  hooks: LadderHooks = {},
): Promise<StopSignal> {
  return new GroupStop(pgid, grace, firstSignal, hooks).done;
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
  return processesOfRun(`${name}=${value}`, []).map(({ pid, pgid }) => ({ pid, pgid }));
}

/** A live process of a run, as `runs` and `stop` name it. */
export interface RunProcess extends ProcessInfo {
  pgid: number;
}

/** pid (comm) state ppid pgrp ... from /proc/PID/stat: the state letter, the group and the start time. */
function statOf(pid: string): { state: string; pgid: number; startTime: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // comm may hold spaces and parentheses, so the fields are read after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: rest[0] ?? '?', pgid: Number(rest[2]), startTime: Number(rest[19]) };
}

/**
 * The live processes (zombies aside) of a run, from /proc: every process whose environment holds `envPair`
 * (`NAME=value`, which each step and everything it starts inherit), and every member of a recorded step's group
 * while that group's leader still has the start time the record gave it (so a pid reused since is never
 * counted, and a member that cleared its environment still is). Only this user's processes can be looked
 * into. Empty without /proc.
 */
export function processesOfRun(
  envPair: string,
  groups: readonly { pgid: number; leaderStart: number | null }[],
): RunProcess[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const leaders = new Set(
    groups
      .filter((g) => g.leaderStart !== null && statOf(String(g.pgid))?.startTime === g.leaderStart)
      .map((g) => g.pgid),
  );
  const out: RunProcess[] = [];
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c < 48 || c > 57 || Number(n) === process.pid) continue;
    const st = statOf(n);
    if (!st || st.state === 'Z') continue;
    let mine = leaders.has(st.pgid);
    if (!mine) {
      try {
        mine = readFileSync(`/proc/${n}/environ`, 'utf8').split('\0').includes(envPair);
      } catch {}
    }
    if (mine) out.push({ pid: Number(n), pgid: st.pgid, command: processCommand(Number(n)) });
  }
  return out;
}

/**
 * Whether a process cannot run now, and why: `stopped` (SIGSTOP, Ctrl+Z: state T), `frozen` (its cgroup is
 * frozen: cgroup v2 `cgroup.freeze`, v1 `freezer.state`), or null (it runs, or it is gone).
 */
export function processHeld(pid: number): 'stopped' | 'frozen' | null {
  const st = statOf(String(pid));
  if (!st || st.state === 'Z') return null;
  if (st.state === 'T' || st.state === 't') return 'stopped';
  let cgroups: string;
  try {
    cgroups = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
  } catch {
    return null;
  }
  for (const line of cgroups.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    const file =
      controllers === ''
        ? `/sys/fs/cgroup${path}/cgroup.events`
        : controllers!.split(',').includes('freezer')
          ? `/sys/fs/cgroup/freezer${path}/freezer.state`
          : null;
    if (file === null) continue;
    try {
      const text = readFileSync(file, 'utf8');
      if (/^frozen 1$/m.test(text) || /^(FROZEN|FREEZING)$/m.test(text)) return 'frozen';
    } catch {}
  }
  return null;
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
