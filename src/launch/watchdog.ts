/**
 * The watchdog: no step process outlives zerowiz, however zerowiz ends (kill -9, the OOM killer, a crash).
 *
 * An exit hook cannot run after SIGKILL, so the guarantee comes from the kernel: zerowiz holds the only
 * write end of a pipe to a small watchdog process and tells it, a line at a time, where the run record is
 * and which process groups are running. When zerowiz ends, for any reason, the kernel closes that pipe and
 * the watchdog reads end of file. If zerowiz had not said "the run is over" first, the watchdog runs
 * zerowiz's finisher (`node <bin> __zerowiz-watchdog ...`): the same stop ladder as a stop from the pane
 * (SIGINT, SIGTERM after the grace period, SIGKILL after the second) on every group still registered, then
 * run.json's final state (`interrupted`, with a note saying the watchdog ended it).
 *
 * It must exist before the first step is spawned: a spawn blocks zerowiz until the child has exec'd, and a
 * SIGKILL in that moment (milliseconds on a loaded machine) would otherwise orphan the step (the launch
 * torture scenario found exactly that when the watchdog started after the first step). So it is spawned
 * while the config files are being written, before the record and the steps; zerowiz never waits for it
 * (the pipe buffers what it is told). The waiting part is `/bin/sh` reading lines: about 1-2 ms of
 * zerowiz's time to spawn on a quiet machine and 1 MB of memory, where a second Node would cost about
 * 20 ms to spawn, 50 ms of CPU and 40 MB while it waits. It runs in its own session, so a closing terminal
 * (SIGHUP) or Ctrl+C (SIGINT to the terminal's foreground group) never reaches it.
 *
 * Every step also gets ZEROWIZ_RUN_DIR=<the record directory> in its environment: a step's processes can
 * be found by it even in the microseconds between a spawn and its registration.
 */
import type { Socket } from 'node:net';
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WATCHDOG_ARG } from './bin.js';
import { type ProcessGuard, type StopSignal, processesWithEnv, stopGroup } from '../proc/index.js';
import { TMP_SUFFIX, readRunRecord, releaseReserve, saveRunJson, type RunRecord } from '../records/index.js';
import { EVENTS_FILE, EventsWriter } from '../records/index.js';
import { ladderSoFar, ledgerHooks } from './ladder.js';
import { HELPER_OF_ENV, RUN_DIR_ENV } from './run-env.js';
import { markInterrupted } from './orphans.js';

// $1 node, $2 the bin, $3 the grace periods; then lines from zerowiz on stdin. 'e' (nothing left to
// watch) ends the watchdog; end of file without it runs the finisher with every line it was told.
const WATCHDOG_SH = `n=$1 b=$2 g=$3
set --
while IFS= read -r l; do
  [ "$l" = e ] && exit 0
  set -- "$@" "$l"
done
exec "$n" "$b" ${WATCHDOG_ARG} "$g" "$@"`;

/** A started watchdog, as zerowiz holds it. */
export class Watchdog implements ProcessGuard {
  private alive = true;
  private over = false;
  /** Every line told so far: a watchdog started in this one's place is told them again. */
  private readonly told: string[] = [];

  private constructor(
    private child: ChildProcess,
    private readonly opts: WatchdogOptions,
  ) {
    this.watch(child);
  }

  /**
   * Starts a watchdog; null when it cannot be (no bin to run the finisher with, as in unit tests, or no
   * /bin/sh): then zerowiz's own exit hook (SIGKILL) is all there is.
   */
  static start(opts: WatchdogOptions): Watchdog | null {
    const child = spawnWatchdog(opts);
    return child ? new Watchdog(child, opts) : null;
  }

  /**
   * A watchdog that dies while the run goes (killed, e.g. `kill -9` or the OOM killer) is noticed here, its
   * parent: another is started in its place and told everything again, and `onReplaced` hears its pid (the
   * record names it). One that cannot be started leaves zerowiz's own exit hook.
   */
  private watch(child: ChildProcess): void {
    const lost = () => {
      if (this.child !== child || !this.alive) return;
      this.alive = false;
      if (!this.over) this.replace();
    };
    child.on('exit', lost);
    child.on('error', lost);
    // A write to a watchdog that is gone fails with EPIPE: its exit comes next.
    child.stdin?.on('error', () => undefined);
  }

  private replace(): void {
    const fresh = spawnWatchdog(this.opts);
    if (!fresh) return;
    this.child = fresh;
    this.alive = true;
    this.watch(fresh);
    for (const line of this.told) fresh.stdin!.write(`${line}\n`);
    this.opts.onReplaced?.(fresh.pid!);
  }

  /** The watchdog's pid. */
  get pid(): number {
    return this.child.pid!;
  }

  /** Whether it watches (and will stop what zerowiz leaves). */
  get watching(): boolean {
    return this.alive && this.child.stdin?.writable === true;
  }

  private tell(line: string): void {
    if (this.over) return;
    this.told.push(line);
    if (!this.watching) return;
    // A socket write is tried at once: the line is in the kernel's buffer before this returns.
    this.child.stdin!.write(`${line}\n`);
  }

  /** The run's record directory exists (told before anything is written in it). */
  recordDir(dir: string): void {
    this.tell(`r ${JSON.stringify(dir)}`);
  }

  willSpawn(index: number): void {
    this.tell(`s ${index}`);
  }

  spawned(index: number, pgid: number): void {
    this.tell(`g ${index} ${pgid}`);
  }

  gone(pgid: number): void {
    this.tell(`x ${pgid}`);
  }

  helperWillSpawn(): void {
    this.tell('t');
  }

  helperSpawned(pgid: number): void {
    this.tell(`h ${pgid}`);
  }

  /** Nothing is left to watch (the run is over and recorded, or it never started): the watchdog exits. */
  finished(): void {
    this.tell('e');
    this.over = true;
    this.alive = false;
  }
}

/** How a watchdog is started. */
export interface WatchdogOptions {
  grace: { sigintMs: number; sigtermMs: number };
  /** The bin to run the finisher with (null: unknown). */
  bin: string | null;
  node?: string;
  /** A watchdog started in the place of one that died: its pid. */
  onReplaced?: (pid: number) => void;
}

/** Spawns the watchdog's shell in its own session; null when it cannot be. */
function spawnWatchdog(opts: WatchdogOptions): ChildProcess | null {
  if (opts.bin === null) return null;
  let child: ChildProcess;
  try {
    child = spawn(
      '/bin/sh',
      [
        '-c',
        WATCHDOG_SH,
        'zerowiz-watchdog',
        opts.node ?? process.execPath,
        opts.bin,
        `${opts.grace.sigintMs}:${opts.grace.sigtermMs}`,
      ],
      { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
    );
  } catch {
    return null;
  }
  if (child.pid === undefined) return null;
  child.unref();
  (child.stdin as Socket | null)?.unref();
  return child;
}

/** The note a record gets when the watchdog ended it. */
export const WATCHDOG_NOTE =
  'zerowiz ended before the run did (killed, e.g. kill -9 or the OOM killer); its watchdog stopped the steps';

/**
 * The finisher, run by the watchdog after zerowiz ended without finishing its run: stops every group it
 * was told about (and any process of a step whose registration zerowiz did not get to send) with the
 * ladder, then writes run.json's final state. `args`: `sigintMs:sigtermMs`, then the lines zerowiz sent.
 */
export async function finishAfterZerowiz(args: string[]): Promise<void> {
  const [graceText, ...lines] = args;
  const [sigintMs, sigtermMs] = (graceText ?? '').split(':').map(Number);
  const grace = { sigintMs: sigintMs ?? 10_000, sigtermMs: sigtermMs ?? 5_000 };
  let dir: string | null = null;
  const groups = new Map<number, number>(); // pgid -> step index
  const helpers = new Set<number>();
  let helperAnnounced = false;
  const gone = new Set<number>();
  const announced = new Set<number>();
  for (const l of lines) {
    const [op, a, b] = l.split(' ');
    if (op === 'r') {
      try {
        dir = JSON.parse(l.slice(2)) as string;
      } catch {}
    } else if (op === 's') announced.add(Number(a));
    else if (op === 'g') {
      groups.set(Number(b), Number(a));
      announced.delete(Number(a));
    } else if (op === 'x') gone.add(Number(a));
    else if (op === 't') helperAnnounced = true;
    else if (op === 'h') {
      helpers.add(Number(a));
      helperAnnounced = false;
    }
  }
  for (const pgid of gone) {
    groups.delete(pgid);
    helpers.delete(pgid);
  }
  // A helper spawned but not registered: found by its own variable.
  if (helperAnnounced && dir !== null) {
    for (const p of processesWithEnv(HELPER_OF_ENV, dir)) if (!gone.has(p.pgid)) helpers.add(p.pgid);
  }
  // A step spawned but not registered: its processes carry the run's directory in their environment.
  if (announced.size > 0 && dir !== null) {
    const step = Math.max(...announced);
    for (const p of processesWithEnv(RUN_DIR_ENV, dir)) if (!gone.has(p.pgid)) groups.set(p.pgid, step);
  }
  const stopped = new Map<number, StopSignal>(); // step index -> signal
  // A stop the supervisor began goes on from its last signal (the ledger in events.jsonl: ./ladder.ts).
  const events = dir !== null ? new EventsWriter(join(dir, EVENTS_FILE)) : null;
  await Promise.all([
    ...[...groups].map(async ([pgid, step]) => {
      const hooks = dir !== null && events ? ledgerHooks(dir, pgid, 'watchdog', events) : {};
      let sig = await stopGroup(pgid, grace, 'SIGINT', hooks);
      // `zerowiz stop --now` may have killed the group meanwhile: the ledger has the last word.
      const last = dir !== null ? ladderSoFar(dir).get(pgid)?.signal : undefined;
      if (last !== undefined && rank(last) > rank(sig)) sig = last;
      const prev = stopped.get(step);
      if (prev === undefined || rank(sig) > rank(prev)) stopped.set(step, sig);
    }),
    // Helpers (nvidia-smi) end on SIGTERM; they keep nothing worth a grace period.
    ...[...helpers].map((pgid) => stopGroup(pgid, { sigintMs: 0, sigtermMs: grace.sigtermMs }, 'SIGTERM')),
  ]);
  events?.close();
  if (
    dir !== null &&
    endRecord(
      dir,
      stopped,
      lines.some((l) => l.startsWith('s ')),
    )
  )
    await (await import('./run-outputs.js')).outputsAfterSupervisor(dir, process.env);
}

function rank(s: StopSignal): number {
  return ['none', 'SIGINT', 'SIGTERM', 'SIGKILL'].indexOf(s);
}

/**
 * Writes the final state of a record zerowiz left running, and removes its temporary files and reserve. A
 * record zerowiz was still creating when it died (no run.json yet, no step started) holds only zerowiz's
 * own files and is removed. True when this ended the record (its report and end notice follow).
 */
function endRecord(dir: string, stopped: Map<number, StopSignal>, anyStep: boolean, now = Date.now()): boolean {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false;
  }
  for (const n of names) {
    if (n.includes(TMP_SUFFIX)) {
      try {
        unlinkSync(join(dir, n));
      } catch {}
    }
  }
  if (!anyStep && !names.includes('run.json')) {
    rmSync(dir, { recursive: true, force: true });
    return false;
  }
  const r = readRunRecord(dir);
  const rec: RunRecord | null = 'record' in r && r.record.json.ended === 'running' ? r.record : null;
  if (rec)
    markInterrupted(rec, {
      stopped,
      note: WATCHDOG_NOTE,
      unknown: 'zerowiz ended before it saw how this step ended',
      now,
    });
  // The reserve goes first: on a full disk it is the room the last save needs.
  releaseReserve(dir);
  if (rec) saveRunJson(rec);
  return rec !== null;
}
