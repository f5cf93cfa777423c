/**
 * Mounts the wizard on the terminal and resolves with the exit code. The terminal module (src/proc/terminal.ts)
 * restores the terminal (alternate screen left, cursor shown, raw mode off) on every way out: finishing,
 * q, Ctrl+C, a signal, an exception, the terminal closing. Files are only written by the finish step's
 * atomic writes, so an abort never leaves one. The Launch action goes through the same launch lifecycle as
 * `zerowiz launch` (src/launch/lifecycle.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { describeError, fileError } from '../../src/text/index.js';
import {
  SIGNAL_EXIT_CODES,
  Screen,
  drainOutput,
  endAfterHangup,
  onHangup,
  onTerminalSignals,
  writeErr,
  writeOut,
} from '../../src/proc/index.js';
import { capYoungGeneration } from '../../src/proc/index.js';
import type { WizardOptions } from '../../src/commands/index.js';
import { accelerateDefaultConfig } from '../../src/fs/index.js';
import { formatBytesShort } from '../../src/text/index.js';
import { whichSync } from '../../src/proc/index.js';
import type { LaunchSource, Setup } from '../../src/config/index.js';
import type { SlurmDeps } from './FinishScreen.js';
import type { SlurmField, SlurmPartition, SlurmValues } from '../../src/wizard/index.js';
import type { SlurmRequest } from '../../src/slurm/index.js';
import type { PlannedLaunch } from '../../src/launch/index.js';
import type { AppDeps } from './App.js';
import type { WizardResult } from '../../src/wizard/index.js';
import { earlyStartKeys, paintStartFrame } from './startText.js';

/** What the wizard's launch check plans (the launch itself names the preset the wizard saved, if any). */
const WIZARD_SOURCE: LaunchSource = { kind: 'wizard', preset: null };

const MIN_COLUMNS = 80;
const MIN_ROWS = 24;

/**
 * The wizard's last launch plan (the check before it leaves) and the Slurm form's values it was made with: the
 * launch after the wizard uses it when nothing changed since, so the setup is planned once.
 */
const lastCheck: { planned: PlannedLaunch | null; slurm: SlurmValues | null } = { planned: null, slurm: null };

/** The plan the launch can use: the last check's, when it was for this kind of run and these Slurm values. */
function checkedPlan(slurm: SlurmValues | null): PlannedLaunch | undefined {
  const { planned } = lastCheck;
  if (!planned || JSON.stringify(lastCheck.slurm) !== JSON.stringify(slurm)) return undefined;
  return planned;
}

/**
 * The real dependencies: detection, presets, import, the model catalog and the writers. The modules
 * behind them (execa, zod, diff, ...) load after the first frame, off the start-up path.
 */
export async function realDeps(env: NodeJS.ProcessEnv = process.env, startCwd = process.cwd()): Promise<AppDeps> {
  // Where the steps run: the steps screen's L moves it (and this process), and every function below reads it then.
  let cwd = startCwd;
  const defaultConfigPath = accelerateDefaultConfig(env);
  const later = () =>
    Promise.all([
      import('../../src/setups/presets.js'),
      import('../../src/setups/import.js'),
      import('../../src/estimate/models.js'),
      import('../../src/wizard/finish.js'),
      import('../../src/config/accelerate-config.js'),
      import('../../src/records/measured-runs.js'),
      import('../../src/setups/templates.js'),
    ]);
  let mods: Awaited<ReturnType<typeof later>> | null = null;
  // Loading starts when the app asks (after its first frame), so it never competes with Ink's start-up.
  let kick: () => void = () => undefined;
  const kicked = new Promise<void>((res) => {
    kick = res;
  });
  const loaded = kicked.then(later).then((m) => (mods = m));
  const need = () => {
    if (!mods) throw new Error('still loading; try again');
    return mods;
  };
  return {
    ready: loaded.then(() => undefined),
    startLoading: () => kick(),
    async detect() {
      const [{ detectHost, describeGpus }, { envFromDetection }] = await Promise.all([
        import('../../src/machine/detect.js'),
        import('../../src/rules/processes.js'),
      ]);
      const host = await detectHost({ env, topology: true });
      const g = host.gpu;
      const text = g.detected ? describeGpus(g) : 'GPUs not detected: asked instead';
      return { env: envFromDetection(host), description: `${text} · RAM ${formatBytesShort(host.cpuMemoryBytes)}` };
    },
    listPresets: () => need()[0].listPresets(env),
    importConfig: (path) => need()[1].importAccelerateConfig(path, cwd),
    loadModels: () => need()[2].loadModelCatalog(),
    defaultConfigPath,
    defaultConfigExists: existsSync(defaultConfigPath),
    planWrite: (setup, target) => need()[3].planWrite(setup, target, env, cwd),
    carryOut: (plan) => need()[3].carryOut(plan),
    summarize: (results, setup) => need()[3].summaryLines(results, setup),
    savePreset: (name, setup, description, given, from) =>
      need()[0].savePreset(name, setup, description, given, env, from),
    presetSteps: (name) => need()[0].findPreset(name, env).setup.steps,
    diffsynthTemplates: () => need()[6].templatesOrNone().templates,
    defaultConfigSummary: () => need()[4].readAccelerateConfigSummary(defaultConfigPath, cwd),
    // The peaks measured in this directory's runs, beside the ZeRO table's estimates.
    measuredRuns: () => need()[5].loadMeasuredRuns(cwd),
    paths: { env, cwd },
    setLaunchDir(dir) {
      try {
        if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
        process.chdir(dir);
      } catch (e) {
        return describeError(fileError(e, dir));
      }
      cwd = dir;
      return null;
    },
    slurm: whichSync('sbatch', env) ? slurmDeps(env, cwd) : null,
    async checkLaunch(setup, slurm, csvLog) {
      const [{ planLaunch, checkFirstPass, wizardRefusal }, { UsageError }] = await Promise.all([
        import('../../src/launch/entry.js'),
        import('../../src/text/errors.js'),
      ]);
      const kind = slurm
        ? (await import('../../src/slurm/kind.js')).slurmLaunchKind(slurmRequestOf(slurm), { env, cwd })
        : undefined;
      try {
        lastCheck.planned = null;
        const planned = planLaunch({
          setup: await forThisRun(setup, csvLog),
          source: WIZARD_SOURCE,
          kind,
          env,
          cwd,
        });
        lastCheck.planned = planned;
        lastCheck.slurm = slurm;
        // On this machine the first pass's checks run now, as `zerowiz launch` runs them: before the pane.
        const first = planned.kind.runsHere ? await checkFirstPass(planned.prepared) : null;
        return first && first.failed.length > 0 ? wizardRefusal(planned.prepared, first.failed) : null;
      } catch (e) {
        if (e instanceof UsageError) return { error: e.message, hint: e.wizardHint ?? e.hint ?? null };
        return { error: (e as Error).message, hint: null };
      }
    },
  };
}

/** What the Slurm form's answers ask of the job (the flags of `launch --slurm`). */
function slurmRequestOf(v: SlurmValues): SlurmRequest {
  return {
    nodes: Number(v.nodes),
    gpusPerNode: Number(v.gpusPerNode),
    options: {
      ...(v.partition ? { partition: v.partition } : {}),
      ...(v.time ? { time: v.time } : {}),
      ...(v.account ? { account: v.account } : {}),
      extra: [],
    },
  };
}

/** The helpers a Slurm form field is checked with: the same as `launch --slurm`'s flags. */
export interface SlurmFieldChecks {
  requirePartition: typeof import('../../src/slurm/preflight.js').requirePartition;
  parseShapeFlag: typeof import('../../src/slurm/shape.js').parseShapeFlag;
  checkOptions: typeof import('../../src/slurm/launch.js').checkOptions;
}

/** The flag of each form field `launch --slurm` takes (the helpers' messages name it). */
const SHAPE_FLAGS = { nodes: '--nodes', gpusPerNode: '--gpus-per-node' } as const;

/**
 * Why a Slurm form field's value cannot be submitted, or null: the checks of `launch --slurm`'s flags (a
 * partition sinfo lists, a whole node and GPU count, a Slurm time and names). An empty partition, time or
 * account is left to Slurm's defaults.
 */
export function slurmFieldProblem(
  field: SlurmField,
  value: string,
  partitions: readonly SlurmPartition[],
  c: SlurmFieldChecks,
): string | null {
  try {
    if (field === 'nodes' || field === 'gpusPerNode') c.parseShapeFlag(SHAPE_FLAGS[field], value);
    else if (value !== '') {
      if (field === 'partition' && partitions.length > 0) c.requirePartition(partitions, value);
      c.checkOptions({ [field]: value, extra: [] });
    }
    return null;
  } catch (e) {
    const err = e as { message: string; hint?: string };
    return err.hint ? `${err.message}; ${err.hint}` : err.message;
  }
}

/** The Slurm finish action's parts: sinfo's partitions, the setup's shape, each field checked as `launch --slurm` checks its flag. */
function slurmDeps(env: NodeJS.ProcessEnv, cwd: string): SlurmDeps {
  // Loaded when the form opens (listing the partitions), never on the way to the first frame.
  let checks: SlurmFieldChecks | null = null;
  return {
    async openForm(setup) {
      const [{ listPartitions, requirePartition }, { checkOptions }, { parseShapeFlag, shapeOfSetup }] =
        await Promise.all([
          import('../../src/slurm/preflight.js'),
          import('../../src/slurm/launch.js'),
          import('../../src/slurm/shape.js'),
        ]);
      checks = { requirePartition, parseShapeFlag, checkOptions };
      const shape = shapeOfSetup(setup);
      try {
        return { partitions: await listPartitions({ env, cwd }), error: null, shape };
      } catch (e) {
        return { partitions: [], error: (e as Error).message, shape };
      }
    },
    checkField(field, value, partitions) {
      return checks ? slurmFieldProblem(field, value, partitions, checks) : null;
    },
  };
}

/**
 * Runs `load` with the global `fetch` hidden. yoga-layout (Ink's layout engine) ships its WebAssembly
 * inline as base64 and, when `fetch` exists, decodes it by fetching a data: URL, which makes Node load
 * its whole HTTP client (undici) first: 40-80 ms of start-up. Without `fetch` it decodes the bytes
 * directly. `fetch` is put back as it was (a lazy getter) before anything else runs.
 */
export async function withoutFetch<T>(load: () => Promise<T>): Promise<T> {
  const desc = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (!desc?.configurable) return load();
  Object.defineProperty(globalThis, 'fetch', { value: undefined, configurable: true, writable: true });
  try {
    return await load();
  } finally {
    Object.defineProperty(globalThis, 'fetch', desc);
  }
}

/** The setup as this run launches it: with the DiffSynth loss log (`--enable_csv_log`) when the user left it on. */
async function forThisRun(setup: Setup, csvLog: boolean | 'auto' | undefined): Promise<Setup> {
  if (csvLog === undefined || csvLog === false) return setup;
  const { csvLogOffer, withCsvLog } = await import('../../src/config/diffsynth.js');
  return withCsvLog(setup, csvLogOffer(setup.steps, process.cwd()), csvLog);
}

/** Mounts the wizard; resolves with the exit code (0 done or quit, 130 aborted, 1 an unexpected error). */
export async function runWizard(opts: WizardOptions): Promise<number> {
  const out = process.stdout;
  const uncapYoung = capYoungGeneration();
  // Raw mode from the start: keys typed while the views load wait in the terminal, unechoed, and Ink
  // reads them as soon as it listens.
  const screen = Screen.open({ altScreen: true, home: true, raw: true });
  const restore = () => {
    uncapYoung();
    screen.restore();
  };
  // A signal (or the terminal closing) ends the wizard at once: nothing is half written, since every
  // write is atomic, and the terminal is put back first.
  const offSignals = onTerminalSignals((signal) => {
    restore();
    if (signal === 'SIGHUP') endAfterHangup();
    else process.exit(SIGNAL_EXIT_CODES[signal]);
  });
  // The terminal gone without a signal (its input failed or ended): nobody is left to answer.
  const offHangup = onHangup(() => {
    restore();
    endAfterHangup();
  });
  let result: WizardResult = { code: 1, summary: ['zerowiz: the wizard stopped unexpectedly; nothing written.'] };
  try {
    const deps = await realDeps();
    // The start screen, painted now as Ink will draw it: the user reads it while Ink loads.
    const columns = out.columns || MIN_COLUMNS;
    const rows = out.rows || MIN_ROWS;
    const painted = out.isTTY ? paintStartFrame(columns, rows, deps) : null;
    if (painted) screen.write(painted);
    // While Ink loads, ↑/↓ on the painted menu are answered at once; other keys wait for the wizard.
    const early =
      painted && process.stdin.isTTY && !opts.configPath
        ? earlyStartKeys(process.stdin, (i) => screen.write(paintStartFrame(columns, rows, deps, undefined, i) ?? ''))
        : null;
    const { mountWizard } = await withoutFetch(() => import('./mount.js'));
    const keys = early?.stop() ?? { index: 0, rest: null };
    if (keys.rest) process.stdin.unshift(keys.rest);
    result = await mountWizard(deps, opts.configPath, painted !== null, keys.index);
  } catch (err) {
    result = {
      code: 1,
      summary: [
        `zerowiz: unexpected error: ${err instanceof Error ? err.message : String(err)}`,
        'nothing was written by the step that failed.',
      ],
    };
  } finally {
    restore();
    offSignals();
    offHangup();
  }
  // Ink's last frame and the screen's restore go before the summary.
  await drainOutput();
  const write = result.code === 0 ? writeOut : writeErr;
  for (const line of result.summary) write(`${line}\n`);
  if (result.launch || result.slurm) await handOnNotify(result.notifyFrom ?? null);
  if (result.launch) {
    // The one launch entry, as `zerowiz launch` runs it.
    const { launch } = await import('../../src/launch/entry.js');
    const { runLogPane } = await import('../pane/run.js');
    const topo = await relaunchWay(await forThisRun(result.launch, result.csvLog));
    return launch({
      setup: topo.setup,
      source: result.launchSource ?? WIZARD_SOURCE,
      pane: runLogPane,
      topologyWarnings: topo.warnings,
      planned: checkedPlan(null),
    });
  }
  if (result.slurm) {
    // The one launch entry with the Slurm kind, as `zerowiz launch --slurm` runs it.
    const [{ launch }, { slurmLaunchKind }, { runLogPane }] = await Promise.all([
      import('../../src/launch/entry.js'),
      import('../../src/slurm/kind.js'),
      import('../pane/run.js'),
    ]);
    const planned = checkedPlan(result.slurm.values);
    const kind =
      planned?.kind ?? slurmLaunchKind(slurmRequestOf(result.slurm.values), { env: process.env, cwd: process.cwd() });
    const topo = await relaunchWay(await forThisRun(result.slurm.setup, result.csvLog));
    return launch({
      setup: topo.setup,
      source: result.launchSource ?? WIZARD_SOURCE,
      kind,
      pane: runLogPane,
      topologyWarnings: topo.warnings,
      planned,
    });
  }
  return result.code;
}

/**
 * Where the run's notifications go, as `zerowiz launch NAME` sends them: ZEROWIZ_NOTIFY and the `notify:` list of
 * the preset the setup was saved as or started from (a bad target: one line and a hint, exit 2, nothing run).
 */
async function handOnNotify(presetName: string | null): Promise<void> {
  const [{ launchTargets, handOnTargets }, { findPreset }] = await Promise.all([
    import('../../src/commands/notify-targets.js'),
    import('../../src/setups/presets.js'),
  ]);
  let preset: { name: string; notify: (string | string[])[] } | null = null;
  try {
    preset = presetName === null ? null : findPreset(presetName);
  } catch {
    // Deleted or broken since the wizard read it: the environment's targets only.
  }
  handOnTargets(launchTargets({}, preset, process.env), null);
}

/**
 * Before the wizard's launch, on its terminal: checkpoints in the output folders written with another
 * topology are told and the way forward asked, as `zerowiz launch` asks it.
 */
async function relaunchWay(setup: Setup) {
  const { offerTopology, setAsideNow } = await import('../../src/commands/topology-offer.js');
  const cwd = process.cwd();
  const topo = await offerTopology(setup, {}, { cwd, interactive: process.stdin.isTTY === true, accelerate: null });
  setAsideNow(topo, cwd);
  return topo;
}
