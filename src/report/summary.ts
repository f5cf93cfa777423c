import type { ReportData } from './data.js';
import type { LossSeriesData } from './read-series.js';

/** The summary's numbers (null: not known, and the page says so). */
export interface ReportSummary {
  finalLoss: { value: number; step: number } | null;
  bestLoss: { value: number; step: number } | null;
  /** The loss's pass (the last one that trains and has losses). */
  lossPass: string | null;
  steps: { done: number; total: number | null } | null;
  wallMs: number;
  gpuHours: number | null;
  peaks: { gpu: number; usedBytes: number; totalBytes: number | null; vsEstimate: number | null }[];
  ended: string;
  why: string | null;
}

/** The pass whose loss the summary gives: the last training pass with losses, else the last with any. */
function lossPassOf(d: ReportData): number | null {
  const withLoss = d.passes.filter((p) => (d.series.losses.get(p.index)?.values.length ?? 0) > 0);
  const training = withLoss.filter((p) => p.usesConfig);
  return (training.at(-1) ?? withLoss.at(-1))?.index ?? null;
}

function lastFinite(l: LossSeriesData): { value: number; step: number } | null {
  for (let i = l.values.length - 1; i >= 0; i--)
    if (Number.isFinite(l.values[i]!)) return { value: l.values[i]!, step: l.steps[i]! };
  return null;
}

function best(l: LossSeriesData): { value: number; step: number } | null {
  let out: { value: number; step: number } | null = null;
  for (let i = 0; i < l.values.length; i++) {
    const v = l.values[i]!;
    if (Number.isFinite(v) && (out === null || v < out.value)) out = { value: v, step: l.steps[i]! };
  }
  return out;
}

/**
 * Steps done in the loss's pass: its loss rows' last step, with the bar's total when the bar counts the same
 * steps (a bar per epoch, as DiffSynth's, counts others); without loss rows, the bar's count and total.
 */
function stepsOf(d: ReportData, i: number | null): ReportSummary['steps'] {
  if (i === null) return null;
  const p = d.series.progress.get(i);
  const barN = p && p.n.length > 0 ? p.n[p.n.length - 1]! : null;
  const barTotal = p && p.total.length > 0 ? (p.total[p.total.length - 1] ?? null) : null;
  const l = d.series.losses.get(i);
  const lastStep = l && l.steps.length > 0 ? l.steps[l.steps.length - 1]! : null;
  if (lastStep !== null) return { done: lastStep, total: barN === lastStep ? barTotal : null };
  return barN !== null ? { done: barN, total: barTotal } : null;
}

/** GPU-hours: each pass's wall time times the run's GPUs (num_processes). */
function gpuHoursOf(d: ReportData): number | null {
  if (d.gpus === null) return null;
  let msTotal = 0;
  for (const p of d.passes) if (p.startedAt !== null) msTotal += Math.max(0, (p.endedAt ?? d.t1) - p.startedAt);
  return (msTotal / 3_600_000) * d.gpus;
}

/** Why the run ended, in a sentence, or null for a run that succeeded. */
function whyOf(d: ReportData): string | null {
  const j = d.json;
  if (j.ended === 'succeeded') return null;
  if (j.ended === 'running') return 'it is still running (this report shows it so far)';
  const failed = d.passes.find((p) => p.status === 'failed' || p.status === 'stopped');
  const fatal = d.alerts.find((a) => a.fatal && (!failed || a.pass === failed.index));
  const parts: string[] = [];
  if (failed)
    parts.push(`pass ${failed.index + 1} ${failed.name} ${failed.status === 'stopped' ? 'was stopped' : 'failed'}`);
  if (fatal) parts.push(fatal.title);
  else if (failed?.error) parts.push(failed.error);
  else if (failed && failed.exitCode !== null && failed.status === 'failed') parts.push(`exit code ${failed.exitCode}`);
  if (j.note) parts.push(j.note);
  return parts.length > 0 ? parts.join(': ') : j.ended;
}

/** The summary of a report. */
export function summaryOf(d: ReportData): ReportSummary {
  const i = lossPassOf(d);
  const l = i === null ? null : d.series.losses.get(i)!;
  const est = d.estimate?.bytes ?? null;
  return {
    finalLoss: l ? lastFinite(l) : null,
    bestLoss: l ? best(l) : null,
    lossPass: i === null ? null : (d.passes[i]?.name ?? null),
    steps: stepsOf(d, i),
    wallMs: d.t1 - d.t0,
    gpuHours: gpuHoursOf(d),
    peaks: d.peaks.map((p) => ({ ...p, vsEstimate: est ? p.usedBytes / est - 1 : null })),
    ended: d.json.ended,
    why: whyOf(d),
  };
}
