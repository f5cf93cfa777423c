/**
 * The watch during a pass, for the run supervisor: feed it the pass's activity (start, each progress step,
 * each log line) and call `tick(now, {pgid})` every few seconds; it measures the pass's processes (/proc),
 * the memory of their cgroup (or the host's), /dev/shm and the free space of the watched folders (the NVMe
 * offload folder, the outputs), and returns the new alerts, in the shape of ./alerts.ts:
 *   stall            no progress, loss row or log line for k x the median step time while the processes live
 *                    (./stall.ts), naming the ranks that stopped writing and what they do;
 *   memory-pressure  memory at 90% of the cgroup limit (or of RAM): the OOM killer is next;
 *   shm-full         /dev/shm 90% full: NCCL and the DataLoader's workers fail next;
 *   space-low        a watched folder below 5% free (or 1 GiB), or losing space fast enough to be full
 *                    within 30 minutes.
 * Each cause fires once per episode (it may fire again after it has cleared). `judge(sample)` is the pure
 * part, `tick` measures and judges.
 */
import { statfs } from 'node:fs/promises';
import { formatBytesShort } from '../text/index.js';
import type { Alert } from './alerts.js';
import { SHM_PATH, measureMemory, memoryRoom } from '../checks/index.js';
import { type ProcInfo, processesOfGroup, pySpyFrames, pySpyInstalled, ranksOf } from './proc-ranks.js';
import { type StallOptions, StallDetector, type StalledRank, stallAlert } from './stall.js';
import { formatDuration } from '../text/index.js';

/** Memory used over the limit that raises memory-pressure. */
export const MEMORY_HIGH_FRACTION = 0.9;
/** /dev/shm used over its size that raises shm-full. */
export const SHM_HIGH_FRACTION = 0.9;
/** A resource alert clears (and may fire again) once use falls below this fraction. */
export const RESOURCE_CLEAR_FRACTION = 0.8;
/** A watched folder below this fraction free (or SPACE_LOW_BYTES) raises space-low. */
export const SPACE_LOW_FRACTION = 0.05;
/** A watched folder below this many bytes free raises space-low. */
export const SPACE_LOW_BYTES = 2 ** 30;
/** A watched folder that would be full within this time at its current rate raises space-low. */
export const SPACE_ETA_ALERT_MS = 30 * 60_000;
/** Samples of free space kept per folder to measure how fast it falls. */
const SPACE_SAMPLES_KEPT = 32;
/** Ranks py-spy is asked about in one stall (each a few hundred ms). */
const PY_SPY_RANKS = 4;

/** A folder whose free space is watched, and what it holds. */
export interface WatchedPath {
  path: string;
  /** `NVMe offload`, `outputs of train`. */
  what: string;
}

/** How to watch a pass. */
export interface HealthOptions {
  /** The pass's index (the alerts' `step`). */
  step: number;
  stall?: StallOptions;
  /** /dev/shm (a test points it at its own tmpfs). */
  shmPath?: string;
  spacePaths?: WatchedPath[];
  /** PATH for py-spy. */
  env?: NodeJS.ProcessEnv;
}

/** What one tick measured. */
export interface HealthSample {
  at: number;
  /** The pass's processes (the process group); empty once it ended. */
  procs: ProcInfo[];
  /** Memory in use and its limit: the pass's cgroup when it has a limit, else the host's RAM. */
  memory: { usedBytes: number; limitBytes: number; scope: 'cgroup' | 'ram' } | null;
  shm: { path: string; usedBytes: number; sizeBytes: number } | null;
  space: { path: string; what: string; freeBytes: number; totalBytes: number }[];
  /** py-spy's frames per pid, asked only during a stall. */
  pySpy?: ReadonlyMap<number, string | null>;
}

/** Watches one pass. */
export class RunHealth {
  private readonly stall: StallDetector;
  private readonly shmPath: string;
  private readonly spacePaths: WatchedPath[];
  private readonly env: NodeJS.ProcessEnv;
  /** Per pid: its last wchar and when it last grew. */
  private readonly writes = new Map<number, { wchar: number | null; changedAt: number }>();
  private readonly spaceHistory = new Map<string, { at: number; free: number }[]>();
  /** Causes in an episode (fired, not yet cleared). */
  private readonly active = new Set<string>();
  private stallEpisodeFired = 0;

  constructor(private readonly opts: HealthOptions) {
    this.stall = new StallDetector(opts.stall);
    this.shmPath = opts.shmPath ?? SHM_PATH;
    this.spacePaths = opts.spacePaths ?? [];
    this.env = opts.env ?? process.env;
  }

  /** The pass's processes were spawned. */
  start(now: number): void {
    this.stall.start(now);
  }
  /** A step went by (a progress bar advanced, a loss row, DeepSpeed's step report); `count` is tqdm's n. */
  progress(now: number, count?: number): void {
    this.stall.progress(now, count);
  }
  /** Any log line. */
  line(now: number): void {
    this.stall.line(now);
  }

  /** Measures the pass (its process group) and the resources, then judges. */
  async tick(now: number, target: { pgid: number }): Promise<Alert[]> {
    const procs = processesOfGroup(target.pgid);
    const leader = procs[0]?.pid ?? 'self';
    const [shm, space] = await Promise.all([this.measureShm(), this.measureSpace()]);
    const mem = measureMemory(undefined, leader);
    const room = memoryRoom(mem);
    const limited = mem.cgroup !== null && room.limitedBy === 'cgroup';
    const usedBytes = limited
      ? Math.max(0, (mem.cgroup!.usageBytes ?? 0) - (mem.cgroup!.inactiveFileBytes ?? 0))
      : mem.totalBytes - mem.availableBytes;
    const sample: HealthSample = {
      at: now,
      procs,
      memory: mem.totalBytes > 0 ? { usedBytes, limitBytes: room.limitBytes, scope: limited ? 'cgroup' : 'ram' } : null,
      shm,
      space,
    };
    // py-spy only when the judge will report a stall (it stops each process for a moment).
    const st = procs.length > 0 ? this.stall.check(now) : null;
    if (st && st.episode > this.stallEpisodeFired && pySpyInstalled(this.env)) {
      const stopped = this.stoppedRanks(ranksOf(procs), now, st.silentMs).slice(0, PY_SPY_RANKS);
      const frames = await Promise.all(stopped.map(async (p) => [p.pid, await pySpyFrames(p.pid, this.env)] as const));
      sample.pySpy = new Map(frames);
    }
    return this.judge(sample);
  }

  private async measureShm(): Promise<HealthSample['shm']> {
    try {
      const s = await statfs(this.shmPath);
      const size = Number(s.blocks) * Number(s.bsize);
      return { path: this.shmPath, sizeBytes: size, usedBytes: size - Number(s.bfree) * Number(s.bsize) };
    } catch {
      return null;
    }
  }

  private async measureSpace(): Promise<HealthSample['space']> {
    const out = await Promise.all(
      this.spacePaths.map(async (w) => {
        try {
          const s = await statfs(w.path);
          return {
            path: w.path,
            what: w.what,
            freeBytes: Number(s.bavail) * Number(s.bsize),
            totalBytes: Number(s.blocks) * Number(s.bsize),
          };
        } catch {
          return null;
        }
      }),
    );
    return out.filter((x) => x !== null);
  }

  /**
   * The ranks that wrote nothing lately: their wchar has not grown in the second half of the silence (the
   * samples come every few seconds, so "since the silence began" would count a rank's last line, seen by the
   * next sample, as writing).
   */
  private stoppedRanks(ranks: readonly ProcInfo[], now: number, silentMs: number): ProcInfo[] {
    return ranks.filter((p) => (this.writes.get(p.pid)?.changedAt ?? now) <= now - silentMs / 2);
  }

  /** Fires `key` once per episode: true the first time its condition holds. */
  private once(key: string, on: boolean, clear: boolean): boolean {
    if (clear) this.active.delete(key);
    if (!on || this.active.has(key)) return false;
    this.active.add(key);
    return true;
  }

  /** The alerts a sample raises (pure but for the watch's memory of what it fired). */
  judge(sample: HealthSample): Alert[] {
    const now = sample.at;
    const alerts: Alert[] = [];
    const step = this.opts.step;
    // Who writes: a pid whose wchar grew since the last sample wrote something.
    for (const p of sample.procs) {
      const prev = this.writes.get(p.pid);
      if (!prev) this.writes.set(p.pid, { wchar: p.wcharBytes, changedAt: now });
      else if (p.wcharBytes !== null && p.wcharBytes !== prev.wchar)
        this.writes.set(p.pid, { wchar: p.wcharBytes, changedAt: now });
    }
    if (sample.procs.length > 0) {
      const st = this.stall.check(now);
      if (st && st.episode > this.stallEpisodeFired) {
        this.stallEpisodeFired = st.episode;
        const ranks = ranksOf(sample.procs);
        const stopped = new Set(this.stoppedRanks(ranks, now, st.silentMs).map((p) => p.pid));
        const described: StalledRank[] = ranks.map((p) => ({
          pid: p.pid,
          rank: p.rank,
          command: p.command,
          state: p.state,
          wchan: p.wchan,
          stoppedWriting: stopped.has(p.pid),
          pySpy: sample.pySpy?.get(p.pid) ?? null,
        }));
        alerts.push(
          stallAlert({ step, at: now, state: st, ranks: described, pySpyInstalled: pySpyInstalled(this.env) }),
        );
      }
    }
    const m = sample.memory;
    if (m && m.limitBytes > 0) {
      const f = m.usedBytes / m.limitBytes;
      if (this.once('memory', f >= MEMORY_HIGH_FRACTION, f < RESOURCE_CLEAR_FRACTION)) {
        const where = m.scope === 'cgroup' ? 'the cgroup limit' : 'RAM';
        alerts.push({
          id: 'memory-pressure',
          step,
          line: `${formatBytesShort(m.usedBytes)} in use of ${formatBytesShort(m.limitBytes)} (${where})`,
          at: now,
          title: `host memory at ${Math.round(f * 100)}% of ${where} (${formatBytesShort(m.usedBytes)} of ${formatBytesShort(m.limitBytes)}): the OOM killer is next`,
          fix: `give the pass more memory${m.scope === 'cgroup' ? ' (docker run --memory, Slurm --mem)' : ''}, pin_memory false in the offload blocks (pinned pages never swap), fewer DataLoader workers, or a mode that needs less CPU memory per node (zerowiz estimate lists them: --mode)`,
          fatal: false,
        });
      }
    }
    const s = sample.shm;
    if (s && s.sizeBytes > 0) {
      const f = s.usedBytes / s.sizeBytes;
      if (this.once('shm', f >= SHM_HIGH_FRACTION, f < RESOURCE_CLEAR_FRACTION))
        alerts.push({
          id: 'shm-full',
          step,
          line: `${s.path}: ${formatBytesShort(s.usedBytes)} used of ${formatBytesShort(s.sizeBytes)}`,
          at: now,
          title: `/dev/shm ${Math.round(f * 100)}% full (${formatBytesShort(s.usedBytes)} of ${formatBytesShort(s.sizeBytes)}): NCCL and the DataLoader's workers fail next`,
          fix: `docker run --shm-size=16g (or --ipc=host); on a host: sudo mount -o remount,size=16G ${s.path}; or fewer DataLoader workers`,
          fatal: false,
        });
    }
    for (const sp of sample.space) {
      const hist = this.spaceHistory.get(sp.path) ?? [];
      hist.push({ at: now, free: sp.freeBytes });
      if (hist.length > SPACE_SAMPLES_KEPT) hist.shift();
      this.spaceHistory.set(sp.path, hist);
      const first = hist[0]!;
      const dt = now - first.at;
      const rate = dt > 0 ? (first.free - sp.freeBytes) / dt : 0; // bytes per ms lost
      const etaMs = rate > 0 ? sp.freeBytes / rate : Number.POSITIVE_INFINITY;
      // 5% free on any disk; 1 GiB on a disk big enough for that to be a few per cent.
      const floor = sp.totalBytes > 4 * SPACE_LOW_BYTES ? SPACE_LOW_BYTES : 0;
      const low = sp.freeBytes < Math.max(sp.totalBytes * SPACE_LOW_FRACTION, floor);
      const falling = hist.length >= 3 && etaMs < SPACE_ETA_ALERT_MS;
      const clear = !low && !falling && sp.freeBytes > sp.totalBytes * (1 - RESOURCE_CLEAR_FRACTION);
      if (this.once(`space:${sp.path}`, low || falling, clear))
        alerts.push({
          id: 'space-low',
          step,
          line: `${sp.path}: ${formatBytesShort(sp.freeBytes)} free of ${formatBytesShort(sp.totalBytes)}${rate > 0 ? `, falling ${formatBytesShort(rate * 60_000)}/min` : ''}`,
          at: now,
          title: `${sp.what} space ${falling ? 'falling' : 'low'}: ${formatBytesShort(sp.freeBytes)} free at ${sp.path}${Number.isFinite(etaMs) ? `, full in about ${formatDuration(etaMs)} at this rate` : ''}`,
          fix: `free space at ${sp.path} now (old checkpoints, caches), or stop the run before the disk is full (a full NVMe folder fails the swap; a full output folder fails the save)`,
          fatal: false,
        });
    }
    return alerts;
  }
}
