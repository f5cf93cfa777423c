/**
 * The work of `zerowiz runs`: the run records of this directory, newest first, each step's GPU peak against
 * the estimate, its loss and alerts. A local run still going (its supervisor alive) is listed as running;
 * one whose supervisor and watchdog both ended before it did (a reboot) is settled as interrupted; open
 * Slurm runs are refreshed from Slurm first.
 */
import { displayDir, listRunRecords, type RunRecord } from '../records/index.js';
import { localRunState, processList, settleOrphans, type LocalRunState } from '../launch/index.js';
import { peaksFromJson } from '../observe/index.js';
import { formatLossPair } from '../observe/index.js';
import { formatPeakVsEstimate, highestPeak } from '../observe/index.js';
import { formatDuration } from '../text/index.js';
import { kindOfRecord, recordKinds, type RunKindModule } from './run-kinds.js';
import { stepSecondsOfRate } from '../estimate/index.js';
import { formatSeconds } from '../text/index.js';
import { isDiffSynthStep } from '../config/index.js';
import * as output from './output.js';
import { reportDamaged } from './report.js';
import {
  checkpointsOf,
  foreignCheckpointsOf,
  formatCheckpointLines,
  formatForeignLines,
} from '../checkpoints/index.js';
import { recordedTopology } from '../checkpoints/index.js';
import { existsSync } from 'node:fs';
import { reportPathOf } from '../report/index.js';

/** `zerowiz runs`. */
export async function runsCommand(opts: { json?: boolean }): Promise<void> {
  const kinds = await recordKinds();
  const { records, damaged } = listRunRecords(process.cwd(), kinds.check);
  reportDamaged(damaged);
  const kindOf = new Map<RunRecord, RunKindModule | null>();
  for (const r of records) kindOf.set(r, await kinds.of(r.json));
  const locals = records.filter((r) => kindOf.get(r) === null);
  settleOrphans(locals);
  // Where each local run stands (an orphaned one's processes looked up once).
  const states = new Map(locals.map((r) => [r, localRunState(r)] as const));
  // The runs of another kind (a Slurm job) still open get their state from their kind first.
  for (const k of new Set(kindOf.values())) {
    const note = k ? await k.refresh(records.filter((r) => kindOf.get(r) === k)) : null;
    if (note) output.note(note);
  }
  if (opts.json) {
    output.json(records.map((r) => recordSummary(r, records, kindOf.get(r) ?? null, states.get(r))));
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
    const state = states.get(r);
    const dur = j.endedAt ? formatDuration(Date.parse(j.endedAt) - Date.parse(j.startedAt)) : '-';
    const steps = j.steps.map((s) => `${s.name}:${s.status}`).join(' ');
    const job = kindOf.get(r)?.column(r) ?? localColumn(r, state);
    const ended = state?.kind === 'orphaned' ? 'orphaned' : j.ended;
    text += `${j.id.padEnd(w)}  ${ended.padEnd(11)}  ${String(j.exitCode ?? '-').padStart(4)}  ${dur.padStart(8)}  ${steps}${job}\n`;
    if (state?.kind === 'orphaned')
      text += `  orphaned: its supervisor and its watchdog are gone, but its steps still run: ${processList(state.processes)}; stop them: zerowiz stop ${j.id}\n`;
    for (const l of liveLines(r)) text += `  ${l}\n`;
    for (const l of formatCheckpointLines(checkpointsOf(r))) text += `${l}\n`;
    for (const l of formatForeignLines(foreignCheckpointsOf(r, records))) text += `${l}\n`;
    for (const t of topologyWarningsOf(r)) text += `  ${t}\n`;
    const report = reportOf(r);
    if (report) text += `  report: ${displayDir(report)}\n`;
  }
  output.data(text);
}

/** A local run that still goes: who runs it, and how to follow or stop it. */
function localColumn(r: RunRecord, state: LocalRunState | undefined): string {
  if (state?.kind !== 'running') return '';
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

/** The run's HTML report, when it has one (`zerowiz report RUN` writes one for any run). */
function reportOf(r: RunRecord): string | null {
  const p = reportPathOf(r.dir);
  return existsSync(p) ? p : null;
}

/** The topology warnings a relaunch kept (it went on without asking), one line each. */
function topologyWarningsOf(r: RunRecord): string[] {
  return (r.json.topologyWarnings ?? []).map(
    (w) => `relaunched over ${w.checkpoint}, written with another topology (run.json keeps the warning)`,
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

function recordSummary(
  r: RunRecord,
  all: readonly RunRecord[],
  kind: RunKindModule | null,
  state: LocalRunState | undefined,
) {
  const j = r.json;
  return {
    id: j.id,
    dir: displayDir(r.dir),
    name: j.name,
    source: j.source,
    kind: kindOfRecord(j)?.name ?? 'local',
    startedAt: j.startedAt,
    endedAt: j.endedAt,
    ended: j.ended,
    exitCode: j.exitCode,
    estimate: j.estimate ?? null,
    ...(kind
      ? {}
      : {
          supervisor: state?.kind === 'running' ? { pid: j.supervisor?.pid ?? null } : null,
          // A run whose steps outlive their supervisor and watchdog: its live processes (empty otherwise).
          orphans:
            state?.kind === 'orphaned'
              ? state.processes.map((p) => ({ pid: p.pid, pgid: p.pgid, command: p.command }))
              : [],
        }),
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
    report: reportOf(r),
    // What else its output folders hold: the runs that wrote it (by time), none when no run here was training.
    otherFiles: foreignCheckpointsOf(r, all),
    topology: recordedTopology(r),
    ...kind?.summary(r),
  };
}
