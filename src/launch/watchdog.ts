/**
 * The watchdog: no step process outlives zerowiz, however zerowiz ends (kill -9, the OOM killer, a crash).
 *
 * An exit hook cannot run after SIGKILL, so the guarantee comes from the kernel: zerowiz holds the only
 * write end of a pipe to a small watchdog process and tells it, a line at a time, which process groups are
 * running. When zerowiz ends, for any reason, the kernel closes that pipe and the watchdog reads end of
 * file. If zerowiz had not said "the run is over" first, the watchdog runs zerowiz's finisher
 * (`node <bin> __zerowiz-watchdog ...`): the same stop ladder as a stop from the pane (SIGINT, SIGTERM after
 * the grace period, SIGKILL after the second), on every group still registered, then run.json's final
 * state (`interrupted`, with a note saying the watchdog ended it).
 *
 * The waiting part is `/bin/sh` reading lines: about 2 ms of zerowiz's time to spawn and 1 MB of memory,
 * where a second Node would cost about 20 ms to spawn, 50 ms of CPU and 40 MB while it waits. It is
 * spawned right after the first step, so it never delays that step, with what it must know so far in its
 * arguments; zerowiz never waits for it (the pipe buffers what it is told). Until then nothing runs, and
 * run.json says so by itself (see createRunRecord). It runs in its own session, so a closing terminal
 * (SIGHUP) or Ctrl+C (SIGINT to the terminal's foreground group) never reaches it.
 *
 * Every step also gets ZEROWIZ_RUN_DIR=<the record directory> in its environment: a step's processes can
 * be found by it even in the microseconds between a spawn and its registration.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WATCHDOG_ARG } from './entry.js';
import { type StopSignal, processesWithEnv, stopGroup } from './group.js';
import { TMP_SUFFIX, readRunRecord, releaseReserve, saveRunJson, type RunRecord } from './record.js';

/** The environment variable every step gets: its run's record directory (absolute). */
export const RUN_DIR_ENV = 'ZEROWIZ_RUN_DIR';

// $1 node, $2 the bin, $3 the record directory, $4 the grace periods, then the lines zerowiz had for it
// before it started; more lines come on stdin. 'e' (the run is over, its record final) ends the watchdog;
// end of file without it runs the finisher with every line it was told.
const WATCHDOG_SH = `n=$1 b=$2 d=$3 g=$4
shift 4
while IFS= read -r l; do
  [ "$l" = e ] && exit 0
  set -- "$@" "$l"
done
exec "$n" "$b" ${WATCHDOG_ARG} "$d" "$g" "$@"`;

/** What a run tells its process guard (the watchdog): the pipeline calls these around each step. */
export interface ProcessGuard {
  /** Step `index` is about to be spawned. */
  willSpawn(index: number): void;
  /** Step `index` runs as process group `pgid`. */
  spawned(index: number, pgid: number): void;
  /** Group `pgid` is gone. */
  gone(pgid: number): void;
}

/** A started watchdog, as zerowiz holds it. */
export class Watchdog implements ProcessGuard {
  private child: ChildProcess | null = null;
  /** Lines told before the process exists: they become its first arguments. */
  private readonly early: string[] = [];
  private alive = true;

  private constructor(
    private readonly dir: string,
    private readonly grace: { sigintMs: number; sigtermMs: number },
    private readonly bin: string,
    private readonly node: string,
  ) {}

  /**
   * The watchdog for the run recorded in `dir`. Its process starts right after the first step is spawned,
   * off the path to that step, with what it must know so far in its arguments (so nothing is lost if
   * zerowiz dies a moment later). null without a bin to run the finisher with (unit tests): then zerowiz's
   * own exit hook (SIGKILL) is all there is.
   */
  static create(opts: {
    dir: string;
    grace: { sigintMs: number; sigtermMs: number };
    /** The bin to run the finisher with (null: unknown, e.g. in unit tests). */
    bin: string | null;
    node?: string;
  }): Watchdog | null {
    if (opts.bin === null) return null;
    return new Watchdog(opts.dir, opts.grace, opts.bin, opts.node ?? process.execPath);
  }

  private start(): void {
    let child: ChildProcess;
    try {
      child = spawn(
        '/bin/sh',
        [
          '-c',
          WATCHDOG_SH,
          'zerowiz-watchdog',
          this.node,
          this.bin,
          this.dir,
          `${this.grace.sigintMs}:${this.grace.sigtermMs}`,
          ...this.early.splice(0),
        ],
        { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
      );
    } catch {
      this.alive = false;
      return;
    }
    if (child.pid === undefined) {
      this.alive = false;
      return;
    }
    child.on('exit', () => {
      this.alive = false;
    });
    child.on('error', () => {
      this.alive = false;
    });
    // A write to a watchdog that is gone fails with EPIPE: then zerowiz's own exit hook does the work.
    child.stdin?.on('error', () => {
      this.alive = false;
    });
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.child = child;
  }

  /** Whether it watches (and will stop what zerowiz leaves). */
  get watching(): boolean {
    return this.alive && this.child?.stdin?.writable === true;
  }

  /** The watchdog's pid once started (for tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private tell(line: string): void {
    if (!this.alive) return;
    if (!this.child) {
      this.early.push(line);
      return;
    }
    if (!this.watching) return;
    // A socket write is tried at once: the line is in the kernel's buffer before this returns.
    this.child.stdin!.write(`${line}\n`);
  }

  willSpawn(index: number): void {
    this.tell(`s ${index}`);
  }

  spawned(index: number, pgid: number): void {
    this.tell(`g ${index} ${pgid}`);
    if (!this.child && this.alive) this.start();
  }

  gone(pgid: number): void {
    this.tell(`x ${pgid}`);
  }

  /** The run is over and its record final: the watchdog exits (or never starts). */
  finished(): void {
    if (this.child) this.tell('e');
    this.alive = false;
  }
}

/** The note a record gets when the watchdog ended it. */
export const WATCHDOG_NOTE =
  'zerowiz ended before the run did (killed, e.g. kill -9 or the OOM killer); its watchdog stopped the steps';

/**
 * The finisher, run by the watchdog after zerowiz ended without finishing its run: stops every group it
 * was told about (and any process of a step whose registration zerowiz did not get to send) with the
 * ladder, then writes run.json's final state. `args`: the record directory, `sigintMs:sigtermMs`, and the
 * lines zerowiz sent.
 */
export async function finishAfterZerowiz(args: string[]): Promise<void> {
  const [dir, graceText, ...lines] = args;
  if (!dir) return;
  const [sigintMs, sigtermMs] = (graceText ?? '').split(':').map(Number);
  const grace = { sigintMs: sigintMs ?? 10_000, sigtermMs: sigtermMs ?? 5_000 };
  const groups = new Map<number, number>(); // pgid -> step index
  const gone = new Set<number>();
  const announced = new Set<number>();
  for (const l of lines) {
    const [op, a, b] = l.split(' ');
    if (op === 's') announced.add(Number(a));
    else if (op === 'g') {
      groups.set(Number(b), Number(a));
      announced.delete(Number(a));
    } else if (op === 'x') gone.add(Number(a));
  }
  for (const pgid of gone) groups.delete(pgid);
  // A step spawned but not registered: its processes carry the run's directory in their environment.
  if (announced.size > 0) {
    const step = Math.max(...announced);
    for (const p of processesWithEnv(RUN_DIR_ENV, dir)) if (!gone.has(p.pgid)) groups.set(p.pgid, step);
  }
  const stopped = new Map<number, StopSignal>(); // step index -> signal
  await Promise.all(
    [...groups].map(async ([pgid, step]) => {
      const sig = await stopGroup(pgid, grace);
      const prev = stopped.get(step);
      if (prev === undefined || rank(sig) > rank(prev)) stopped.set(step, sig);
    }),
  );
  endRecord(dir, stopped);
}

function rank(s: StopSignal): number {
  return ['none', 'SIGINT', 'SIGTERM', 'SIGKILL'].indexOf(s);
}

/** Writes the final state of a record zerowiz left running, and removes its temporary files and reserve. */
function endRecord(dir: string, stopped: Map<number, StopSignal>, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (n.includes(TMP_SUFFIX)) {
      try {
        unlinkSync(join(dir, n));
      } catch {}
    }
  }
  const r = readRunRecord(dir);
  const rec: RunRecord | null = 'record' in r && r.record.json.ended === 'running' ? r.record : null;
  if (rec) {
    const at = new Date(now).toISOString();
    rec.json.steps.forEach((s, i) => {
      if (s.status !== 'running') return;
      s.status = 'stopped';
      s.endedAt = at;
      s.durationMs = s.startedAt ? now - Date.parse(s.startedAt) : null;
      const sig = stopped.get(i);
      if (sig && sig !== 'none') s.stopSignal = sig;
      else s.warning = 'zerowiz ended before it saw how this step ended';
    });
    rec.json.ended = 'interrupted';
    rec.json.exitCode = null;
    rec.json.endedAt = at;
    rec.json.note = WATCHDOG_NOTE;
  }
  // The reserve goes first: on a full disk it is the room the last save needs.
  releaseReserve(dir);
  if (rec) saveRunJson(rec);
}
