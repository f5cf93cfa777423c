/** The work of `zerowiz check`: load the setup, run the checks (src/checks/), print them. */
import { hostname } from 'node:os';
import { UsageError } from '../text/index.js';
import { loadPreset } from '../setups/index.js';
import { pathFlag } from '../fs/index.js';
import { parseInteger } from '../text/index.js';
import type { PassFilter } from '../checks/index.js';
import { nodeCheckLine, nodeDoneLine, reportLines } from '../checks/index.js';
import { runChecks } from '../checks/index.js';
import { checksJson, failures, skipChecks, skipReasons } from '../checks/index.js';
import * as output from './output.js';

/** Raw flag values as commander hands them over. */
export interface CheckFlags {
  json?: boolean;
  skipCheck?: string[];
  speedTest?: boolean;
  accelerate?: string;
  pass?: string;
  port?: string;
  machineRank?: string;
  nodeReport?: boolean;
  fresh?: boolean;
}

/** `--pass N|NAME` as a filter over the setup's passes. */
export function passFilter(value: string | undefined, steps: readonly { name: string }[]): PassFilter {
  if (value === undefined) return { kind: 'all' };
  const byName = steps.findIndex((s) => s.name === value);
  if (byName >= 0) return { kind: 'one', index: byName };
  if (/^\d+$/.test(value.trim())) {
    const n = parseInteger(value, '--pass', 1, Math.max(1, steps.length));
    return { kind: 'one', index: n - 1 };
  }
  throw new UsageError(
    `--pass: the setup has no pass '${value}'`,
    `its passes are: ${steps.map((s, i) => `${i + 1} (${s.name})`).join(', ') || 'none'}`,
  );
}

/** `--machine-rank N`: a rank of the setup's machines (0 to num_machines - 1). */
function machineRankOf(value: string, machines: number): number {
  const n = parseInteger(value, '--machine-rank', 0);
  if (n >= machines)
    throw new UsageError(
      `--machine-rank ${n} is beyond the setup's ${machines} machine(s) (num_machines ${machines})`,
      machines === 1
        ? 'a one-machine setup has only rank 0: leave --machine-rank out'
        : `give a rank from 0 to ${machines - 1}`,
    );
  return n;
}

/** `zerowiz check`. Returns the exit code (0); a failed check is a UsageError after the report (exit 2). */
export async function checkCommand(ref: string, flags: CheckFlags): Promise<number> {
  const skip = skipChecks(flags.skipCheck ?? [], flags.speedTest !== false);
  const skipWhy = skipReasons(flags.skipCheck ?? [], flags.speedTest !== false);
  const setup = await loadPreset(ref);
  const filter = passFilter(flags.pass, setup.steps);
  const report = await runChecks(setup, {
    skip,
    skipWhy,
    filter,
    accelerate: flags.accelerate === undefined ? undefined : pathFlag('--accelerate', flags.accelerate),
    port: flags.port === undefined ? undefined : parseInteger(flags.port, '--port', 1, 65535),
    machineRank:
      flags.machineRank === undefined ? undefined : machineRankOf(flags.machineRank, setup.answers.num_machines),
    fresh: flags.fresh,
  });
  const { plan, results } = report;
  if (flags.nodeReport) {
    // Slurm names its node (several slurmd can share a host); else the host's short name.
    const host = process.env.SLURMD_NODENAME || (hostname().split('.')[0] ?? 'localhost');
    // One write: srun relays it whole, so two nodes' lines never interleave.
    output.lines([...results.map((r) => nodeCheckLine(host, r)), nodeDoneLine(host, results)]);
  } else if (flags.json) output.json(checksJson(results));
  else output.lines(reportLines(plan, results));
  const bad = failures(results);
  if (bad.length > 0)
    throw new UsageError(
      `${bad.length} check(s) failed: ${bad.map((r) => r.id).join(', ')}`,
      `fix them in the order shown (each FAIL has its fix: line), or skip one you accept with --skip-check ID`,
    );
  return 0;
}
