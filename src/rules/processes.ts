/**
 * How many processes: the default comes from the GPUs detected on this machine times the machines (the
 * catalog's own default for num_processes, fed with detection), and more processes per machine than this
 * machine has GPUs is a finding. `zerowiz generate` and the wizard use the same two functions.
 */
import { plural } from '../text/index.js';
import type { HostDetection } from '../machine/index.js';
import { withDefaults, type Answers, type DetectedEnv } from '../config/index.js';
import type { Finding } from '../config/index.js';
import { gpuOfSmiName } from '../estimate/index.js';

/** What the answers' defaults need from detection: GPU count and memory, CPU memory (null: not detected). */
export function envFromDetection(host: HostDetection): DetectedEnv {
  const g = host.gpu;
  return {
    gpuCount: g.detected ? g.gpus.length : null,
    gpuMemoryBytes: g.minMemoryBytes,
    cpuMemoryBytes: host.cpuMemoryBytes,
    interconnect: host.interconnect,
    ...modelOf(host),
    ...(host.cpuCores > 0 ? { cpuCores: host.cpuCores } : {}),
  };
}

/** The GPU catalog's name for the detected GPUs (the smallest, when mixed), or nothing. */
function modelOf(host: HostDetection): { gpuModel?: string } {
  const g = host.gpu;
  if (!g.detected || g.gpus.length === 0) return {};
  const smallest = g.gpus.reduce((a, b) => (b.memoryBytes < a.memoryBytes ? b : a));
  const hit = gpuOfSmiName(smallest.name, smallest.memoryBytes);
  return hit ? { gpuModel: hit.id } : {};
}

/** The process count to write and where it came from. */
export interface ProcessPlan {
  numProcesses: number;
  /** `given`: an answer or flag; `detected`: GPUs here x machines; `fallback`: nothing detected, one per machine. */
  source: 'given' | 'detected' | 'fallback';
  findings: Finding[];
}

/**
 * The process count for `given` answers (num_processes and num_machines, when given) on a machine where
 * `env` was detected, and what to say about it.
 */
export function processPlan(
  given: Partial<Pick<Answers, 'num_processes' | 'num_machines'>>,
  env: DetectedEnv,
): ProcessPlan {
  const machines = given.num_machines ?? 1;
  const source: ProcessPlan['source'] =
    given.num_processes !== undefined ? 'given' : env.gpuCount !== null ? 'detected' : 'fallback';
  const numProcesses = given.num_processes ?? withDefaults({ num_machines: machines }, env).num_processes;
  return { numProcesses, source, findings: processFindings(numProcesses, machines, env.gpuCount) };
}

/** More processes per machine than this machine has GPUs: two processes would share a GPU (or fail to find one). */
export function processFindings(numProcesses: number, numMachines: number, gpuCount: number | null): Finding[] {
  if (gpuCount === null || numMachines < 1) return [];
  const perMachine = Math.ceil(numProcesses / numMachines);
  if (perMachine <= gpuCount) return [];
  return [
    {
      level: 'warning',
      rule: 'more-processes-than-gpus',
      message: `num_processes ${numProcesses} over ${numMachines} machine${numMachines === 1 ? '' : 's'} starts ${perMachine} processes per machine, but this machine has ${gpuCount} GPU${gpuCount === 1 ? '' : 's'}: run here, the extra processes find no GPU of their own (CUDA "invalid device ordinal") or share one`,
      fix: `set num_processes to ${gpuCount * numMachines} (${gpuCount} GPU${gpuCount === 1 ? '' : 's'} x ${numMachines} machine${numMachines === 1 ? '' : 's'}), or ignore this if the machines that run it have more GPUs`,
      questions: ['num_processes', 'num_machines'],
    },
  ];
}

/**
 * Fewer processes per machine than this machine has GPUs: the others stay idle. A note, not a finding: a preset
 * may mean it (the seed trains on one GPU); the wizard's review and `zerowiz launch` say it. Null when not so or
 * not known.
 */
export function idleGpusNote(numProcesses: number, numMachines: number, gpuCount: number | null): string | null {
  if (gpuCount === null || numMachines < 1) return null;
  const per = Math.ceil(numProcesses / numMachines);
  if (per >= gpuCount) return null;
  const idle = gpuCount - per;
  return `num_processes ${numProcesses} starts ${plural(per, 'process')} per machine, and this machine has ${gpuCount} GPUs: ${idle} of them ${idle === 1 ? 'stays' : 'stay'} idle`;
}
