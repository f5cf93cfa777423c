/**
 * The local run as a kind of run (./kind.ts): the steps run on this machine, owned by a supervisor process
 * (./supervisor.ts) that outlives the terminal; viewers follow its files (./follower.ts LocalFollower), stop it
 * with a signal to the supervisor, and leave it running with `d`, a closed terminal or a killed viewer.
 */
import { UsageError } from '../text/index.js';
import { ownerState } from '../proc/index.js';
import { LocalFollower, supervisorControl, type LocalRunControl } from './follower.js';
import type { KindFollow, OpenedRun, PreparedLaunch, RunKind } from './kind.js';
import { displayDir, readRunRecord, RUNS_DIR, saveRunJson, type RunRecord } from '../records/index.js';
import { startSupervisor, type StartedSupervisor } from './supervisor.js';
import { TelemetryMirror } from '../observe/index.js';
import { gracePeriods } from '../proc/index.js';
import { writeLaunchConfigFiles } from '../config/index.js';
import { ensureRunsRoot } from '../records/index.js';

/** The note a record gets when `runs` finds its supervisor gone and nobody ended it. */
export const ORPHAN_NOTE =
  "the run's supervisor and its watchdog ended before the run did (the machine restarted?); how the steps ended is not known";

/** How a viewer controls a local run: the in-process supervisor's methods (tests), or signals to its process. */
function controlOf(record: RunRecord, handle: StartedSupervisor | undefined): LocalRunControl {
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
  return supervisorControl(id);
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
      for (const w of writes) {
        if (w.status !== 'unchanged')
          ctx.say(
            `wrote ${displayDir(w.path, prepared.cwd)}${w.backup ? ` (previous content kept in ${w.backup})` : ''}`,
          );
      }
      // A stop that came while the files were written: nothing starts, and there is no record.
      if (ctx.stopRequested()) return null;
      const sup = await startSupervisor(
        {
          version: 1,
          cwd: prepared.cwd,
          source: prepared.source,
          setup: prepared.setup,
          accelerate: { path: exe.path, display: exe.display },
          commands: prepared.commands,
          skipChecks: prepared.skipChecks,
          topologyWarnings: prepared.topologyWarnings,
          estimate: prepared.estimate ?? null,
        },
        prepared.env,
      );
      const r = readRunRecord(sup.dir);
      if (!('record' in r)) throw new UsageError(`the run record ${sup.dir} cannot be read: ${r.damaged.problem}`);
      return { record: r.record, writes, handle: sup };
    },
    follow(opened, _prepared, hooks): KindFollow {
      const telemetry = new TelemetryMirror();
      const control = new LocalFollower({
        dir: opened.record.dir,
        json: opened.record.json,
        control: controlOf(opened.record, opened.handle as StartedSupervisor | undefined),
        telemetry,
        onAlert: hooks.onAlert,
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

/** Whether a local record's run still goes: ended `running`, and its supervisor runs. */
export function localRunOpen(record: RunRecord): boolean {
  return record.json.ended === 'running' && ownerState(record.json.supervisor) !== 'gone';
}

/**
 * Settles local records that say `running` while nobody runs them (the supervisor gone and its watchdog too,
 * e.g. after a reboot): `interrupted`, with a note. Saved only when the directory is the user's own.
 */
export function settleOrphans(records: RunRecord[]): void {
  for (const r of records) {
    if (r.json.slurm || r.json.ended !== 'running') continue;
    if (ownerState(r.json.supervisor) !== 'gone') continue;
    // Give a dying supervisor's watchdog its chance: read again, it may have ended the record meanwhile.
    const again = readRunRecord(r.dir);
    if ('record' in again && again.record.json.ended !== 'running') {
      r.json = again.record.json;
      continue;
    }
    const at = new Date().toISOString();
    for (const s of r.json.steps) {
      if (s.status === 'running') {
        s.status = 'stopped';
        s.endedAt = at;
        s.warning = 'zerowiz does not know how this step ended';
      }
    }
    r.json.ended = 'interrupted';
    r.json.exitCode = null;
    r.json.endedAt = at;
    r.json.note = ORPHAN_NOTE;
    saveRunJson(r);
  }
}

/** The local kind for an existing record (attach): the same follower. */
export function attachKind(): RunKind {
  return localKind();
}
