/**
 * A Slurm job as a kind of run (src/launch/kind.ts): `zerowiz launch --slurm` plans and submits the job
 * (./launch.ts), `zerowiz attach` takes a record's job; a viewer then follows it through its files
 * (./follow.ts), as every run is followed. What differs is said here: the job outlives zerowiz (signals
 * leave it, only a confirmed stop cancels it), its GPUs are on its nodes (no telemetry here), its viewer
 * keeps its record (nothing else runs beside the job), and its end is said with the job's state.
 */
import {
  preparedOfRecord,
  recordCommands,
  type KindFollow,
  type OpenedRun,
  type PreparedLaunch,
  type RunKind,
} from '../launch/index.js';
import { formatFindings } from '../launch/index.js';
import { prepareCommands } from '../config/index.js';
import { displayDir, setupOfRecord, type RunRecord } from '../records/index.js';
import type { Setup } from '../config/index.js';
import { whichSync } from '../proc/index.js';
import { SlurmFollower } from './follow.js';
import { describeJob, timeoutHint } from './job.js';
import {
  changeLines,
  checkCluster,
  dryRunRecordDir,
  dryRunStepLogs,
  planSlurmLaunch,
  slurmScript,
  submitSlurm,
  type SlurmPlan,
  type SlurmRequest,
} from './launch.js';
import { slurmSetup } from './shape.js';
import type { SlurmContext } from './tools.js';
import { formatWrite } from '../fs/index.js';

/** What the summary says instead of GPU figures: nvidia-smi here sees none of the job's GPUs. */
const SLURM_NO_TELEMETRY = "the GPUs are on the job's nodes";

/** The kind's parts that follow a job, shared by launch --slurm and attach. */
function followingKind(ctx: SlurmContext): Omit<RunKind, 'open'> {
  return {
    name: 'slurm',
    runsHere: false,
    noTelemetry: SLURM_NO_TELEMETRY,
    signalsStop: false,
    follow(opened: OpenedRun): KindFollow {
      const control = new SlurmFollower({ record: opened.record, ctx });
      return { control, telemetry: null, keepsRecord: true, alertsGiven: false, record: () => opened.record };
    },
    panePrompt: (json) => {
      const jobId = json.slurm?.jobId ?? '?';
      return `Cancel Slurm job ${jobId}? y: scancel · d: leave it running · any other key: keep watching`;
    },
    streamQuestion: (json) => {
      const jobId = json.slurm?.jobId ?? '?';
      return `cancel Slurm job ${jobId}? y + Enter: scancel · d + Enter: stop following, the job keeps running · Enter: keep following (Ctrl+C again: cancel)`;
    },
    streamIntro: (rec, cwd) =>
      `run ${rec.json.id}: Slurm job ${rec.json.slurm?.jobId ?? '?'}, ${rec.json.steps.length} pass(es); record in ${displayDir(rec.dir, cwd)}`,
    stepIntro: (rec, i) => `pass ${i + 1}/${rec.json.steps.length} ${rec.json.steps[i]?.name} started on every node`,
    stoppingNote: (rec) => `cancelling Slurm job ${rec.json.slurm?.jobId ?? '?'} (scancel)`,
    endLines(rec, cwd, how) {
      const fl = how.control as SlurmFollower;
      const jobId = fl.jobId;
      if (how.left) {
        return [
          `Slurm job ${jobId} keeps running (${fl.job ? describeJob(fl.job) : 'submitted'}); zerowiz no longer follows it`,
          `  follow it again: zerowiz attach ${rec.json.id}`,
          '  list the runs:    zerowiz runs',
          `  cancel it:        zerowiz stop ${rec.json.id} (or scancel ${jobId})`,
        ];
      }
      const out: string[] = [];
      if (fl.lost) out.push(fl.lost);
      const state = fl.job ? describeJob(fl.job) : 'unknown';
      const o = fl.result;
      if (!o || o.exitCode === 0) out.push(`Slurm job ${jobId}: ${state}`);
      else out.push(`Slurm job ${jobId} ${state}; logs in ${displayDir(rec.dir, cwd)}`);
      if (fl.job?.phase === 'timeout') out.push(`  ${timeoutHint(fl.job)}`);
      return out;
    },
  };
}

/** `zerowiz launch --slurm`: plan the job for its shape, submit it, follow it. */
export function slurmLaunchKind(request: SlurmRequest, ctx: SlurmContext): RunKind {
  let plan: SlurmPlan | null = null;
  const planned = () => {
    if (!plan) throw new Error('the Slurm plan is made by prepare()');
    return plan;
  };
  return {
    ...followingKind(ctx),
    prepare(setup, opts) {
      const p = planSlurmLaunch(setup, request, {
        source: opts.source,
        accelerate: opts.accelerate,
        dryRun: opts.dryRun,
        env: opts.env ?? ctx.env,
        cwd: opts.cwd ?? ctx.cwd,
        skipCheck: opts.skipCheck,
        speedTest: opts.speedTest,
      });
      plan = p;
      const lines = [
        ...formatFindings(p.findings),
        ...changeLines(p).map((l) => `slurm: ${l}`),
        ...formatFindings(p.fit).map((l) => `for ${p.shape.nodes} node(s) x ${p.shape.gpusPerNode} GPU(s): ${l}`),
        ...p.storage.map((w) => `warning: ${w}`),
      ];
      const prepared: PreparedLaunch = {
        // The setup as the job runs it: the estimate and the fixes are for the job's shape.
        setup: p.slurm,
        source: p.source,
        cwd: p.cwd,
        env: p.env,
        exe: p.exe,
        commands: prepareCommands(p.slurm, p.exe ?? { display: opts.accelerate ?? 'accelerate' }),
        findings: p.findings,
        problems: p.problems,
        skipChecks: p.skipChecks,
        topologyWarnings: opts.topologyWarnings ?? [],
      };
      return { prepared, lines };
    },
    async dryRun(prepared, out, say) {
      const p = planned();
      if (whichSync('sbatch', prepared.env) === null) p.problems.push(`Slurm's sbatch is not on PATH`);
      else {
        try {
          await checkCluster(p, ctx);
        } catch (e) {
          p.problems.push((e as Error).message);
        }
      }
      for (const x of p.problems) say(`note: ${x} (a real launch would stop here)`);
      const dir = dryRunRecordDir(p);
      out.write(
        `# the sbatch script a real launch writes to ${displayDir(dir, prepared.cwd)}/job.sbatch and submits\n`,
      );
      out.write(slurmScript(p, dir, dryRunStepLogs(p), { checks: true }));
    },
    async open(prepared, octx) {
      const p = planned();
      await checkCluster(p, ctx);
      if (octx.stopRequested()) return null;
      const sub = await submitSlurm(p, ctx);
      for (const n of sub.sbatchNotes) octx.say(n);
      for (const w of sub.writes)
        if (w.status !== 'unchanged') octx.say(formatWrite(w, (p) => displayDir(p, prepared.cwd)));
      octx.say(
        `submitted Slurm job ${sub.jobId} (${p.shape.nodes} node(s) x ${p.shape.gpusPerNode} GPU(s)); record ${displayDir(sub.record.dir, prepared.cwd)}`,
      );
      return {
        record: sub.record,
        writes: sub.writes,
        prepared: { ...prepared, commands: recordCommands(sub.record) },
      };
    },
  };
}

/**
 * The setup a Slurm record's job runs (its shape applied), for the estimate and the fixes; a setup that can
 * no longer be read (a damaged record) leaves them out, and following still works.
 */
export function recordJobSetup(record: RunRecord): Setup {
  const setup = setupOfRecord(record);
  const shape = record.json.slurm?.shape;
  if (!shape || setup.steps.length === 0) return setup;
  return slurmSetup(setup, shape).setup;
}

/** `zerowiz attach`: follow the job of an existing record (running or finished). */
export function slurmAttachKind(record: RunRecord, ctx: SlurmContext): RunKind {
  return {
    ...followingKind(ctx),
    prepare(setup, opts) {
      const prepared = preparedOfRecord(record, setup, { source: opts.source, env: ctx.env });
      return { prepared, lines: [] };
    },
    async open() {
      return { record, writes: [] };
    },
  };
}
