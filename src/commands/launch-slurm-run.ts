/**
 * The work of `zerowiz launch --slurm`, `zerowiz attach` and the Slurm part of `zerowiz runs`. The Slurm
 * logic lives in src/slurm/; this file turns it into commands: what is printed, the pane or stream mode,
 * signals (a Slurm job outlives the terminal: leaving never cancels it, only a confirmed stop does), and
 * exit codes.
 */
import type { CommandContext } from './context.js';
import type { UiLoaders } from '../ui.js';
import { RunError, UsageError } from '../errors.js';
import { displayDir, listRunRecords, readRecordSetup, type RunRecord } from '../launch/record.js';
import { writeErr } from '../terminal.js';
import { formatFindings, summaryLines } from '../launch/session.js';
import { StreamPrinter } from '../launch/stream.js';
import { loadPreset } from '../presets.js';
import type { Setup } from '../setup.js';
import { describeJob, pendingHint, queryJob } from '../slurm/job.js';
import {
  changeLines,
  checkCluster,
  dryRunRecordDir,
  dryRunStepLogs,
  followSession,
  planSlurmLaunch,
  slurmScript,
  submitSlurm,
  type SlurmRequest,
  type SlurmSession,
} from '../slurm/launch.js';
import { findRunRecord, settleRecord, slurmRunOpen } from '../slurm/record.js';
import { sbatchOptionsOf, type SbatchOptions } from '../slurm/script.js';
import { parseShapeFlag } from '../slurm/shape.js';
import { NO_SLURM_HINT, type SlurmContext } from '../slurm/tools.js';
import { whichSync } from '../launch/preflight.js';
import type { LaunchFlags, SlurmFlags } from './launch.js';

/** Lines the pane model keeps in stream mode (only for the failure tail). */
const STREAM_TAIL_RING_LINES = 200;

function ctxOf(): SlurmContext {
  return { env: process.env, cwd: process.cwd() };
}

const err = (line: string) => process.stderr.write(`zerowiz: ${line}\n`);

/** The setup and the request: from the preset and flags, or from the newest record (--last) and flags. */
async function resolveRequest(
  ref: string | undefined,
  flags: LaunchFlags & SlurmFlags,
): Promise<{ setup: Setup; source: string; req: SlurmRequest }> {
  const given = sbatchOptionsOf(flags);
  const nodes = flags.nodes !== undefined ? parseShapeFlag('--nodes', flags.nodes) : undefined;
  const gpus = flags.gpusPerNode !== undefined ? parseShapeFlag('--gpus-per-node', flags.gpusPerNode) : undefined;
  if (!flags.last) {
    if (ref === undefined)
      throw new UsageError(
        'which preset? give a preset name or file',
        'see `zerowiz preset list`, or `zerowiz launch --last` to submit the newest run again',
      );
    return { setup: await loadPreset(ref), source: ref, req: { nodes, gpusPerNode: gpus, options: given } };
  }
  if (ref !== undefined)
    throw new UsageError(
      'give either a preset or --last, not both',
      '`zerowiz launch --last` submits the newest record of `zerowiz runs` again',
    );
  const { records, damaged } = listRunRecords();
  const newest = records[0];
  for (const d of damaged) writeErr(`zerowiz: skipped a damaged run record: ${displayDir(d.path)}: ${d.problem}\n`);
  if (!newest)
    throw new UsageError('no run recorded in this directory', 'start one with `zerowiz launch NAME --slurm`');
  let setup: Setup;
  try {
    setup = readRecordSetup(newest);
  } catch (err) {
    throw new UsageError(
      `run record ${displayDir(newest.dir)} cannot be rerun: ${(err as Error).message}`,
      'launch the preset by name instead',
    );
  }
  const was = newest.json.slurm;
  const options: SbatchOptions = {
    partition: given.partition ?? was?.options.partition,
    time: given.time ?? was?.options.time,
    account: given.account ?? was?.options.account,
    qos: given.qos ?? was?.options.qos,
    extra: given.extra.length > 0 ? given.extra : (was?.options.extra ?? []),
  };
  return {
    setup,
    source: `--last (${newest.json.id})`,
    req: { nodes: nodes ?? was?.shape.nodes, gpusPerNode: gpus ?? was?.shape.gpusPerNode, options },
  };
}

/** `zerowiz launch NAME|FILE --slurm [...]` and `zerowiz launch --last` of a Slurm run. */
export async function slurmLaunchCommand(
  ref: string | undefined,
  flags: LaunchFlags & SlurmFlags,
  ctx: CommandContext,
): Promise<number> {
  const { setup, source, req } = await resolveRequest(ref, flags);
  return submitAndFollow(setup, source, req, flags, ctx);
}

/**
 * The wizard's "Submit to Slurm": the same plan, checks, submission and following as `zerowiz launch NAME
 * --slurm` (submitAndFollow), for the wizard's setup; resolves with the exit code.
 */
export async function slurmLaunchSetup(
  setup: Setup,
  source: string,
  req: SlurmRequest,
  runLogPane: UiLoaders['runLogPane'],
): Promise<number> {
  const ctx: CommandContext = { ui: { runWizard: async () => 2, runLogPane }, setExitCode: () => undefined };
  return submitAndFollow(setup, source, req, {}, ctx);
}

/** Plans, checks, submits and follows a setup as a Slurm job (a dry run prints the script instead). */
async function submitAndFollow(
  setup: Setup,
  source: string,
  req: SlurmRequest,
  flags: LaunchFlags & SlurmFlags,
  ctx: CommandContext,
): Promise<number> {
  const plan = planSlurmLaunch(setup, req, { source, accelerate: flags.accelerate, dryRun: flags.dryRun });
  for (const l of formatFindings(plan.findings)) err(l);
  for (const l of changeLines(plan)) err(`slurm: ${l}`);
  for (const l of formatFindings(plan.fit))
    err(`for ${plan.shape.nodes} node(s) x ${plan.shape.gpusPerNode} GPU(s): ${l}`);
  for (const w of plan.storage) err(`warning: ${w}`);

  const sctx = ctxOf();
  if (flags.dryRun) {
    const slurmHere = whichSync('sbatch', sctx.env) !== null;
    if (!slurmHere) plan.problems.push(`Slurm's sbatch is not on PATH`);
    else {
      try {
        await checkCluster(plan, sctx);
      } catch (e) {
        plan.problems.push((e as Error).message);
      }
    }
    for (const p of plan.problems) err(`note: ${p} (a real launch would stop here)`);
    const dir = dryRunRecordDir(plan);
    process.stdout.write(`# the sbatch script a real launch writes to ${displayDir(dir)}/job.sbatch and submits\n`);
    process.stdout.write(slurmScript(plan, dir, dryRunStepLogs(plan)));
    return 0;
  }

  await checkCluster(plan, sctx);
  const sub = await submitSlurm(plan, sctx);
  for (const n of sub.sbatchNotes) err(n);
  for (const w of sub.writes) if (w.status !== 'unchanged') err(`wrote ${displayDir(w.path)}`);
  err(
    `submitted Slurm job ${sub.jobId} (${plan.shape.nodes} node(s) x ${plan.shape.gpusPerNode} GPU(s)); record ${displayDir(sub.record.dir)}`,
  );
  return follow(sub.record, ctx, flags.tui !== false, { closeOnEnd: true, writes: sub.writes });
}

/** `zerowiz attach [RUN]`: follows a running or finished Slurm job of a record. */
export async function attachCommand(
  ref: string | undefined,
  flags: { tui?: boolean },
  ctx: CommandContext,
): Promise<number> {
  const rec = findRunRecord(ref);
  const s = rec.json.slurm;
  if (!s)
    throw new UsageError(
      `run ${rec.json.id} ran here, not as a Slurm job; there is nothing to attach to`,
      `its logs are in ${displayDir(rec.dir)}`,
    );
  if (!s.jobId)
    throw new UsageError(
      `run ${rec.json.id} was never submitted (sbatch did not answer)`,
      'submit it again with `zerowiz launch --last`',
    );
  const sctx = ctxOf();
  let alreadyOver = !slurmRunOpen(rec);
  if (!alreadyOver) {
    if (!whichSync('scontrol', sctx.env))
      throw new UsageError(
        `Slurm's scontrol is not on PATH, so zerowiz cannot ask about job ${s.jobId}`,
        `${NO_SLURM_HINT.split(';')[0]}; its logs so far are in ${displayDir(rec.dir)}`,
      );
    const r = await queryJob(s.jobId, sctx);
    if (!r.found) {
      if (!r.gone) throw new UsageError(r.message, 'check that Slurm answers here (`squeue`), then attach again');
      settleRecord(rec, null, true);
      if (slurmRunOpen(rec))
        throw new UsageError(
          `${r.message}; how it ended is not known (its output has no end mark)`,
          `its logs are in ${displayDir(rec.dir)}; \`zerowiz launch --last\` submits it again`,
        );
    } else if (r.job.final) settleRecord(rec, r.job, false);
    alreadyOver = !slurmRunOpen(rec);
  }
  err(`attaching to Slurm job ${s.jobId} (run ${rec.json.id})${alreadyOver ? ', which has ended' : ''}`);
  return follow(rec, ctx, flags.tui !== false, { closeOnEnd: !alreadyOver });
}

/** Follows a record's job in the pane or in stream mode, then prints the summary; resolves with the exit code. */
async function follow(
  rec: RunRecord,
  ctx: CommandContext,
  wantTui: boolean,
  opts: { closeOnEnd: boolean; writes?: import('../write.js').WriteResult[] },
): Promise<number> {
  const tui = wantTui && process.stdout.isTTY === true && process.stdin.isTTY === true;
  const session = followSession(rec, ctxOf(), {
    writes: opts.writes,
    ringLines: tui ? undefined : STREAM_TAIL_RING_LINES,
  });
  if (tui) {
    await leaveOnSignals(session, () =>
      ctx.ui.runLogPane({
        session,
        detach: () => session.follower.detach(),
        stopPrompt: `Cancel Slurm job ${session.jobId}? y: scancel · d: leave it running · any other key: keep watching`,
        closeOnEnd: opts.closeOnEnd,
      }),
    );
  } else {
    await streamJob(session);
  }
  return finish(session, tui);
}

/**
 * While the pane is up, SIGINT/SIGTERM/SIGHUP to zerowiz (a closed terminal, `kill`) leave the job
 * running and close the pane: only a confirmed stop in the pane cancels a job.
 */
async function leaveOnSignals<T>(session: SlurmSession, fn: () => Promise<T>): Promise<T> {
  const handler = () => session.follower.detach();
  const sigs: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of sigs) process.on(s, handler);
  try {
    return await fn();
  } finally {
    for (const s of sigs) process.off(s, handler);
  }
}

/**
 * Stream mode: plain lines prefixed with the pass name, the job's state as it changes. Ctrl+C asks (when
 * stdin is a terminal): y cancels the job, d leaves it running, anything else keeps following; a second
 * Ctrl+C at the question cancels. Without a terminal to ask, SIGINT, SIGTERM and SIGHUP leave the job
 * running.
 */
async function streamJob(session: SlurmSession): Promise<void> {
  const out = process.stdout;
  let closed = false;
  const onOutError = () => {
    closed = true;
  };
  out.on('error', onOutError);
  const f = session.follower;
  const printer = new StreamPrinter(
    { write: (s) => (closed ? undefined : out.write(s)) },
    session.model.steps.map((s) => s.name),
  );
  const n = session.model.steps.length;
  printer.note(
    `run ${session.record.json.id}: Slurm job ${session.jobId}, ${n} pass(es); record in ${displayDir(session.record.dir)}`,
  );
  f.onJob((j) => {
    const hint = j.phase === 'pending' ? pendingHint(j.reason) : null;
    printer.note(`job ${session.jobId}: ${describeJob(j)}${hint ? `: ${hint}` : ''}`);
  });
  f.subscribe({
    stepStart: (i) => {
      printer.stepStart(i);
      printer.note(`pass ${i + 1}/${n} ${session.model.steps[i]!.name} started on every node`);
    },
    line: (i, t) => printer.line(i, t),
    progress: (i, p) => printer.progress(i, p),
    stepEnd: (i, r) => printer.stepEnd(i, r),
    stopping: () => printer.note(`cancelling Slurm job ${session.jobId} (scancel)`),
  });

  let asking = false;
  const stdin = process.stdin;
  const onAnswer = (d: Buffer | string) => {
    if (!asking) return;
    asking = false;
    stdin.off('data', onAnswer);
    stdin.pause();
    const a = String(d).trim().toLowerCase();
    if (a === 'y' || a === 'yes') void f.stop();
    else if (a === 'd') f.detach();
    else printer.note('still following');
  };
  const onInt = () => {
    if (f.stopping) {
      f.killNow();
      return;
    }
    if (asking) {
      asking = false;
      stdin.off('data', onAnswer);
      stdin.pause();
      void f.stop();
      return;
    }
    if (stdin.isTTY !== true) {
      f.detach();
      return;
    }
    asking = true;
    printer.flush();
    process.stderr.write(
      `\nzerowiz: cancel Slurm job ${session.jobId}? y + Enter: scancel · d + Enter: stop following, the job keeps running · Enter: keep following (Ctrl+C again: cancel) `,
    );
    // stdin is read only while the question is open.
    stdin.on('data', onAnswer);
    stdin.resume();
  };
  const onLeave = () => f.detach();
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onLeave);
  process.on('SIGHUP', onLeave);
  try {
    await session.run();
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onLeave);
    process.off('SIGHUP', onLeave);
    stdin.off('data', onAnswer);
    stdin.pause();
    printer.flush();
    out.off('error', onOutError);
  }
}

/** The lines after following ends, and the exit code. */
function finish(session: SlurmSession, tui: boolean): number {
  const f = session.follower;
  const dir = displayDir(session.record.dir);
  if (f.detached) {
    const state = f.job ? describeJob(f.job) : 'submitted';
    err(`Slurm job ${session.jobId} keeps running (${state}); zerowiz no longer follows it`);
    err(`  follow it again: zerowiz attach ${session.record.json.id}`);
    err('  list the runs:    zerowiz runs');
    err(`  cancel it:        scancel ${session.jobId}`);
    return 0;
  }
  const o = f.result;
  if (tui) for (const l of summaryLines(session, { tail: true })) err(l);
  else for (const l of summaryLines(session, { tail: false, stepLine: false })) err(l);
  if (f.lost) err(f.lost);
  const state = f.job ? describeJob(f.job) : 'unknown';
  if (!o || o.exitCode === 0) {
    err(`Slurm job ${session.jobId}: ${state}`);
    return 0;
  }
  if (o.outcome === 'interrupted') throw new RunError(`Slurm job ${session.jobId} ${state}; logs in ${dir}`, 130);
  throw new RunError(`Slurm job ${session.jobId} ${state}; logs in ${dir}`, 1);
}

/** Refreshes the open Slurm runs among `records` from Slurm; returns a note when Slurm cannot be asked. */
export async function refreshSlurmRuns(records: RunRecord[]): Promise<string | null> {
  const open = records.filter((r) => slurmRunOpen(r) && r.json.slurm?.jobId);
  if (open.length === 0) return null;
  const sctx = ctxOf();
  if (!whichSync('scontrol', sctx.env))
    return "Slurm's scontrol is not on PATH here: Slurm runs show the last state zerowiz saw";
  for (const r of open) {
    const lookup = await queryJob(r.json.slurm!.jobId!, sctx);
    if (lookup.found) settleRecord(r, lookup.job, false);
    else settleRecord(r, null, lookup.gone);
  }
  return null;
}

/** A Slurm run's state for `zerowiz runs`: `slurm job 12 pending (Resources)`. */
export function slurmColumn(r: RunRecord): string {
  const s = r.json.slurm;
  if (!s) return '';
  if (!s.jobId) return 'slurm: not submitted';
  if (s.phase === 'unknown') return `slurm job ${s.jobId} unknown to Slurm now`;
  const job = {
    ...s,
    jobId: s.jobId,
    phase: s.phase,
    final: false,
    exitCode: null,
    signal: null,
    source: 'scontrol' as const,
  };
  return `slurm job ${s.jobId} ${describeJob(job)}`;
}
