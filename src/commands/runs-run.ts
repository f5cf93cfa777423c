/**
 * The work of `zerowiz runs`: the run records of this directory, newest first, each step's GPU peak against
 * the estimate, its loss and alerts. A local run still going (its supervisor alive) is listed as running;
 * one whose supervisor and watchdog both ended before it did (a reboot) is settled as interrupted; open
 * Slurm runs are refreshed from Slurm first.
 */
import { displayDir, listRunRecords, type RunRecord } from '../records/index.js';
import { localRunOpen, settleOrphans } from '../launch/index.js';
import { peaksFromJson } from '../observe/index.js';
import { formatLossPair } from '../observe/index.js';
import { formatPeakVsEstimate, highestPeak } from '../observe/index.js';
import { formatDuration } from '../text/index.js';
import { formatSeconds, stepSecondsOfRate } from '../estimate/index.js';
import { isDiffSynthStep } from '../config/index.js';
import { kindBlockProblem } from './record-kinds.js';
import * as output from './output.js';
import { reportDamaged } from './report.js';
import { printable } from '../text/index.js';
import { checkpointsOf, formatCheckpointLines } from '../checkpoints/index.js';
import { recordedTopology } from '../checkpoints/index.js';

/** `zerowiz runs`. */
export async function runsCommand(opts: { json?: boolean }): Promise<void> {
  const { records, damaged } = listRunRecords(process.cwd(), kindBlockProblem);
  reportDamaged(damaged);
  settleOrphans(records);
  // Slurm runs still open get their state from Slurm first.
  const slurm = records.some((r) => r.json.slurm) ? await import('./launch-slurm-run.js') : null;
  const note = slurm ? await slurm.refreshSlurmRuns(records) : null;
  if (note) output.note(note);
  if (opts.json) {
    output.json(records.map(recordSummary));
    return;
  }
  if (records.length === 0) {
    output.lines([
      'no runs recorded in this directory yet (they go to .zerowiz/runs/); start one with `zerowiz launch NAME`',
    ]);
    return;
  }
  const w = Math.max(2, ...records.map((r) => r.json.id.length));
  let text = `${'ID'.padEnd(w)}  ${'ENDED'.padEnd(11)}  EXIT  DURATION  STEPS\n`;
  for (const r of records) {
    const j = r.json;
    const dur = j.endedAt ? formatDuration(Date.parse(j.endedAt) - Date.parse(j.startedAt)) : '-';
    const steps = j.steps.map((s) => `${s.name}:${s.status}`).join(' ');
    const job = j.slurm && slurm ? `  ${slurm.slurmColumn(r)}` : localColumn(r);
    text += `${j.id.padEnd(w)}  ${j.ended.padEnd(11)}  ${String(j.exitCode ?? '-').padStart(4)}  ${dur.padStart(8)}  ${steps}${job}\n`;
    for (const l of liveLines(r)) text += `  ${l}\n`;
    for (const l of formatCheckpointLines(checkpointsOf(r))) text += `${l}\n`;
    for (const t of topologyWarningsOf(r)) text += `  ${t}\n`;
  }
  output.data(text);
}

/** A local run that still goes: who runs it, and how to follow or stop it. */
function localColumn(r: RunRecord): string {
  if (r.json.slurm || !localRunOpen(r)) return '';
  const pid = r.json.supervisor?.pid;
  return `  supervisor pid ${pid}: zerowiz attach ${r.json.id} · zerowiz stop ${r.json.id}`;
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
    const t = stepTimeJson(r, s);
    if (t)
      parts.push(
        `${formatSeconds(t.measuredSeconds)}/step (est ${formatSeconds(t.predictedSeconds)}, ${t.off >= 0 ? '+' : ''}${Math.round(t.off * 100)}%)`,
      );
    const alerts = s.live.alerts;
    const first = alerts.find((a) => a.fatal) ?? alerts[0];
    if (first) parts.push(`alert: ${first.title}${alerts.length > 1 ? ` (+${alerts.length - 1} more)` : ''}`);
    if (parts.length > 0) out.push(`${s.name}: ${parts.join(' · ')}`);
  }
  return out;
}

/** The topology warnings a relaunch kept (it went on without asking), one line each. */
function topologyWarningsOf(r: RunRecord): string[] {
  const raw = (r.json as unknown as { topologyWarnings?: { checkpoint?: unknown }[] }).topologyWarnings;
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((w) => typeof w?.checkpoint === 'string')
    .map((w) =>
      printable(
        `relaunched over ${w.checkpoint as string}, written with another topology (run.json keeps the warning)`,
      ),
    );
}

/**
 * A training step's last measured step time (its progress bar's rate, x the gradient accumulation for a bar over
 * micro-batches) beside the one predicted at launch, or null without either.
 */
function stepTimeJson(
  r: RunRecord,
  s: RunRecord['json']['steps'][number],
): { measuredSeconds: number; predictedSeconds: number; off: number } | null {
  const predicted = r.json.estimate?.step ?? null;
  if (!predicted || !s.usesConfig || !s.live) return null;
  const args = r.json.setup?.steps?.find((x) => x.name === s.name)?.args ?? [];
  const measured = stepSecondsOfRate(
    s.live.metrics.ratePerS,
    isDiffSynthStep(args) ? 'micro' : 'optimizer',
    predicted.accumulation,
  );
  if (measured === null) return null;
  const off = predicted.seconds > 0 ? (measured - predicted.seconds) / predicted.seconds : 0;
  return { measuredSeconds: measured, predictedSeconds: predicted.seconds, off };
}

function recordSummary(r: RunRecord) {
  const j = r.json;
  return {
    id: j.id,
    dir: displayDir(r.dir),
    name: j.name,
    source: j.source,
    kind: j.slurm ? 'slurm' : 'local',
    startedAt: j.startedAt,
    endedAt: j.endedAt,
    ended: j.ended,
    exitCode: j.exitCode,
    estimate: j.estimate ?? null,
    ...(j.slurm
      ? {}
      : { supervisor: j.ended === 'running' && localRunOpen(r) ? { pid: j.supervisor?.pid ?? null } : null }),
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
        stepTime: stepTimeJson(r, s),
      };
    }),
    // Each checkpoint the run saved, as verified when it was written (still there, unchanged, since).
    checkpoints: checkpointsOf(r),
    topology: recordedTopology(r),
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
