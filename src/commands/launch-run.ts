/** The work of `zerowiz launch` and `zerowiz runs`; the pane is mounted through ctx.ui.runLogPane. */
import type { CommandContext } from './context.js';
import { RunError, UsageError } from '../errors.js';
import { loadPreset } from '../presets.js';
import type { Setup } from '../setup.js';
import { displayDir, listRunRecords, type RunRecord } from '../launch/record.js';
import {
  formatFindings,
  prepareLaunch,
  startLaunch,
  summaryLines,
  withStopSignals,
  type LaunchSession,
} from '../launch/session.js';
import { StreamPrinter, formatDuration } from '../launch/stream.js';

import { slurmFlagsGiven, type LaunchFlags } from './launch.js';

/** Lines the pane model keeps in stream mode (only for the failure tail). */
const STREAM_TAIL_RING_LINES = 200;

/** `zerowiz runs`. */
export async function runsCommand(opts: { json?: boolean }): Promise<void> {
  const records = listRunRecords();
  // Slurm runs still open get their state from Slurm first.
  const slurm = records.some((r) => r.json.slurm) ? await import('./launch-slurm-run.js') : null;
  const note = slurm ? await slurm.refreshSlurmRuns(records) : null;
  if (note) process.stderr.write(`zerowiz: ${note}\n`);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(records.map(recordSummary), null, 2)}\n`);
    return;
  }
  if (records.length === 0) {
    process.stdout.write(
      'no runs recorded in this directory yet (they go to .zerowiz/runs/); start one with `zerowiz launch NAME`\n',
    );
    return;
  }
  const w = Math.max(2, ...records.map((r) => r.json.id.length));
  process.stdout.write(`${'ID'.padEnd(w)}  ${'ENDED'.padEnd(11)}  EXIT  DURATION  STEPS\n`);
  for (const r of records) {
    const j = r.json;
    const dur = j.endedAt ? formatDuration(Date.parse(j.endedAt) - Date.parse(j.startedAt)) : '-';
    const steps = j.steps.map((s) => `${s.name}:${s.status}`).join(' ');
    const job = j.slurm && slurm ? `  ${slurm.slurmColumn(r)}` : '';
    process.stdout.write(
      `${j.id.padEnd(w)}  ${j.ended.padEnd(11)}  ${String(j.exitCode ?? '-').padStart(4)}  ${dur.padStart(8)}  ${steps}${job}\n`,
    );
  }
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
    steps: j.steps.map((s) => ({
      name: s.name,
      status: s.status,
      exitCode: s.exitCode,
      durationMs: s.durationMs,
      log: s.log,
    })),
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

async function resolveSetup(ref: string | undefined, flags: LaunchFlags): Promise<{ setup: Setup; source: string }> {
  if (flags.last) {
    if (ref !== undefined)
      throw new UsageError(
        'give either a preset or --last, not both',
        '`zerowiz launch --last` reruns the newest record of `zerowiz runs`',
      );
    const newest = listRunRecords()[0];
    if (!newest)
      throw new UsageError(
        'no run recorded in this directory',
        'start one with `zerowiz launch NAME` (records go to .zerowiz/runs/)',
      );
    const setup = newest.json.setup;
    if (!setup || !Array.isArray(setup.steps))
      throw new UsageError(
        `run record ${displayDir(newest.dir)} has no setup to rerun`,
        'launch the preset by name instead',
      );
    return { setup, source: `--last (${newest.json.id})` };
  }
  if (ref === undefined)
    throw new UsageError(
      'which preset? give a preset name or file',
      'see `zerowiz preset list`, or `zerowiz launch --last` to rerun the newest run',
    );
  return { setup: await loadPreset(ref), source: ref };
}

export async function launchCommand(ref: string | undefined, flags: LaunchFlags, ctx: CommandContext): Promise<number> {
  // Slurm (src/slurm/): --slurm, or --last when the newest run was a Slurm job.
  if (flags.slurm || (flags.last && listRunRecords()[0]?.json.slurm))
    return (await import('./launch-slurm-run.js')).slurmLaunchCommand(ref, flags, ctx);
  if (slurmFlagsGiven(flags))
    throw new UsageError(
      '--partition, --nodes, --gpus-per-node, --time, --account, --qos and --sbatch-arg only apply with --slurm',
      'add --slurm to submit the steps as a Slurm job',
    );
  const { setup, source } = await resolveSetup(ref, flags);
  const prepared = prepareLaunch(setup, { source, accelerate: flags.accelerate, dryRun: flags.dryRun });
  for (const l of formatFindings(prepared.findings)) process.stderr.write(`zerowiz: ${l}\n`);

  if (flags.dryRun) {
    for (const p of prepared.problems) process.stderr.write(`zerowiz: note: ${p} (a real launch would stop here)\n`);
    const configs = prepared.commands.some((c) => c.usesConfig)
      ? [setup.files.accelerateConfig, setup.files.dsConfig]
      : [];
    process.stdout.write(
      `# ${setup.name}: ${prepared.commands.length} step(s), run in order, each only if the previous one exited 0\n`,
    );
    if (configs.length > 0) process.stdout.write(`# a real launch first writes ${configs.join(' and ')}\n`);
    for (const c of prepared.commands) process.stdout.write(`${c.text}\n`);
    return 0;
  }

  const tui = flags.tui !== false && process.stdout.isTTY === true && process.stdin.isTTY === true;
  const session = await startLaunch(prepared, tui ? {} : { ringLines: STREAM_TAIL_RING_LINES });
  for (const w of session.writes) {
    if (w.status !== 'unchanged')
      process.stderr.write(`zerowiz: wrote ${w.path}${w.backup ? ` (previous content kept in ${w.backup})` : ''}\n`);
  }

  let code: number;
  if (tui) {
    code = await withStopSignals(session, () => ctx.ui.runLogPane({ session }));
    const lines = summaryLines(session, { tail: true });
    for (const l of lines) process.stderr.write(`zerowiz: ${l}\n`);
  } else {
    code = await withStopSignals(session, () => runStream(session));
  }
  return finish(session, code);
}

/** Runs a session in stream mode, writing to stdout; resolves with the exit code. */
export async function runStream(
  session: LaunchSession,
  out: { write(s: string): unknown } = process.stdout,
): Promise<number> {
  // A closed stdout (`| head`, a dead tmux pane) must not kill the run: the logs on disk keep everything.
  let outClosed = false;
  const onOutError = () => {
    outClosed = true;
  };
  if (out === process.stdout) process.stdout.on('error', onOutError);
  const printer = new StreamPrinter(
    { write: (s) => (outClosed ? undefined : out.write(s)) },
    session.model.steps.map((s) => s.name),
  );
  printer.note(
    `run ${session.record.json.id}: ${session.prepared.commands.length} step(s); record in ${displayDir(session.record.dir, session.prepared.cwd)}`,
  );
  session.pipeline.subscribe({
    stepStart: (i) => {
      printer.stepStart(i);
      printer.note(
        `step ${i + 1}/${session.prepared.commands.length} ${session.prepared.commands[i]!.step}: ${session.prepared.commands[i]!.text}`,
      );
    },
    line: (i, t) => printer.line(i, t),
    progress: (i, p) => printer.progress(i, p),
    stepEnd: (i, r) => printer.stepEnd(i, r),
    stopping: () => printer.stopping(),
  });
  const outcome = await session.run();
  for (const l of summaryLines(session, { tail: false, stepLine: false })) printer.note(l);
  printer.flush();
  if (out === process.stdout) process.stdout.off('error', onOutError);
  return outcome.exitCode;
}

function finish(session: LaunchSession, code: number): number {
  const o = session.pipeline.result;
  if (code === 0 || !o) return code;
  if (o.outcome === 'interrupted')
    throw new RunError(`stopped; logs in ${displayDir(session.record.dir, session.prepared.cwd)}`, 130);
  throw new RunError(`the run failed; logs in ${displayDir(session.record.dir, session.prepared.cwd)}`, 1);
}
