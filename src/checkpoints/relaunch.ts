/**
 * A relaunch over checkpoints written with another topology (./topology.ts finds them): the ways forward as
 * one choice, and what each makes of the launch. `convert` puts DeepSpeed's `ds_to_universal` before the
 * passes as a pipeline step of its own (run by the user's accelerate, so by the Python and DeepSpeed it
 * installed) and resumes with `"checkpoint": {"load_universal": true}`; `weights` runs `zero_to_fp32` as the
 * whole run (the weights, to start fresh from); `fresh` moves the old states aside before the run (nothing
 * is deleted); `go-on` launches as it is and keeps the warning in the run record. The command line asks on
 * a terminal (src/commands/topology-offer.ts); without one it goes on unless `--on-topology-change` says.
 */
import type { LaunchStep, Setup } from '../config/index.js';
import { listRunRecords, type RecordCheck } from '../records/index.js';
import {
  type ExtraStep,
  pythonOfAccelerate,
  relaunchTopologyChecks,
  type TopologyCheck,
  topologyOfSetup,
  withLoadUniversal,
} from './topology.js';

export { isTopologyChoice, TOPOLOGY_CHOICE_TEXT, TOPOLOGY_CHOICES, type TopologyChoice } from './choices.js';
import type { TopologyChoice } from './choices.js';

/**
 * The checkpoints a relaunch of `setup` in `cwd` would resume from that were written with another topology
 * (the setup's topology against the run records of `cwd` and the checkpoints' own files). `blockProblem` checks
 * each record's kind-specific block, as every reader of records does (commands/run-kinds.ts).
 */
export function relaunchChecks(
  setup: Setup,
  cwd: string,
  acceleratePath: string | null,
  blockProblem: RecordCheck,
): TopologyCheck[] {
  const py = acceleratePath ? pythonOfAccelerate(acceleratePath) : null;
  const python = py && 'python' in py ? py.python : null;
  let records: ReturnType<typeof listRunRecords>['records'] = [];
  try {
    records = listRunRecords(cwd, blockProblem).records;
  } catch {}
  try {
    return relaunchTopologyChecks(
      setup,
      cwd,
      { ...topologyOfSetup(setup), versions: null, versionsProblem: null },
      python,
      records,
    );
  } catch {
    return [];
  }
}

/** Flags that make `accelerate launch` run one plain process, whatever its default config says. */
const ONE_PROCESS = [
  '--num_processes',
  '1',
  '--num_machines',
  '1',
  '--mixed_precision',
  'no',
  '--dynamo_backend',
  'no',
];

/**
 * An extra step (`python -m MODULE ARGS`) as a pipeline step: `accelerate launch ... -m MODULE ARGS`, one
 * process, no config: the Python of the user's accelerate runs the module of the user's DeepSpeed.
 */
export function extraLaunchStep(x: ExtraStep): LaunchStep {
  const m = x.argv.indexOf('-m');
  const rest = m >= 0 ? x.argv.slice(m) : x.argv.slice(1);
  return { name: x.name, args: [...ONE_PROCESS, ...rest], usesConfig: false };
}

/** What a choice makes of a launch. */
export interface TopologyPlan {
  /** The setup to launch (extra steps first; load_universal for convert; only the extra steps for weights). */
  setup: Setup;
  /** What to move aside before the run (fresh). */
  setAside: string[];
  /** The warnings the run record keeps (go-on). */
  warnings: { checkpoint: string; warning: string }[];
  /** What to tell the user the launch does now. */
  said: string[];
}

/** The launch after `choice` for these checks (none: the setup unchanged). */
export function applyTopologyChoice(
  setup: Setup,
  checks: readonly TopologyCheck[],
  choice: TopologyChoice,
): TopologyPlan {
  const none: TopologyPlan = { setup, setAside: [], warnings: [], said: [] };
  if (checks.length === 0) return none;
  const names = checks.map((c) => c.checkpoint).join(', ');
  switch (choice) {
    case 'convert': {
      const extra = checks.flatMap((c) => c.universal).map(extraLaunchStep);
      const named = uniqueNames(extra, setup.steps);
      return {
        ...none,
        setup: { ...withLoadUniversal(setup), steps: [...named, ...setup.steps] },
        said: [
          `converting ${names} to a Universal Checkpoint first (${named.map((s) => s.name).join(', ')}), then resuming with "checkpoint": {"load_universal": true}`,
        ],
      };
    }
    case 'weights': {
      const extra = uniqueNames(
        checks.map((c) => extraLaunchStep(c.fp32)),
        [],
      );
      return {
        ...none,
        setup: { ...setup, steps: extra },
        said: [
          `this run only consolidates the weights of ${names} (${checks.map((c) => `${c.checkpoint}_fp32`).join(', ')}); the passes do not run: start fresh from those weights (--on-topology-change fresh sets the old states aside)`,
        ],
      };
    }
    case 'fresh': {
      const paths = [...new Set(checks.flatMap((c) => c.fresh))];
      return { ...none, setAside: paths, said: [`starting fresh: the old checkpoints of ${names} are moved aside`] };
    }
    case 'go-on':
      return {
        ...none,
        warnings: checks.map((c) => ({ checkpoint: c.checkpoint, warning: c.warning })),
        said: [`going on as it is: the run record keeps the warning`],
      };
  }
}

/** Extra steps named so that no two steps of the run share a name (their logs are named after them). */
function uniqueNames(extra: readonly LaunchStep[], after: readonly LaunchStep[]): LaunchStep[] {
  const taken = new Set(after.map((s) => s.name));
  return extra.map((s) => {
    let name = s.name;
    for (let k = 2; taken.has(name); k++) name = `${s.name}_${k}`;
    taken.add(name);
    return { ...s, name };
  });
}
