/**
 * What is known of every kind of run without loading it: how to check its block of run.json (a damaged Slurm
 * block makes its record damaged, named and skipped like any other), and the checkpoint guard's blocks. Every
 * reader of records passes it.
 */
import type { RunJson } from '../records/index.js';
import { slurmBlockProblem } from '../slurm/index.js';
import { checkpointBlocksProblem } from '../checkpoints/index.js';

/**
 * Why a record's blocks of other parts are damaged (a kind's `slurm.shape.nodes: ...`, the checkpoint guard's
 * `topologyWarnings.0: ...`), or null (the blocks then as their schemas read them).
 */
export function kindBlockProblem(json: RunJson): string | null {
  return slurmBlockProblem(json) ?? checkpointBlocksProblem(json as unknown as Record<string, unknown>);
}
