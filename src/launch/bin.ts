/**
 * What the bin tells the launch at start-up, in a module small enough for the bin to import: where the bin
 * is (a local run's supervisor and the watchdog's finisher are run with it) and the arguments that select
 * those roles instead of the CLI.
 */

/** The argument that makes the bin run the watchdog's finisher instead of the CLI. */
export const WATCHDOG_ARG = '__zerowiz-watchdog';
/** The argument that makes the bin run a local run's supervisor (its plan on stdin) instead of the CLI. */
export const SUPERVISOR_ARG = '__zerowiz-supervise';
/**
 * The argument that makes the bin watch a Slurm job on its batch node (src/slurm/job-watch.ts): the series the
 * report draws, and the job's notifications.
 */
export const JOB_WATCH_ARG = '__zerowiz-job-watch';

let bin: string | null = null;

/** Called by the bin with its own path. */
export function setBinPath(path: string): void {
  bin = path;
}

/**
 * The bin's path; null when zerowiz runs from its sources (unit tests): then a local run's supervisor runs
 * inside the launching process and there is no watchdog.
 */
export function binPath(): string | null {
  return bin;
}
