/**
 * What a run's report shows, gathered from its directory: the record (run.json, read through its schema), the
 * series files, the checkpoints' verdicts, the setup explained (every effective value with its source, as
 * `zerowiz explain` gives it), the config files it ran with, and the failing pass's last log lines. Everything
 * is read as untrusted input and bounded; what is missing is said, never guessed.
 */
import { join } from 'node:path';
import { readFirstBytes } from '../fs/index.js';
import type { Setup } from '../config/index.js';
import { DEFAULT_SCRIPT, explainSetup, type ExplainReport } from '../explain/index.js';
import {
  predictedStepTime,
  readRecordSetup,
  readRunRecord,
  type PredictedStepTime,
  type RunJson,
  type RunRecord,
} from '../records/index.js';
import { lastLogLines, type LiveStepJson, watchStepOf } from '../observe/index.js';
import { checkpointsOf, storedCheckpoints } from '../checkpoints/index.js';
import { UsageError } from '../text/index.js';
import { readSeries, type SeriesData } from './read-series.js';

/** Lines of the failing pass's log the report shows. */
export const FAILURE_TAIL_LINES = 40;
/** Bytes of each config file the report shows. */
export const CONFIG_SHOW_MAX_BYTES = 64 * 1024;

/** One pass as the report shows it. */
export interface PassView {
  index: number;
  name: string;
  status: string;
  command: string;
  usesConfig: boolean;
  startedAt: number | null;
  endedAt: number | null;
  exitCode: number | null;
  error: string | null;
  warning: string | null;
  live: LiveStepJson | null;
  /** Why the pass has no loss, when it has none and the setup says why. */
  noLossHint: string | null;
}

/** An alert on the time axis. */
export interface AlertView {
  at: number;
  pass: number;
  id: string;
  title: string;
  fix: string;
  fatal: boolean;
  line: string;
}

/** A checkpoint on the time axis (at: when it was written, null when unknown). */
export interface CheckpointView {
  path: string;
  at: number | null;
  verdict: 'ok' | 'bad';
  reason: string;
}

/** One GPU's peak over the training passes. */
export interface PeakView {
  gpu: number;
  usedBytes: number;
  totalBytes: number | null;
}

/** A config file the run used, as copied into its record. */
export interface ConfigFileView {
  path: string;
  text: string | null;
  cut: boolean;
}

/** Everything the report shows. */
export interface ReportData {
  dir: string;
  json: RunJson;
  generatedAt: number;
  setup: Setup | null;
  setupProblem: string | null;
  series: SeriesData;
  passes: PassView[];
  /** The time axis, ms since the epoch. */
  t0: number;
  t1: number;
  estimate: { mode: string; bytes: number } | null;
  predicted: PredictedStepTime | null;
  gpus: number | null;
  alerts: AlertView[];
  checkpoints: CheckpointView[];
  peaks: PeakView[];
  explain: ExplainReport | null;
  explainProblem: string | null;
  configFiles: ConfigFileView[];
  failure: { pass: string; lines: string[] } | null;
}

/** The record of a run directory; throws UsageError when it has none that reads. */
export function recordOf(dir: string): RunRecord {
  const r = readRunRecord(dir);
  if ('record' in r) return r.record;
  throw new UsageError(
    `no run record that can be read in ${dir}: ${r.damaged.problem}`,
    'give a run of `zerowiz runs` (its id or its directory)',
  );
}

function ms(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : null;
}

/** The passes, with what the setup says of a pass that logs no loss. */
function passesOf(json: RunJson, setup: Setup | null): PassView[] {
  const commands = json.steps.map((s) => ({ step: s.name, argv: s.argv, usesConfig: s.usesConfig, text: s.command }));
  return json.steps.map((s, i) => {
    let hint: string | null = null;
    if (setup) {
      try {
        hint = watchStepOf(setup, commands, json.cwd, i).noLossHint ?? null;
      } catch {}
    }
    return {
      index: i,
      name: s.name,
      status: s.status,
      command: s.command,
      usesConfig: s.usesConfig,
      startedAt: ms(s.startedAt),
      endedAt: ms(s.endedAt),
      exitCode: s.exitCode,
      error: s.error ?? null,
      warning: s.warning ?? null,
      live: s.live ?? null,
      noLossHint: hint,
    };
  });
}

function alertsOf(passes: readonly PassView[]): AlertView[] {
  const out: AlertView[] = [];
  for (const p of passes)
    for (const a of p.live?.alerts ?? []) {
      const at = ms(a.at);
      if (at !== null)
        out.push({ at, pass: p.index, id: a.id, title: a.title, fix: a.fix, fatal: a.fatal, line: a.line });
    }
  return out.sort((a, b) => a.at - b.at);
}

function checkpointsIn(rec: RunRecord): CheckpointView[] {
  let now: { path: string; verdict: 'ok' | 'bad'; reason: string }[] = [];
  try {
    now = checkpointsOf(rec);
  } catch {}
  const stored = storedCheckpoints(rec) ?? [];
  const when = new Map(stored.map((c) => [c.path, c.mtimeMs]));
  return now.map((c) => ({ ...c, at: when.get(c.path) ?? null }));
}

/** The most memory each GPU used in the passes that train with the setup (any pass when none does). */
function peaksOf(passes: readonly PassView[]): PeakView[] {
  const training = passes.filter((p) => p.usesConfig);
  const by = new Map<number, PeakView>();
  for (const p of training.length > 0 ? training : passes)
    for (const k of p.live?.gpu.peaks ?? []) {
      const cur = by.get(k.index);
      if (!cur || k.usedBytes > cur.usedBytes)
        by.set(k.index, { gpu: k.index, usedBytes: k.usedBytes, totalBytes: k.totalBytes });
    }
  return [...by.values()].sort((a, b) => a.gpu - b.gpu);
}

function explainOf(setup: Setup | null, json: RunJson): { explain: ExplainReport | null; problem: string | null } {
  if (!setup) return { explain: null, problem: 'the setup in run.json cannot be read back' };
  try {
    const explain = explainSetup(
      setup,
      setup.answers,
      { kind: 'setup', name: setup.name, path: null },
      { cwd: json.cwd, env: process.env, script: DEFAULT_SCRIPT },
      `run ${json.id}'s setup`,
    );
    return { explain, problem: null };
  } catch (e) {
    return { explain: null, problem: (e as Error).message };
  }
}

function configFilesOf(rec: RunRecord): ConfigFileView[] {
  return rec.json.configFiles.map((f) => {
    const got = /[/\\]/.test(f.copy) ? null : readFirstBytes(join(rec.dir, f.copy), CONFIG_SHOW_MAX_BYTES);
    return {
      path: f.path,
      text: got ? got.bytes.toString('utf8') : null,
      cut: got ? got.size > got.bytes.length : false,
    };
  });
}

function failureOf(rec: RunRecord): ReportData['failure'] {
  const j = rec.json;
  const i = j.steps.findIndex((s) => s.status === 'failed' || s.status === 'stopped');
  const s = j.steps[i];
  if (!s || /[/\\]/.test(s.log)) return null;
  return { pass: s.name, lines: lastLogLines(join(rec.dir, s.log), FAILURE_TAIL_LINES) };
}

/** The time axis: the run's start to its end (or the last thing seen, for a run still going). */
function axisOf(json: RunJson, series: SeriesData, generatedAt: number): { t0: number; t1: number } {
  const t0 = ms(json.startedAt) ?? generatedAt;
  let last = ms(json.endedAt);
  if (last === null) {
    last = t0;
    for (const l of series.losses.values()) if (l.times.length > 0) last = Math.max(last, l.times[l.times.length - 1]!);
    for (const g of series.gpus) if (g.times.length > 0) last = Math.max(last, g.times[g.times.length - 1]!);
    if (json.ended === 'running') last = Math.max(last, generatedAt);
  }
  return { t0, t1: Math.max(last, t0 + 1000) };
}

/** Gathers a run directory's report. */
export function gatherReport(dir: string, generatedAt = Date.now()): ReportData {
  const rec = recordOf(dir);
  const json = rec.json;
  let setup: Setup | null = null;
  let setupProblem: string | null = null;
  try {
    setup = readRecordSetup(rec);
  } catch (e) {
    setupProblem = (e as Error).message;
  }
  const series = readSeries(dir);
  const passes = passesOf(json, setup);
  const { explain, problem } = explainOf(setup, json);
  const est = json.estimate;
  return {
    dir,
    json,
    generatedAt,
    setup,
    setupProblem,
    series,
    passes,
    ...axisOf(json, series, generatedAt),
    estimate: est ? { mode: est.mode, bytes: est.gpuBytesPerGpu } : null,
    predicted: predictedStepTime(json),
    gpus: setup ? setup.answers.num_processes : null,
    alerts: alertsOf(passes),
    checkpoints: checkpointsIn(rec),
    peaks: peaksOf(passes),
    explain,
    explainProblem: problem,
    configFiles: configFilesOf(rec),
    failure: failureOf(rec),
  };
}
