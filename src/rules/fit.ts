/**
 * The estimate a launch is compared with: the setup's own mode through the peak model (src/estimate/peak.ts, the same
 * input as the wizard's table and `zerowiz estimate`: src/estimate/input.ts, the GPU links the setup's gpu_links
 * answer carries), and, when the run fails for memory, the next mode or setting that fits by the same estimate,
 * as a command the user can run as printed (the alerts' fixes: ./alerts.ts). Also the run records read back as
 * measurements (loadMeasuredRuns) and the findings they give (measuredFindings).
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { compareRows, estimateModes } from '../estimate/index.js';
import type { ModeEstimate, StepTimeBand, TimeTerm } from '../estimate/index.js';
import { measuredContradiction, measuredPeaks, measuredText, placementKey } from '../estimate/index.js';
import type { ModelEntry } from '../estimate/index.js';
import { modeDevice, rowLabel } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { formatBytesShort } from '../text/index.js';
import { ownModeEstimate, type OwnModeEstimate } from './validate.js';
import type { Finding } from '../config/index.js';
import { shellJoin } from '../text/index.js';
import type { MeasuredRun } from '../estimate/index.js';

/** What an out-of-memory message says (null when it does not say): what the fixes after an OOM are sized by. */
export interface OomFacts {
  gpu: number | null;
  triedBytes: number | null;
  totalBytes: number | null;
  freeBytes: number | null;
  /** Reserved by PyTorch but unallocated (fragmentation). */
  reservedUnallocatedBytes: number | null;
}

/** The predicted step time a run is launched with, as run.json keeps it (src/estimate/time.ts, per optimizer step). */
export interface RunStep {
  seconds: number;
  low: number;
  high: number;
  bound: TimeTerm;
  terms: Record<TimeTerm, number>;
  /** Micro-batches per optimizer step. */
  accumulation: number;
  /** The GPU catalog's name the time divides by, and the link the collectives run on. */
  gpu: string;
  link: string;
}

/** The estimate a run is launched with, as run.json keeps it: the mode, its modelled peak per GPU, its step time. */
export interface RunEstimate {
  mode: string;
  gpuBytesPerGpu: number;
  /** The predicted step (absent in records made before step times). */
  step?: RunStep | null;
}

/** A row's step time as run.json keeps it. */
export function runStepOf(t: StepTimeBand, accumulation: number, gpu: string): RunStep {
  return {
    seconds: t.stepSeconds,
    low: t.low,
    high: t.high,
    bound: t.bound,
    terms: { ...t.terms },
    accumulation,
    gpu,
    link: t.link,
  };
}

/**
 * What zerowiz predicted for a run, and what it would suggest when the run runs out of memory. Computed when first
 * asked: a launch computes `json` once (src/launch/prepare.ts) and hands it on in the supervisor's plan and the
 * record, and the viewers and the supervisor pass it back (launchEstimate's `known`), so they compute nothing
 * unless a run runs out of memory.
 */
export interface LaunchEstimate {
  /** run.json's `estimate`: the mode, its modelled peak per GPU and its step time; null when it cannot be estimated. */
  readonly json: RunEstimate | null;
  /** The mode as people read it (`ZeRO-3 offload`). */
  label: string;
  /** After a CUDA OOM: the next mode or setting that fits by the estimate, as one phrase; null when none. */
  whatFits(oom: OomFacts): string | null;
  /**
   * After the host ran out of memory (or before, short of it): the fastest mode the estimate's table says fits
   * this host's memory (`hostBytes`, else the setup's cpu_memory), with its command; without either, a mode that
   * needs less CPU memory and fits the GPU. Null when none.
   */
  hostWhatFits(hostBytes?: number): string | null;
  /** The link the step-time figures assume, in words (`NVLink x18`, or `NVLink x12 (assumed)` when not detected). */
  readonly link: string;
}

/** OMP_NUM_THREADS of a launch's environment (what DeepSpeedCPUAdam runs on), or null when unset or not a count. */
export function ompThreadsOf(env: NodeJS.ProcessEnv): number | null {
  const v = env.OMP_NUM_THREADS;
  return v !== undefined && /^\d+$/.test(v.trim()) && Number(v) >= 1 ? Number(v) : null;
}

/**
 * The commands that switch a launched setup to another mode, runnable as printed: a user preset made from the
 * launched one with the new mode (`zerowiz launch` takes no mode flags), then its launch. `preset` is the preset
 * launched (a name or file, as typed); without one (`--last`, an unsaved wizard setup) the flags to set, in words.
 */
export function switchModeCommand(
  preset: string | null,
  name: string,
  row: Pick<ModeEstimate, 'mode' | 'offloadDevice'>,
  nvmePath: string | null,
): string {
  const target = `${name}-${row.mode === '1' ? 'zero1' : row.mode === '2' ? 'zero2' : `zero${row.mode}`}${row.offloadDevice === 'nvme' ? '-nvme' : ''}`;
  const flags = ['--mode', row.mode];
  if (row.offloadDevice === 'nvme') flags.push('--offload-device', 'nvme', '--nvme-path', nvmePath ?? '/mnt/nvme');
  if (preset === null) return `${shellJoin(flags)} in a preset of your own`;
  const args = ['zerowiz', 'preset', 'save', target, '--preset', preset, ...flags];
  return `${shellJoin(args)} && ${shellJoin(['zerowiz', 'launch', target])}`;
}

/** Whether a path is an existing directory here. */
function isDir(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The estimate of a setup's own mode, or null when there is nothing to estimate (no model size). Nothing is
 * computed until asked (see LaunchEstimate); `known` is the estimate a launch already made (its plan, its record).
 * `env` is the launch's environment (OMP_NUM_THREADS). Never throws.
 */
export function launchEstimate(
  setup: Setup,
  models?: readonly ModelEntry[],
  /** The preset launched, as typed (a name or file), or null (`--last`, an unsaved wizard setup); default the setup's name. */
  preset: string | null = setup.name,
  cwd: string = process.cwd(),
  known?: RunEstimate | null,
  env: NodeJS.ProcessEnv = process.env,
): LaunchEstimate | null {
  const a = setup.answers;
  if (a.model_params === null) return null;
  let cached: OwnModeEstimate | null | undefined;
  const own = (): OwnModeEstimate | null => {
    if (cached !== undefined) return cached;
    try {
      cached = ownModeEstimate(a, models, { ompThreads: ompThreadsOf(env) });
    } catch {
      cached = null;
    }
    return cached;
  };
  const mode = a.mode;
  const device = modeDevice(mode, a.offload_device);
  // An NVMe row is suggested only with a directory that exists here (never a made-up /nvme).
  const nvmeDir = (): string | null => (isDir(resolve(cwd, a.nvme_path)) ? resolve(cwd, a.nvme_path) : null);
  const usable = (r: ModeEstimate) => r.offloadDevice !== 'nvme' || nvmeDir() !== null;
  let json: RunEstimate | null | undefined = known ?? undefined;
  return {
    get json() {
      if (json !== undefined) return json;
      const o = own();
      json = o
        ? {
            mode: a.mode,
            gpuBytesPerGpu: o.row.gpuNeedBytes,
            step: runStepOf(o.row.time, o.accumulation, o.gpu),
          }
        : null;
      return json;
    },
    label: rowLabel(mode, device),
    get link() {
      return json?.step?.link ?? own()?.row.time.link ?? '';
    },
    whatFits: (oom) => {
      const o = own();
      if (!o) return null;
      const { input } = o;
      // The GPU's real size, when the message says it, over the one the setup assumed.
      const inp = oom.totalBytes !== null ? { ...input, gpuMemoryBytes: oom.totalBytes } : input;
      if (inp.gpuMemoryBytes === null || inp.gpuMemoryBytes === undefined) return null;
      try {
        const report = estimateModes(inp);
        const current = o.rowIn(report);
        const fitting = [...report.modes]
          .sort(compareRows)
          .filter((r) => r.fits === true && r.gpuNeedBytes < current.gpuNeedBytes);
        const next = fitting.find(usable);
        if (next) {
          return `switch to ${rowLabel(next.mode, next.offloadDevice)}, which fits by the estimate (${formatBytesShort(next.gpuNeedBytes)} per GPU against ${formatBytesShort(current.gpuNeedBytes)} for ${rowLabel(mode, device)}): ${switchModeCommand(preset, setup.name, next, nvmeDir())}`;
        }
        const onlyNvme = fitting[0];
        if (onlyNvme)
          return `only ${rowLabel(onlyNvme.mode, onlyNvme.offloadDevice)} fits by the estimate, and it needs a directory on an NVMe drive (${a.nvme_path} does not exist here): ${switchModeCommand(preset, setup.name, onlyNvme, null).replace('/mnt/nvme', 'DIR')}, with DIR your NVMe mount`;
        if (report.advice.length > 0)
          return `by the estimate no mode fits as set up; what would: ${report.advice.slice(0, 2).join('; ')}`;
      } catch {
        return null;
      }
      return null;
    },
    hostWhatFits: (hostBytes) => {
      const o = own();
      if (!o) return null;
      try {
        const memory = hostBytes ?? o.input.cpuMemoryBytes ?? null;
        const report = estimateModes(memory === null ? o.input : { ...o.input, cpuMemoryBytes: memory });
        const current = o.rowIn(report);
        const sorted = [...report.modes].sort(compareRows).filter(usable);
        const less = (r: ModeEstimate) => r.peak.cpuBytes < current.peak.cpuBytes;
        // With the host's memory known: the fastest mode the table says fits (GPU and CPU), else none.
        if (memory !== null) {
          const fits = sorted.find((r) => r.fits === true && less(r));
          if (!fits) return null;
          return `${rowLabel(fits.mode, fits.offloadDevice)} fits by the estimate on this host (${formatBytesShort(fits.peak.cpuBytes)} of CPU memory per node against ${formatBytesShort(current.peak.cpuBytes)} for ${rowLabel(mode, device)}; ${formatBytesShort(fits.gpuNeedBytes)} per GPU): ${switchModeCommand(preset, setup.name, fits, nvmeDir())}`;
        }
        const next = sorted.find((r) => r.gpuFits !== false && less(r));
        if (!next) return null;
        return `${rowLabel(next.mode, next.offloadDevice)} needs ${formatBytesShort(next.peak.cpuBytes)} of CPU memory per node against ${formatBytesShort(current.peak.cpuBytes)} for ${rowLabel(mode, device)}${next.gpuFits === true ? ', and fits the GPU by the estimate' : ''}: ${switchModeCommand(preset, setup.name, next, nvmeDir())}`;
      } catch {
        return null;
      }
    },
  };
}

/**
 * What the run records of `cwd` measured for this setup, as findings beside the fit check (the lead calls it
 * where the launch shows the fit findings; `zerowiz estimate --preset` and the wizard's table show the same):
 * an info-level note with the last measured peak of the setup's own placement, or a warning when the
 * estimate says it fits and the measurement says it does not.
 */
export function measuredFindings(
  setup: Setup,
  runs: readonly MeasuredRun[],
  models?: readonly ModelEntry[],
): Finding[] {
  const a = setup.answers;
  if (a.model_params === null) return [];
  let own: OwnModeEstimate | null;
  try {
    own = ownModeEstimate(a, models);
  } catch {
    return [];
  }
  if (!own) return [];
  const hit = measuredPeaks(runs, a).get(placementKey(own.placement));
  if (!hit) return [];
  const label = rowLabel(a.mode, own.device);
  const text = measuredText(hit, own.row.peak.gpuBytes);
  const usable = a.gpu_memory === null ? null : Math.floor(a.gpu_memory * (1 - a.headroom / 100));
  const against = measuredContradiction(label, hit, usable, own.row.fits);
  return [
    {
      level: 'warning',
      rule: against ? 'measured-does-not-fit' : 'measured-peak',
      message: `${label}: ${text} (run ${hit.runId})${against ? `, ${against}` : ''}`,
      fix: against
        ? 'pick a mode with more room, turn on gradient checkpointing, or lower the micro-batch'
        : 'nothing to do: the measured peak of this setup on this machine, beside the estimate',
      questions: ['mode'],
    },
  ];
}
