/**
 * The notifier of one run: each event goes to every target once, in the order the run sent them (one queue
 * per target, so a slow target holds up only itself), with bounded time (./deliver.ts), bounded retries (only
 * where a retry cannot deliver twice) and a bounded queue. Nothing here waits on a target from the caller's
 * side: `send` returns at once, and `flush` waits at most the time it is given, then says what was not sent.
 * Every outcome is counted and every failure kept (a line each, at most MAX_FAILURES) for the run record.
 */
import { type AttemptLimits, attemptLimits, deliverOnce } from './deliver.js';
import type { NotifyPayload } from './message.js';
import type { NotifyTarget } from './targets.js';
import { envNumber } from '../text/index.js';

/**
 * Waits before the second and third attempt of an event that may be tried again (override: ZEROWIZ_NOTIFY_RETRY_MS,
 * the first wait; the second is four times it). A target whose last event failed every attempt gets one attempt
 * per event until one goes through, so a dead endpoint costs a run one request per event.
 */
export const RETRY_DELAYS_MS: readonly number[] = [2_000, 8_000];

/** The retry waits in effect for an environment. */
export function retryDelaysMs(env: NodeJS.ProcessEnv): readonly number[] {
  const n = envNumber(env, 'ZEROWIZ_NOTIFY_RETRY_MS', -1);
  return n < 0 ? RETRY_DELAYS_MS : [n, 4 * n];
}
/** Events waiting per target at most; past it the oldest (never the end) is dropped and said so. */
export const MAX_QUEUED_EVENTS = 20;
/** Failures a summary keeps (the first ones, then the last one). */
export const MAX_FAILURES = 20;
/** How long a run's end waits for its notifications to go out. */
export const NOTIFY_FLUSH_MS = 30_000;

/** One target's count, for the record. */
export interface TargetTally {
  target: string;
  sent: number;
  failed: number;
}

/** One failure, for the record: when, which target (its label), which event, why. */
export interface NotifyFailure {
  at: string;
  target: string;
  event: string;
  why: string;
}

/** What a run's record keeps of its notifications (run.json `notify`). */
export interface NotifySummary {
  targets: TargetTally[];
  failures: NotifyFailure[];
}

/** Options of a notifier. */
export interface NotifierOptions {
  targets: readonly NotifyTarget[];
  env: NodeJS.ProcessEnv;
  limits?: AttemptLimits;
  retryDelaysMs?: readonly number[];
  /** Hears each outcome (the supervisor puts the summary in run.json). */
  onChange?: (s: NotifySummary) => void;
}

interface Lane {
  target: NotifyTarget;
  queue: NotifyPayload[];
  busy: boolean;
  tally: TargetTally;
  idle: (() => void)[];
  /** The event being sent now, and whether it was given up (the run ended meanwhile). */
  current: { p: NotifyPayload; abandoned: boolean } | null;
  /** Whether the last event failed every attempt it had. */
  down: boolean;
}

/** One run's notifications. */
export class Notifier {
  private readonly lanes: Lane[];
  private readonly seen = new Set<string>();
  private readonly failures: NotifyFailure[] = [];
  private readonly limits: AttemptLimits;
  private readonly delays: readonly number[];
  private closed = false;

  constructor(private readonly opts: NotifierOptions) {
    this.limits = opts.limits ?? attemptLimits(opts.env);
    this.delays = opts.retryDelaysMs ?? retryDelaysMs(opts.env);
    this.lanes = opts.targets.map((target) => ({
      target,
      queue: [],
      busy: false,
      tally: { target: target.label, sent: 0, failed: 0 },
      idle: [],
      current: null,
      down: false,
    }));
  }

  /** Whether there is any target. */
  get active(): boolean {
    return this.lanes.length > 0;
  }

  /** Queues an event for every target, unless its key was sent before; returns at once. */
  send(p: NotifyPayload): void {
    if (this.closed || this.seen.has(p.key)) return;
    this.seen.add(p.key);
    for (const lane of this.lanes) {
      if (lane.queue.length >= MAX_QUEUED_EVENTS) {
        const drop = lane.queue.findIndex((q) => q.event !== 'end');
        const [gone] = lane.queue.splice(drop === -1 ? 0 : drop, 1);
        if (gone) this.fail(lane, gone, `not sent: more than ${MAX_QUEUED_EVENTS} events waited for this target`);
      }
      lane.queue.push(p);
      void this.pump(lane);
    }
  }

  /** Delivers a lane's events one after the other. */
  private async pump(lane: Lane): Promise<void> {
    if (lane.busy) return;
    lane.busy = true;
    for (let p = lane.queue.shift(); p; p = lane.queue.shift()) await this.deliver(lane, p);
    lane.busy = false;
    for (const f of lane.idle.splice(0)) f();
  }

  /** One event to one target: attempts while a retry is safe and allowed. */
  private async deliver(lane: Lane, p: NotifyPayload): Promise<void> {
    const current = { p, abandoned: false };
    lane.current = current;
    try {
      for (let attempt = 0; ; attempt++) {
        const r = await deliverOnce(lane.target, p, this.limits, this.opts.env);
        if (current.abandoned) return;
        if (r.ok) {
          lane.down = false;
          lane.tally.sent++;
          this.changed();
          return;
        }
        const wait = lane.down ? undefined : this.delays[attempt];
        if (!r.retry || wait === undefined || this.closed) {
          lane.down = true;
          this.fail(lane, p, attempt > 0 ? `${r.why} (attempt ${attempt + 1})` : r.why);
          return;
        }
        await new Promise((res) => setTimeout(res, wait).unref());
      }
    } finally {
      lane.current = null;
    }
  }

  private fail(lane: Lane, p: NotifyPayload, why: string): void {
    lane.tally.failed++;
    const f: NotifyFailure = { at: new Date().toISOString(), target: lane.target.label, event: p.event, why };
    if (this.failures.length >= MAX_FAILURES) this.failures.pop();
    this.failures.push(f);
    this.changed();
  }

  private changed(): void {
    this.opts.onChange?.(this.summary());
  }

  /**
   * Waits until every queued event went out or `maxMs` passed; the events still waiting then are given up
   * (each a failure). Later sends are ignored.
   */
  async flush(maxMs = NOTIFY_FLUSH_MS): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = Promise.all(
      this.lanes.map((l) => (l.busy || l.queue.length > 0 ? new Promise<void>((res) => l.idle.push(res)) : null)),
    );
    const late = new Promise<'late'>((res) => {
      timer = setTimeout(() => res('late'), maxMs);
    });
    const how = await Promise.race([idle, late]);
    clearTimeout(timer);
    this.closed = true;
    if (how !== 'late') return;
    const had = `${maxMs >= 1000 ? Math.round(maxMs / 1000) : (maxMs / 1000).toFixed(1)} s`;
    for (const lane of this.lanes) {
      if (lane.current) {
        lane.current.abandoned = true;
        this.fail(
          lane,
          lane.current.p,
          `not sent: still being tried when the run ended (its notifications had ${had})`,
        );
      }
      for (const p of lane.queue.splice(0))
        this.fail(lane, p, `not sent: the run ended and its notifications had ${had}`);
    }
  }

  /** The counts and failures so far. */
  summary(): NotifySummary {
    return { targets: this.lanes.map((l) => ({ ...l.tally })), failures: this.failures.map((f) => ({ ...f })) };
  }
}
