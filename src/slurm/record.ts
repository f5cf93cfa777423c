/**
 * Run records of Slurm jobs. The record directory (.zerowiz/runs/<id>/) holds what the job reads and
 * writes: the configs written for the job's shape, the sbatch script, the job's output (`job-<id>.out`)
 * and one log per pass; run.json says which job it is and its last known state. The job writes into
 * the record, so the record must be on storage the compute nodes see (see ./preflight.ts).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  createRunRecord,
  pendingStepJson,
  readRunRecord,
  releaseReserve,
  saveRunJson,
  type RunRecord,
} from '../records/index.js';
import type { PipelineOutcome, StepStatus } from '../observe/index.js';
import { shellWord } from '../text/index.js';
import { PRIVATE_EXEC_MODE, Tail, unpinDir } from '../fs/index.js';
import { writeRecordFile } from '../records/index.js';
import { printable } from '../text/index.js';
import { redactArgv, redactSetup, secretGuards } from '../text/index.js';
import { toLaunchCommands, type Setup } from '../config/index.js';
import { isFinalPhase, type JobInfo } from './job.js';
import { STEP_MARK, parseStepMark, type SbatchOptions, type StepMark } from './script.js';
import type { SlurmShape } from './shape.js';

export type { SlurmRunJson } from './schema.js';

/** File names in a Slurm record. */
export const SCRIPT_FILE = 'job.sbatch';
/** The job's own output (the batch shell's lines), `%j` being the job id. */
export const JOB_OUTPUT_PATTERN = 'job-%j.out';

/** The job's output file of a record (once the job id is known). */
export function jobOutputPath(rec: RunRecord): string | null {
  const s = rec.json.slurm;
  if (!s?.jobId) return null;
  return join(rec.dir, s.output.replace('%j', s.jobId));
}

/**
 * Opens a record for a Slurm job (before submitting): the directory, the steps with their log names,
 * and run.json with `slurm.jobId` null. The caller writes the configs and the script into it, then
 * submits and calls `recordSubmitted` or, if sbatch refused, `discardRecord`.
 */
export function createSlurmRecord(opts: {
  cwd: string;
  /** The setup as given (what `launch --last` resubmits). */
  setup: Setup;
  /** The setup as it runs (the job's shape). */
  slurmSetup: Setup;
  source: string;
  accelerate: { path: string; display: string };
  shape: SlurmShape;
  options: SbatchOptions;
  changes: string[];
  commandTexts: string[];
  now?: Date;
}): RunRecord {
  const rec = createRunRecord({
    cwd: opts.cwd,
    // No secret in the record (../redact.ts): `launch --last` takes them back from the environment.
    setup: redactSetup(opts.setup),
    source: opts.source,
    commands: [],
    accelerate: opts.accelerate,
    now: opts.now,
  });
  const now = (opts.now ?? new Date()).toISOString();
  const commands = toLaunchCommands(opts.slurmSetup);
  rec.json.steps = commands.map((c, i) =>
    pendingStepJson({ ...c, argv: redactArgv(c.argv), text: opts.commandTexts[i] ?? '' }, i),
  );
  rec.json.slurm = {
    jobId: null,
    cluster: null,
    shape: opts.shape,
    options: opts.options,
    script: SCRIPT_FILE,
    output: JOB_OUTPUT_PATTERN,
    changes: opts.changes,
    submittedAt: now,
    state: 'SUBMITTING',
    phase: 'pending',
    reason: null,
    nodeList: null,
    checkedAt: now,
  };
  writeRecordFile(
    join(rec.dir, 'commands.sh'),
    [
      '#!/bin/sh',
      `# zerowiz run ${rec.json.id} (${printable(rec.json.name)}): a Slurm job. Submits its sbatch script again`,
      "# (the new job writes into this record's log files; `zerowiz launch --last` makes a new record instead).",
      'set -e',
      // The job takes each secret from the environment sbatch hands it (../redact.ts).
      ...secretGuards(commands.map((c) => c.argv)),
      `cd ${shellWord(opts.cwd)}`,
      `sbatch ${shellWord(join(rec.dir, SCRIPT_FILE))}`,
      '',
    ].join('\n'),
    PRIVATE_EXEC_MODE,
  );
  saveRunJson(rec);
  return rec;
}

/** Records the job id sbatch gave. */
export function recordSubmitted(rec: RunRecord, jobId: string, cluster: string | null): void {
  const s = rec.json.slurm!;
  s.jobId = jobId;
  s.cluster = cluster;
  s.state = 'PENDING';
  s.phase = 'pending';
  saveRunJson(rec);
}

/** The state of a record whose sbatch answered without naming a job (the job may run: the record stays). */
export const UNKNOWN_SUBMISSION = 'UNKNOWN';

/**
 * A record made for a job that sbatch has not answered for yet (`launch --slurm` makes the record, writes the
 * job's files, then submits): waits, re-reading it, until sbatch's answer is recorded, the submission failed
 * (the record is gone), or sbatch's time (`waitMs`, from the record's start) has passed. `stop` and `attach` in
 * that window answer for the job, instead of calling it never submitted. Returns the job id, or null.
 */
export async function awaitSubmission(rec: RunRecord, waitMs: number, pollMs: number): Promise<string | null> {
  const until = Date.parse(rec.json.startedAt) + waitMs;
  for (;;) {
    const id = rec.json.slurm?.jobId;
    if (id) return id;
    if (rec.json.slurm?.state === UNKNOWN_SUBMISSION || Date.now() >= until) return null;
    await new Promise((res) => setTimeout(res, pollMs));
    const r = readRunRecord(rec.dir);
    if (!('record' in r)) return null;
    rec.json = r.record.json;
  }
}

/** Removes a record whose job was never submitted (zerowiz made every file in it). */
export function discardRecord(rec: RunRecord): void {
  unpinDir(rec.dir);
  rmSync(rec.dir, { recursive: true, force: true });
}

/** The longest line kept while the job's output is scanned for marks (a mark is a short line). */
const MARK_LINE_MAX_BYTES = 4096;

/**
 * The marks of a job's output file, read as every file of a run is read back (a regular file of the user's
 * own, never through a link: ../fs/tail.ts) and scanned a slice at a time, so an output of any size costs a
 * slice of memory; a FIFO, a link or another user's file gives no marks.
 */
export function outputMarks(path: string): StepMark[] {
  const tail = new Tail(path);
  const marks: StepMark[] = [];
  let carry = '';
  tail.drain((b) => {
    const lines = (carry + b.toString('latin1')).split('\n');
    carry = lines.pop() ?? '';
    if (carry.length > MARK_LINE_MAX_BYTES) carry = '';
    for (const line of lines) {
      if (!line.includes(STEP_MARK)) continue;
      const m = parseStepMark(Buffer.from(line, 'latin1').toString('utf8'));
      if (m) marks.push(m);
    }
  });
  const last = parseStepMark(carry);
  if (last) marks.push(last);
  return marks;
}

/** How a job's steps and the run ended, from Slurm's final state and the marks of its output. */
export interface JobEnding {
  outcome: PipelineOutcome['outcome'];
  exitCode: PipelineOutcome['exitCode'];
  steps: { status: StepStatus; exitCode: number | null; startedAt: number | null; endedAt: number | null }[];
  failedStep: number | null;
}

/**
 * The steps as the marks say, finished by the job's end: a pass that started and has no exit mark was
 * stopped (cancelled, timed out) or failed with the job (node failure, out of memory).
 */
export function jobEnding(stepCount: number, marks: StepMark[], job: JobInfo | null, endedAt: number): JobEnding {
  const steps: JobEnding['steps'] = Array.from({ length: stepCount }, () => ({
    status: 'pending' as StepStatus,
    exitCode: null,
    startedAt: null,
    endedAt: null,
  }));
  for (const m of marks) {
    const s = steps[m.step];
    if (!s) continue;
    if (m.kind === 'start') {
      s.status = 'running';
      s.startedAt = m.at;
    } else {
      s.status = m.code === 0 ? 'done' : 'failed';
      s.exitCode = m.code;
      s.endedAt = m.at;
    }
  }
  const stopped = job?.phase === 'cancelled' || job?.phase === 'timeout';
  for (const s of steps) {
    if (s.status !== 'running') continue;
    s.status = stopped ? 'stopped' : 'failed';
    s.endedAt = endedAt;
  }
  // Slurm signals the job's steps before the batch shell at a time limit or a scancel: the shell may live
  // long enough to write the pass's exit mark (srun's 143, say). That pass was stopped by the job's end,
  // not failed by itself; it keeps the code it wrote.
  const last = steps.findLastIndex((s) => s.status !== 'pending');
  if (stopped && last !== -1 && steps[last]!.status === 'failed') steps[last]!.status = 'stopped';
  const failedStep = steps.findIndex((s) => s.status === 'failed' || s.status === 'stopped');
  const allDone = steps.every((s) => s.status === 'done');
  const outcome: JobEnding['outcome'] =
    job?.phase === 'cancelled'
      ? 'interrupted'
      : allDone && (job === null || job.phase === 'done')
        ? 'succeeded'
        : 'failed';
  return {
    outcome,
    exitCode: outcome === 'succeeded' ? 0 : outcome === 'interrupted' ? 130 : 1,
    steps,
    failedStep: failedStep === -1 ? null : failedStep,
  };
}

/** Saves the state Slurm reported (only when it changed, or always with `force`). */
export function recordJobState(rec: RunRecord, job: JobInfo, force = false): void {
  const s = rec.json.slurm;
  if (!s) return;
  const changed = s.state !== job.state || s.reason !== job.reason || s.nodeList !== job.nodeList;
  s.state = job.state;
  s.phase = job.phase;
  s.reason = job.reason;
  s.nodeList = job.nodeList ?? s.nodeList;
  s.checkedAt = new Date().toISOString();
  if (changed || force) saveRunJson(rec);
}

/** Records how the job ended: the final state, each step, the outcome. */
export function recordJobEnd(rec: RunRecord, job: JobInfo | null, ending: JobEnding, endedAt = Date.now()): void {
  const j = rec.json;
  ending.steps.forEach((s, i) => {
    const st = j.steps[i];
    if (!st) return;
    st.status = s.status;
    st.exitCode = s.exitCode;
    st.startedAt = s.startedAt === null ? st.startedAt : new Date(s.startedAt).toISOString();
    st.endedAt = s.endedAt === null ? st.endedAt : new Date(s.endedAt).toISOString();
    st.durationMs = s.startedAt !== null && s.endedAt !== null ? s.endedAt - s.startedAt : st.durationMs;
  });
  j.ended = ending.outcome;
  j.exitCode = ending.exitCode;
  j.endedAt = new Date(endedAt).toISOString();
  // The record is final: its space reserve goes back to the disk (first: on a full disk it is the room the last
  // save needs).
  releaseReserve(rec.dir);
  if (job) recordJobState(rec, job, true);
  else saveRunJson(rec);
}

/** Whether a record is a Slurm run that has not ended as far as zerowiz knows. */
export function slurmRunOpen(rec: RunRecord): boolean {
  return rec.json.slurm !== undefined && rec.json.ended === 'running';
}

/**
 * Settles an open Slurm record from what Slurm says now: saves the state, and when the job is over, the
 * steps and the outcome from its output's marks. Returns the job (null when Slurm does not know it).
 */
export function settleRecord(rec: RunRecord, job: JobInfo | null, gone: boolean): void {
  const s = rec.json.slurm;
  if (!s) return;
  const out = jobOutputPath(rec);
  const marks = out ? outputMarks(out) : [];
  if (job) {
    if (!isFinalPhase(job.phase)) {
      recordJobState(rec, job);
      return;
    }
    recordJobEnd(rec, job, jobEnding(rec.json.steps.length, marks, job, Date.now()));
    return;
  }
  if (!gone) return;
  // Slurm no longer knows the job: the marks decide when they can (every pass ended, or one failed);
  // otherwise the record keeps `running` and says the state is unknown, never a guessed outcome.
  const ending = jobEnding(rec.json.steps.length, marks, null, Date.now());
  const conclusive =
    ending.steps.every((x) => x.status === 'done') || marks.some((m) => m.kind === 'exit' && m.code !== 0);
  s.state = 'UNKNOWN';
  s.phase = 'unknown';
  s.checkedAt = new Date().toISOString();
  if (conclusive) recordJobEnd(rec, null, ending);
  else saveRunJson(rec);
}
