/**
 * A run's series, kept beside its record so that the report can draw it after the run: what the supervisor
 * read as the run went, appended to three small CSV files in the run directory.
 *
 *   losses.csv    pass,source,step,loss,t_ms            every loss a pass's series took (observe/watch.ts
 *                                                         onLoss): its source (csv, hf, tqdm, log), the training
 *                                                         step when the source numbers them (else its count),
 *                                                         the value as JavaScript prints it (NaN, Infinity)
 *   progress.csv  pass,n,total,rate_per_s,t_ms          the progress bar, at most once per PROGRESS_EVERY_MS (5 s)
 *                                                         per pass (and its last state)
 *   gpu.csv       t_ms,pass,gpu,used_mib,total_mib,util_pct
 *                                                         per GPU, the most memory used in each window of
 *                                                         gpuWindowMs (the peak is never averaged away)
 *
 * Appending costs the run nothing it waits on: lines gather in memory and go to disk every SERIES_FLUSH_MS in
 * one write per file (opened without following a link, private), each file stops at SERIES_MAX_BYTES, and a
 * write that fails (a full disk) stops that file, never the run. The reader takes them back as untrusted input.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { GpuSample, LossSource } from '../observe/index.js';
import { formatCap } from '../text/index.js';

/** The losses' file in a run directory. */
export const LOSSES_FILE = 'losses.csv';
/** The progress bar's file in a run directory. */
export const PROGRESS_FILE = 'progress.csv';
/** The GPUs' memory file in a run directory. */
export const GPU_FILE = 'gpu.csv';
/** The losses' header. */
export const LOSSES_HEADER = 'pass,source,step,loss,t_ms';
/** The progress bar's header. */
export const PROGRESS_HEADER = 'pass,n,total,rate_per_s,t_ms';
/** The GPUs' header. */
export const GPU_HEADER = 't_ms,pass,gpu,used_mib,total_mib,util_pct';

/** How often gathered lines are written. */
export const SERIES_FLUSH_MS = 2_000;
/** The largest a series file grows (a million steps of loss is ~40 MB). */
export const SERIES_MAX_BYTES = 256 * 1024 * 1024;
/** At most one progress row per pass this often (as the GPU rows: a day is 17,280 rows, the plot 880 pixels). */
export const PROGRESS_EVERY_MS = 5_000;
/** The longest GPU window (nvidia-smi's default 1 s loop: one row per GPU every 5 s). */
export const GPU_WINDOW_MAX_MS = 5_000;

const MIB = 2 ** 20;

/** The GPU window for a telemetry interval: five samples, at most GPU_WINDOW_MAX_MS. */
export function gpuWindowMs(telemetryIntervalMs: number): number {
  return Math.max(telemetryIntervalMs, Math.min(GPU_WINDOW_MAX_MS, 5 * telemetryIntervalMs));
}

/** One appended file. */
class SeriesFile {
  private fd: number | null = null;
  private pending: string[] = [];
  private bytes = 0;
  /** Why the file stopped (a write error, or its size), or null. */
  stopped: string | null = null;

  constructor(
    private readonly path: string,
    private readonly header: string,
  ) {}

  add(line: string): void {
    if (this.stopped === null) this.pending.push(line);
  }

  flush(): void {
    if (this.pending.length === 0 || this.stopped !== null) return;
    let text = `${this.pending.join('\n')}\n`;
    this.pending = [];
    try {
      if (this.fd === null) {
        this.fd = openSync(
          this.path,
          constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
          0o600,
        );
        text = `${this.header}\n${text}`;
      }
      if (this.bytes + text.length > SERIES_MAX_BYTES) {
        this.stop(`it reached ${formatCap(SERIES_MAX_BYTES)}`);
        return;
      }
      writeSync(this.fd, text);
      this.bytes += text.length;
    } catch (e) {
      this.stop((e as Error).message);
    }
  }

  stop(why: string): void {
    this.stopped ??= why;
    this.pending = [];
    this.close();
  }

  close(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {}
    this.fd = null;
  }
}

/** A number as a CSV field (JavaScript's own spelling for the non-finite ones). */
function num(v: number | null): string {
  return v === null ? '' : String(v);
}

/** Records one run's series into its directory. */
export class SeriesRecorder {
  private readonly losses: SeriesFile;
  private readonly progressFile: SeriesFile;
  private readonly gpuFile: SeriesFile;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly lastProgress = new Map<number, { at: number; row: string | null }>();
  private window: {
    start: number;
    gpus: Map<number, { used: number; total: number | null; util: number | null; at: number }>;
  } | null = null;
  private pass = -1;

  constructor(
    readonly dir: string,
    private readonly opts: { gpuWindowMs: number; now?: () => number },
  ) {
    this.losses = new SeriesFile(join(dir, LOSSES_FILE), LOSSES_HEADER);
    this.progressFile = new SeriesFile(join(dir, PROGRESS_FILE), PROGRESS_HEADER);
    this.gpuFile = new SeriesFile(join(dir, GPU_FILE), GPU_HEADER);
    this.timer = setInterval(() => this.flush(), SERIES_FLUSH_MS);
    this.timer.unref();
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** A pass started (GPU rows carry its index until it ends). */
  stepStart(i: number): void {
    this.pass = i;
  }

  /** A pass ended: its last progress state is written. */
  stepEnd(i: number): void {
    const last = this.lastProgress.get(i);
    if (last?.row) this.progressFile.add(last.row);
    this.lastProgress.delete(i);
    if (this.pass === i) this.pass = -1;
  }

  /** A loss the pass's series took. */
  loss(i: number, value: number, source: LossSource, step: number | null, count: number): void {
    this.losses.add(`${i},${source},${step ?? count},${num(value)},${this.now()}`);
  }

  /** A progress-bar update (written at most once per PROGRESS_EVERY_MS per pass; the last kept for the end). */
  progress(i: number, p: { n: number; total: number | null; ratePerS: number | null }): void {
    const at = this.now();
    const row = `${i},${p.n},${num(p.total)},${num(p.ratePerS)},${at}`;
    const last = this.lastProgress.get(i);
    if (last && at - last.at < PROGRESS_EVERY_MS) {
      last.row = row;
      return;
    }
    this.progressFile.add(row);
    this.lastProgress.set(i, { at, row: null });
  }

  /** The latest GPU samples (each telemetry update): the window keeps each GPU's most memory used. */
  gpu(samples: readonly GpuSample[]): void {
    const at = this.now();
    if (this.window && at - this.window.start >= this.opts.gpuWindowMs) this.closeWindow();
    this.window ??= { start: at, gpus: new Map() };
    for (const s of samples) {
      if (s.usedBytes === null) continue;
      const w = this.window.gpus.get(s.index);
      const used = s.usedBytes / MIB;
      if (!w || used >= w.used)
        this.window.gpus.set(s.index, {
          used,
          total: s.totalBytes === null ? null : s.totalBytes / MIB,
          util: s.utilPercent,
          at,
        });
    }
  }

  private closeWindow(): void {
    const w = this.window;
    this.window = null;
    if (!w) return;
    for (const [gpu, v] of [...w.gpus].sort((a, b) => a[0] - b[0]))
      this.gpuFile.add(
        `${v.at},${this.pass},${gpu},${Math.round(v.used)},${num(v.total === null ? null : Math.round(v.total))},${num(v.util)}`,
      );
  }

  /** Writes what has gathered. */
  flush(): void {
    this.losses.flush();
    this.progressFile.flush();
    this.gpuFile.flush();
  }

  /** Why a file stopped, by file name (none when all went well). */
  problems(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, f] of [
      [LOSSES_FILE, this.losses],
      [PROGRESS_FILE, this.progressFile],
      [GPU_FILE, this.gpuFile],
    ] as const)
      if (f.stopped !== null) out[name] = f.stopped;
    return out;
  }

  /** The last window and every pending line written, the files closed. */
  close(): void {
    clearInterval(this.timer);
    this.closeWindow();
    for (const last of this.lastProgress.values()) if (last.row) this.progressFile.add(last.row);
    this.lastProgress.clear();
    this.flush();
    this.losses.close();
    this.progressFile.close();
    this.gpuFile.close();
  }
}
