/**
 * What a notification says: the payload (one JSON shape for every event, docs/notify.md) and its title and
 * text for people. Every string that came from the run (a step's name, a log line, an alert's line) is made
 * printable here, once, so no target ever gets a raw control character.
 */
import { printable } from '../text/index.js';
import { formatDuration, formatGiB, formatSeconds } from '../text/index.js';

/** The events a run notifies. */
export type NotifyEventKind = 'started' | 'first-step' | 'alert' | 'pass-end' | 'end';

/** The payload's schema name and version. */
export const PAYLOAD_SCHEMA = 'zerowiz.notify/1';

/** Lines of the failing pass's log a failure carries at most. */
export const LOG_TAIL_LINES = 20;
/** Characters of one log line a payload keeps at most. */
const LOG_LINE_MAX_CHARS = 300;

/** How loud an event is. */
export type Severity = 'info' | 'success' | 'warning' | 'error';

/** The run an event is about. */
export interface PayloadRun {
  id: string;
  name: string;
  host: string;
  cwd: string;
  source: string;
  kind: 'local' | 'slurm';
  jobId: string | null;
  startedAt: string;
  passes: number;
}

/** The JSON every target of the `json` style gets (and a command target in ZEROWIZ_PAYLOAD). */
export interface NotifyPayload {
  schema: typeof PAYLOAD_SCHEMA;
  event: NotifyEventKind;
  /** Unique per run and event (`RUN/end`, `RUN/pass-end/2`, `RUN/alert/2/cuda-oom`): a receiver can drop a repeat. */
  key: string;
  at: string;
  severity: Severity;
  title: string;
  /** The message for people, several lines. */
  text: string;
  run: PayloadRun;
  /** The pass the event is about (1-based `number`), or null. */
  pass: { number: number; name: string; status: string | null; exitCode: number | null; seconds: number | null } | null;
  /** How the run ended (the end event only). */
  outcome: {
    ended: 'succeeded' | 'failed' | 'interrupted';
    exitCode: number | null;
    wallSeconds: number | null;
    reason: string | null;
  } | null;
  loss: { last: number | string | null; min: number | null; source: string | null } | null;
  /** The highest GPU memory peak so far, against the estimate for the setup's mode. */
  gpu: { peakBytes: number; gpu: number; totalBytes: number | null; estimateBytes: number | null } | null;
  /** The measured time of a training step and what is left (the first-step event). */
  stepTime: {
    seconds: number;
    step: number;
    total: number | null;
    etaSeconds: number | null;
    predicted: { low: number; high: number } | null;
  } | null;
  alert: { id: string; title: string; fix: string; fatal: boolean; line: string } | null;
  /** The failing pass's last log lines (a failure only). */
  logTail: string[];
  /** The command that follows the run again. */
  attach: string;
  /** The run's HTML report, once written (the end event). */
  report: string | null;
}

/** The parts of a payload an event fills in; the rest come from the run. */
export type EventFacts = Partial<
  Pick<NotifyPayload, 'pass' | 'outcome' | 'loss' | 'gpu' | 'stepTime' | 'alert' | 'logTail' | 'report'>
>;

/** Makes one string of the run safe to send (control characters escaped), cut at `max` characters. */
export function clean(text: string, max = 2000): string {
  const p = printable(text);
  return p.length > max ? `${p.slice(0, max - 1)}…` : p;
}

/** The payload of an event. `at` in ms since the epoch. */
export function payloadOf(kind: NotifyEventKind, run: PayloadRun, facts: EventFacts, attach: string, at: number) {
  const p: NotifyPayload = {
    schema: PAYLOAD_SCHEMA,
    event: kind,
    key: eventKey(kind, run.id, facts),
    at: new Date(at).toISOString(),
    severity: severityOf(kind, facts),
    title: '',
    text: '',
    run: { ...run, name: clean(run.name, 200), source: clean(run.source, 500), cwd: clean(run.cwd, 1000) },
    pass: facts.pass ? { ...facts.pass, name: clean(facts.pass.name, 200) } : null,
    outcome: facts.outcome ? { ...facts.outcome, reason: nullableClean(facts.outcome.reason) } : null,
    loss: facts.loss ?? null,
    gpu: facts.gpu ?? null,
    stepTime: facts.stepTime ?? null,
    alert: facts.alert
      ? {
          ...facts.alert,
          title: clean(facts.alert.title),
          fix: clean(facts.alert.fix),
          line: clean(facts.alert.line, 500),
        }
      : null,
    logTail: (facts.logTail ?? []).slice(-LOG_TAIL_LINES).map((l) => clean(l, LOG_LINE_MAX_CHARS)),
    attach: clean(attach, 2000),
    report: nullableClean(facts.report ?? null),
  };
  p.title = titleOf(p);
  p.text = textOf(p);
  return p;
}

function nullableClean(s: string | null): string | null {
  return s === null ? null : clean(s);
}

/** The key that names one event of one run (the notifier sends each key once). */
export function eventKey(kind: NotifyEventKind, runId: string, f: EventFacts): string {
  if (kind === 'pass-end') return `${runId}/pass-end/${f.pass?.number ?? 0}`;
  if (kind === 'alert') return `${runId}/alert/${f.pass?.number ?? 0}/${f.alert?.id ?? ''}`;
  return `${runId}/${kind}`;
}

function severityOf(kind: NotifyEventKind, f: EventFacts): Severity {
  if (kind === 'alert') return f.alert?.fatal ? 'error' : 'warning';
  if (kind === 'end')
    return f.outcome?.ended === 'succeeded' ? 'success' : f.outcome?.ended === 'failed' ? 'error' : 'warning';
  if (kind === 'pass-end') return f.pass?.status === 'done' ? 'success' : 'error';
  return 'info';
}

/** The title: the setup, what happened, the headline number. */
function titleOf(p: NotifyPayload): string {
  const name = p.run.name;
  const pass = p.pass ? `pass ${p.pass.number}/${p.run.passes} ${p.pass.name}` : '';
  switch (p.event) {
    case 'started':
      return `${name} started on ${p.run.host}`;
    case 'first-step': {
      const st = p.stepTime;
      if (!st) return `${name}: the first training step ran`;
      return `${name}: ${formatSeconds(st.seconds)}/step${st.etaSeconds !== null ? `, ETA ${formatDuration(st.etaSeconds * 1000)}` : ''}`;
    }
    case 'alert':
      return `${name}: ${p.alert?.title ?? 'alert'}`;
    case 'pass-end': {
      const how = p.pass?.status === 'done' ? 'done' : (p.pass?.status ?? 'ended');
      return `${name}: ${pass} ${how}${p.pass?.seconds != null ? ` in ${formatDuration(p.pass.seconds * 1000)}` : ''}`;
    }
    case 'end': {
      const o = p.outcome;
      const took = o?.wallSeconds != null ? ` after ${formatDuration(o.wallSeconds * 1000)}` : '';
      const code = o?.ended === 'failed' && o.exitCode !== null ? ` (exit ${o.exitCode})` : '';
      return `${name} ${o?.ended ?? 'ended'}${took}${code}`;
    }
  }
}

/** The text: one fact a line, the log's tail for a failure, how to attach and where the report is. */
function textOf(p: NotifyPayload): string {
  const out: string[] = [`run ${p.run.id} on ${p.run.host}${p.run.jobId ? ` (Slurm job ${p.run.jobId})` : ''}`];
  if (p.pass)
    out.push(`pass ${p.pass.number}/${p.run.passes}: ${p.pass.name}${p.pass.status ? ` (${p.pass.status})` : ''}`);
  if (p.outcome?.reason) out.push(`why: ${p.outcome.reason}`);
  if (p.stepTime) out.push(stepTimeLine(p.stepTime));
  if (p.alert) out.push(`alert: ${p.alert.title}`, `fix: ${p.alert.fix}`);
  if (p.loss && p.loss.last !== null)
    out.push(`loss ${fmtLoss(p.loss.last)}${p.loss.min !== null ? ` (best ${fmtLoss(p.loss.min)})` : ''}`);
  if (p.gpu) out.push(gpuLine(p.gpu));
  if (p.logTail.length > 0) out.push('last lines of the log:', ...p.logTail.map((l) => `  ${l}`));
  out.push(`attach: ${p.attach}`);
  if (p.report) out.push(`report: ${p.report}`);
  return out.join('\n');
}

function stepTimeLine(st: NonNullable<NotifyPayload['stepTime']>): string {
  const of = st.total !== null ? ` of ${st.total}` : '';
  const eta = st.etaSeconds !== null ? `, ETA ${formatDuration(st.etaSeconds * 1000)}` : '';
  const pred = st.predicted
    ? ` (predicted ${formatSeconds(st.predicted.low)}-${formatSeconds(st.predicted.high)})`
    : '';
  return `step ${st.step}${of}: ${formatSeconds(st.seconds)}/step${pred}${eta}`;
}

function fmtLoss(v: number | string): string {
  return typeof v === 'number' ? (Math.abs(v) >= 1e-3 && Math.abs(v) < 1e4 ? v.toPrecision(4) : v.toExponential(3)) : v;
}

function gpuLine(g: NonNullable<NotifyPayload['gpu']>): string {
  const peak = `GPU memory peak ${formatGiB(g.peakBytes)} on GPU ${g.gpu}`;
  if (g.estimateBytes === null || g.estimateBytes <= 0) return peak;
  const pct = Math.round((g.peakBytes / g.estimateBytes - 1) * 100);
  return `${peak} vs estimated ${formatGiB(g.estimateBytes)} (${pct >= 0 ? '+' : ''}${pct}%)`;
}
