/**
 * The processes of a pass as /proc shows them, for the health watch: every process of the pass's process
 * group with its state, the kernel function it sleeps in (wchan), the bytes it has written (wchar, from
 * /proc/PID/io) and its RANK (torchrun puts RANK and LOCAL_RANK in each worker's environment); and what a
 * stalled one is doing by `py-spy dump` when py-spy is installed. Linux only; anything unreadable is left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { runBounded } from '../proc/index.js';
import { whichSync } from '../proc/index.js';
import { parsePySpyDump } from './stall.js';

/** How long one `py-spy dump` may take. */
export const PY_SPY_TIMEOUT_MS = 5000;

/** One process of a pass. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  /** R, S, D, Z, T, ... */
  state: string;
  command: string;
  wchan: string;
  /** Bytes written so far (any file, pipe or socket), null when /proc/PID/io cannot be read. */
  wcharBytes: number | null;
  /** RANK and LOCAL_RANK from the environment, null when absent. */
  rank: number | null;
  localRank: number | null;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** /proc/PID/stat's fields after the command (which may hold spaces and parentheses). */
export function parseStat(text: string): { command: string; state: string; ppid: number; pgrp: number } | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const rest = text.slice(close + 2).split(' ');
  return {
    command: text.slice(open + 1, close),
    state: rest[0] ?? '?',
    ppid: Number(rest[1]),
    pgrp: Number(rest[2]),
  };
}

function envInt(environ: string | null, key: string): number | null {
  if (!environ) return null;
  for (const kv of environ.split('\0')) {
    if (kv.startsWith(`${key}=`)) {
      const v = kv.slice(key.length + 1);
      return /^\d+$/.test(v) ? Number(v) : null;
    }
  }
  return null;
}

/** One process, read from /proc (null when it is gone or unreadable). */
export function readProc(pid: number): ProcInfo | null {
  const stat = read(`/proc/${pid}/stat`);
  const s = stat ? parseStat(stat) : null;
  if (!s) return null;
  const io = read(`/proc/${pid}/io`);
  const w = io ? /^wchar:\s*(\d+)/m.exec(io) : null;
  const environ = read(`/proc/${pid}/environ`);
  return {
    pid,
    ppid: s.ppid,
    pgrp: s.pgrp,
    state: s.state,
    command: s.command,
    wchan: (read(`/proc/${pid}/wchan`) ?? '').trim() || '0',
    wcharBytes: w ? Number(w[1]) : null,
    rank: envInt(environ, 'RANK'),
    localRank: envInt(environ, 'LOCAL_RANK'),
  };
}

/** Every live process of process group `pgid` (zombies left out: they are no longer working). */
export function processesOfGroup(pgid: number): ProcInfo[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const stat = read(`/proc/${n}/stat`);
    const s = stat ? parseStat(stat) : null;
    if (!s || s.pgrp !== pgid || s.state === 'Z') continue;
    const p = readProc(Number(n));
    if (p) out.push(p);
  }
  return out;
}

/**
 * The workers among a pass's processes: those with a RANK (torchrun's workers); without any, the Python
 * processes; without those, every process.
 */
export function ranksOf(procs: readonly ProcInfo[]): ProcInfo[] {
  const ranked = procs.filter((p) => p.rank !== null);
  if (ranked.length > 0) return [...ranked].sort((a, b) => a.rank! - b.rank!);
  const py = procs.filter((p) => /^(python|pt_main_thread|pt_elastic)/.test(p.command));
  return py.length > 0 ? py : [...procs];
}

/** Whether py-spy is on PATH. */
export function pySpyInstalled(env: NodeJS.ProcessEnv = process.env): boolean {
  return whichSync('py-spy', env) !== null;
}

/** The main thread's innermost frames of `pid` by `py-spy dump` (argument array, a timeout); null when it cannot. */
export async function pySpyFrames(pid: number, env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const r = await runBounded('py-spy', ['dump', '--pid', String(pid)], { env, timeoutMs: PY_SPY_TIMEOUT_MS });
  return r.code === 0 ? parsePySpyDump(r.stdout) : null;
}
