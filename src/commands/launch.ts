/**
 * `zerowiz launch NAME|FILE [--dry-run] [--no-tui] [--accelerate PATH]`, `zerowiz launch --last`, `zerowiz
 * runs` and `zerowiz stop RUN`. The run lives in src/launch/; the work is in launch-run.ts, runs-run.ts and
 * attach-run.ts, loaded when the command runs.
 */
import { Option, type Command } from 'commander';
import type { CommandContext } from './context.js';
import { SIGINT_GRACE_MS, SIGTERM_GRACE_MS } from '../proc/index.js';
import type { LaunchFlags } from './launch-flags.js';
import { TOPOLOGY_CHOICE_TEXT, TOPOLOGY_CHOICES } from '../checkpoints/index.js';
import { chosenKindFlag, kindOptions, runKinds } from './run-kinds.js';

/** Registers `launch` and `runs`. */
export function registerLaunch(program: Command, ctx: CommandContext): void {
  const launch = program
    .command('launch')
    .argument('[preset]', 'a preset name (see `zerowiz preset list`) or a preset file')
    .description('run the steps of a preset (`accelerate launch` commands) in a live log pane, and keep a run record')
    .option('--dry-run', 'check everything and print the exact commands, then exit without running')
    .option('--no-tui', 'plain lines prefixed with the step name (also used when stdout is not a terminal)')
    .addOption(
      new Option(
        '--accelerate <path>',
        'the accelerate executable (default: ZEROWIZ_ACCELERATE, else `accelerate` on PATH)',
      ),
    )
    .option('--last', 'run the newest run record of this directory again')
    .option(
      '--csv-log',
      'add --enable_csv_log to DiffSynth-Studio training steps that lack it, for this run only (their loss then shows); asked on a terminal',
    )
    .option('--no-csv-log', 'do not add --enable_csv_log (and do not ask)')
    .option(
      '--pin-step <name>',
      "run this step with zerowiz's accelerate config without DeepSpeed (accelerate_no_deepspeed.yaml, written beside the setup's), e.g. a data pass that accelerate's default config would run under DeepSpeed (repeatable; the run record keeps it for --last)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--skip-check <id>',
      'leave this check out before each pass (an id of `zerowiz check --help`, comma-separated ids, or all; repeatable)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--no-speed-test', 'leave the NVMe read/write test out of the checks before each pass')
    .addOption(
      new Option(
        '--on-topology-change <way>',
        `when the output folders hold DeepSpeed checkpoints written with another stage, process count or precision: ${TOPOLOGY_CHOICES.map((c) => `${c} (${TOPOLOGY_CHOICE_TEXT[c]})`).join('; ')}. Default: asked on a terminal, else go-on`,
      ).choices([...TOPOLOGY_CHOICES]),
    )
    .option(
      '--notify <target>',
      "where to send the run's events (started, first step, alerts, each pass's end, the end): a URL (ntfy, a Slack, Discord or Teams webhook, any JSON endpoint) or a command such as \"mail -s {title} me@example.org\" (repeatable; also a preset's notify: list and ZEROWIZ_NOTIFY); see `zerowiz notify --help`",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    );
  // The other kinds' flags (src/commands/run-kinds.ts: `--slurm` and the job's shape), after the local run's.
  for (const o of kindOptions()) launch.addOption(o);
  launch
    .addHelpText(
      'after',
      [
        '',
        'Steps run in order; a step starts only when the previous one exited 0. Exit codes: 0 all steps done',
        '(or you left the run running), 1 a step failed, 130 stopped, 2 bad input (missing preset, accelerate or',
        'training script, an invalid setup, or a check before a pass that failed).',
        'Before each pass the checks of `zerowiz check` run for that pass (on every node of a Slurm job); their',
        'lines begin the pass log, and a FAIL ends the run before the pass starts (--skip-check ID leaves one out;',
        'ZEROWIZ_SKIP_CHECKS=ID,... or all does the same from the environment).',
        'The run belongs to no terminal: a supervisor process owns it, and the pane or stream mode only follow its',
        'files. Closing the terminal, d in the pane, or killing this zerowiz leaves it running (`zerowiz attach',
        'RUN` follows it again, `zerowiz stop RUN` stops it). Stopping (q then y in the pane, Ctrl+C confirmed',
        `in stream mode, SIGTERM, or \`zerowiz stop\`) sends SIGINT to the step's whole process group, SIGTERM after`,
        `${SIGINT_GRACE_MS / 1000} s, SIGKILL after ${SIGTERM_GRACE_MS / 1000} s more (ZEROWIZ_SIGINT_GRACE_MS / ZEROWIZ_SIGTERM_GRACE_MS change`,
        'them); a second Ctrl+C kills at once. Without a terminal (a script, CI) zerowiz follows the run to its',
        'end, and SIGINT/SIGTERM stop it. If the supervisor is killed, its watchdog stops the steps. A full disk',
        'stops the logs, never the run.',
        'Each run is recorded in .zerowiz/runs/<YYYYmmdd-HHMMSS>-<name>/ (config files used, commands.sh,',
        'one log per step, run.json); see `zerowiz runs`.',
        // The other kinds of run (src/commands/run-kinds.ts): a Slurm job.
        ...runKinds().flatMap((k) => ['', ...k.help]),
      ].join('\n'),
    )
    .action(async (ref: string | undefined, flags: LaunchFlags) => {
      // A local run's supervisor starts first and loads its code while this zerowiz loads the launch's and checks
      // the setup (it ends at once, doing nothing, if the launch is refused or turns out to be of another kind).
      if (!flags.dryRun && chosenKindFlag(flags) === null)
        (await import('../launch/supervisor-start.js')).warmSupervisor(process.env, process.cwd());
      ctx.setExitCode(await (await import('./launch-run.js')).launchCommand(ref, flags, ctx));
    });

  program
    .command('runs')
    .description(
      'list the run records of this directory, newest first (Slurm runs with their state refreshed from Slurm)',
    )
    .option(
      '--json',
      'print JSON: [{id, dir, name, source, kind, startedAt, endedAt, ended, exitCode, supervisor: {pid} | null, orphans: [{pid, pgid, command}], estimate: {mode, gpuBytesPerGpu} | null, steps: [{name, status, exitCode, durationMs, log, gpuPeak: {gpu, usedBytes, totalBytes} | null, loss: {last, min, source} | null, alerts: [{id, title, fatal}]}], checkpoints: [{path, verdict: ok|bad, reason}], report: PATH | null, otherFiles: [{path, owners}], topology: {stage, offloadOptimizer, offloadParam, worldSize, nodes, precision, versions} | null, slurm?: {jobId, state, phase, reason, nodeList}}]',
    )
    .action(async (opts: { json?: boolean }) => (await import('./runs-run.js')).runsCommand(opts));

  program
    .command('stop')
    .argument('[run]', 'a run id of `zerowiz runs` (or a unique part of it), its directory, or the Slurm job id')
    .description(
      'stop a run from any terminal (a local run: the stop ladder; a Slurm job: scancel); returns when it has ended',
    )
    .option('--now', 'a local run: SIGKILL to the steps at once instead of the ladder')
    .addHelpText(
      'after',
      [
        '',
        `A local run's steps get SIGINT, SIGTERM after ${SIGINT_GRACE_MS / 1000} s and SIGKILL after ${SIGTERM_GRACE_MS / 1000} s more, so the`,
        'training can save; a stop asked while one is under way joins it (only --now kills at once). A run whose',
        'supervisor and watchdog are gone while its steps still run (orphaned, see `zerowiz runs`) is stopped by',
        'stop itself, with the same ladder. A stop that waits says what for (a supervisor stopped by SIGSTOP or in',
        'a frozen cgroup: --now then kills the steps directly). A Slurm job is cancelled with scancel. Exit codes:',
        '0 the run has ended (stopped now or before), 2 no such run, or it cannot be stopped from here (another',
        'host, another user). See docs/stopping.md.',
      ].join('\n'),
    )
    .action(async (ref: string | undefined, flags: { now?: boolean }) => {
      ctx.setExitCode(await (await import('./attach-run.js')).stopCommand(ref, flags));
    });
}
