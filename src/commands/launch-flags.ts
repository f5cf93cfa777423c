/** The flags of `zerowiz launch` as commander hands them over, shared by its registration and its work. */

/** Raw flag values as commander hands them over; a kind's own flags (src/commands/run-kinds.ts) by their names. */
export interface LaunchFlags {
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
  /** A kind's flags (`--slurm`, `--partition NAME`, ...). */
  [kindFlag: string]: unknown;
}
