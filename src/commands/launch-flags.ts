/** The flags of `zerowiz launch` as commander hands them over, shared by its registration and its work. */

/** The Slurm flags of `launch` (see src/slurm/). */
export interface SlurmFlags {
  slurm?: boolean;
  partition?: string;
  nodes?: string;
  gpusPerNode?: string;
  time?: string;
  account?: string;
  qos?: string;
  sbatchArg?: string[];
}

/** Whether any flag that only means something with --slurm was given. */
export function slurmFlagsGiven(f: SlurmFlags): boolean {
  return (
    f.partition !== undefined ||
    f.nodes !== undefined ||
    f.gpusPerNode !== undefined ||
    f.time !== undefined ||
    f.account !== undefined ||
    f.qos !== undefined ||
    (f.sbatchArg?.length ?? 0) > 0
  );
}

/** Raw flag values as commander hands them over. */
export interface LaunchFlags extends SlurmFlags {
  dryRun?: boolean;
  tui?: boolean;
  accelerate?: string;
  last?: boolean;
  /** --csv-log / --no-csv-log: add --enable_csv_log to DiffSynth training steps for this run, or not. */
  csvLog?: boolean;
  /** --pin-step NAME: run these steps with zerowiz's config without DeepSpeed. */
  pinStep?: string[];
  /** --skip-check ID: checks left out before each pass. */
  skipCheck?: string[];
  /** --no-speed-test: false. */
  speedTest?: boolean;
  /** --on-topology-change: convert | weights | fresh | go-on. */
  onTopologyChange?: string;
  /** --notify TARGET: where the run's notifications go (repeatable). */
  notify?: string[];
}
