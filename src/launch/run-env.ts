/**
 * The environment variables that mark a run's processes, apart from the watchdog that reads them (./watchdog.ts) so
 * that whoever only needs the names (a stop of an orphaned run, the runner) does not load the watchdog.
 */

/** The environment variable every step gets: its run's record directory (absolute). */
export const RUN_DIR_ENV = 'ZEROWIZ_RUN_DIR';
/**
 * The variable a run's helper processes get (the GPU telemetry's nvidia-smi): the record directory, under
 * another name than the steps', so the finisher never counts a helper as a step.
 */
export const HELPER_OF_ENV = 'ZEROWIZ_HELPER_OF';
