/**
 * A Slurm job's watch on its batch node: a job has no supervisor beside it, so the batch script starts
 * `zerowiz __zerowiz-job-watch RUN_DIR JOB_ID` in the background (with the node runtime and zerowiz's bin the
 * login node used: ./script.ts). It follows the job's files as a viewer does (the `zerowiz-step` marks of the
 * job's output, each pass's log, the pass's loss.csv) and does what a local run's supervisor does besides
 * running the steps (../launch/run-outputs.ts): it writes the series the report draws (losses.csv,
 * progress.csv: no GPU series, nobody watches the nodes' GPUs) into the record, and sends the notifications to
 * the targets in ZEROWIZ_NOTIFY, which sbatch hands the job from the submitting environment (never in a file;
 * the passes do not get it): started, the first training step, each alert, each pass's end, and the job's end,
 * which the batch shell marks as it exits (`zerowiz-job end RC MS`, also on a time limit or a scancel: SIGTERM)
 * and then waits for this process. The node must reach each URL (or run each command): many clusters' compute
 * nodes have no internet, and only a proxy or a local relay (a `mail` command) reaches out from there.
 */
import { join } from 'node:path';
import { RunFollower } from '../launch/index.js';
import { LineSplitter, type LineSink } from '../observe/index.js';
import { alertContextOf, watchOfRun } from '../launch/index.js';
import type { PipelineOutcome } from '../observe/index.js';
import { readRunRecord, setupOfRecord, type RunRecord } from '../records/index.js';
import { Tail } from '../fs/index.js';
import { RunOutputs } from '../launch/index.js';
import { targetsFromEnv } from '../notify/index.js';
import { printable } from '../text/index.js';
import { parseStepMark, type StepMark } from './script.js';

/** How often the job's files are read on the node. */
const JOB_WATCH_POLL_MS = 500;
/**
 * After SIGTERM (Slurm ends the job: a time limit, a scancel; every process of the job gets it, and SIGKILL
 * after KillWait, 30 s by default), how long the end mark is waited for before the job is taken as ended.
 */
export const TERM_END_WAIT_MS = 1_000;

/** The job's end mark, parsed: `zerowiz-job end RC MS`, or null. */
export function parseJobEnd(line: string): { code: number; at: number } | null {
  const m = /^zerowiz-job end (-?\d+) (\d+)\s*$/.exec(line);
  return m ? { code: Number(m[1]), at: Number(m[2]) } : null;
}

/** How a job ended, from its marks and the batch shell's exit status (143: SIGTERM, a time limit or scancel). */
export function jobOutcome(steps: number, marks: readonly StepMark[], code: number): Omit<PipelineOutcome, 'results'> {
  const exits = marks.filter((m) => m.kind === 'exit');
  const failed = exits.find((m) => m.kind === 'exit' && m.code !== 0);
  const started = marks.filter((m) => m.kind === 'start').map((m) => m.step);
  const unfinished = started.find((s) => !exits.some((e) => e.step === s));
  if (code === 143 || code === 130 || (unfinished !== undefined && failed === undefined))
    return { outcome: 'interrupted', exitCode: 130, failedStep: unfinished ?? failed?.step ?? null };
  if (failed || code !== 0) return { outcome: 'failed', exitCode: 1, failedStep: failed?.step ?? null };
  return {
    outcome: exits.length === steps ? 'succeeded' : 'failed',
    exitCode: exits.length === steps ? 0 : 1,
    failedStep: null,
  };
}

/** Follows a job's files on its batch node until the batch shell marks the end. */
export class JobWatch extends RunFollower {
  private readonly jobTail: Tail;
  private readonly splitter = new LineSplitter();
  private readonly marks: StepMark[] = [];
  private end: { code: number; at: number } | null = null;
  private termAt: number | null = null;

  constructor(
    private readonly record: RunRecord,
    jobOutput: string,
  ) {
    super(record.json.steps.map((s) => ({ name: s.name, logPath: join(record.dir, s.log) })));
    this.jobTail = new Tail(jobOutput);
  }

  /** Not a viewer: the job is the batch shell's to end. */
  async stop(): Promise<void> {}
  killNow(): void {}

  /** Slurm is ending the job (SIGTERM): the end mark is awaited a moment, then taken as SIGTERM's. */
  terminating(): void {
    this.termAt ??= Date.now();
    this.wakeUp();
  }

  private waitedEnough(): boolean {
    return this.termAt !== null && Date.now() - this.termAt >= TERM_END_WAIT_MS;
  }

  private readFiles(): void {
    const sink: LineSink = {
      line: (text) => {
        const end = parseJobEnd(text);
        if (end) this.end = end;
        const m = parseStepMark(text);
        if (!m) return;
        this.marks.push(m);
        if (m.kind === 'start') this.startStep(m.step, { at: m.at, pid: null });
        else {
          const startedAt = this.marks.find((x) => x.step === m.step && x.kind === 'start')?.at ?? m.at;
          const r = {
            status: m.code === 0 ? 'done' : 'failed',
            exitCode: m.code,
            signal: null,
            startedAt,
            endedAt: m.at,
          } as const;
          this.endStep(m.step, r);
        }
      },
      partial: () => {},
    };
    this.jobTail.drain((b) => this.splitter.feed(b, sink));
    this.readLogs();
  }

  protected async loop(): Promise<PipelineOutcome> {
    while (!this.detached && this.end === null && !this.waitedEnough()) {
      this.readFiles();
      if (this.end === null) await this.sleep(this.termAt === null ? JOB_WATCH_POLL_MS : 100);
    }
    this.readFiles();
    const end = this.end ?? { code: 143, at: Date.now() };
    const o = jobOutcome(this.record.json.steps.length, this.marks, end.code);
    // A pass that started and has no exit mark ended with the job.
    this.started.forEach((s, i) => {
      if (s && !this.ended[i])
        this.endStep(i, { status: 'stopped', exitCode: null, signal: null, startedAt: end.at, endedAt: end.at });
    });
    return this.finish(o.exitCode, o.failedStep, o.outcome);
  }
}

/**
 * `zerowiz __zerowiz-job-watch RUN_DIR JOB_ID`, on the batch node: follows the job to its end, writing the series
 * the report draws (losses, the progress bar) into the record and sending the notifications, then exits. The
 * record's run.json is the login node's viewer's to keep; this process only adds the series files.
 */
export async function jobWatchMain(args: readonly string[]): Promise<void> {
  const [dir, jobId] = args;
  if (!dir || !jobId) return;
  process.on('SIGHUP', () => undefined);
  const r = readRunRecord(dir);
  if (!('record' in r)) {
    process.stderr.write(`zerowiz: the job's watch: ${printable(r.damaged.path)}: ${printable(r.damaged.problem)}\n`);
    return;
  }
  const rec = r.record;
  try {
    targetsFromEnv(process.env);
  } catch (e) {
    // Said here, in the job's watch log (the record is the viewer's); the series are still written.
    process.stderr.write(`zerowiz: ${printable((e as Error).message)}\n`);
  }
  const outputs = new RunOutputs({
    record: rec,
    env: process.env,
    telemetryIntervalMs: JOB_WATCH_POLL_MS,
    job: { id: jobId },
  });
  const setup = setupOfRecord(rec);
  const commands = rec.json.steps.map((s) => ({
    step: s.name,
    argv: s.argv,
    usesConfig: s.usesConfig,
    text: s.command,
  }));
  const watch = watchOfRun({ setup, commands, cwd: rec.json.cwd }, alertContextOf(setup, null), {
    noTelemetry: "the job's GPUs are watched by nobody on the nodes",
    onLoss: outputs.onLoss,
  });
  const follower = new JobWatch(rec, join(rec.dir, `job-${jobId}.out`));
  // Slurm's SIGTERM to every process of an ending job: this one stays to close the series and say it ended.
  process.on('SIGTERM', () => follower.terminating());
  follower.subscribe(watch);
  follower.subscribe(outputs);
  outputs.start(watch, null);
  const o = await follower.run();
  await watch.close();
  for (const [file, why] of Object.entries(outputs.closeSeries()))
    process.stderr.write(`zerowiz: the series ${file} stopped: ${why}\n`);
  await outputs.notifyEnd(o, null);
}
