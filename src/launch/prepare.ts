/**
 * The checks every way into a run makes before anything is written or started (the launch entry,
 * ./entry.ts, and a Slurm job's plan, src/slurm/launch.ts): the setup's rules and its steps' (as the
 * wizard's review checks them, against accelerate's default config), accelerate, the training scripts.
 * Errors are one UsageError with the fix, which runs as printed.
 */
import { launchSkips, skipReasons } from '../checks/index.js';
import { readAccelerateConfigSummary } from '../config/index.js';
import { type LaunchSource, type Setup, sourcePreset } from '../config/index.js';
import type { StepFinding } from '../rules/index.js';
import { stepFindings } from '../rules/index.js';
import { fileFindings, validate } from '../rules/index.js';
import { formatFinding, type Finding } from '../config/index.js';
import { estimateLines as setupEstimateLines, launchEstimate, measuredFindings } from '../rules/index.js';
import { loadMeasuredRuns } from '../records/index.js';
import { UsageError } from '../text/index.js';
import { accelerateDefaultConfig } from '../fs/index.js';
import type { LaunchOptions, PreparedLaunch } from './kind.js';
import { missingScripts, prepareCommands } from '../config/index.js';
import { resolveAccelerate, type AccelerateExe } from '../proc/index.js';
import { secretEnv, shellWord } from '../text/index.js';

/** Findings as lines for the terminal. */
export function formatFindings(findings: readonly Finding[]): string[] {
  return findings.map(formatFinding);
}

/**
 * The findings a launch checks, the same as the wizard's review: the setup's rules, and its steps' (the
 * script, the cache path, a step without --config_file against accelerate's default config: the
 * DiffSynth-Studio#1107 trap). A missing script is left to checkRunnable, which says it in the launch's words.
 */
export function launchFindings(setup: Setup, cwd: string, env: NodeJS.ProcessEnv): (Finding | StepFinding)[] {
  return [...validate(setup), ...stepLaunchFindings(setup, cwd, env)];
}

/** The steps' findings of a launch (launchFindings less the setup's own rules). */
export function stepLaunchFindings(setup: Setup, cwd: string, env: NodeJS.ProcessEnv): StepFinding[] {
  const defaultConfig = readAccelerateConfigSummary(accelerateDefaultConfig(env), cwd);
  return stepFindings(setup, { cwd, defaultConfig, gpuCount: null }).filter((f) => f.rule !== 'step-script-missing');
}

/**
 * The command that runs a launch again with one step pinned (`--pin-step NAME` added): from what was launched,
 * as typed (a preset name or file, `--last`); null for the wizard's launch (its steps screen pins).
 */
export function launchAgainPinned(source: LaunchSource): ((pin: string) => string) | null {
  switch (source.kind) {
    case 'wizard':
      // The wizard pins in its steps screen (invalidSetup's wizard hint).
      return null;
    case 'last':
      return (pin) => `zerowiz launch --last --pin-step ${shellWord(pin)}`;
    case 'preset':
      return (pin) => `zerowiz launch ${shellWord(source.ref)} --pin-step ${shellWord(pin)}`;
  }
}

/**
 * The UsageError for a setup's first error: its message and fix (the hint runs as printed). `again` is the
 * command that reruns what was asked with a step pinned (a launch's, an export's), when a pin is the fix.
 */
export function invalidSetup(
  setup: Setup,
  errors: readonly Finding[],
  again: ((pin: string) => string) | null = null,
): UsageError {
  const first = errors[0]!;
  const step = (first as StepFinding).fixAction;
  const pin = step?.kind === 'pinConfig' ? setup.steps[step.step]?.name : undefined;
  const command = pin !== undefined && again ? again(pin) : null;
  const keeps = command?.startsWith('zerowiz launch') ? " (the run's record keeps the pin for --last)" : '';
  const hint =
    pin !== undefined
      ? `${first.fix}: ${command ? `run ${command}${keeps}, or pin it` : 'pin it'} in the wizard's steps screen`
      : first.fix;
  const wizardHint =
    step?.kind === 'pinConfig'
      ? `${first.fix}: Esc to the review, where Enter on this finding pins it (or c on the steps screen)`
      : undefined;
  return new UsageError(
    `'${setup.name}' is not valid: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`,
    hint,
    wizardHint,
  );
}

/**
 * Checks a setup before running it. Throws UsageError (exit 2) for validation errors, a missing
 * accelerate or a missing training script; in a dry run only validation errors throw.
 */
export function prepareLaunch(setup: Setup, opts: LaunchOptions): PreparedLaunch {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  if (setup.steps.length === 0) {
    throw new UsageError(
      `'${setup.name}' has no launch steps`,
      'add steps to the preset (steps: [{name, uses_config, args}]), or use `zerowiz generate` to only write the files',
    );
  }
  // A secret is recorded (and passed to a job) by its variable: one variable, one value (secretEnv throws).
  secretEnv(setup.steps.map((s) => s.args));
  // The setup's rules and its steps', then what only a launch here can say: files the answers name (an NVMe
  // path that does not exist), and the peaks measured for this setup in this directory's runs.
  const measured = loadMeasuredRuns(cwd);
  const findings = [
    ...launchFindings(setup, cwd, env),
    ...fileFindings(setup, 'answer', cwd),
    ...measuredFindings(setup, measured),
  ];
  const errors = findings.filter((f) => f.level === 'error');
  if (errors.length > 0) throw invalidSetup(setup, errors, launchAgainPinned(opts.source));
  const { exe, problems } = checkRunnable(setup, { accelerate: opts.accelerate, env, cwd, dryRun: opts.dryRun });
  const commands = prepareCommands(
    setup,
    exe ?? { display: opts.accelerate ?? env.ZEROWIZ_ACCELERATE ?? 'accelerate' },
  );
  return {
    setup,
    source: opts.source,
    cwd,
    env,
    exe,
    commands,
    findings: findings.filter((f) => f.level === 'warning'),
    problems,
    skipChecks: [...launchSkips(opts.skipCheck ?? [], opts.speedTest ?? true, env)],
    skipWhy: skipReasons(opts.skipCheck ?? [], opts.speedTest ?? true, env),
    topologyWarnings: opts.topologyWarnings ?? [],
    // The estimate is made once, here: the plan and the record carry it to the supervisor and the viewers.
    estimate: launchEstimate(setup, undefined, sourcePreset(opts.source), cwd, undefined, env)?.json ?? null,
    measured,
  };
}

/**
 * What a launch says of its estimate before it starts (its first lines, and `--dry-run`'s): the setup's mode with
 * its peak and step time, and the run's ETA and price when its length is known (DiffSynth's epochs and samples).
 */
export function estimateLines(prepared: PreparedLaunch): string[] {
  const e = prepared.estimate;
  return e ? setupEstimateLines(prepared.setup, e, prepared.cwd, prepared.measured ?? []) : [];
}

/**
 * What running a setup needs besides its validity: accelerate, and each step's training script under
 * `cwd` (local runs and Slurm jobs alike). Throws UsageError for either missing; a dry run collects
 * them as problems instead.
 */
export function checkRunnable(
  setup: Setup,
  opts: { accelerate?: string; env: NodeJS.ProcessEnv; cwd: string; dryRun?: boolean },
): { exe: AccelerateExe | null; problems: string[] } {
  const { env, cwd } = opts;
  const problems: string[] = [];
  let exe: AccelerateExe | null = null;
  try {
    exe = resolveAccelerate(opts.accelerate, env, cwd);
  } catch (err) {
    if (!opts.dryRun) throw err;
    problems.push((err as Error).message);
  }
  const missing = missingScripts(setup, cwd);
  if (missing.length > 0) {
    const m = missing[0]!;
    if (!opts.dryRun) {
      throw new UsageError(
        `step '${m.step}': training script ${m.path} not found in ${cwd}`,
        "run zerowiz from the trainer's checkout, the directory the step paths are relative to (e.g. your DiffSynth-Studio checkout), or fix the step in the preset",
      );
    }
    for (const x of missing) problems.push(`step '${x.step}': training script ${x.path} not found`);
  }
  return { exe, problems };
}
