/**
 * Starting a local run's supervisor process (./supervisor.ts is the process itself): the protocol between a
 * launch and its supervisor (the plan on stdin, one hello line on stdout), and a supervisor started ahead of its plan
 * so that it loads while the launch is checked. Light on purpose: the launch loads this, not the supervisor's code.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { CheckId } from '../checks/index.js';
import type { LaunchSource, PreparedCommand, Setup } from '../config/index.js';
import type { RunEstimate } from '../rules/index.js';
import { UsageError } from '../text/index.js';
import { NOTIFY_ENV } from '../notify/index.js';
import { binPath, SUPERVISOR_ARG } from './bin.js';

/** What the launching zerowiz hands its run's supervisor (JSON on the supervisor's stdin). */
export interface SupervisorPlan {
  version: 1;
  /** The directory the steps run in (the record goes to .zerowiz/runs/ under it). */
  cwd: string;
  /** What was launched. */
  source: LaunchSource;
  setup: Setup;
  accelerate: { path: string; display: string };
  commands: PreparedCommand[];
  /** The checks left out before each pass (--skip-check, ZEROWIZ_SKIP_CHECKS); every id: no checks. */
  skipChecks?: CheckId[];
  /** What left each of them out, for the pass logs; the ones the command line gave are kept in the record. */
  skipWhy?: Partial<Record<CheckId, string>>;
  /** Topology warnings of a relaunch that went on without asking (kept in run.json). */
  topologyWarnings?: { checkpoint: string; warning: string }[];
  /** A kind's block of run.json, by the kind's name (PreparedLaunch.recordBlock). */
  recordBlock?: Record<string, unknown>;
  /** The first pass's checks as the launch ran them before it started (all passed): written, not run again. */
  firstPassLines?: string[];
  /** The estimate the launch made of the setup's mode (its peak and step time), for the record; absent: made here. */
  estimate?: RunEstimate | null;
  /**
   * The run's notification targets, ZEROWIZ_NOTIFY's text as the launch had it when it handed the plan over (null:
   * none): a supervisor started before the launch knew them (warmSupervisor) takes them from here, on its stdin,
   * never from a file. Set by startSupervisor.
   */
  notify?: string | null;
}

/** The supervisor's one line to its launcher: the record it opened, or why it could not. */
export type SupervisorHello =
  | { ok: true; dir: string; id: string; pid: number }
  | { ok: false; message: string; hint?: string };

/** The hint when a record cannot be created. */
export const RECORD_HINT =
  'free some space there (or make it writable), or launch from another directory: records go to .zerowiz/runs/ under the current one';

/** A started supervisor, as its launcher holds it. */
export interface StartedSupervisor {
  dir: string;
  id: string;
  /** Resolves when the run is over: in process, when run() resolved; as a process, when it exited. */
  done: Promise<void>;
  /** In process only (no bin): stops the run the way the supervisor's signals do. */
  stop?: () => void;
  killNow?: () => void;
}

/** A supervisor process started ahead of its plan (warmSupervisor), with the environment and directory it has. */
let warm: { child: ChildProcess; env: NodeJS.ProcessEnv; cwd: string } | null = null;

/**
 * Starts a run's supervisor process ahead of its plan, while the launch still checks the setup: it loads its code
 * meanwhile (on the other core, when there is one) and then waits for its plan on stdin. startSupervisor hands the
 * plan to it; a launch that ends without one (refused, or stopped first) leaves it the end of its stdin, and it ends
 * without doing anything. Without a bin (the unit tests) there is nothing to start.
 */
export function warmSupervisor(env: NodeJS.ProcessEnv, cwd: string): void {
  const bin = binPath();
  if (bin === null || warm !== null) return;
  const child = spawn(process.execPath, [bin, SUPERVISOR_ARG], {
    cwd,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  child.on('error', () => undefined);
  child.stdin!.on('error', () => undefined);
  // Nothing of it keeps zerowiz running until a plan is handed to it.
  child.unref();
  (child.stdin as Socket).unref();
  (child.stdout as Socket).unref();
  warm = { child, env, cwd };
}

/**
 * Lets the supervisor warmSupervisor started go (the launch is of another kind: a Slurm job): the end of its stdin,
 * and it ends without doing anything, instead of waiting beside a launch that may follow a job for days.
 */
export function releaseWarmSupervisor(): void {
  warm?.child.stdin?.end();
  warm = null;
}

/** The supervisor process warmSupervisor started, when it has this environment and directory; else a new one. */
function supervisorProcess(bin: string, env: NodeJS.ProcessEnv, cwd: string): ChildProcess {
  const w = warm;
  warm = null;
  if (w && w.env === env && w.cwd === cwd && w.child.exitCode === null && w.child.signalCode === null) {
    (w.child.stdin as Socket).ref();
    (w.child.stdout as Socket).ref();
    return w.child;
  }
  w?.child.stdin?.end();
  return spawn(process.execPath, [bin, SUPERVISOR_ARG], {
    cwd,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
}

/**
 * Starts a run's supervisor as its own process (in its own session, the plan on stdin, stdout read for the hello
 * line, its stderr into supervisor.log of the run directory once it is made), the one warmSupervisor started when
 * there is one. Throws UsageError when the record cannot be created.
 */
export async function startSupervisor(plan: SupervisorPlan, env: NodeJS.ProcessEnv): Promise<StartedSupervisor> {
  const bin = binPath();
  if (bin === null) throw new Error('a supervisor process needs the bin (setBinPath)');
  const child = supervisorProcess(bin, env, plan.cwd);
  const done = new Promise<void>((res) => {
    child.on('exit', () => res());
    child.on('error', () => res());
  });
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(JSON.stringify({ ...plan, notify: env[NOTIFY_ENV] ?? null }));
  let text = '';
  child.stdout!.setEncoding('utf8');
  const hello = await new Promise<SupervisorHello | null>((res) => {
    child.stdout!.on('data', (d: string) => {
      text += d;
    });
    child.stdout!.on('close', () => {
      try {
        res(JSON.parse(text.split('\n')[0] ?? '') as SupervisorHello);
      } catch {
        res(null);
      }
    });
    child.on('error', () => res(null));
  });
  child.unref();
  if (!hello) throw new UsageError('the run could not be started: its supervisor ended at once', RECORD_HINT);
  if (!hello.ok) throw new UsageError(hello.message, hello.hint);
  return { dir: hello.dir, id: hello.id, done };
}
