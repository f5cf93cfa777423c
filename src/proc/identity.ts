/**
 * A local run's supervisor as other processes see it: who it is (pid, the start time the kernel gave it, the
 * host), whether it still runs, and how to ask it to stop. Viewers (the pane, stream mode, `attach`), `zerowiz
 * stop` and `zerowiz runs` use it; the supervisor writes its identity into run.json as it starts.
 *
 * The start time makes a pid safe to signal: a pid reused by another process after the supervisor ended has
 * another start time, so zerowiz never signals it. Only the user who runs the supervisor (or root) can
 * signal it at all.
 *
 * The supervisor's signals: SIGINT or SIGTERM stop the run with the ladder (SIGINT, grace, SIGTERM, grace,
 * SIGKILL to the step's group); a second one while it stops, or SIGUSR2 at any time, kills at once (two
 * signals of one kind sent in a row may arrive as one, so a viewer's "kill now" is SIGUSR2). It has no
 * terminal, so SIGHUP is ignored.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Who a local run's supervisor is (run.json `supervisor`). */
export interface SupervisorId {
  pid: number;
  /** Its start time in clock ticks since boot (/proc/PID/stat field 22), or null where /proc cannot say. */
  startTime: number | null;
  host: string;
  /**
   * The supervisor's watchdog (./watchdog.ts), which finishes the run when the supervisor is killed: while it
   * lives, a run whose supervisor is gone is still being ended, not abandoned.
   */
  watchdog?: { pid: number; startTime: number | null } | null;
}

/** A process's start time in clock ticks since boot, or null (gone, or no /proc). */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ... : fields after the comm, which may hold spaces and parentheses.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const v = Number(rest[19]);
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

/** This process's identity, as a supervisor records it. */
export function ownIdentity(): SupervisorId {
  return { pid: process.pid, startTime: processStartTime(process.pid), host: hostname() };
}

/** Where a supervisor stands, as seen from here. */
export type SupervisorState = 'alive' | 'gone' | 'elsewhere';

/** Whether the process `pid`, started at `startTime`, still runs here (not a zombie, not a reused pid). */
export function processAlive(pid: number, startTime: number | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const st = processStartTime(pid);
  if (startTime !== null && st !== null && st !== startTime) return false;
  return !isZombie(pid);
}

/** Whether the supervisor runs (`elsewhere`: it ran on another host, which cannot be asked from here). */
export function supervisorState(id: SupervisorId | null | undefined): SupervisorState {
  if (!id) return 'gone';
  if (id.host !== hostname()) return 'elsewhere';
  return processAlive(id.pid, id.startTime) ? 'alive' : 'gone';
}

/** Whether anyone still ends the run: its supervisor, or the watchdog that finishes after it. */
export function ownerState(id: SupervisorId | null | undefined): SupervisorState {
  const s = supervisorState(id);
  if (s !== 'gone' || !id?.watchdog) return s;
  return processAlive(id.watchdog.pid, id.watchdog.startTime) ? 'alive' : 'gone';
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** What a viewer or `zerowiz stop` asks of a supervisor. */
export type SupervisorRequest = 'stop' | 'kill';

/** The signal of each request. */
export const SUPERVISOR_SIGNALS: Readonly<Record<SupervisorRequest, NodeJS.Signals>> = {
  stop: 'SIGTERM',
  kill: 'SIGUSR2',
};

/**
 * Sends a request to a live supervisor: `stop` is SIGTERM (the ladder), `kill` SIGUSR2 (SIGKILL to the
 * step's group now). Returns why it could not be sent, or null when it was.
 */
export function signalSupervisor(id: SupervisorId, req: SupervisorRequest): string | null {
  const state = supervisorState(id);
  if (state === 'elsewhere') return `the run's supervisor runs on ${id.host}, not on this machine`;
  if (state === 'gone') return "the run's supervisor is no longer running";
  try {
    process.kill(id.pid, SUPERVISOR_SIGNALS[req]);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return "the run's supervisor is no longer running";
    return code === 'EPERM'
      ? `the run's supervisor (pid ${id.pid}) belongs to another user`
      : `could not signal the run's supervisor (pid ${id.pid}): ${(err as Error).message}`;
  }
}
