/**
 * The stop ladder as a ledger: whoever sends a step's process group a signal of the ladder (the supervisor, its
 * watchdog after the supervisor died, `zerowiz stop` of an orphaned run) appends it to the run's events.jsonl
 * first, with the time it gives the group before the next one. Whoever goes on with a stop after that process
 * died reads the ledger and goes on from the last signal: a training that saves on SIGINT never gets a second
 * SIGINT in the middle of its save because the process that sent the first one was killed.
 */
import { join } from 'node:path';
import type { LadderHooks, LadderSignal } from '../proc/index.js';
import { EVENTS_FILE, EventsReader, EventsWriter, type RunEvent } from '../records/index.js';

/** Who sends a signal of the ladder. */
export type LadderSender = Extract<RunEvent, { t: 'signal' }>['by'];

/** The last signal of the ladder each group got, by pgid, as the run's events.jsonl says. */
export function ladderSoFar(dir: string): Map<number, NonNullable<LadderHooks['resume']>> {
  const out = new Map<number, NonNullable<LadderHooks['resume']>>();
  for (const e of new EventsReader(dir).read())
    if (e.t === 'signal') out.set(e.pgid, { signal: e.sig, at: e.at, graceMs: e.graceMs });
  return out;
}

/** Writes each signal of a stop into the ledger before it is sent. */
export function ledgerWriter(
  events: Pick<EventsWriter, 'write'>,
  pgid: number,
  by: LadderSender,
): (signal: LadderSignal, graceMs: number) => void {
  return (sig, graceMs) => events.write({ t: 'signal', pgid, sig, at: Date.now(), graceMs, by });
}

/** The hooks of a stop that goes on with the ledger of `dir` for `pgid` (its own signals written there too). */
export function ledgerHooks(dir: string, pgid: number, by: LadderSender, events?: EventsWriter): LadderHooks {
  const resume = ladderSoFar(dir).get(pgid);
  const writer = events ?? new EventsWriter(join(dir, EVENTS_FILE));
  return { onSignal: ledgerWriter(writer, pgid, by), ...(resume ? { resume } : {}) };
}
