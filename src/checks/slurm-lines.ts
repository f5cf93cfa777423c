/**
 * The checks as the first command of each pass of a Slurm job, on the nodes that run it: the lines the sbatch
 * script gains before a pass's `srun ... accelerate launch` (src/slurm/script.ts integrates them). One srun
 * task per node runs `zerowiz check SETUP --pass K --port "$MAIN_PORT" --machine-rank "$SLURM_NODEID"
 * --node-report` with the node runtime and zerowiz's bin the login node used (absolute paths on the shared
 * file system), printing one `zerowiz-check NODE STATUS ID: ...` line per check into the pass's log (which
 * the pane shows, and whose FAIL lines raise the `check-failed` alert). A FAIL ends the job before the pass
 * starts, with the reason in the job's output; a node without the node runtime or zerowiz (exit 126/127)
 * says so and the pass starts unchecked. srun runs it without -u: its output is then relayed a whole line at a
 * time per task, so the two nodes' lines never interleave inside a line (with -u they did). Each task's stderr
 * joins its stdout on the node; srun's own stderr ("task 0: Exited with exit code 2") goes to the job's output,
 * never into the log: written to the same file it landed inside a node's FAIL line, cutting its fix off.
 */
import { shellWord } from '../text/index.js';
import type { CheckId } from './types.js';

/** What one pass's check needs from the job script. */
export interface NodeCheckSpec {
  /** The pass, from 1, of `total`, and its name. */
  k: number;
  total: number;
  name: string;
  /**
   * The pass's log as shell text, exactly as the pass's own redirection names it (`"$LOG_DIR"/01-train.log`,
   * or with the job id for a script submitted by hand); the pass then appends to it (`>>`).
   */
  logPath: string;
  /** Checks left out on the nodes (the user's --skip-check; the NVMe speed test is the job's to choose). */
  skip: readonly CheckId[];
}

/** The variables the job script sets once, before the passes (absolute paths as the nodes see them). */
export function nodeCheckPreamble(p: { node: string; bin: string; setupFile: string; accelerate?: string }): string[] {
  return [
    `ZEROWIZ_NODE=${shellWord(p.node)}`,
    `ZEROWIZ_BIN=${shellWord(p.bin)}`,
    `ZEROWIZ_SETUP=${shellWord(p.setupFile)}`,
    // The accelerate the passes run (srun passes the environment on): the checks ask its Python.
    ...(p.accelerate ? [`export ZEROWIZ_ACCELERATE=${shellWord(p.accelerate)}`] : []),
  ];
}

/**
 * The lines before pass k (after `MAIN_PORT=$(zw_free_port)`): the check on every node, then the end of the
 * job when one failed. $SLURM_NODEID is expanded by each task (inside single quotes), as for the launch.
 */
export function nodeCheckLines(s: NodeCheckSpec): string[] {
  const skips = s.skip.map((id) => ` --skip-check ${id}`).join('');
  const log = s.logPath;
  return [
    `# the checks of pass ${s.k}/${s.total} on every node (zerowiz check --node-report), into the pass's log`,
    `srun --ntasks-per-node=1 --kill-on-bad-exit=0 bash -c 'exec "$0" "$1" check "$2" --pass "$3" --port "$4" --machine-rank "$SLURM_NODEID" --node-report${skips} 2>&1' "$ZEROWIZ_NODE" "$ZEROWIZ_BIN" "$ZEROWIZ_SETUP" ${s.k} "$MAIN_PORT" > ${log}`,
    'rc=$?',
    'if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then',
    `  echo "zerowiz: pass ${s.k}/${s.total} ${s.name}: the nodes cannot run zerowiz's checks (exit $rc: no $ZEROWIZ_NODE or $ZEROWIZ_BIN there); the pass starts unchecked"`,
    'elif [ "$rc" -ne 0 ]; then',
    `  echo "zerowiz: pass ${s.k}/${s.total} ${s.name}: the checks on the nodes failed (exit $rc); the pass does not start: $(grep -h '^zerowiz-check .* FAIL ' ${log} | head -n 3 | cut -c 15-200 | paste -sd ';' -)"`,
    `  zw_mark ${s.k} exit "$rc"`,
    '  exit "$rc"',
    'fi',
  ];
}
