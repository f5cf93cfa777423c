/**
 * Where a launch's notifications go: the user's ZEROWIZ_NOTIFY, the preset's `notify:` list and each
 * `--notify TARGET`, each target once, checked here (one line and a hint for a bad one, before anything
 * runs). They travel to the run's supervisor (or a Slurm job) in ZEROWIZ_NOTIFY, never in a file.
 */
import {
  NOTIFY_ENV,
  envTextOf,
  parseTarget,
  targetsFromEnv,
  uniqueTargets,
  type NotifyTarget,
  type TargetSpec,
} from '../notify/index.js';
import type { RunRecord } from '../records/index.js';
import * as output from './output.js';

/** The targets of a launch, in the order: environment, preset, flags. Throws UsageError for a bad one. */
export function launchTargets(
  flags: { notify?: string[] },
  preset: { name: string; notify: readonly TargetSpec[] } | null,
  env: NodeJS.ProcessEnv,
): NotifyTarget[] {
  const fromPreset = (preset?.notify ?? []).map((s, i) => parseTarget(s, `preset ${preset!.name}: notify.${i}`));
  const fromFlags = (flags.notify ?? []).map((s) => parseTarget(s, '--notify'));
  return uniqueTargets([...targetsFromEnv(env), ...fromPreset, ...fromFlags]);
}

/**
 * Puts the targets where the run's supervisor and a Slurm job find them (this process's ZEROWIZ_NOTIFY, which
 * every launch hands on), and says where notifications go; for --last of a run that notified targets while
 * none are given now, says why they are not sent to again.
 */
export function handOnTargets(targets: readonly NotifyTarget[], rerun: RunRecord | null): void {
  if (targets.length === 0) {
    delete process.env[NOTIFY_ENV];
    const before = (rerun?.json as { notify?: { targets?: unknown[] } } | undefined)?.notify?.targets?.length ?? 0;
    if (before > 0)
      output.note(
        `the run rerun here notified ${before} target(s); targets are not kept in a record (a URL may hold a secret): give --notify again, or set ${NOTIFY_ENV}`,
      );
    return;
  }
  process.env[NOTIFY_ENV] = envTextOf(targets);
  output.note(`notifications go to ${targets.map((t) => t.label).join(', ')}`);
}
