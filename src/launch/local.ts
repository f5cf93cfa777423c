/**
 * The local run as a kind of run (./kind.ts): the steps run on this machine, owned by a supervisor process
 * (./supervisor.ts) that outlives the terminal; viewers follow its files (./follower.ts LocalFollower), stop it
 * with a signal to the supervisor, and leave it running with `d`, a closed terminal or a killed viewer.
 */
import { UsageError } from '../text/index.js';
import { LocalFollower, supervisorControl, type LocalRunControl } from './follower.js';
import type { KindFollow, OpenedRun, PreparedLaunch, RunKind } from './kind.js';
import { displayDir, readRunRecord, RUNS_DIR, type RunRecord } from '../records/index.js';
import { localRunState, stepProcesses, stopOrphans } from './orphans.js';
import { startSupervisor, type StartedSupervisor } from './supervisor-start.js';
import { binPath } from './bin.js';
import { TelemetryMirror } from '../observe/index.js';
import { gracePeriods } from '../proc/index.js';
import { writeLaunchConfigFiles } from '../config/index.js';
import { formatWrite } from '../fs/index.js';
import { ensureRunsRoot } from '../records/index.js';

/**
 * The supervisors this process started, by record directory: a viewer here wakes when one ends; and without a bin
 * (the unit tests run the sources) a run's supervisor is an object here, not a process to signal.
 */
const started = new Map<string, StartedSupervisor>();

/** How a local run is controlled (a viewer, `zerowiz stop`): signals to its supervisor's process, or the in-process one's methods. */
export function localRunControl(record: RunRecord): LocalRunControl {
  const handle = started.get(record.dir);
  if (handle?.stop && handle.killNow) {
    let over = false;
    void handle.done.then(() => {
      over = true;
    });
    return {
      stop: () => {
        handle.stop!();
        return null;
      },
      killNow: () => {
        handle.killNow!();
        return null;
      },
      alive: () => !over,
    };
  }
  const id = record.json.supervisor;
  if (!id) return { stop: () => 'the run has no supervisor', killNow: () => null, alive: () => false };
  const sup = supervisorControl(id);
  // An orphaned run (its supervisor and watchdog gone, its steps alive) is stopped here, with the ladder.
  const orphaned = () => localRunState(record).kind === 'orphaned';
  const stopOrphaned = (now: boolean) => {
    void stopOrphans(record, { now, say: () => undefined });
    return null;
  };
  return {
    stop: () => (orphaned() ? stopOrphaned(false) : sup.stop()),
    killNow: () => (orphaned() ? stopOrphaned(true) : sup.killNow()),
    alive: () => sup.alive() || stepProcesses(record).length > 0,
  };
}

/** The local kind: a launch starts a supervisor; `attach` follows one. */
export function localKind(): RunKind {
  return {
    name: 'local',
    runsHere: true,
    signalsStop: true,
    async open(prepared: PreparedLaunch, ctx): Promise<OpenedRun | null> {
      const { exe } = prepared;
      if (!exe)
        throw new UsageError(
          'accelerate is not on PATH',
          'activate the Python environment that has accelerate and deepspeed, or pass --accelerate PATH',
        );
      // The record's folders must be the user's own before anything is written (another user's, or a link,
      // is refused here with its owner named).
      ensureRunsRoot(prepared.cwd, RUNS_DIR);
      const writes = await writeLaunchConfigFiles(prepared.setup, prepared.cwd);
      for (const w of writes) if (w.status !== 'unchanged') ctx.say(formatWrite(w, (p) => displayDir(p, prepared.cwd)));
      // A stop that came while the files were written: nothing starts, and there is no record.
      if (ctx.stopRequested()) return null;
      // Without a bin (the unit tests run the sources) the supervisor runs in this process.
      const start = binPath() === null ? (await import('./supervisor.js')).startInProcess : startSupervisor;
      const sup = await start(
        {
          version: 1,
          cwd: prepared.cwd,
          source: prepared.source,
          setup: prepared.setup,
          accelerate: { path: exe.path, display: exe.display },
          commands: prepared.commands,
          skipChecks: prepared.skipChecks,
          ...(prepared.skipWhy ? { skipWhy: prepared.skipWhy } : {}),
          topologyWarnings: prepared.topologyWarnings,
          ...(prepared.firstPassLines ? { firstPassLines: prepared.firstPassLines } : {}),
          ...(prepared.recordBlock ? { recordBlock: prepared.recordBlock } : {}),
          estimate: prepared.estimate ?? null,
        },
        prepared.env,
      );
      const r = readRunRecord(sup.dir);
      if (!('record' in r)) throw new UsageError(`the run record ${sup.dir} cannot be read: ${r.damaged.problem}`);
      started.set(sup.dir, sup);
      return { record: r.record, writes };
    },
    follow(opened, _prepared, hooks): KindFollow {
      const telemetry = new TelemetryMirror();
      const control = new LocalFollower({
        dir: opened.record.dir,
        json: opened.record.json,
        control: localRunControl(opened.record),
        telemetry,
        onAlert: hooks.onAlert,
        ended: started.get(opened.record.dir)?.done,
      });
      return { control, telemetry, keepsRecord: false, alertsGiven: true, record: () => control.record };
    },
    panePrompt: () => {
      const g = gracePeriods();
      return `Stop the run? y/q/Ctrl+C: stop (SIGINT, SIGTERM after ${g.sigintMs / 1000}s, SIGKILL ${g.sigtermMs / 1000}s later) · d: leave it running · any other key: keep watching`;
    },
    streamQuestion: () =>
      'stop the run? y + Enter: stop it (SIGINT, then SIGTERM, then SIGKILL) · d + Enter: stop following, the run goes on · Enter: keep following (Ctrl+C again: stop)',
    stoppingNote: () => "stopping: SIGINT to the step's process group (Ctrl+C again to kill at once)",
    endLines(record, cwd, how) {
      const where = displayDir(record.dir, cwd);
      if (how.left) return leftLines(record, cwd);
      const o = how.control.result;
      if (how.code === 0 || !o) return [];
      return [o.outcome === 'interrupted' ? `stopped; logs in ${where}` : `the run failed; logs in ${where}`];
    },
  };
}

/** What to say when a viewer leaves a run that goes on. */
export function leftLines(record: RunRecord, _cwd: string): string[] {
  const id = record.json.id;
  return [
    `run ${id} keeps running; zerowiz no longer follows it`,
    `  follow it again: zerowiz attach ${id}`,
    `  stop it:         zerowiz stop ${id}`,
    '  list the runs:   zerowiz runs',
  ];
}

/** Whether a local record's run still goes: its owner runs it, or its steps outlive their owner (orphaned). */
export function localRunOpen(record: RunRecord): boolean {
  const k = localRunState(record).kind;
  return k === 'running' || k === 'orphaned' || k === 'elsewhere';
}
