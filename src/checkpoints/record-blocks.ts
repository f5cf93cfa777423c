/**
 * What the checkpoint guard adds to run.json, as part of the record's schema: `checkpoints` (each verdict the
 * watcher gave while the run went), `topology` (what the run's checkpoints are written with) and
 * `topologyWarnings` (a relaunch over checkpoints of another topology that went on without asking). The record
 * module knows none of them: this module adds them to its RunJson type (module augmentation, as a run kind adds
 * its block) and checks them when a record is read (checkpointBlocksProblem, passed with the kinds' checks by
 * every reader of records).
 */
import * as z from 'zod/mini';
import '../text/zod.js';
import { printable } from '../text/index.js';
import { checkpointsJsonSchema, type CheckpointJson } from './runs.js';
import { topologyJsonSchema, topologyWarningsJsonSchema } from './topology.js';

/** run.json `topology`: the run's topology and when it was captured. */
export type TopologyJson = z.infer<typeof topologyJsonSchema>;
/** run.json `topologyWarnings`: the checkpoints a relaunch went on over, with the warning it kept. */
export type TopologyWarningsJson = z.infer<typeof topologyWarningsJsonSchema>;

declare module '../records/record.js' {
  interface RunJsonBlocks {
    /** Each checkpoint the run saved, as the watcher judged it while the run went. */
    checkpoints?: CheckpointJson[];
    /** What the run's checkpoints are written with (stage, offload, processes, precision, versions). */
    topology?: TopologyJson;
    /** A relaunch over checkpoints of another topology that went on without asking. */
    topologyWarnings?: TopologyWarningsJson;
  }
}

const BLOCKS = [
  ['checkpoints', checkpointsJsonSchema],
  ['topology', topologyJsonSchema],
  ['topologyWarnings', topologyWarningsJsonSchema],
] as const;

/**
 * Why one of the checkpoint guard's blocks of a record is damaged (`topologyWarnings.0.warning: ...`), or null.
 * A whole block is replaced by what its schema read, the warnings' text escaped for the terminal.
 */
export function checkpointBlocksProblem(json: Record<string, unknown>): string | null {
  for (const [key, schema] of BLOCKS) {
    if (json[key] === undefined) continue;
    const r = z.safeParse(schema as z.ZodMiniType, json[key]);
    if (!r.success) {
      const i = r.error.issues[0];
      return `${key}${i?.path.length ? `.${i.path.map(String).join('.')}` : ''}: ${i?.message ?? 'damaged'}`;
    }
    json[key] = r.data;
  }
  const warnings = json.topologyWarnings as TopologyWarningsJson | undefined;
  if (warnings)
    json.topologyWarnings = warnings.map((w) => ({
      checkpoint: printable(w.checkpoint),
      warning: printable(w.warning),
    }));
  return null;
}
