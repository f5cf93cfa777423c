/**
 * THE watch of a run, as its supervisor (which raises the alerts the record keeps) and each viewer (which shows
 * them, or raises its own for a kind without a supervisor) build it: one step watch per command, and the alerts'
 * context from the setup and its estimate. One builder, so a viewer's alerts read what the supervisor's read.
 */
import type { PreparedCommand, Setup } from '../config/index.js';
import { type AlertContext, RunWatch, type RunWatchOptions, watchStepOf } from '../observe/index.js';
import type { LaunchEstimate } from '../rules/index.js';

/** The run a watch is for: its setup, its commands and where they run. */
export interface WatchedRun {
  setup: Setup;
  commands: readonly PreparedCommand[];
  cwd: string;
}

/** What the alerts' fixes know of a run: its precision, and what would fit by the estimate. */
export function alertContextOf(setup: Setup, estimate: LaunchEstimate | null): AlertContext {
  return {
    precision: setup.answers?.mixed_precision ?? null,
    whatFits: estimate?.whatFits,
    hostWhatFits: estimate?.hostWhatFits,
    freePort: null,
  };
}

/**
 * The watch of `run`'s steps, its alerts' fixes from `alertContext` (alertContextOf: a live object, the supervisor
 * sets its free port when a step starts).
 */
export function watchOfRun(
  run: WatchedRun,
  alertContext: AlertContext,
  opts: Omit<RunWatchOptions, 'steps' | 'alertContext'>,
): RunWatch {
  return new RunWatch({
    steps: run.commands.map((_, i) => watchStepOf(run.setup, run.commands, run.cwd, i)),
    alertContext,
    ...opts,
  });
}
