/**
 * What the bin tells the launch at start-up, in a module small enough for the entry to import: where the
 * bin is (the watchdog runs its finisher with it) and the argument that selects the finisher.
 */

/** The argument that makes the bin run the watchdog's finisher instead of the CLI. */
export const WATCHDOG_ARG = '__zerowiz-watchdog';

let bin: string | null = null;

/** Called by the bin with its own path. */
export function setBinPath(path: string): void {
  bin = path;
}

/** The bin's path; null when zerowiz runs from its sources (unit tests): then there is no watchdog. */
export function binPath(): string | null {
  return bin;
}
