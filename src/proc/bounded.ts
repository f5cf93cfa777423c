/**
 * Every short-lived child zerowiz starts (the Python probe, nvidia-smi, dd, the topology's Python, ...) runs
 * bounded in time and in its own process group:
 *
 * - it is the leader of its own group, registered with the groups zerowiz kills when it exits (./group.ts);
 * - at its timeout, or when `signal` aborts (a stop of the run), the whole group gets SIGKILL;
 * - once the child has exited, what is left of its group is killed, and its output is waited for at most
 *   OUTPUT_AFTER_EXIT_MS: a process that left the group (a daemon in its own session) and still holds the
 *   output never holds zerowiz;
 * - a SIGINT, SIGTERM or SIGHUP to a zerowiz that has no handler of its own for it (a plain command such as
 *   `check`) kills the groups first, then ends zerowiz as the signal would have.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { killAllGroupsNow, signalGroup, trackGroup, untrackGroup } from './group.js';

/** How long a child's output may stay open after it exited before zerowiz stops reading it. */
export const OUTPUT_AFTER_EXIT_MS = 250;
/** The output kept of a child at most (the rest is cut: what zerowiz reads of one is small). */
const DEFAULT_MAX_BUFFER_BYTES = 4 * 2 ** 20;

/** Options of a bounded child. */
export interface BoundedOptions {
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Ends the child (and its group) early: a stop of the run. */
  signal?: AbortSignal;
  /** Bytes of stdout and of stderr kept at most. */
  maxBuffer?: number;
}

/** How a bounded child ended. */
export interface BoundedResult {
  /** Its exit code, or null when a signal ended it (or it never ran). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  /** Why it could not be started (ENOENT, EACCES), or null. */
  error: NodeJS.ErrnoException | null;
}

const TERMINATING: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let running = 0;
const installed = new Map<NodeJS.Signals, () => void>();

/** While bounded children run, a signal nobody else handles kills their groups before it ends zerowiz. */
function guardSignals(): void {
  if (running++ > 0) return;
  for (const sig of TERMINATING) {
    if (process.listenerCount(sig) > 0) continue;
    const onSignal = () => {
      killAllGroupsNow();
      unguardSignals(true);
      process.kill(process.pid, sig);
    };
    installed.set(sig, onSignal);
    process.on(sig, onSignal);
  }
}

function unguardSignals(all = false): void {
  if (!all && --running > 0) return;
  running = 0;
  for (const [sig, f] of installed) process.off(sig, f);
  installed.clear();
}

/** Collects a stream up to `max` bytes. */
function collect(stream: NodeJS.ReadableStream | null, max: number): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  stream?.on('data', (c: Buffer) => {
    if (size >= max) return;
    chunks.push(c.subarray(0, max - size));
    size += Math.min(c.length, max - size);
  });
  stream?.on('error', () => undefined);
  return () => Buffer.concat(chunks).toString('utf8');
}

/** Resolves once the child's streams closed, or OUTPUT_AFTER_EXIT_MS after `exited`. */
function outputDone(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  const closed = new Promise<void>((res) => child.on('close', () => res()));
  const late = exited.then(() => new Promise<void>((res) => setTimeout(res, OUTPUT_AFTER_EXIT_MS)));
  return Promise.race([closed, late]);
}

/**
 * Runs `file args` bounded (see the module comment); resolves with how it ended. Never throws, never waits
 * past its timeout plus OUTPUT_AFTER_EXIT_MS.
 */
export async function runBounded(file: string, args: readonly string[], opts: BoundedOptions): Promise<BoundedResult> {
  const max = opts.maxBuffer ?? DEFAULT_MAX_BUFFER_BYTES;
  const out: BoundedResult = {
    code: null,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    aborted: false,
    error: null,
  };
  if (opts.signal?.aborted) return { ...out, aborted: true };
  let child: ChildProcess;
  try {
    child = spawn(file, [...args], { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  } catch (e) {
    return { ...out, error: e as NodeJS.ErrnoException };
  }
  const stdout = collect(child.stdout, max);
  const stderr = collect(child.stderr, max);
  const pgid = child.pid;
  if (pgid !== undefined) trackGroup(pgid);
  guardSignals();
  const kill = () => {
    if (pgid !== undefined) signalGroup(pgid, 'SIGKILL');
  };
  const exited = new Promise<void>((res) => {
    child.on('exit', (code, signal) => {
      out.code = code;
      out.signal = signal;
      res();
    });
    child.on('error', (e) => {
      out.error = e as NodeJS.ErrnoException;
      res();
    });
  });
  const timer = setTimeout(() => {
    out.timedOut = true;
    kill();
  }, opts.timeoutMs);
  const onAbort = () => {
    out.aborted = true;
    kill();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await exited;
    // What the child left in its group is no longer wanted; a process that left the group is not waited on.
    kill();
    await outputDone(child, exited);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    child.stdout?.destroy();
    child.stderr?.destroy();
    if (pgid !== undefined) untrackGroup(pgid);
    unguardSignals();
  }
  return { ...out, stdout: stdout(), stderr: stderr() };
}
