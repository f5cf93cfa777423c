/**
 * No training outlives its record. A local run's record says `running` while its owner (the supervisor, or
 * its watchdog ending the run after it) runs; when both are gone (`kill -9` of the pair, `pkill -f zerowiz`,
 * the OOM killer, a watchdog killed first and then its supervisor) the steps may still train. Before a run is
 * called ended, its step processes are looked for: every process that carries the run's directory in its
 * environment (ZEROWIZ_RUN_DIR, which each step and everything it starts inherit), and every member of a
 * recorded step's process group whose leader still has the start time the record gave it (so a pid reused
 * since is never taken for the step, nor signalled).
 *
 * - `orphaned`: nobody owns the run and its steps still run: `runs` and `attach` say so with the pids, and
 *   `zerowiz stop` stops them with the ladder (stopOrphans), going on from the ledger of signals already
 *   sent (./ladder.ts), one stop at a time (a second one joins), then settles the record;
 * - `abandoned`: nobody owns it and none of its processes live (a reboot): the record is settled as
 *   `interrupted`, with a note.
 */
import { join } from 'node:path';
import {
  type LadderSignal,
  type RunProcess,
  type StopSignal,
  gracePeriods,
  ownerState,
  processAlive,
  processStartTime,
  processesOfRun,
  signalGroup,
  stopGroup,
  waitGroupGone,
} from '../proc/index.js';
import { lstatOrNull, pinnedDir, readOwnedFile, unlinkIfMine, listDir } from '../fs/index.js';
import {
  EVENTS_FILE,
  EventsWriter,
  readRunRecord,
  releaseReserve,
  saveRunJson,
  type RunRecord,
} from '../records/index.js';
import { ladderSoFar, ledgerHooks } from './ladder.js';
import { RUN_DIR_ENV } from './run-env.js';

/** The note a record gets when `runs` finds nobody running it and none of its processes alive. */
export const ORPHAN_NOTE =
  "the run's supervisor and its watchdog ended before the run did (the machine restarted?); how the steps ended is not known";
/** The note a record gets when `zerowiz stop` stopped the steps of an orphaned run. */
export const ORPHAN_STOPPED_NOTE =
  "the run's supervisor and its watchdog ended before the run did (killed together?); `zerowiz stop` stopped its steps";

/** Where a local run stands, as seen from here. */
export type LocalRunState =
  /** Its record has its final state. */
  | { kind: 'ended' }
  /** Its supervisor runs (or its watchdog, ending it). */
  | { kind: 'running' }
  /** Its supervisor ran on another host: nothing can be asked from here. */
  | { kind: 'elsewhere'; host: string }
  /** Nobody owns it and its steps still run. */
  | { kind: 'orphaned'; processes: RunProcess[] }
  /** Nobody owns it and none of its processes live. */
  | { kind: 'abandoned' };

/** The live processes of a run's steps (see the module comment). */
export function stepProcesses(rec: RunRecord): RunProcess[] {
  const groups = rec.json.steps
    .filter((s) => s.pid !== undefined)
    .map((s) => ({ pgid: s.pid!, leaderStart: s.pidStart ?? null }));
  return processesOfRun(`${RUN_DIR_ENV}=${rec.dir}`, groups);
}

/** Where a local record's run stands (the callers pass local records: another kind's is its own module's). */
export function localRunState(rec: RunRecord): LocalRunState {
  if (rec.json.ended !== 'running') return { kind: 'ended' };
  const owner = ownerState(rec.json.supervisor);
  if (owner === 'alive') return { kind: 'running' };
  if (owner === 'elsewhere') return { kind: 'elsewhere', host: rec.json.supervisor?.host ?? '?' };
  const processes = stepProcesses(rec);
  return processes.length > 0 ? { kind: 'orphaned', processes } : { kind: 'abandoned' };
}

/** The processes of an orphaned run, as one line names them: `pid 123 (python train.py), pid 124 (...)`. */
export function processList(ps: readonly RunProcess[]): string {
  return ps.map((p) => `pid ${p.pid} (${p.command})`).join(', ');
}

function rank(s: StopSignal | undefined): number {
  return ['none', 'SIGINT', 'SIGTERM', 'SIGKILL'].indexOf(s ?? 'none');
}

/**
 * A record's run ended by nobody's hand (its owner gone): its running steps `stopped`, with the signal that ended
 * each when one did (else `unknown` as the step's warning), the run `interrupted` with `note`. Not saved here.
 */
export function markInterrupted(
  rec: RunRecord,
  how: { stopped: ReadonlyMap<number, StopSignal>; note: string; unknown: string; now?: number },
): void {
  const now = how.now ?? Date.now();
  const at = new Date(now).toISOString();
  rec.json.steps.forEach((s, i) => {
    if (s.status !== 'running') return;
    s.status = 'stopped';
    s.endedAt = at;
    s.durationMs = s.startedAt ? now - Date.parse(s.startedAt) : null;
    const sig = how.stopped.get(i);
    if (sig && sig !== 'none') s.stopSignal = sig;
    else s.warning = how.unknown;
  });
  rec.json.ended = 'interrupted';
  rec.json.exitCode = null;
  rec.json.endedAt = at;
  rec.json.note = how.note;
}

/**
 * Writes the final state of a record nobody owns any more (read again first: its owner's last save may have
 * landed meanwhile): its running steps `stopped` (with the signal that ended each, when one did), the run
 * `interrupted` with `note`, the space reserve given back. Saved only when the folder is the user's own.
 */
export function settleRecord(rec: RunRecord, note: string, stopped = new Map<number, StopSignal>()): void {
  const again = readRunRecord(rec.dir);
  if ('record' in again) rec.json = again.record.json;
  if (rec.json.ended !== 'running') return;
  markInterrupted(rec, { stopped, note, unknown: 'zerowiz does not know how this step ended' });
  // The reserve goes first: on a full disk it is the room the last save needs.
  releaseReserve(rec.dir);
  saveRunJson(rec);
}

/**
 * Settles local records that say `running` while nobody runs them and none of their processes live (after a
 * reboot): `interrupted`, with a note. An orphaned run (its steps alive) is left as it is: it has not ended.
 */
export function settleOrphans(records: RunRecord[]): void {
  for (const r of records) if (localRunState(r).kind === 'abandoned') settleRecord(r, ORPHAN_NOTE);
}

/** The lock files of a stop of an orphaned run: `stop.lock.<n>`, the highest the current one. */
const LOCK_PREFIX = 'stop.lock.';

/** How long an unreadable lock counts as being written (its taker writes it right after creating it). */
const FRESH_LOCK_MS = 2_000;

/** Who holds a stop lock: a `zerowiz stop` process, by pid and start time. */
interface LockHolder {
  pid: number;
  startTime: number | null;
}

function lockNumbers(dir: string): number[] {
  return listDir(dir)
    .filter((n) => n.startsWith(LOCK_PREFIX) && /^\d+$/.test(n.slice(LOCK_PREFIX.length)))
    .map((n) => Number(n.slice(LOCK_PREFIX.length)))
    .sort((a, b) => a - b);
}

function holderOf(dir: string, n: number): LockHolder | null {
  const r = readOwnedFile(join(dir, `${LOCK_PREFIX}${n}`), 1024);
  if ('problem' in r) return null;
  try {
    const v = JSON.parse(r.text) as Partial<LockHolder>;
    return typeof v.pid === 'number'
      ? { pid: v.pid, startTime: typeof v.startTime === 'number' ? v.startTime : null }
      : null;
  } catch {
    return null;
  }
}

function holderAlive(h: LockHolder | null): boolean {
  return h !== null && processAlive(h.pid, h.startTime);
}

/**
 * Takes the stop of an orphaned run: true when this process holds it now; false when another live `zerowiz
 * stop` does (this one then joins it). A holder that died is taken over: the next number is created
 * exclusively (O_EXCL), so of two that try, one wins.
 */
function takeStop(dir: string): { held: true; n: number } | { held: false; by: number | null } {
  for (;;) {
    const ns = lockNumbers(dir);
    const top = ns.at(-1) ?? 0;
    if (top > 0) {
      const h = holderOf(dir, top);
      if (holderAlive(h)) return { held: false, by: h!.pid };
      // A lock that cannot be read yet is being written by its taker (create, then write): not stale yet.
      const st = h === null ? lstatOrNull(join(dir, `${LOCK_PREFIX}${top}`)) : null;
      if (st && Date.now() - st.mtimeMs < FRESH_LOCK_MS) return { held: false, by: null };
    }
    try {
      pinnedDir(dir).writeNew(
        `${LOCK_PREFIX}${top + 1}`,
        JSON.stringify({ pid: process.pid, startTime: processStartTime(process.pid) }),
      );
      return { held: true, n: top + 1 };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

function dropLocks(dir: string): void {
  for (const n of lockNumbers(dir)) unlinkIfMine(join(dir, `${LOCK_PREFIX}${n}`));
}

/** What stopping an orphaned run says on its way, and whether it kills at once. */
export interface OrphanStopOptions {
  now: boolean;
  say: (line: string) => void;
  /** How often the stop looks again (default 200 ms). */
  pollMs?: number;
}

/** The step of a record a process group belongs to (by its recorded leader), else the step that was running. */
function stepOfGroup(rec: RunRecord, pgid: number): number {
  const byPid = rec.json.steps.findIndex((s) => s.pid === pgid);
  return byPid >= 0 ? byPid : rec.json.steps.findIndex((s) => s.status === 'running');
}

/**
 * Stops the steps of an orphaned run with the ladder (SIGKILL at once with `now`), going on from the signals
 * already sent, then settles its record. One stop at a time: a second one joins the first and waits for the
 * run's end. Resolves once no process of the run is left.
 */
export async function stopOrphans(rec: RunRecord, opts: OrphanStopOptions): Promise<void> {
  const pollMs = opts.pollMs ?? 200;
  for (;;) {
    const state = localRunState(rec);
    if (state.kind !== 'orphaned') {
      if (state.kind === 'abandoned') settleRecord(rec, ORPHAN_STOPPED_NOTE, stoppedFromLedger(rec));
      return;
    }
    const lock = takeStop(rec.dir);
    if (!lock.held) {
      if (lock.by !== null)
        opts.say(`another \`zerowiz stop\` (pid ${lock.by}) is stopping run ${rec.json.id}; this stop joins it`);
      if (opts.now) killOrphans(rec, state.processes);
      await waitForLock(rec, pollMs);
      continue;
    }
    try {
      await ladderOver(rec, state.processes, opts.now);
      settleRecord(rec, ORPHAN_STOPPED_NOTE, stoppedFromLedger(rec));
    } finally {
      dropLocks(rec.dir);
    }
  }
}

/** Waits while another stop holds the lock and the run's processes live. */
async function waitForLock(rec: RunRecord, pollMs: number): Promise<void> {
  for (;;) {
    await new Promise((res) => setTimeout(res, pollMs));
    const top = lockNumbers(rec.dir).at(-1);
    if (top === undefined || !holderAlive(holderOf(rec.dir, top))) return;
    if (stepProcesses(rec).length === 0) return;
  }
}

/** SIGKILL to every group of the run's processes now, written into the ledger first. */
function killOrphans(rec: RunRecord, ps: readonly RunProcess[]): void {
  const events = new EventsWriter(join(rec.dir, EVENTS_FILE));
  for (const pgid of new Set(ps.map((p) => p.pgid))) {
    events.write({ t: 'signal', pgid, sig: 'SIGKILL', at: Date.now(), graceMs: 0, by: 'stop' });
    signalGroup(pgid, 'SIGKILL');
  }
  events.close();
}

/** The ladder over each group of the run's processes (or SIGKILL), until none is left. */
async function ladderOver(rec: RunRecord, first: readonly RunProcess[], now: boolean): Promise<void> {
  const grace = gracePeriods();
  const events = new EventsWriter(join(rec.dir, EVENTS_FILE));
  try {
    let ps = first;
    for (let round = 0; ps.length > 0 && round < 3; round++) {
      const groups = [...new Set(ps.map((p) => p.pgid))];
      if (now || round > 0) killOrphans(rec, ps);
      await Promise.all(
        groups.map((pgid) =>
          now || round > 0
            ? waitGroupGone(pgid, grace.sigtermMs)
            : stopGroup(pgid, grace, 'SIGINT', ledgerHooks(rec.dir, pgid, 'stop', events)),
        ),
      );
      ps = stepProcesses(rec);
    }
  } finally {
    events.close();
  }
}

/** The strongest signal the ledger says each step's group got. */
function stoppedFromLedger(rec: RunRecord): Map<number, StopSignal> {
  const out = new Map<number, StopSignal>();
  for (const [pgid, last] of ladderSoFar(rec.dir)) {
    const i = stepOfGroup(rec, pgid);
    if (i < 0) continue;
    if (rank(last.signal) > rank(out.get(i))) out.set(i, last.signal as LadderSignal);
  }
  return out;
}
