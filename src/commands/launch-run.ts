/** The work of `zerowiz launch` and `zerowiz runs`; the pane is mounted through ctx.ui.runLogPane. */
import { dirname } from 'node:path';
import type { CommandContext } from './context.js';
import { UsageError } from '../errors.js';
import { loadPreset } from '../config/presets.js';
import type { Setup } from '../config/setup.js';
import { writeErr, writeOut } from '../terminal.js';
import { launch, type LaunchRequest } from '../launch/lifecycle.js';
import { displayDir, listRunRecords, readRecordSetup, type DamagedRecord, type RunRecord } from '../launch/record.js';
import { formatDuration } from '../launch/stream.js';
import { peaksFromJson } from '../launch/live-record.js';
import { formatLossPair } from '../launch/logparse.js';
import { formatPeakVsEstimate, highestPeak } from '../launch/peaks.js';

import { offerCsvLog } from './csv-log.js';
import { slurmFlagsGiven, type LaunchFlags } from './launch.js';

/** Names the records that were skipped because their run.json is damaged. */
function reportDamaged(damaged: DamagedRecord[]): void {
  for (const d of damaged) writeErr(`zerowiz: skipped a damaged run record: ${displayDir(d.path)}: ${d.problem}\n`);
}

/** `zerowiz runs`. */
export async function runsCommand(opts: { json?: boolean }): Promise<void> {
  const { records, damaged } = listRunRecords();
  reportDamaged(damaged);
  // Slurm runs still open get their state from Slurm first.
  const slurm = records.some((r) => r.json.slurm) ? await import('./launch-slurm-run.js') : null;
  const note = slurm ? await slurm.refreshSlurmRuns(records) : null;
  if (note) writeErr(`zerowiz: ${note}\n`);
  if (opts.json) {
    writeOut(`${JSON.stringify(records.map(recordSummary), null, 2)}\n`);
    return;
  }
  if (records.length === 0) {
    writeOut(
      'no runs recorded in this directory yet (they go to .zerowiz/runs/); start one with `zerowiz launch NAME`\n',
    );
    return;
  }
  const w = Math.max(2, ...records.map((r) => r.json.id.length));
  let text = `${'ID'.padEnd(w)}  ${'ENDED'.padEnd(11)}  EXIT  DURATION  STEPS\n`;
  for (const r of records) {
    const j = r.json;
    const dur = j.endedAt ? formatDuration(Date.parse(j.endedAt) - Date.parse(j.startedAt)) : '-';
    const steps = j.steps.map((s) => `${s.name}:${s.status}`).join(' ');
    const job = j.slurm && slurm ? `  ${slurm.slurmColumn(r)}` : '';
    text += `${j.id.padEnd(w)}  ${j.ended.padEnd(11)}  ${String(j.exitCode ?? '-').padStart(4)}  ${dur.padStart(8)}  ${steps}${job}\n`;
    for (const l of liveLines(r)) text += `  ${l}\n`;
  }
  writeOut(text);
}

/**
 * What a record's steps emitted, one line per step that has something to say: the GPU peak against the
 * estimate (only for steps that train with the config: that is what the estimate describes), the reason of
 * a failure or the alerts, the last loss.
 */
function liveLines(r: RunRecord): string[] {
  const est = r.json.estimate?.gpuBytesPerGpu ?? null;
  const out: string[] = [];
  for (const s of r.json.steps) {
    if (!s.live) continue;
    const parts: string[] = [];
    const peak = formatPeakVsEstimate(peaksFromJson(s.live), s.usesConfig ? est : null);
    if (peak) parts.push(peak);
    const m = s.live.metrics;
    if (m.lastLoss !== null) parts.push(`loss ${formatLossPair(m.lastLoss, m.minLoss)}`);
    const alerts = s.live.alerts;
    const first = alerts.find((a) => a.fatal) ?? alerts[0];
    if (first) parts.push(`alert: ${first.title}${alerts.length > 1 ? ` (+${alerts.length - 1} more)` : ''}`);
    if (parts.length > 0) out.push(`${s.name}: ${parts.join(' · ')}`);
  }
  return out;
}

function recordSummary(r: RunRecord) {
  const j = r.json;
  return {
    id: j.id,
    dir: displayDir(r.dir),
    name: j.name,
    source: j.source,
    startedAt: j.startedAt,
    endedAt: j.endedAt,
    ended: j.ended,
    exitCode: j.exitCode,
    estimate: j.estimate ?? null,
    steps: j.steps.map((s) => {
      const top = s.live ? highestPeak(peaksFromJson(s.live)) : null;
      return {
        name: s.name,
        status: s.status,
        exitCode: s.exitCode,
        durationMs: s.durationMs,
        log: s.log,
        gpuPeak: top ? { gpu: top.index, usedBytes: top.usedBytes, totalBytes: top.totalBytes } : null,
        loss: s.live
          ? { last: s.live.metrics.lastLoss, min: s.live.metrics.minLoss, source: s.live.metrics.lossSource }
          : null,
        alerts: (s.live?.alerts ?? []).map((a) => ({ id: a.id, title: a.title, fatal: a.fatal })),
      };
    }),
    ...(j.slurm
      ? {
          slurm: {
            jobId: j.slurm.jobId,
            state: j.slurm.state,
            phase: j.slurm.phase,
            reason: j.slurm.reason,
            nodeList: j.slurm.nodeList,
          },
        }
      : {}),
  };
}

/**
 * What `zerowiz launch` runs: a preset (ref), or with --last the newest run record of this directory. The
 * records are read once here, for the local run and for the Slurm one alike (the newest record decides
 * which); damaged records newer than the one rerun are named, since the user may have meant one of them.
 */
export async function resolveLaunchSource(
  ref: string | undefined,
  flags: { last?: boolean; slurm?: boolean },
): Promise<{ setup: Setup; source: string; record: RunRecord | null }> {
  const start = `zerowiz launch${flags.slurm ? ' --slurm' : ''}`;
  if (!flags.last) {
    if (ref === undefined)
      throw new UsageError(
        'which preset? give a preset name or file',
        'see `zerowiz preset list`, or `zerowiz launch --last` to run the newest run again',
      );
    return { setup: await loadPreset(ref), source: ref, record: null };
  }
  if (ref !== undefined)
    throw new UsageError(
      'give either a preset or --last, not both',
      '`zerowiz launch --last` runs the newest record of `zerowiz runs` again',
    );
  const { records, damaged } = listRunRecords();
  const newest = records[0];
  reportDamaged(newest ? damaged.filter((d) => dirname(d.path) > newest.dir) : damaged);
  if (!newest)
    throw new UsageError(
      'no run recorded in this directory',
      `start one with \`${start} NAME\` (records go to .zerowiz/runs/)`,
    );
  try {
    return { setup: readRecordSetup(newest), source: `--last (${newest.json.id})`, record: newest };
  } catch (err) {
    throw new UsageError(
      `run record ${displayDir(newest.dir)} cannot be rerun: ${(err as Error).message}`,
      'launch the preset by name instead',
    );
  }
}

/** `zerowiz launch`: the launch lifecycle, with the pane when stdin and stdout are a terminal. */
export async function launchCommand(ref: string | undefined, flags: LaunchFlags, ctx: CommandContext): Promise<number> {
  if (!flags.slurm && !flags.last && slurmFlagsGiven(flags)) throw slurmFlagsAlone();
  const from = await resolveLaunchSource(ref, flags);
  // Slurm (src/slurm/): --slurm, or --last when the newest run was a Slurm job.
  if (flags.slurm || from.record?.json.slurm)
    return (await import('./launch-slurm-run.js')).slurmLaunchCommand(from, flags, ctx);
  if (slurmFlagsGiven(flags)) throw slurmFlagsAlone();
  return launchFromCli(from.setup, from.source, flags, ctx);
}

function slurmFlagsAlone(): UsageError {
  return new UsageError(
    '--partition, --nodes, --gpus-per-node, --time, --account, --qos and --sbatch-arg only apply with --slurm',
    'add --slurm to submit the steps as a Slurm job',
  );
}

/** Whether the terminal can hold the pane: both stdin and stdout are one. */
function onTerminal(): boolean {
  return process.stdout.isTTY === true && process.stdin.isTTY === true;
}

/** The pane when asked for (not --no-tui) and the terminal can hold it; else stream mode. */
export function paneFor(flags: { tui?: boolean }, ctx: CommandContext): LaunchRequest['pane'] {
  return flags.tui !== false && onTerminal() ? ctx.ui.runLogPane : undefined;
}

/**
 * A launch as the command line starts it (local, or another kind such as a Slurm job): the --enable_csv_log
 * offer first, then the lifecycle with the pane or stream mode.
 */
export async function launchFromCli(
  setup: Setup,
  source: string,
  flags: LaunchFlags,
  ctx: CommandContext,
  more: Pick<LaunchRequest, 'kind' | 'closeOnEnd'> = {},
): Promise<number> {
  return launch({
    setup: await offerCsvLog(setup, flags, { cwd: process.cwd(), interactive: onTerminal() }),
    source,
    accelerate: flags.accelerate,
    dryRun: flags.dryRun,
    pane: paneFor(flags, ctx),
    ...more,
  });
}
