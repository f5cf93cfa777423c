/**
 * Whose a checkpoint is, by the time it was written: every run of a preset writes into one output folder, so
 * the folder says nothing. A run owns what was written while one of its steps ran (from the step's start to
 * its end, a clock's slack either side); a step that never started (refused by the checks, never reached)
 * owns nothing. Anything else in a run's output folders is another run's (the runs of the same directory whose
 * steps were writing into that folder then) or unknown (no run of the directory was training then).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRecord } from '../records/index.js';
import { findCheckpoints, outputRoots, type FoundCheckpoint } from './find.js';

/** Slack either side of a step's recorded times (file systems keep mtimes to 1-2 s on some mounts). */
export const CLOCK_SLACK_MS = 2_000;

/** A time window in ms since the epoch. */
export interface TimeWindow {
  from: number;
  to: number;
}

/** A checkpoint of a run's output folders that the run did not write. */
export interface ForeignCheckpoint {
  path: string;
  /** When it was last written (ISO 8601). */
  writtenAt: string;
  /** The runs whose steps were writing into its folder then; empty: unknown. */
  owners: string[];
}

/** The step args after `launch`, as the output folders are read from. */
function stepArgs(argv: readonly string[]): readonly string[] {
  return argv[0] === 'launch' ? argv.slice(1) : argv;
}

/** The modification time of a file, or null when it is gone. */
function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** When a step without a recorded end last did something: its log's last write, else its start. */
function lastSignOfLife(rec: RunRecord, index: number, from: number): number {
  const step = rec.json.steps[index]!;
  const log = mtimeOf(join(rec.dir, step.log));
  return Math.max(from, log ?? from);
}

/**
 * When each step of a run ran; null for a step that never started (refused, or never reached). A step without
 * its own times (a record of an older zerowiz) takes the run's; a step whose end was never recorded ends now
 * while the run goes, else at its log's last write (its supervisor was killed).
 */
export function stepWindows(rec: RunRecord, now = Date.now()): (TimeWindow | null)[] {
  const j = rec.json;
  return j.steps.map((s, i) => {
    if (s.refused || s.status === 'pending') return null;
    const start = Date.parse(s.startedAt ?? j.startedAt);
    if (!Number.isFinite(start)) return null;
    const endText = s.endedAt ?? (s.startedAt === null ? j.endedAt : null);
    const end = endText !== null ? Date.parse(endText) : j.ended === 'running' ? now : lastSignOfLife(rec, i, start);
    return { from: start - CLOCK_SLACK_MS, to: (Number.isFinite(end) ? end : start) + CLOCK_SLACK_MS };
  });
}

/** Whether `t` falls in a window. */
function within(w: TimeWindow | null, t: number): boolean {
  return w !== null && t >= w.from && t <= w.to;
}

/** The step of `rec` that was writing into `root` at `t`, or null. */
export function writingStep(rec: RunRecord, root: string, t: number, now = Date.now()): number | null {
  const windows = stepWindows(rec, now);
  const i = rec.json.steps.findIndex(
    (s, k) => within(windows[k] ?? null, t) && outputRoots(stepArgs(s.argv), rec.json.cwd).includes(root),
  );
  return i < 0 ? null : i;
}

/** A checkpoint found in one of a run's output folders, with the step whose folder it is in and its mtime. */
export interface ScannedCheckpoint {
  found: FoundCheckpoint;
  root: string;
  /** Its newest modification time (a folder: of its files, two levels down). */
  mtimeMs: number;
}

/** Every checkpoint in the output folders of a run's steps (each once), with its newest mtime. */
export function scanOutputFolders(rec: RunRecord, newest: (path: string) => number | null): ScannedCheckpoint[] {
  const out: ScannedCheckpoint[] = [];
  const seen = new Set<string>();
  for (const s of rec.json.steps) {
    for (const root of outputRoots(stepArgs(s.argv), rec.json.cwd)) {
      for (const c of findCheckpoints(root)) {
        const m = newest(c.path);
        if (seen.has(c.path) || m === null) continue;
        seen.add(c.path);
        out.push({ found: c, root, mtimeMs: m });
      }
    }
  }
  return out;
}

/** The other runs whose steps were writing into `root` at `t` (their ids). */
export function ownersOf(root: string, t: number, others: readonly RunRecord[], now = Date.now()): string[] {
  return others.filter((o) => writingStep(o, root, t, now) !== null).map((o) => o.json.id);
}
