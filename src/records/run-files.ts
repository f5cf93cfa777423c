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
import { closeSync, constants, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { ALERT_IDS } from '../observe/index.js';
import { Tail } from '../fs/index.js';
import { readRecordJson } from './record-files.js';
import type { GpuPeak, GpuSample, TelemetryState } from '../observe/index.js';

/** The events file's name in a run directory. */
export const EVENTS_FILE = 'events.jsonl';
/** The telemetry snapshot's name in a run directory. */
export const LIVE_FILE = 'live.json';
/** Largest live.json a viewer reads (the supervisor's is a few KB). */
const LIVE_MAX_BYTES = 1024 * 1024;
/** Longest events line read back (a longer one is damaged and skipped). */
const MAX_EVENT_LINE_BYTES = 64 * 1024;
/**
 * Largest events.jsonl read back: a run writes two lines per step, a bounded number of alerts per step and a
 * few more (a few KiB); what lies past this is not read.
 */
export const EVENTS_MAX_BYTES = 16 * 2 ** 20;

const count = z.int().check(z.nonnegative());
const ms = z.number().check(z.nonnegative());
const pid = z.int().check(z.positive());

/** A step's end as events.jsonl carries it (observe/events.ts StepResult). */
const stepResultSchema = z.object({
  status: z.enum(['done', 'failed', 'stopped']),
  exitCode: z.nullable(z.int()),
  signal: z.nullable(z.string()),
  startedAt: ms,
  endedAt: ms,
  stopSignal: z.optional(z.enum(['SIGINT', 'SIGTERM', 'SIGKILL', 'none'])),
  error: z.optional(z.string()),
  warning: z.optional(z.string()),
  refused: z.optional(z.boolean()),
});

/** An alert as events.jsonl carries it (observe/alerts.ts Alert). */
const alertSchema = z.object({
  id: z.enum(ALERT_IDS),
  step: count,
  line: z.string(),
  at: ms,
  title: z.string(),
  fix: z.string(),
  fatal: z.boolean(),
});

/**
 * One event of a local run, as its supervisor appends it to events.jsonl, and as a viewer reads it back: every
 * line is checked against this schema (the exit codes are those zerowiz gives: 0, 1, 2, 130), and a step index
 * is checked against the record's steps by the reader.
 */
export const runEventSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('stepStart'),
    i: count,
    at: ms,
    pid: z.nullable(pid),
    /** A port free on this machine when the step started (the port-in-use alert's fix). */
    freePort: z.nullable(z.int().check(z.positive(), z.lte(65535))),
    /** Where the step's loss.csv ended when it started (rows before are an earlier run's), or null. */
    csvOffset: z.nullable(count),
    /** The step's leader's start time in clock ticks since boot (with pid: the step's identity), or null. */
    pidStart: z.optional(z.nullable(count)),
  }),
  /** `csvEnd`: where the step's loss.csv ended when it ended (rows after are a later run's), or absent. */
  z.object({ t: z.literal('stepEnd'), i: count, r: stepResultSchema, csvEnd: z.optional(z.nullable(count)) }),
  z.object({ t: z.literal('alert'), a: alertSchema }),
  z.object({ t: z.literal('stopping'), at: ms }),
  /**
   * A signal of the stop ladder, written before it is sent, by whoever sends it (the supervisor, its watchdog
   * after it, `zerowiz stop` of an orphaned run): whoever goes on with the stop goes on from the last one.
   */
  z.object({
    t: z.literal('signal'),
    pgid: pid,
    sig: z.enum(['SIGINT', 'SIGTERM', 'SIGKILL']),
    at: ms,
    /** The time the group is given before the next signal. */
    graceMs: count,
    by: z.enum(['supervisor', 'watchdog', 'stop']),
  }),
  z.object({ t: z.literal('logError'), i: count, why: z.string() }),
  z.object({
    t: z.literal('end'),
    o: z.object({
      outcome: z.enum(['succeeded', 'failed', 'interrupted']),
      exitCode: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(130)]),
      failedStep: z.nullable(count),
    }),
    at: ms,
  }),
]);

/** One event of a local run (see runEventSchema). */
export type RunEvent = z.infer<typeof runEventSchema>;

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

/**
 * Reads a run's events.jsonl as it grows, under the rule of every record file (a regular file of the user's own,
 * never through a link, at most EVENTS_MAX_BYTES): whole lines only, each checked against runEventSchema and
 * against the record's `steps` count; a damaged line is skipped.
 */
export class EventsReader {
  private readonly tail: Tail;
  private carry = '';

  constructor(
    dir: string,
    /** How many steps the run has (an event about another step is damaged). */
    private readonly steps = Number.POSITIVE_INFINITY,
  ) {
    this.tail = new Tail(join(dir, EVENTS_FILE), 0, EVENTS_MAX_BYTES);
  }

  /** Why the file cannot be read (not a regular file of the user's own, too big), or null. */
  get problem(): string | null {
    return this.tail.problem;
  }

  private parse(line: string): RunEvent | null {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return null;
    }
    const r = z.safeParse(runEventSchema, v);
    if (!r.success) return null;
    const e = r.data;
    const step =
      e.t === 'alert' ? e.a.step : e.t === 'end' ? e.o.failedStep : e.t === 'stopping' || e.t === 'signal' ? null : e.i;
    return step === null || step < this.steps ? e : null;
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
        const e = this.parse(line);
        if (e) out.push(e);
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

const sampleSchema = z.object({
  index: count,
  usedBytes: z.nullable(count),
  totalBytes: z.nullable(count),
  utilPercent: z.nullable(z.number()),
});
const peakSchema = z.object({ index: count, usedBytes: count, totalBytes: z.nullable(count), at: ms });

/** live.json as a viewer reads it back. */
const liveSnapshotSchema = z.object({
  telemetry: z.object({
    state: z.enum(['idle', 'starting', 'running', 'unavailable', 'lost', 'stopped']),
    reason: z.nullable(z.string()),
    version: count,
    latest: z.array(sampleSchema),
    peaks: z.record(z.string(), z.array(peakSchema)),
  }),
});

/**
 * Reads live.json through the one reader of record files (a regular file of the user's own, no link, at most
 * 1 MiB, its schema); null when it is not there, not readable, damaged or (given `last`) unchanged since the
 * read `last` remembers.
 */
export function readLive(dir: string, last: { key: string } = { key: '' }): LiveSnapshot | null {
  const r = readRecordJson(join(dir, LIVE_FILE), liveSnapshotSchema, LIVE_MAX_BYTES);
  if ('problem' in r) return null;
  const key = `${r.st.ino}:${r.st.mtimeMs}:${r.st.size}`;
  if (key === last.key) return null;
  last.key = key;
  return r.value;
}
