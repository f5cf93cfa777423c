/**
 * `zerowiz stop RUN` of a local run, from any terminal. A stop is always gentle: the run's owner runs the
 * ladder (SIGINT, SIGTERM after the first grace, SIGKILL after the second), and a stop asked while one is under
 * way joins it (and says so); only `--now` kills at once. Who is asked depends on where the run stands:
 *
 * - its supervisor runs: SIGTERM to it (the ladder), SIGUSR2 with --now; a supervisor that cannot act (stopped
 *   by SIGSTOP or Ctrl+Z, or in a frozen cgroup) is named, with what the stop waits for, and --now then kills
 *   the steps directly (written into the ledger, so the supervisor records the stop when it runs again);
 * - its supervisor is gone and its watchdog is ending the run: the stop waits for it (--now kills directly);
 * - nobody owns it and its steps still run (orphaned): the stop runs the ladder itself (./orphans.ts).
 *
 * It returns once the run has ended; while it waits it says what it waits for.
 */
import { join } from 'node:path';
import { UsageError } from '../text/index.js';
import { processHeld, signalSupervisor, supervisorState, type RunProcess } from '../proc/index.js';
import { displayDir, EventsReader, readRunRecord, type RunJson, type RunRecord } from '../records/index.js';
import { ladderSoFar } from './ladder.js';
import { localRunState, processList, stepProcesses, stopOrphans } from './orphans.js';
import { signalGroup, waitGroupGone } from '../proc/index.js';
import { EVENTS_FILE, EventsWriter } from '../records/index.js';

/** How often `zerowiz stop` looks whether the run has ended. */
const STOP_POLL_MS = 200;
/** How long a stop waits without news before it says again what it waits for. */
export const STOP_NEWS_MS = 10_000;

/** How a stop speaks and what it was asked. */
export interface LocalStopOptions {
  now: boolean;
  say: (line: string) => void;
}

/** Whether the run's supervisor (or its watchdog after it) has already begun a stop: a `stopping` or a signal. */
function stopUnderWay(dir: string): boolean {
  return new EventsReader(dir).read().some((e) => e.t === 'stopping' || e.t === 'signal');
}

/** The record as it is now (its owner's last save), or the one given. */
function fresh(rec: RunRecord): RunJson {
  const r = readRunRecord(rec.dir);
  if ('record' in r) rec.json = r.record.json;
  return rec.json;
}

/** What a held supervisor means for the stop, in one line. */
function heldLine(id: string, pid: number, how: 'stopped' | 'frozen'): string {
  return how === 'stopped'
    ? `run ${id}: its supervisor (pid ${pid}) is stopped (SIGSTOP or Ctrl+Z), so the stop waits until it runs again (kill -CONT ${pid}); \`zerowiz stop ${id} --now\` kills the steps without it`
    : `run ${id}: its supervisor (pid ${pid}) is frozen (its cgroup is frozen), so the stop waits until the cgroup is thawed; \`zerowiz stop ${id} --now\` kills the steps without it`;
}

/** What the ladder is waiting on now, from the ledger: `step processes pid 1, pid 2 got SIGINT 12 s ago; ...`. */
function ladderNews(rec: RunRecord, ps: readonly RunProcess[]): string {
  const last = [...ladderSoFar(rec.dir).values()].at(-1);
  const pids = ps.map((p) => p.pid).join(', ');
  if (!last) return `its steps (pid ${pids}) have not been signalled yet`;
  const ago = Math.round((Date.now() - last.at) / 1000);
  const next = last.signal === 'SIGINT' ? 'SIGTERM' : last.signal === 'SIGTERM' ? 'SIGKILL' : null;
  const left = Math.max(0, Math.round((last.at + last.graceMs - Date.now()) / 1000));
  return `its steps (pid ${pids}) got ${last.signal} ${ago} s ago${next ? `; ${next} in ${left} s unless they end` : ''}`;
}

/**
 * SIGKILL to every process group of the run's steps now, each written into the ledger first (the owner, when
 * it runs again, records the stop as SIGKILL); resolves once they are gone.
 */
async function killSteps(rec: RunRecord): Promise<void> {
  const ps = stepProcesses(rec);
  const events = new EventsWriter(join(rec.dir, EVENTS_FILE));
  const groups = [...new Set(ps.map((p) => p.pgid))];
  for (const pgid of groups) {
    events.write({ t: 'signal', pgid, sig: 'SIGKILL', at: Date.now(), graceMs: 0, by: 'stop' });
    signalGroup(pgid, 'SIGKILL');
  }
  events.close();
  await Promise.all(groups.map((g) => waitGroupGone(g, 5_000)));
}

/** Stops a local run (see the module comment); resolves with the exit code: 0 once it has ended. */
export async function stopLocalRun(rec: RunRecord, opts: LocalStopOptions): Promise<number> {
  const id = rec.json.id;
  const state = localRunState(rec);
  if (state.kind === 'ended' || state.kind === 'abandoned') {
    opts.say(`run ${id} has already ended (${rec.json.ended === 'running' ? 'nobody runs it' : rec.json.ended})`);
    return 0;
  }
  if (state.kind === 'elsewhere')
    throw new UsageError(
      `cannot stop run ${id}: the run's supervisor runs on ${state.host}, not on this machine`,
      `stop it there; its logs are in ${displayDir(rec.dir)}`,
    );
  if (state.kind === 'orphaned') {
    opts.say(
      `run ${id} is orphaned: its supervisor and its watchdog are gone, but its steps still run (${processList(state.processes)}); ${opts.now ? 'killing them (SIGKILL)' : 'stopping them: SIGINT, then SIGTERM, then SIGKILL'}`,
    );
    await stopOrphans(rec, { now: opts.now, say: opts.say });
    return endWords(rec, opts);
  }
  await ask(rec, opts);
  // Ctrl+C stops the waiting, not the stop: the supervisor goes on with its ladder.
  let interrupted = false;
  const onInterrupt = () => {
    interrupted = true;
  };
  process.on('SIGINT', onInterrupt);
  try {
    return await waitForEnd(rec, opts, () => interrupted);
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

/** Asks the run's owner: the supervisor's signal, or nothing when a stop is under way (this one joins it). */
async function ask(rec: RunRecord, opts: LocalStopOptions): Promise<void> {
  const id = rec.json.id;
  const sup = rec.json.supervisor!;
  const supGone = supervisorState(sup) === 'gone';
  if (opts.now) {
    signalSupervisor(sup, 'kill');
    opts.say(`killing run ${id} (SIGKILL to its steps)`);
    // A supervisor that cannot act (held, or gone while its watchdog ends the run): the steps are killed here.
    if (supGone || processHeld(sup.pid) !== null) await killSteps(rec);
    return;
  }
  if (supGone) {
    opts.say(
      `run ${id}: its supervisor is gone and its watchdog is stopping the steps (the same ladder); waiting for it`,
    );
    return;
  }
  if (stopUnderWay(rec.dir)) {
    opts.say(
      `run ${id} is already being stopped; this stop joins it and waits for the end (\`zerowiz stop ${id} --now\` kills at once)`,
    );
    return;
  }
  const why = signalSupervisor(sup, 'stop');
  // Gone between the look above and the signal (killed, or its run just ended): its watchdog ends the run, or the
  // run has ended; the waiting below says which.
  if (why && supervisorState(sup) === 'gone') {
    opts.say(`run ${id}: its supervisor has just ended; waiting for the run's end (its watchdog stops the steps)`);
    return;
  }
  if (why) throw new UsageError(`cannot stop run ${id}: ${why}`, `its logs are in ${displayDir(rec.dir)}`);
  opts.say(`stopping run ${id} (SIGINT to its steps, then SIGTERM, then SIGKILL); waiting for it to end`);
}

/**
 * Waits for the run's end, saying what it waits for; an owner that dies meanwhile leaves it to this stop. Ctrl+C
 * ends the waiting (130), not the stop.
 */
async function waitForEnd(rec: RunRecord, opts: LocalStopOptions, interrupted: () => boolean): Promise<number> {
  const sup = rec.json.supervisor!;
  let toldHeld: string | null = null;
  let newsAt = Date.now();
  for (;;) {
    if (fresh(rec).ended !== 'running') return endWords(rec, opts);
    if (interrupted()) {
      opts.say(
        `stopped waiting (Ctrl+C); run ${rec.json.id} goes on stopping as asked (its supervisor ends it): \`zerowiz runs\` says when it has ended`,
      );
      return 130;
    }
    const state = localRunState(rec);
    if (state.kind === 'orphaned' || state.kind === 'abandoned') {
      opts.say(
        `run ${rec.json.id}: its supervisor and its watchdog ended before the run; this stop goes on with the ladder`,
      );
      await stopOrphans(rec, { now: opts.now, say: opts.say });
      return endWords(rec, opts);
    }
    const held = processHeld(sup.pid);
    if (held !== null && held !== toldHeld) opts.say(heldLine(rec.json.id, sup.pid, held));
    toldHeld = held;
    if (Date.now() - newsAt >= STOP_NEWS_MS) {
      opts.say(`still waiting for run ${rec.json.id} to end: ${ladderNews(rec, stepProcesses(rec))}`);
      newsAt = Date.now();
    }
    if (opts.now && held !== null && stepProcesses(rec).length === 0) {
      opts.say(
        `the steps of run ${rec.json.id} are killed; its supervisor finishes the record when it runs again (pid ${sup.pid})`,
      );
      return 0;
    }
    await new Promise((res) => setTimeout(res, STOP_POLL_MS));
  }
}

/** The last line of a stop: how the run ended. */
function endWords(rec: RunRecord, opts: LocalStopOptions): number {
  const json = fresh(rec);
  if (json.ended === 'running') opts.say(`run ${rec.json.id}: its steps are gone; its record is not final yet`);
  else opts.say(`run ${rec.json.id} ${json.ended}${json.exitCode !== null ? ` (exit ${json.exitCode})` : ''}`);
  return 0;
}
