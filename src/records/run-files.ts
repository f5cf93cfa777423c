/**
 * What a local run's supervisor writes into its run directory for the viewers (the pane, stream mode,
 * `attach`, `stop`, `runs`), besides run.json and the step logs:
 *
 * - `events.jsonl`: one JSON object per line, appended as things happen: a step starts (with what a viewer
 *   needs to read it as the supervisor does: the free port the port-in-use fix names, where the step's
 *   loss.csv ended before it started), an alert fires, a stop is asked for, a step ends, the logs stop, the
 *   run ends. Bounded: two lines per step, at most MAX_ALERTS_PER_STEP alerts per step, a few more.
 * - `live.json`: the GPU telemetry as it stands (the latest sample per GPU and each step's peaks), replaced
 *   whole at most once per telemetry sample. A multi-day run's telemetry is one small file, not a log.
 *
 * The viewers only read; nothing here waits on a reader.
 */
import { closeSync, constants, fstatSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Alert } from '../observe/index.js';
import type { PipelineOutcome, StepResult } from '../observe/index.js';
import { Tail } from '../fs/index.js';
import type { GpuPeak, GpuSample, TelemetryState } from '../observe/index.js';

/** The events file's name in a run directory. */
export const EVENTS_FILE = 'events.jsonl';
/** The telemetry snapshot's name in a run directory. */
export const LIVE_FILE = 'live.json';
/** Largest live.json a viewer reads (the supervisor's is a few KB). */
const LIVE_MAX_BYTES = 1024 * 1024;
/** Longest events line read back (a longer one is damaged and skipped). */
const MAX_EVENT_LINE_BYTES = 64 * 1024;

/** One event of a local run, as its supervisor appends it to events.jsonl. */
export type RunEvent =
  | {
      t: 'stepStart';
      i: number;
      at: number;
      pid: number | null;
      /** A port free on this machine when the step started (the port-in-use alert's fix). */
      freePort: number | null;
      /** Where the step's loss.csv ended when it started (rows before are an earlier run's), or null. */
      csvOffset: number | null;
    }
  /** `csvEnd`: where the step's loss.csv ended when it ended (rows after are a later run's), or absent. */
  | { t: 'stepEnd'; i: number; r: StepResult; csvEnd?: number | null }
  | { t: 'alert'; a: Alert }
  | { t: 'stopping'; at: number }
  | { t: 'logError'; i: number; why: string }
  | { t: 'end'; o: Pick<PipelineOutcome, 'outcome' | 'exitCode' | 'failedStep'>; at: number };

/** Appends events to a run's events.jsonl; a failed write (a full disk) is remembered, never thrown. */
export class EventsWriter {
  /** Why the last write failed, or null. */
  error: string | null = null;
  private fd: number | null = null;

  constructor(readonly path: string) {
    try {
      this.fd = openSync(
        path,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
        0o600,
      );
    } catch (err) {
      this.error = (err as Error).message;
    }
  }

  /** Appends one event (one write call: a reader never sees half a line unless the disk filled mid-write). */
  write(e: RunEvent): boolean {
    if (this.fd === null) return false;
    try {
      writeSync(this.fd, `${JSON.stringify(e)}\n`);
      this.error = null;
      return true;
    } catch (err) {
      this.error = (err as Error).message;
      return false;
    }
  }

  close(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {}
    this.fd = null;
  }
}

function isEvent(v: unknown): v is RunEvent {
  if (typeof v !== 'object' || v === null) return false;
  const t = (v as { t?: unknown }).t;
  return t === 'stepStart' || t === 'stepEnd' || t === 'alert' || t === 'stopping' || t === 'logError' || t === 'end';
}

/** Reads a run's events.jsonl as it grows; whole lines only, damaged ones skipped. */
export class EventsReader {
  private readonly tail: Tail;
  private carry = '';

  constructor(dir: string) {
    this.tail = new Tail(join(dir, EVENTS_FILE));
  }

  /** The events appended since the last call. */
  read(): RunEvent[] {
    const out: RunEvent[] = [];
    this.tail.drain((b) => {
      let text = this.carry + b.toString('utf8');
      let nl = text.indexOf('\n');
      while (nl !== -1) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        try {
          const v: unknown = JSON.parse(line);
          if (isEvent(v)) out.push(v);
        } catch {}
        nl = text.indexOf('\n');
      }
      this.carry = text.length > MAX_EVENT_LINE_BYTES ? '' : text;
    });
    return out;
  }
}

/** The telemetry a viewer shows, as the supervisor last saw it. */
export interface LiveSnapshot {
  telemetry: {
    state: TelemetryState;
    reason: string | null;
    version: number;
    latest: GpuSample[];
    /** Each step's per-GPU peaks, by step index. */
    peaks: Record<string, GpuPeak[]>;
  };
}

/** Replaces live.json whole (temp file + rename); a failure is not an error (the next sample tries again). */
export function writeLive(dir: string, snap: LiveSnapshot): boolean {
  const path = join(dir, LIVE_FILE);
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, JSON.stringify(snap));
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    return true;
  } catch {
    try {
      unlinkSync(tmp);
    } catch {}
    return false;
  }
}

/**
 * Reads live.json: a regular file of at most 1 MiB, opened without following a link or waiting on anything;
 * null when it is not there, not readable, or (given `last`) unchanged since the read `last` remembers.
 */
export function readLive(dir: string, last: { key: string } = { key: '' }): LiveSnapshot | null {
  let fd: number;
  try {
    fd = openSync(join(dir, LIVE_FILE), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > LIVE_MAX_BYTES) return null;
    const key = `${st.ino}:${st.mtimeMs}:${st.size}`;
    if (key === last.key) return null;
    const buf = Buffer.allocUnsafe(st.size);
    const n = readSync(fd, buf, 0, st.size, 0);
    const v = JSON.parse(buf.subarray(0, n).toString('utf8')) as LiveSnapshot;
    last.key = key;
    return typeof v === 'object' && v !== null && typeof v.telemetry === 'object' ? v : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
