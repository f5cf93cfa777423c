/**
 * The work of `zerowiz launch NAME|FILE`, `zerowiz launch --last` and `launch --slurm`: what is launched, the
 * run's kind, the command line's offers (--enable_csv_log, --pin-step), then the one launch entry
 * (src/launch/entry.ts) with the pane when stdin and stdout are a terminal.
 */
import { dirname } from 'node:path';
import { pinSteps } from '../config/index.js';
import { type LaunchSource, presetSource, sourcePreset } from '../config/index.js';
import { findPreset } from '../setups/index.js';
import type { Setup } from '../config/index.js';
import { UsageError } from '../text/index.js';
import { launch, planLaunch, releaseWarmSupervisor, type LaunchRequest } from '../launch/index.js';
import { chosenKindFlag, kindOfLaunch, type LaunchFrom, recordKinds } from './run-kinds.js';
import { displayDir, listRunRecords, readRecordSetup, type RunRecord } from '../records/index.js';
import { reportDamaged } from './report.js';
import { restoreSecrets } from '../text/index.js';
import type { CommandContext } from './context.js';
import { offerCsvLog } from './csv-log.js';
import { launchTargets, handOnTargets } from './notify-targets.js';
import { offerTopology, setAsideNow } from './topology-offer.js';
import type { LaunchFlags } from './launch-flags.js';
import * as output from './output.js';
import { whichSync } from '../proc/index.js';
import { idleGpusNote } from '../rules/index.js';
import { shellWord } from '../text/index.js';

/**
 * What `zerowiz launch` runs: a preset (ref), or with --last the newest run record of this directory. The
 * records are read once here, for the local run and for the Slurm one alike (the newest record decides
 * which); damaged records newer than the one rerun are named, since the user may have meant one of them.
 */
export async function resolveLaunchSource(ref: string | undefined, flags: LaunchFlags): Promise<LaunchFrom> {
  const chosen = chosenKindFlag(flags);
  const start = `zerowiz launch${chosen ? ` ${chosen}` : ''}`;
  if (!flags.last) {
    if (ref === undefined)
      throw new UsageError(
        'which preset? give a preset name or file',
        'see `zerowiz preset list`, or `zerowiz launch --last` to run the newest run again',
      );
    const preset = findPreset(ref);
    return { setup: preset.setup, source: presetSource(ref), record: null, preset };
  }
  if (ref !== undefined)
    throw new UsageError(
      'give either a preset or --last, not both',
      '`zerowiz launch --last` runs the newest record of `zerowiz runs` again',
    );
  const { records, damaged } = listRunRecords(process.cwd(), (await recordKinds()).check);
  const newest = records[0];
  reportDamaged(newest ? damaged.filter((d) => dirname(d.path) > newest.dir) : damaged);
  if (!newest)
    throw new UsageError(
      'no run recorded in this directory',
      `start one with \`${start} NAME\` (records go to .zerowiz/runs/)`,
    );
  let setup: Setup;
  try {
    setup = readRecordSetup(newest);
  } catch (err) {
    throw new UsageError(
      `run record ${displayDir(newest.dir)} cannot be rerun: ${(err as Error).message}`,
      'launch the preset by name instead',
    );
  }
  // A secret of the run was recorded as its variable: its value comes from the environment again.
  return {
    setup: restoreSecrets(setup, process.env, newest.json.id),
    source: { kind: 'last', runId: newest.json.id },
    record: newest,
    preset: null,
  };
}

/** `zerowiz launch`: the one launch entry, with the pane when stdin and stdout are a terminal. */
export async function launchCommand(ref: string | undefined, flags: LaunchFlags, ctx: CommandContext): Promise<number> {
  // A kind's flags without the flag that chooses it are refused before anything is read.
  if (!flags.last) kindOfLaunch(flags, null);
  const from = await resolveLaunchSource(ref, flags);
  handOnTargets(launchTargets(flags, from.preset, process.env), from.record);
  // Another kind than the local run (src/commands/run-kinds.ts): its flag, or --last when the newest run was one.
  const entry = kindOfLaunch(flags, from.record);
  // The supervisor started with the command is a local run's (--last of a Slurm run is a job).
  if (entry) releaseWarmSupervisor();
  const kind = entry ? await (await entry.load()).launchKind(from, flags) : undefined;
  return launchFromCli(pinSteps(from.setup, flags.pinStep ?? []), from.source, keptSkips(flags, from.record), ctx, {
    kind,
  });
}

/**
 * With --last, the checks the repeated run's command line left out are left out again (as its --pin-step is
 * kept), with what the user adds now; said once, so nobody wonders why a check did not run.
 */
function keptSkips(flags: LaunchFlags, record: RunRecord | null): LaunchFlags {
  const kept = record?.json.skippedChecks;
  if (!flags.last || !kept) return flags;
  const ids = [...new Set([...kept.ids, ...(flags.skipCheck ?? [])])];
  const speedTest = kept.speedTest && flags.speedTest !== false;
  const said = [
    ...(kept.ids.length > 0 ? [`--skip-check ${kept.ids.join(',')}`] : []),
    ...(kept.speedTest ? [] : ['--no-speed-test']),
  ];
  if (said.length > 0) output.note(`--last keeps ${said.join(' and ')}, as run ${record.json.id} had`);
  return { ...flags, skipCheck: ids, speedTest };
}

/**
 * A local run of fewer processes than this machine has GPUs (the seed preset's one on an 8-GPU box) says so, with
 * the preset that uses them all. Asks nvidia-smi only when it is on PATH.
 */
async function noteIdleGpus(setup: Setup, source: LaunchSource): Promise<void> {
  if (whichSync('nvidia-smi') === null) return;
  const { detectGpus } = await import('../machine/detect.js');
  const g = await detectGpus();
  const a = setup.answers;
  const note = idleGpusNote(a.num_processes, a.num_machines, g.detected ? g.gpus.length : null);
  if (!note) return;
  const all = g.gpus.length * a.num_machines;
  const preset = sourcePreset(source);
  const fix =
    preset === null
      ? `--num-processes ${all} in a preset of your own uses them all`
      : `to use them all: zerowiz preset save ${setup.name}-${all}gpu --preset ${shellWord(preset)} --num-processes ${all}`;
  output.note(`${note}; ${fix}`);
}

/** Whether the terminal can hold the pane: both stdin and stdout are one. */
export function onTerminal(): boolean {
  return process.stdout.isTTY === true && process.stdin.isTTY === true;
}

/** The pane when asked for (not --no-tui) and the terminal can hold it; else stream mode. */
export function paneFor(flags: { tui?: boolean }, ctx: CommandContext): LaunchRequest['pane'] {
  return flags.tui !== false && onTerminal() ? ctx.ui.runLogPane : undefined;
}

/**
 * A launch as the command line starts it (local, or another kind such as a Slurm job): the --enable_csv_log
 * offer first, then the one launch entry with the pane or stream mode.
 */
export async function launchFromCli(
  setup: Setup,
  source: LaunchSource,
  flags: LaunchFlags,
  ctx: CommandContext,
  more: Pick<LaunchRequest, 'kind' | 'closeOnEnd'> = {},
): Promise<number> {
  const checks = { skipCheck: flags.skipCheck, speedTest: flags.speedTest };
  // Refused before anything is asked: the loss-log offer is for a launch that can run.
  const planned = planLaunch({ setup, source, accelerate: flags.accelerate, dryRun: flags.dryRun, ...checks, ...more });
  if (!more.kind) await noteIdleGpus(setup, source);
  const cwd = process.cwd();
  const withCsv = await offerCsvLog(setup, flags, { cwd, interactive: onTerminal() });
  // Checkpoints in the output folders written with another topology: the way forward, asked or given.
  const topo = await offerTopology(withCsv, flags, {
    cwd,
    interactive: onTerminal(),
    accelerate: planned.prepared.exe?.path ?? null,
  });
  if (!flags.dryRun) setAsideNow(topo, cwd);
  return launch({
    setup: topo.setup,
    source,
    accelerate: flags.accelerate,
    dryRun: flags.dryRun,
    pane: paneFor(flags, ctx),
    topologyWarnings: topo.warnings,
    planned,
    ...checks,
    ...output.runSinks(),
    ...more,
  });
}
