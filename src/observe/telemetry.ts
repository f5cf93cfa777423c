/**
 * Live GPU telemetry while a run goes: ONE long-running
 *   nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits -lms 1000
 * spawned with an argument array as the leader of its own process group, its CSV read line by line into
 * per-GPU samples (memory used and total, utilisation), with the peak per GPU kept per step. It is stopped
 * with the run, and its group is registered with the launch's group tracking so it never outlives zerowiz.
 *
 * Never an error: no nvidia-smi, one that fails, one that prints nothing usable, or one that dies mid-run
 * all become "no GPU telemetry" with the reason (the samples and peaks seen so far are kept).
 *
 * Its rows are input like any other: a row that cannot be a GPU's (memory that is not a whole number of
 * MiB within MAX_GPU_MEMORY_MIB, more used than the total, utilisation outside 0-100, an index past
 * MAX_GPU_INDEX) is rejected, never recorded. Telemetry that has no peak says why (`reason`): nvidia-smi
 * printed nothing (it may hang in the driver), only rows without memory figures ([N/A]), or only rows that
 * were rejected. Its own words (stderr, a message) are shown escaped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { MAX_GPU_MEMORY_BYTES } from '../estimate/index.js';
import { printable } from '../text/index.js';
import { signalGroup, stopGroup, trackGroup, untrackGroup } from '../proc/index.js';
import { whichSync } from '../proc/index.js';
import { envNumber } from '../text/index.js';

/** The query, as nvidia-smi takes it (memory in MiB, utilisation in %). */
export const TELEMETRY_QUERY_ARGS = [
  '--query-gpu=index,memory.used,memory.total,utilization.gpu',
  '--format=csv,noheader,nounits',
] as const;
/** nvidia-smi's loop interval (override: ZEROWIZ_TELEMETRY_MS, at least 100: src/text/env.ts). */
export const TELEMETRY_INTERVAL_MS = 1000;

/** The loop interval in effect for an environment. */
export function telemetryIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  return Math.round(envNumber(env, 'ZEROWIZ_TELEMETRY_MS', TELEMETRY_INTERVAL_MS));
}
/** How long stop() waits after SIGTERM before SIGKILL. */
const TELEMETRY_STOP_GRACE_MS = 1000;
/** Longest output line kept while waiting for its newline. */
const TELEMETRY_MAX_LINE_CHARS = 4096;
const MIB = 2 ** 20;
/** The most memory a GPU row may report, in MiB (the estimator's bound on a GPU: 64 TiB). */
export const MAX_GPU_MEMORY_MIB = MAX_GPU_MEMORY_BYTES / MIB;
/** The highest GPU index a row may carry. */
export const MAX_GPU_INDEX = 1023;
/** How long a running nvidia-smi may print no row before `reason` says so (or 5 intervals, if longer). */
export const TELEMETRY_QUIET_MS = 10_000;

/** One GPU at one moment. */
export interface GpuSample {
  index: number;
  /** memory.used in bytes, null when nvidia-smi printed `[N/A]` or an error. */
  usedBytes: number | null;
  totalBytes: number | null;
  /** utilization.gpu in %, or null. */
  utilPercent: number | null;
}

/** The most memory a GPU used during a step. */
export interface GpuPeak {
  index: number;
  usedBytes: number;
  totalBytes: number | null;
  /** When it was seen (ms since the epoch). */
  at: number;
}

/** Where telemetry stands. */
export type TelemetryState = 'idle' | 'starting' | 'running' | 'unavailable' | 'lost' | 'stopped';

/** A field as nvidia-smi prints it: a whole number within `max`, `[...]` (no value: null), else 'bad'. */
function field(text: string | undefined, max: number): number | null | 'bad' {
  if (text === undefined) return 'bad';
  const t = text.trim();
  if (t.startsWith('[') && t.endsWith(']')) return null; // [N/A], [Not Supported], [Unknown Error], [GPU is lost]
  if (!/^\d{1,15}$/.test(t)) return 'bad';
  const v = Number(t);
  return v <= max ? v : 'bad';
}

/**
 * Why a CSV row of four fields cannot be a GPU's, or null when it can (a row of another shape is not a
 * row at all: parseTelemetryLine says null, and this says null too).
 */
export function telemetryRowProblem(line: string): string | null {
  const parts = line.split(',');
  if (parts.length !== 4) return null;
  const index = field(parts[0], MAX_GPU_INDEX);
  const used = field(parts[1], MAX_GPU_MEMORY_MIB);
  const total = field(parts[2], MAX_GPU_MEMORY_MIB);
  const util = field(parts[3], 100);
  if (index === 'bad' || index === null) return `the GPU index is not a whole number up to ${MAX_GPU_INDEX}`;
  if (used === 'bad' || total === 'bad')
    return `memory is not a whole number of MiB up to ${MAX_GPU_MEMORY_MIB} (64 TiB)`;
  if (util === 'bad') return 'utilisation is not a whole percentage';
  if (used !== null && total !== null && used > total) return 'more memory used than the GPU has';
  return null;
}

/**
 * One CSV line (`3, 61234, 81559, 97`), or null when it is not one (a message, an empty line) or it cannot
 * be a GPU's (telemetryRowProblem: a huge or negative figure is rejected, never recorded).
 */
export function parseTelemetryLine(line: string): GpuSample | null {
  const parts = line.split(',');
  if (parts.length !== 4 || telemetryRowProblem(line) !== null) return null;
  const used = field(parts[1], MAX_GPU_MEMORY_MIB) as number | null;
  const total = field(parts[2], MAX_GPU_MEMORY_MIB) as number | null;
  return {
    index: field(parts[0], MAX_GPU_INDEX) as number,
    usedBytes: used === null ? null : used * MIB,
    totalBytes: total === null ? null : total * MIB,
    utilPercent: field(parts[3], 100) as number | null,
  };
}

/**
 * The GPUs a run can see, from CUDA_VISIBLE_DEVICES when it lists indices (`0,3`); null for all of them
 * (unset, or UUIDs / MIG names, which nvidia-smi's index does not show). nvidia-smi numbers GPUs in PCI bus
 * order, which CUDA uses only with CUDA_DEVICE_ORDER=PCI_BUS_ID: close enough to pick the bars to draw.
 */
export function visibleGpuIndices(env: NodeJS.ProcessEnv = process.env): number[] | null {
  const v = env.CUDA_VISIBLE_DEVICES;
  if (v === undefined || v.trim() === '') return null;
  const parts = v.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d+$/.test(p))) return null;
  return parts.map(Number);
}

/** Who hears about nvidia-smi's process group (see TelemetryOptions.track). */
export interface TelemetryTracking {
  willSpawn?(): void;
  add(pgid: number): void;
  remove(pgid: number): void;
}

/** Options of telemetry. */
export interface TelemetryOptions {
  /** Environment of nvidia-smi (PATH finds it). */
  env?: NodeJS.ProcessEnv;
  intervalMs?: number;
  /** Only these GPU indices (see visibleGpuIndices); null or absent: all. */
  gpus?: readonly number[] | null;
  /** Called after each batch of output that changed anything, and on every state change. */
  onUpdate?: (t: GpuTelemetry) => void;
  /**
   * Group tracking, so zerowiz's exit (and its watchdog, after a kill -9) ends nvidia-smi too (default: the
   * exit hook of ./group.ts). `willSpawn` is told just before the spawn.
   */
  track?: TelemetryTracking;
  now?: () => number;
}

/**
 * GPU telemetry as the pane, stream mode, the summary and the watch read it: a local run's supervisor has the
 * nvidia-smi loop itself (GpuTelemetry), a viewer mirrors what the supervisor last saw (TelemetryMirror).
 */
export interface TelemetryView {
  readonly state: TelemetryState;
  /** Why there is no telemetry (state unavailable or lost), else null. */
  readonly reason: string | null;
  /** Bumped whenever a sample or the state changed. */
  readonly version: number;
  /** The latest sample per GPU index. */
  readonly latest: ReadonlyMap<number, GpuSample>;
  /** The latest samples, by GPU index. */
  readonly latestList: GpuSample[];
  /** Per-GPU peaks of step `i`, by GPU index. */
  peaksOf(i: number): GpuPeak[];
  /** Samples from now on count toward step `i`'s peaks (the loop's own bookkeeping; a mirror ignores it). */
  beginStep?(i: number): void;
  /** Step `i` is over. */
  endStep?(i: number): void;
}

/**
 * What a viewer shows of a local run's GPUs: the supervisor's telemetry as its live.json last said
 * (src/records/run-files.ts), replaced whole at each read.
 */
export class TelemetryMirror implements TelemetryView {
  state: TelemetryState = 'starting';
  reason: string | null = null;
  version = 0;
  readonly latest = new Map<number, GpuSample>();
  private peaks: Record<string, GpuPeak[]> = {};
  private seen = -1;

  /** Takes a snapshot (from live.json); ignored when it is the one already shown. */
  update(snap: {
    state: TelemetryState;
    reason: string | null;
    version: number;
    latest: GpuSample[];
    peaks: Record<string, GpuPeak[]>;
  }): void {
    if (snap.version === this.seen && snap.state === this.state) return;
    this.seen = snap.version;
    this.state = snap.state;
    this.reason = snap.reason;
    this.latest.clear();
    for (const g of snap.latest) this.latest.set(g.index, g);
    this.peaks = snap.peaks ?? {};
    this.version++;
  }

  get latestList(): GpuSample[] {
    return [...this.latest.values()].sort((a, b) => a.index - b.index);
  }

  peaksOf(i: number): GpuPeak[] {
    return [...(this.peaks[String(i)] ?? [])].sort((a, b) => a.index - b.index);
  }
}

/** One nvidia-smi loop for a run. */
export class GpuTelemetry implements TelemetryView {
  state: TelemetryState = 'idle';
  /** Why telemetry stopped or never came (state unavailable or lost), set once. */
  private endReason: string | null = null;
  /** Samples that carried a memory figure (the ones peaks are made of). */
  private memorySamples = 0;
  /** Rows rejected as no GPU's (telemetryRowProblem), and the first of them with why. */
  private rejectedRows = 0;
  private firstRejected = '';
  private startedAt: number | null = null;
  /** The latest sample per GPU index. */
  readonly latest = new Map<number, GpuSample>();
  /** Complete lines parsed into samples. */
  samples = 0;
  /** The process group of nvidia-smi while it runs (its pid), else null. */
  pgid: number | null = null;
  /** Bumped whenever a sample or the state changed (a view redraws when it differs from what it drew). */
  version = 0;
  private buf = '';
  private firstOutput = '';
  private stderr = '';
  private readonly runPeaks = new Map<number, GpuPeak>();
  private readonly stepPeaks = new Map<number, Map<number, GpuPeak>>();
  private currentStep: number | null = null;
  private stopping = false;
  private exited: Promise<void> = Promise.resolve();
  private readonly gpuFilter: Set<number> | null;
  private readonly now: () => number;
  private readonly track: TelemetryTracking;

  constructor(private readonly opts: TelemetryOptions = {}) {
    this.gpuFilter = opts.gpus ? new Set(opts.gpus) : null;
    this.now = opts.now ?? Date.now;
    this.track = opts.track ?? { add: trackGroup, remove: untrackGroup };
  }

  /**
   * Why there is no telemetry, or no peak: set when it is unavailable or lost; otherwise, while no sample
   * carried a memory figure, what nvidia-smi did instead (printed nothing for a while, only [N/A] rows,
   * only rejected rows); null while it works.
   */
  get reason(): string | null {
    if (this.endReason !== null) return this.endReason;
    if (this.memorySamples > 0 || this.startedAt === null) return null;
    if (this.rejectedRows > 0)
      return `nvidia-smi gave only rows zerowiz rejects (${this.rejectedRows}), e.g. ${this.firstRejected}; no GPU peak is recorded`;
    if (this.samples > 0)
      return `nvidia-smi gave no memory figure in ${this.samples} rows ([N/A]: a driver, vGPU or MIG setup that does not report it); no GPU peak is recorded`;
    const quietMs = Math.max(TELEMETRY_QUIET_MS, 5 * (this.opts.intervalMs ?? TELEMETRY_INTERVAL_MS));
    const s = (this.now() - this.startedAt) / 1000;
    if (this.state === 'stopped' || this.state === 'unavailable' || s * 1000 >= quietMs)
      return `nvidia-smi printed no sample in ${s < 10 ? s.toFixed(1) : Math.round(s)} s (it may hang in the driver, as on a failing GPU); no GPU peak is recorded`;
    return null;
  }

  /** Sets why there is no telemetry (kept as said, whatever samples come). */
  set reason(why: string | null) {
    this.endReason = why;
  }

  /** The arguments nvidia-smi gets. */
  get args(): string[] {
    return [...TELEMETRY_QUERY_ARGS, '-lms', String(this.opts.intervalMs ?? TELEMETRY_INTERVAL_MS)];
  }

  /** Starts nvidia-smi (once). Never throws. */
  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'starting';
    this.startedAt = this.now();
    // Not there at all (a machine without GPUs): said at once, without a process (a fork costs zerowiz
    // milliseconds at every launch).
    if (whichSync('nvidia-smi', this.opts.env ?? process.env) === null) {
      this.unavailable('nvidia-smi not found on PATH');
      return;
    }
    let child: ChildProcess;
    this.track.willSpawn?.();
    try {
      child = spawn('nvidia-smi', this.args, {
        env: this.opts.env ?? process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (err) {
      this.unavailable(`nvidia-smi could not be started: ${(err as Error).message}`);
      return;
    }
    if (child.pid !== undefined) {
      this.pgid = child.pid;
      this.track.add(child.pid);
    }
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.onData(chunk));
    child.stderr!.on('data', (chunk: string) => {
      if (this.stderr.length < TELEMETRY_MAX_LINE_CHARS) this.stderr += chunk;
    });
    this.exited = new Promise<void>((resolve) => {
      let done = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null, error?: NodeJS.ErrnoException) => {
        if (done) return;
        done = true;
        if (this.pgid !== null) this.track.remove(this.pgid);
        this.pgid = null;
        this.onExit(code, signal, error);
        resolve();
      };
      child.on('error', (err: NodeJS.ErrnoException) => finish(null, null, err));
      // 'close' (not 'exit'): every line nvidia-smi wrote has been read by then.
      child.on('close', (code, signal) => finish(code, signal));
    });
  }

  /** Samples from now on count toward step `i`'s peaks. */
  beginStep(i: number): void {
    this.currentStep = i;
    if (!this.stepPeaks.has(i)) this.stepPeaks.set(i, new Map());
  }

  /** Step `i` is over: later samples no longer count for it. */
  endStep(i: number): void {
    if (this.currentStep === i) this.currentStep = null;
  }

  /** Per-GPU peaks of step `i`, by GPU index (empty when no sample came during it). */
  peaksOf(i: number): GpuPeak[] {
    return [...(this.stepPeaks.get(i)?.values() ?? [])].sort((a, b) => a.index - b.index);
  }

  /** Per-GPU peaks over the whole run. */
  get runPeakList(): GpuPeak[] {
    return [...this.runPeaks.values()].sort((a, b) => a.index - b.index);
  }

  /** The latest samples, by GPU index. */
  get latestList(): GpuSample[] {
    return [...this.latest.values()].sort((a, b) => a.index - b.index);
  }

  /** Stops nvidia-smi (SIGTERM to its group, SIGKILL after a second) and waits until it is gone. */
  async stop(): Promise<void> {
    if (this.state === 'idle') {
      this.state = 'stopped';
      return;
    }
    this.stopping = true;
    const pgid = this.pgid;
    if (pgid !== null) await stopGroup(pgid, { sigintMs: 0, sigtermMs: TELEMETRY_STOP_GRACE_MS }, 'SIGTERM');
    await this.exited;
    if (this.state === 'starting' || this.state === 'running') this.state = 'stopped';
    // Stopped without a single memory figure: no telemetry, and why (the record must not say "ok").
    if (this.state === 'stopped' && this.memorySamples === 0 && this.startedAt !== null) {
      const why = this.reason;
      this.state = 'unavailable';
      this.endReason = why;
    }
  }

  /** SIGKILL now, for exit paths that cannot wait. */
  killNow(): void {
    this.stopping = true;
    if (this.pgid !== null) signalGroup(this.pgid, 'SIGKILL');
  }

  private onData(chunk: string): void {
    let text = this.buf + chunk;
    this.buf = '';
    let changed = false;
    let s = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', s)) {
      const line = text.slice(s, nl);
      s = nl + 1;
      if (this.ingest(line)) changed = true;
    }
    text = text.slice(s);
    this.buf = text.length > TELEMETRY_MAX_LINE_CHARS ? '' : text;
    if (changed) {
      if (this.state === 'starting') this.state = 'running';
      this.version++;
      this.opts.onUpdate?.(this);
    }
  }

  private ingest(raw: string): boolean {
    const line = raw.trim();
    if (line === '') return false;
    const sample = parseTelemetryLine(line);
    if (!sample) {
      const problem = telemetryRowProblem(line);
      if (problem !== null) {
        this.rejectedRows++;
        if (this.firstRejected === '') this.firstRejected = `'${printable(line.slice(0, 120))}' (${problem})`;
        return this.rejectedRows === 1;
      }
      if (this.firstOutput === '') this.firstOutput = printable(line.slice(0, 500));
      return false;
    }
    if (this.gpuFilter && !this.gpuFilter.has(sample.index)) return false;
    this.samples++;
    this.latest.set(sample.index, sample);
    if (sample.usedBytes !== null) {
      this.memorySamples++;
      const at = this.now();
      bump(this.runPeaks, sample, at);
      if (this.currentStep !== null) bump(this.stepPeaks.get(this.currentStep)!, sample, at);
    }
    return true;
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: NodeJS.ErrnoException): void {
    if (this.buf !== '') {
      const rest = this.buf;
      this.buf = '';
      this.ingest(rest);
    }
    this.version++;
    if (this.stopping) {
      this.state = 'stopped';
      this.opts.onUpdate?.(this);
      return;
    }
    const said = printable((this.stderr.split('\n')[0] ?? '').trim()) || this.firstOutput;
    const how = error ? null : signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (error) {
      this.unavailable(
        error.code === 'ENOENT' ? 'nvidia-smi not found on PATH' : `nvidia-smi could not be started: ${error.message}`,
      );
    } else if (this.samples === 0) {
      this.unavailable(`nvidia-smi ${how} without a sample${said ? `: ${said}` : ''}`);
    } else {
      this.state = 'lost';
      this.endReason = `nvidia-smi ${how} after ${this.samples} samples${said ? `: ${said}` : ''}; GPU telemetry stopped (peaks so far kept)`;
      this.opts.onUpdate?.(this);
    }
  }

  private unavailable(reason: string): void {
    this.state = 'unavailable';
    this.endReason = reason;
    this.version++;
    this.opts.onUpdate?.(this);
  }
}

function bump(peaks: Map<number, GpuPeak>, s: GpuSample, at: number): void {
  const p = peaks.get(s.index);
  if (p && p.usedBytes >= s.usedBytes!) return;
  peaks.set(s.index, { index: s.index, usedBytes: s.usedBytes!, totalBytes: s.totalBytes, at });
}
