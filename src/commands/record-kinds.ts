/**
 * What is known of every kind of run without loading it: how to check its block of run.json (a damaged Slurm
 * block makes its record damaged, named and skipped like any other). Every reader of records passes it.
 */
import type { RunJson } from '../records/index.js';
import { slurmBlockProblem } from '../slurm/index.js';

/** Why a record's kind-specific block is damaged (`slurm.shape.nodes: ...`), or null (the block then as its schema reads it). */
export function kindBlockProblem(json: RunJson): string | null {
  return slurmBlockProblem(json);
}
