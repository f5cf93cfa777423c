/**
 * The stall watchdog, pure: a pass that makes no progress, prints no loss row and no log line for k times
 * its median step time (k = 10, never sooner than 45 s; both configurable) while its processes live is
 * stalled, long before NCCL's 30-minute timeout ends it. Before the first steps (loading, compiling ops)
 * there is no step time yet, so a longer start-up time applies. The alert names the ranks that stopped
 * writing and what each is doing (py-spy's main-thread frames when py-spy is installed, else the state and
 * wchan from /proc): ./proc-ranks.ts measures those, ./health.ts ties it together for the run supervisor.
 */
import type { Alert } from './alerts.js';
import { formatDuration } from '../text/index.js';
import { type EnvNumberName, envNumber } from '../text/index.js';

/** k: how many median step times of silence make a stall. */
export const STALL_FACTOR_DEFAULT = 10;
/** The floor: never a stall sooner than this much silence. */
export const STALL_MIN_MS_DEFAULT = 45_000;
/** Silence allowed before the first step times are known (loading a large model, JIT-compiling ops). */
export const STALL_STARTUP_MS_DEFAULT = 15 * 60_000;
/** Step times kept for the median (the latest ones). */
export const STEP_TIMES_KEPT = 64;

/** The watchdog's settings. */
export interface StallOptions {
  /** k (default STALL_FACTOR_DEFAULT). */
  factor?: number;
  /** The floor in ms (default STALL_MIN_MS_DEFAULT). */
  minMs?: number;
  /** The silence allowed before step times are known (default STALL_STARTUP_MS_DEFAULT). */
  startupMs?: number;
}

/**
 * The watchdog's settings from the environment: ZEROWIZ_STALL_FACTOR (k), ZEROWIZ_STALL_MIN_S (the floor) and
 * ZEROWIZ_STALL_STARTUP_S (the start-up allowance), each a positive number; anything else keeps the default.
 */
export function stallOptionsFromEnv(env: NodeJS.ProcessEnv): StallOptions {
  const num = (name: EnvNumberName): number | undefined => {
    const v = envNumber(env, name, Number.NaN);
    return Number.isNaN(v) ? undefined : v;
  };
  const factor = num('ZEROWIZ_STALL_FACTOR');
  const min = num('ZEROWIZ_STALL_MIN_S');
  const startup = num('ZEROWIZ_STALL_STARTUP_S');
  return {
    ...(factor !== undefined ? { factor } : {}),
    ...(min !== undefined ? { minMs: min * 1000 } : {}),
    ...(startup !== undefined ? { startupMs: startup * 1000 } : {}),
  };
}

/** A stall, as check() reports it. */
export interface StallState {
  /** How long nothing came. */
  silentMs: number;
  /** The silence that makes a stall now: max(floor, k x median), or the start-up time. */
  thresholdMs: number;
  /** The median step time, null before two progress events. */
  medianStepMs: number | null;
  /** Which stall of the pass this is (1, 2, ...): one per silence, so it is reported once. */
  episode: number;
  /** What set the threshold: k x the median step, the floor, or the start-up time; and k. */
  basis: 'steps' | 'floor' | 'startup';
  factor: number;
}

/** Feeds of a pass's activity; check(now) says whether it is stalled. All times in ms. */
export class StallDetector {
  private readonly factor: number;
  private readonly minMs: number;
  private readonly startupMs: number;
  private readonly stepMs: number[] = [];
  private lastActivity: number | null = null;
  private lastProgress: number | null = null;
  private lastCount: number | null = null;
  private episodes = 0;
  private inStall = false;

  constructor(opts: StallOptions = {}) {
    this.factor = opts.factor ?? STALL_FACTOR_DEFAULT;
    this.minMs = opts.minMs ?? STALL_MIN_MS_DEFAULT;
    this.startupMs = opts.startupMs ?? STALL_STARTUP_MS_DEFAULT;
  }

  /** The pass started (its processes were spawned). */
  start(now: number): void {
    this.lastActivity = now;
  }

  /**
   * A step went by: a progress bar advanced, a loss row or DeepSpeed's step report came. `count` is the
   * progress counter when known (tqdm's n), so one event covering several steps counts them all.
   */
  progress(now: number, count?: number): void {
    if (this.lastProgress !== null && now > this.lastProgress) {
      const steps = count !== undefined && this.lastCount !== null ? count - this.lastCount : 1;
      if (steps > 0) {
        this.stepMs.push((now - this.lastProgress) / steps);
        if (this.stepMs.length > STEP_TIMES_KEPT) this.stepMs.shift();
      }
    }
    this.lastProgress = now;
    if (count !== undefined) this.lastCount = count;
    this.activity(now);
  }

  /** Any log line of the pass. */
  line(now: number): void {
    this.activity(now);
  }

  private activity(now: number): void {
    if (this.lastActivity === null || now >= this.lastActivity) this.lastActivity = now;
    this.inStall = false;
  }

  /** The median of the kept step times, or null before there is one. */
  medianStepMs(): number | null {
    if (this.stepMs.length === 0) return null;
    const s = [...this.stepMs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  }

  /** The silence that makes a stall now. */
  thresholdMs(): number {
    const median = this.medianStepMs();
    if (median === null) return Math.max(this.minMs, this.startupMs);
    return Math.max(this.minMs, Math.round(this.factor * median));
  }

  /** Null while the pass is not stalled; the stall otherwise (the same episode until activity comes back). */
  check(now: number): StallState | null {
    if (this.lastActivity === null) return null;
    const silentMs = now - this.lastActivity;
    const thresholdMs = this.thresholdMs();
    if (silentMs < thresholdMs) return null;
    if (!this.inStall) {
      this.inStall = true;
      this.episodes++;
    }
    const median = this.medianStepMs();
    const basis = median === null ? 'startup' : thresholdMs === this.minMs ? 'floor' : 'steps';
    return { silentMs, thresholdMs, medianStepMs: median, episode: this.episodes, basis, factor: this.factor };
  }
}

/** One process of a stalled pass, as ./proc-ranks.ts measured it. */
export interface StalledRank {
  pid: number;
  /** RANK from its environment (torchrun sets it), null when it has none. */
  rank: number | null;
  command: string;
  /** /proc/PID/stat's state: R, S, D, Z, T, ... */
  state: string;
  /** /proc/PID/wchan: the kernel function it sleeps in ('0' when running). */
  wchan: string;
  /** Whether it wrote nothing (its wchar did not grow) during the silence. */
  stoppedWriting: boolean;
  /** The main thread's innermost frames from `py-spy dump`, when py-spy could tell. */
  pySpy: string | null;
}

/** What /proc's state and wchan mean, in words. */
export function describeProcState(state: string, wchan: string): string {
  const where = wchan && wchan !== '0' ? ` in ${wchan}` : '';
  let hint = '';
  if (/futex/.test(wchan)) hint = ' (waiting on a lock or a GPU sync)';
  else if (/pipe_write/.test(wchan)) hint = ' (its output pipe is full: nobody reads it)';
  else if (/pipe_read|do_epoll_wait|poll|select|sk_wait|tcp_recv|unix_stream/.test(wchan))
    hint = ' (waiting for input or the network)';
  switch (state) {
    case 'R':
      return 'running (on a CPU)';
    case 'S':
      return `sleeping${where}${hint}`;
    case 'D':
      return `in uninterruptible sleep${where} (disk, network file system or the GPU driver)`;
    case 'Z':
      return 'a zombie (it exited; its parent has not reaped it)';
    case 'T':
    case 't':
      return 'stopped (by a signal or a debugger)';
    default:
      return `state ${state}${where}`;
  }
}

/** The innermost frames (at most three) of the main thread in `py-spy dump`'s text; null when it says none. */
export function parsePySpyDump(text: string): string | null {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /^Thread .*"MainThread"/.test(l));
  if (at < 0) return null;
  const frames: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!/^\s+\S/.test(l)) break;
    frames.push(l.trim());
    if (frames.length === 3) break;
  }
  return frames.length > 0 ? frames.join(' < ') : null;
}

/** Everything a stall alert says. */
export interface StallFacts {
  step: number;
  at: number;
  state: StallState;
  ranks: StalledRank[];
  pySpyInstalled: boolean;
}

/** Ranks shown in an alert's line; more are counted. */
const RANKS_SHOWN = 8;

function rankName(r: StalledRank): string {
  return `${r.rank === null ? r.command : `rank ${r.rank}`} (pid ${r.pid})`;
}

/** The alert of a stall, in the shape of ./alerts.ts: the title, the ranks and what they do, a command to run. */
export function stallAlert(f: StallFacts): Alert {
  const s = f.state;
  const median = s.medianStepMs === null ? '' : formatDuration(s.medianStepMs);
  const why =
    s.basis === 'startup'
      ? `before the first steps, which may take ${formatDuration(s.thresholdMs)}`
      : s.basis === 'floor'
        ? `the floor of ${formatDuration(s.thresholdMs)}; the median step is ${median}`
        : `${s.factor} x the median step of ${median}`;
  const stopped = f.ranks.filter((r) => r.stoppedWriting);
  const writing = f.ranks.filter((r) => !r.stoppedWriting);
  const parts = [
    ...stopped
      .slice(0, RANKS_SHOWN)
      .map(
        (r) =>
          `${rankName(r)} stopped writing: ${describeProcState(r.state, r.wchan)}${r.pySpy ? `; py-spy: ${r.pySpy}` : ''}`,
      ),
    ...(stopped.length > RANKS_SHOWN ? [`${stopped.length - RANKS_SHOWN} more stopped`] : []),
    ...writing.slice(0, RANKS_SHOWN).map((r) => `${rankName(r)} still writes`),
  ];
  const line = parts.length > 0 ? parts.join('; ') : 'no process of the pass could be read in /proc';
  const target = (stopped[0] ?? f.ranks[0])?.pid;
  const spy = target !== undefined ? `py-spy dump --pid ${target}` : 'py-spy dump --pid PID';
  const fix = `${f.pySpyInstalled ? spy : `pip install py-spy && ${spy}`} shows where it waits; a hang in a collective: stop the run and rerun with NCCL_DEBUG=INFO TORCH_NCCL_ASYNC_ERROR_HANDLING=1 to see which rank is behind`;
  const who =
    stopped.length > 0
      ? `: ${stopped.length === f.ranks.length ? 'every rank' : `${stopped.length} of ${f.ranks.length} ranks`} stopped writing`
      : '';
  return {
    id: 'stall',
    step: f.step,
    line,
    at: f.at,
    title: `no progress for ${formatDuration(s.silentMs)} (${why}) while the processes live${who}`,
    fix,
    fatal: false,
  };
}
