/**
 * A run record's checkpoints: what the watcher judged while the run went (run.json `checkpoints`, kept by
 * recordCheckpoints), or, for a record without them (an older zerowiz, a run the watcher did not follow), what
 * the steps' output folders hold from the run's own time, verified now. `zerowiz runs` shows them:
 * `runs --json` as `checkpoints: [{path, verdict: "ok"|"bad", reason}]`.
 *
 * run.json gains (read back through checkpointsJsonSchema; run.json's own schema is loose, so older readers
 * keep the key untouched):
 *
 *   "checkpoints": [{"path", "kind", "step", "verdict", "reason", "cause", "bytes", "mtimeMs", "verifiedAt",
 *                    "hasWeights", "deepspeed": {"tag", "stage": 3 | "1-2" | null, "worldSize", "bf16"} | null}]
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { modelCatalogOrNone } from '../estimate/index.js';
import { formatUtcMinute, printable } from '../text/index.js';
import { readRecordSetup, type RunRecord } from '../records/index.js';
import { expectationOf, NO_EXPECTATION, type Expectation } from './expect.js';
import { checkpointOrder, describeCheckpoint, verifyFound, type FoundCheckpoint } from './find.js';
import { ownersOf, scanOutputFolders, stepWindows, writingStep, type ForeignCheckpoint } from './attribution.js';
import type { RecordedVerdict } from './watch.js';

/** One checkpoint of a run as `runs --json` prints it. */
export interface RunCheckpoint {
  path: string;
  verdict: 'ok' | 'bad';
  reason: string;
}

/** Schema of one stored verdict (run.json `checkpoints[]`). */
export const checkpointJsonSchema = z.object({
  path: z.string(),
  kind: z.enum(['weights', 'deepspeed', 'hf-checkpoint', 'accelerate-checkpoint']),
  step: z.int().check(z.nonnegative()),
  verdict: z.enum(['ok', 'bad']),
  reason: z.string(),
  cause: z.nullable(z.string()),
  bytes: z.int().check(z.nonnegative()),
  mtimeMs: z.number(),
  verifiedAt: z.string(),
  hasWeights: z.boolean(),
  deepspeed: z.optional(
    z.nullable(
      z.object({
        tag: z.string(),
        stage: z.nullable(z.union([z.literal(3), z.literal('1-2')])),
        worldSize: z.int().check(z.nonnegative()),
        bf16: z.boolean(),
      }),
    ),
  ),
});
/** Schema of run.json's `checkpoints`. */
export const checkpointsJsonSchema = z.array(checkpointJsonSchema);
/** One stored verdict. */
export type CheckpointJson = z.infer<typeof checkpointJsonSchema>;

/** A verdict as run.json keeps it. */
export function checkpointJson(v: RecordedVerdict): CheckpointJson {
  return {
    path: v.path,
    kind: v.kind,
    step: v.step,
    verdict: v.verdict,
    reason: v.reason,
    cause: v.cause,
    bytes: v.bytes,
    mtimeMs: v.mtimeMs,
    verifiedAt: new Date(v.verifiedAt).toISOString(),
    hasWeights: v.hasWeights,
    deepspeed: v.deepspeed ?? null,
  };
}

/** Puts the watcher's verdicts into the record (the caller saves run.json). */
export function recordCheckpoints(rec: RunRecord, verdicts: readonly RecordedVerdict[]): void {
  rec.json.checkpoints = verdicts.map(checkpointJson);
}

/** The stored verdicts of a record, or null when it has none (or they do not read). */
export function storedCheckpoints(rec: RunRecord): CheckpointJson[] | null {
  const raw: unknown = rec.json.checkpoints;
  if (raw === undefined) return null;
  const parsed = z.safeParse(checkpointsJsonSchema, raw);
  return parsed.success ? parsed.data : null;
}

/** A stored verdict checked against the disk now: a checkpoint deleted or rewritten since is no longer the run's. */
function stillThere(c: CheckpointJson): RunCheckpoint {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(c.path);
  } catch {
    return {
      path: c.path,
      verdict: 'bad',
      reason: `no longer there (deleted since ${c.verifiedAt}); it was: ${c.reason}`,
    };
  }
  if (st.isFile() && (st.size !== c.bytes || Math.abs(st.mtimeMs - c.mtimeMs) > 1))
    return {
      path: c.path,
      verdict: 'bad',
      reason: `changed since the run saved it (now ${st.size} bytes, modified ${new Date(st.mtimeMs).toISOString()}): it is no longer this run's checkpoint`,
    };
  return { path: c.path, verdict: c.verdict, reason: c.reason };
}

/** What each step of a record should have saved (nothing known when its setup does not read back). */
function expectations(rec: RunRecord): Expectation[] {
  try {
    const setup = readRecordSetup(rec);
    const models = modelCatalogOrNone();
    return rec.json.steps.map((_, i) => expectationOf(setup, i, models));
  } catch {
    return rec.json.steps.map(() => NO_EXPECTATION);
  }
}

/** The newest modification time of a file, or of a folder and its entries two levels down; null when gone. */
function newestMtime(path: string): number | null {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  const walk = (dir: string, depth: number) => {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {}
    for (const n of names) {
      try {
        const s = statSync(join(dir, n));
        newest = Math.max(newest, s.mtimeMs);
        if (s.isDirectory() && depth < 2) walk(join(dir, n), depth + 1);
      } catch {}
    }
  };
  walk(path, 1);
  return newest;
}

/** A run's own checkpoints from its output folders: those written while one of its steps ran. */
function scanRun(rec: RunRecord, now: number): { found: FoundCheckpoint; step: number }[] {
  return scanOutputFolders(rec, newestMtime).flatMap((c) => {
    const step = writingStep(rec, c.root, c.mtimeMs, now);
    return step === null ? [] : [{ found: c.found, step }];
  });
}

/** Whether a stored verdict is still the run's: written while one of its steps ran. */
function ownStored(rec: RunRecord, c: CheckpointJson, now: number): boolean {
  const windows = stepWindows(rec, now);
  return windows.some((w) => w !== null && c.mtimeMs >= w.from && c.mtimeMs <= w.to);
}

/**
 * A run's checkpoints as candidates (for `export weights`), oldest first: the stored ones still on disk, else
 * those the steps' output folders hold from the run's time; each with what the step should have saved.
 */
export function runCheckpointCandidates(
  rec: RunRecord,
  now = Date.now(),
): { found: FoundCheckpoint; expect: Expectation }[] {
  const expects = expectations(rec);
  const stored = storedCheckpoints(rec);
  const list =
    stored !== null
      ? stored
          .filter((c) => newestMtime(c.path) !== null && ownStored(rec, c, now))
          .map((c) => ({ found: describeCheckpoint(c.path, c.kind), step: c.step }))
      : scanRun(rec, now);
  return list
    .sort((a, b) => checkpointOrder(a.found, b.found))
    .map((x) => ({ found: x.found, expect: expects[x.step] ?? NO_EXPECTATION }));
}

/**
 * The checkpoints of a run, oldest first, as `runs --json` prints them: the stored verdicts (checked to be
 * still there), else the steps' output folders read now for checkpoints of the run's own time.
 */
export function checkpointsOf(rec: RunRecord, now = Date.now()): RunCheckpoint[] {
  const stored = storedCheckpoints(rec);
  if (stored !== null) return stored.filter((c) => ownStored(rec, c, now)).map(stillThere);
  const expects = expectations(rec);
  return scanRun(rec, now).map(({ found, step }) => {
    const v = verifyFound(found, expects[step] ?? NO_EXPECTATION);
    return { path: v.path, verdict: v.verdict, reason: v.reason };
  });
}

/** Lines for `zerowiz runs` under a run's row: one per checkpoint, paths relative to `cwd`. */
export function formatCheckpointLines(items: readonly RunCheckpoint[], cwd = process.cwd()): string[] {
  return items.map((c) => {
    const rel = relative(cwd, c.path);
    const path = rel.startsWith('..') ? c.path : rel;
    return printable(c.verdict === 'ok' ? `  checkpoint ${path} ok` : `  checkpoint ${path} BAD: ${c.reason}`);
  });
}

/**
 * The checkpoints in a run's output folders that the run did not write, oldest first, each with the runs of
 * `others` (the same directory's) that were writing into that folder then; none: unknown.
 */
export function foreignCheckpointsOf(
  rec: RunRecord,
  others: readonly RunRecord[],
  now = Date.now(),
): ForeignCheckpoint[] {
  const own = new Set(checkpointsOf(rec, now).map((c) => c.path));
  const rest = others.filter((o) => o.json.id !== rec.json.id);
  return scanOutputFolders(rec, newestMtime)
    .filter((c) => !own.has(c.found.path) && writingStep(rec, c.root, c.mtimeMs, now) === null)
    .sort((a, b) => a.mtimeMs - b.mtimeMs || a.found.path.localeCompare(b.found.path))
    .map((c) => ({
      path: c.found.path,
      writtenAt: new Date(c.mtimeMs).toISOString(),
      owners: ownersOf(c.root, c.mtimeMs, rest, now),
    }));
}

/** Lines for `zerowiz runs` under a run's own checkpoints: the others in its folders, and whose they are. */
export function formatForeignLines(items: readonly ForeignCheckpoint[], cwd = process.cwd()): string[] {
  return items.map((c) => {
    const rel = relative(cwd, c.path);
    const path = rel.startsWith('..') ? c.path : rel;
    const when = formatUtcMinute(Date.parse(c.writtenAt));
    const whose =
      c.owners.length === 0
        ? `written ${when} while no run here was training: unknown`
        : `written ${when} by run ${c.owners.join(' or run ')}`;
    return printable(`  not this run's: ${path} (${whose})`);
  });
}
