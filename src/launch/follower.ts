/**
 * The one follower of a run, for every kind: a viewer (the pane, stream mode, `attach`) follows a run through
 * its files, never through the processes that run it. The step logs are read as they grow (./output.ts) and
 * told to the subscribers as the same events the pipeline of a supervisor tells (./run-control.ts); where the
 * steps' starts and ends, the alerts and the run's end come from is the kind's part:
 *
 * - a local run: its supervisor's events.jsonl, live.json and run.json (LocalFollower, below);
 * - a Slurm job: the `zerowiz-step` marks of the job's output and Slurm's answers (src/slurm/follow.ts).
 *
 * Stopping asks the run's owner (the supervisor's signal, `scancel`) and waits for the end as it is read;
 * detaching stops following and leaves the run alone.
 */
import { join } from 'node:path';
import { ownerState, type SupervisorId, signalSupervisor } from '../proc/index.js';
import { StepLogReader } from '../observe/index.js';
import { readRunRecord, type RunJson, type RunRecord } from '../records/index.js';
import { EventsReader, readLive, type RunEvent } from '../records/index.js';
import type { PipelineListener, PipelineOutcome, RunControl, StepResult } from '../observe/index.js';
import type { TelemetryMirror } from '../observe/index.js';
import type { Alert } from '../observe/index.js';

/** A step as a follower reads it: its name and its log. */
export interface FollowedStep {
  name: string;
  logPath: string;
}

/** The parts every follower shares: the subscribers, the step logs, the loop and its wake-up, detaching. */
export abstract class RunFollower implements RunControl {
  /** True once detach() was called: the run goes on without this viewer. */
  detached = false;
  protected listeners: PipelineListener[] = [];
  protected outcome: PipelineOutcome | null = null;
  protected stopRequested = false;
  protected readonly readers: (StepLogReader | null)[];
  protected readonly started: boolean[];
  protected readonly ended: boolean[];
  protected readonly results: (StepResult | null)[];
  private running: Promise<PipelineOutcome> | null = null;
  private wake: (() => void) | null = null;
  private wakePending = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(protected readonly steps: readonly FollowedStep[]) {
    this.readers = steps.map(() => null);
    this.started = steps.map(() => false);
    this.ended = steps.map(() => false);
    this.results = steps.map(() => null);
  }

  /** The steps' names, in order. */
  get stepNames(): readonly string[] {
    return this.steps.map((s) => s.name);
  }

  /** Whether a stop was asked for (here, or seen in the run's events). */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** How the run ended, once it has (null after a detach). */
  get result(): PipelineOutcome | null {
    return this.outcome;
  }

  /** The logs are the run's, written by its owner: a viewer has nothing to stop. */
  stopLogging(_why: string): void {}

  /** Adds a listener (the pane model, stream mode, the watch); returns the function that removes it. */
  subscribe(l: PipelineListener): () => void {
    this.listeners = [...this.listeners, l];
    return () => {
      this.listeners = this.listeners.filter((x) => x !== l);
    };
  }

  /** Follows until the run ends (or detach); resolves with the outcome. */
  run(): Promise<PipelineOutcome> {
    this.running ??= this.loop();
    return this.running;
  }

  /** Stops following; the run goes on. */
  detach(): void {
    if (this.outcome) return;
    this.detached = true;
    this.wakeUp();
  }

  /** Asks the run's owner to stop it; resolves once its end has been read. */
  abstract stop(): Promise<void>;
  /** Asks the owner to end it at once (a second Ctrl+C). */
  abstract killNow(): void;
  protected abstract loop(): Promise<PipelineOutcome>;

  protected emit(f: (l: PipelineListener) => void): void {
    for (const l of this.listeners) f(l);
  }

  /** Step `i` started: its log is read from now on. */
  protected startStep(
    i: number,
    info: { at: number; pid: number | null; csvOffset?: number | null; csvEnd?: number | null },
  ): void {
    if (this.started[i] || !this.steps[i]) return;
    this.started[i] = true;
    this.readers[i] = new StepLogReader(i, this.steps[i].logPath, () => this.listeners);
    this.emit((l) =>
      l.stepStart?.(i, { pid: info.pid, startedAt: info.at, csvOffset: info.csvOffset, csvEnd: info.csvEnd }),
    );
  }

  /** Step `i` ended: the rest of its log is read, then its end is told (with where its loss.csv ended). */
  protected endStep(i: number, r: StepResult, info: { csvEnd?: number | null } = {}): void {
    if (this.ended[i] || !this.steps[i]) return;
    this.startStep(i, { at: r.startedAt, pid: null });
    this.readers[i]!.finish();
    this.ended[i] = true;
    this.results[i] = r;
    this.emit((l) => l.stepEnd?.(i, r, info));
  }

  /** Reads what the running steps' logs have gained. */
  protected readLogs(): void {
    for (let i = 0; i < this.steps.length; i++) if (this.started[i] && !this.ended[i]) this.readers[i]!.poll();
  }

  /**
   * Reads what step `i`'s log (or, without `i`, every running step's) has gained, a slice of
   * FOLLOW_SLICE_BYTES at a time with a turn of the event loop between slices, until it is caught up: a
   * viewer behind a flood (100 MB a second) keeps answering keys and drawing frames while it catches up,
   * where one read of all of it held the pane for hundreds of milliseconds.
   */
  protected async catchUp(i?: number): Promise<void> {
    for (;;) {
      let got = 0;
      for (let k = 0; k < this.steps.length; k++)
        if ((i === undefined || k === i) && this.started[k] && !this.ended[k])
          got += this.readers[k]!.poll(FOLLOW_SLICE_BYTES);
      if (got < FOLLOW_SLICE_BYTES || this.detached) return;
      await new Promise<void>((res) => setImmediate(res));
    }
  }

  protected sleep(ms: number): Promise<void> {
    if (this.wakePending) {
      this.wakePending = false;
      return Promise.resolve();
    }
    return new Promise((res) => {
      this.wake = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        this.wake = null;
        res();
      };
      this.timer = setTimeout(() => this.wake?.(), ms);
    });
  }

  /** Ends the current sleep now, or (awake) the next one before it starts. */
  protected wakeUp(): void {
    if (this.wake) this.wake();
    else this.wakePending = true;
  }

  protected finish(
    exitCode: PipelineOutcome['exitCode'],
    failedStep: number | null,
    outcome: PipelineOutcome['outcome'],
  ): PipelineOutcome {
    const o: PipelineOutcome = { outcome, exitCode, failedStep, results: this.results };
    this.outcome = o;
    this.emit((l) => l.end?.(o));
    return o;
  }
}

/** Bytes of a step log a viewer reads between two turns of its event loop (~2,500 flood lines, a millisecond or two). */
export const FOLLOW_SLICE_BYTES = 256 * 1024;

/** How often a viewer reads a local run's files. */
export const LOCAL_POLL_MS = 100;
/**
 * How long a viewer waits, once nobody runs a local run any more (its supervisor and its watchdog are gone)
 * and its record still says `running`, for a last save to land.
 */
export const FINISHER_WAIT_MS = 2_000;

/** How a local run is asked to stop: the supervisor's signals, or (in process, in tests) its methods. */
export interface LocalRunControl {
  stop(): string | null;
  killNow(): string | null;
  /** Whether its owner still runs: the supervisor, or its watchdog ending the run after it. */
  alive(): boolean;
}

/** The control of a supervisor process, by its identity. */
export function supervisorControl(id: SupervisorId): LocalRunControl {
  return {
    stop: () => signalSupervisor(id, 'stop'),
    killNow: () => signalSupervisor(id, 'kill'),
    alive: () => ownerState(id) !== 'gone',
  };
}

/** Options of a local run's follower. */
export interface LocalFollowOptions {
  /** The run's record directory. */
  dir: string;
  /** run.json as the viewer first read it (the steps and their logs). */
  json: RunJson;
  /** How to ask the run to stop. */
  control: LocalRunControl;
  /** The GPU telemetry to keep current from live.json, or null. */
  telemetry?: TelemetryMirror | null;
  /** The alerts the supervisor raised, as they are read. */
  onAlert?: (a: Alert) => void;
  pollMs?: number;
  finisherWaitMs?: number;
  /** Resolves when the run's supervisor has ended (one this process started): its last words are read at once. */
  ended?: Promise<void>;
}

/** Follows a local run through the files its supervisor writes. */
export class LocalFollower extends RunFollower {
  /** The record as last read. */
  record: RunRecord;
  /** Why following ended without the supervisor's last word (it died; its watchdog ended the run). */
  lost: string | null = null;
  private readonly events: EventsReader;
  private readonly live = { key: '' };
  private endEvent: Extract<RunEvent, { t: 'end' }> | null = null;

  constructor(private readonly opts: LocalFollowOptions) {
    super(opts.json.steps.map((s) => ({ name: s.name, logPath: join(opts.dir, s.log) })));
    this.events = new EventsReader(opts.dir, opts.json.steps.length);
    this.record = { dir: opts.dir, json: opts.json };
    void opts.ended?.then(() => this.wakeUp());
  }

  async stop(): Promise<void> {
    if (this.detached || this.outcome) return;
    if (!this.stopRequested) {
      const why = this.opts.control.stop();
      if (why === null) {
        this.stopRequested = true;
        this.emit((l) => l.stopping?.());
      }
    }
    this.wakeUp();
    await this.run();
  }

  killNow(): void {
    if (this.detached || this.outcome) return;
    this.opts.control.killNow();
    if (!this.stopRequested) {
      this.stopRequested = true;
      this.emit((l) => l.stopping?.());
    }
    this.wakeUp();
  }

  /** Applies what the supervisor wrote since the last read (a step's end after its log is read, in slices). */
  private async readEvents(): Promise<void> {
    const batch = this.events.read();
    // A step whose end is already written (a run followed after it ended): its loss.csv is read up to where the
    // file ended then, never into the rows of a later run of the same preset.
    const ends = new Map(batch.flatMap((e) => (e.t === 'stepEnd' ? [[e.i, e.csvEnd ?? null] as const] : [])));
    for (const e of batch) {
      if (e.t === 'stepStart')
        this.startStep(e.i, { at: e.at, pid: e.pid, csvOffset: e.csvOffset, csvEnd: ends.get(e.i) ?? null });
      else if (e.t === 'stepEnd') {
        await this.catchUp(e.i);
        this.endStep(e.i, e.r, { csvEnd: e.csvEnd ?? null });
      } else if (e.t === 'alert') this.opts.onAlert?.(e.a);
      else if (e.t === 'logError') this.emit((l) => l.logError?.(e.i, e.why));
      else if (e.t === 'stopping') {
        if (!this.stopRequested) {
          this.stopRequested = true;
          this.emit((l) => l.stopping?.());
        }
      } else if (e.t === 'end') this.endEvent = e;
    }
  }

  private readTelemetry(): void {
    const t = this.opts.telemetry;
    if (!t) return;
    const snap = readLive(this.opts.dir, this.live);
    if (snap) t.update(snap.telemetry);
  }

  /** run.json as it is now (the supervisor's or its watchdog's last word), or the last one read. */
  private reread(): RunJson {
    const r = readRunRecord(this.opts.dir);
    if ('record' in r) this.record = r.record;
    return this.record.json;
  }

  protected async loop(): Promise<PipelineOutcome> {
    const pollMs = this.opts.pollMs ?? LOCAL_POLL_MS;
    let goneSince: number | null = null;
    while (!this.detached) {
      await this.readEvents();
      await this.catchUp();
      this.readTelemetry();
      if (this.endEvent) break;
      if (!this.opts.control.alive()) {
        // The supervisor is gone without its last event: the record (its last save, or its watchdog's) says how
        // the run ended; the watchdog may still be stopping the steps.
        await this.readEvents();
        if (this.endEvent) break;
        const json = this.reread();
        if (json.ended !== 'running') break;
        goneSince ??= Date.now();
        if (Date.now() - goneSince > (this.opts.finisherWaitMs ?? FINISHER_WAIT_MS)) {
          this.lost =
            "the run's supervisor ended without finishing its record (the machine restarted, or it was killed with its watchdog)";
          break;
        }
      }
      await this.sleep(pollMs);
    }
    if (this.detached) {
      // The run goes on; its record says so.
      return { outcome: 'interrupted', exitCode: 0, failedStep: null, results: this.results };
    }
    await this.readEvents();
    await this.catchUp();
    this.readTelemetry();
    const json = this.reread();
    // Steps the events did not end (the supervisor died): as the record has them.
    json.steps.forEach((s, i) => {
      if (s.status === 'running' || s.status === 'pending') {
        if (this.started[i] && !this.ended[i]) {
          const startedAt = s.startedAt ? Date.parse(s.startedAt) : Date.now();
          this.endStep(i, {
            status: 'stopped',
            exitCode: null,
            signal: null,
            startedAt,
            endedAt: Date.now(),
            warning: s.warning ?? 'zerowiz ended before it saw how this step ended',
          });
        }
        return;
      }
      if (!this.ended[i]) {
        const startedAt = s.startedAt ? Date.parse(s.startedAt) : Date.now();
        this.endStep(i, {
          status: s.status,
          exitCode: s.exitCode,
          signal: s.signal,
          startedAt,
          endedAt: s.endedAt ? Date.parse(s.endedAt) : startedAt,
          ...(s.stopSignal ? { stopSignal: s.stopSignal as StepResult['stopSignal'] } : {}),
          ...(s.error ? { error: s.error } : {}),
          ...(s.warning ? { warning: s.warning } : {}),
          ...(s.refused ? { refused: true } : {}),
        });
      }
    });
    if (this.endEvent) {
      const o = this.endEvent.o;
      return this.finish(o.exitCode, o.failedStep, o.outcome);
    }
    const ended = json.ended === 'running' ? 'interrupted' : json.ended;
    const failedStep = this.results.findIndex((r) => r !== null && r.status !== 'done');
    const exitCode = ended === 'succeeded' ? 0 : ended === 'failed' ? (json.exitCode === 2 ? 2 : 1) : 130;
    return this.finish(exitCode, failedStep === -1 ? null : failedStep, ended);
  }
}
