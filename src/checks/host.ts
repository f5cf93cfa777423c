/**
 * The host checks: `shm` (/dev/shm against the processes per node: NCCL's shared-memory transport and the
 * DataLoader's workers live there), `host-memory` (RAM and the cgroup memory limit, v1 or v2 as containers and
 * Slurm set it, against the estimate's CPU memory per node) and `port` (the main process port free on this
 * host, and who holds it when not). Each has a measuring function (the OS) and a pure judge.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { createServer } from 'node:net';
import { shellJoin } from '../text/index.js';
import { formatBytesShort } from '../text/index.js';
import type { CheckPlan } from './plan.js';
import { type CheckResult, failed, passed, warned } from './types.js';
import { compareDotted } from './gpu.js';
import { wholeGiBUp } from '../text/index.js';

/** Where NCCL and the DataLoader put their shared memory. */
export const SHM_PATH = '/dev/shm';
/** Below this /dev/shm fails a multi-process node: DeepSpeed's ds_report warns under it (env_report.py get_shm_size). */
export const SHM_MIN_BYTES = 512 * 2 ** 20;
/** What /dev/shm should hold for several processes or DataLoader workers (NCCL's troubleshooting: Docker's 64 MB is too small). */
export const SHM_RECOMMENDED_BYTES = 2 ** 30;
/** The part of the memory limit the estimate may use (the CPU fit's 90%: src/estimate/estimate.ts). */
export const HOST_MEMORY_USABLE_FRACTION = 0.9;
/** cgroup v1 writes "no limit" as a number this large (PAGE_COUNTER_MAX pages). */
const CGROUP_V1_UNLIMITED_BYTES = 2 ** 60;
/** accelerate picks a free port itself on one machine when the port is taken (accelerate #3576, first in 1.8.0). */
export const ACCELERATE_PORT_FALLBACK_SINCE = '1.8.0';

/** /dev/shm as statfs sees it. */
export type ShmInfo = { ok: true; sizeBytes: number; freeBytes: number } | { ok: false; reason: string };

/** Measures /dev/shm. */
export async function measureShm(path = SHM_PATH): Promise<ShmInfo> {
  try {
    const s = await statfs(path);
    return { ok: true, sizeBytes: Number(s.blocks) * Number(s.bsize), freeBytes: Number(s.bavail) * Number(s.bsize) };
  } catch (e) {
    return { ok: false, reason: `${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
}

/** The most DataLoader workers of a checked pass. */
function workersOf(plan: CheckPlan): number {
  return Math.max(0, ...plan.steps.map((s) => s.dataloaderWorkers));
}

/** Judges /dev/shm. */
export function judgeShm(plan: CheckPlan, shm: ShmInfo): CheckResult {
  const id = 'shm';
  const p = plan.processesPerNode;
  const w = workersOf(plan);
  const users = [
    ...(p > 1 ? [`NCCL between the ${p} processes of a node`] : []),
    ...(w > 0 ? [`${w} DataLoader worker(s) per process`] : []),
  ];
  const fix = `docker run --shm-size=16g (or --ipc=host); Kubernetes: an emptyDir with medium: Memory mounted at ${SHM_PATH}; on a host: sudo mount -o remount,size=16G ${SHM_PATH}`;
  if (users.length === 0)
    return passed(
      id,
      shm.ok ? `${formatBytesShort(shm.sizeBytes)} (${formatBytesShort(shm.freeBytes)} free)` : shm.reason,
      'none: one process per node and no DataLoader workers',
    );
  const need = `at least ${formatBytesShort(SHM_MIN_BYTES)}, better ${formatBytesShort(SHM_RECOMMENDED_BYTES)}, for ${users.join(' and ')}`;
  if (!shm.ok) return failed(id, `${SHM_PATH} cannot be read: ${shm.reason}`, need, fix);
  const measured = `${SHM_PATH} is ${formatBytesShort(shm.sizeBytes)} (${formatBytesShort(shm.freeBytes)} free)`;
  if (shm.sizeBytes < SHM_MIN_BYTES || shm.freeBytes < SHM_MIN_BYTES)
    return failed(
      id,
      `${measured}: too small for NCCL's shared memory segments and the DataLoader workers' batches`,
      need,
      fix,
    );
  if (shm.sizeBytes < SHM_RECOMMENDED_BYTES || shm.freeBytes < SHM_RECOMMENDED_BYTES)
    return warned(id, measured, need, fix);
  return passed(id, measured, need);
}

/** The memory cgroup this process is in, and its limit (the tightest of it and its ancestors). */
export interface CgroupMemory {
  version: 1 | 2;
  /** The folder whose limit is the tightest. */
  path: string;
  limitBytes: number;
  /** Its usage now and the part of it that is reclaimable page cache (inactive files). */
  usageBytes: number | null;
  inactiveFileBytes: number | null;
}

/** The host's memory (/proc/meminfo) and the cgroup limit, if any. */
export interface MemoryInfo {
  totalBytes: number;
  availableBytes: number;
  cgroup: CgroupMemory | null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** `MemTotal:  24310160 kB` lines as bytes. */
export function parseMeminfo(text: string): { totalBytes: number; availableBytes: number } {
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : 0;
  };
  const total = kb('MemTotal');
  return { totalBytes: total, availableBytes: kb('MemAvailable') || kb('MemFree') || total };
}

/** A cgroup mount from /proc/self/mountinfo: where it is, what it mounts, which version. */
interface CgroupMount {
  mountPoint: string;
  root: string;
  version: 1 | 2;
}

/** The memory cgroup mounts: cgroup2, or a cgroup (v1) with the memory controller. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    const f = pre.split(' ');
    const [fstype, , options] = post.split(' ');
    const mountPoint = f[4]?.replace(/\\040/g, ' ');
    if (!mountPoint || f[3] === undefined) continue;
    if (fstype === 'cgroup2') out.push({ mountPoint, root: f[3], version: 2 });
    else if (fstype === 'cgroup' && (options ?? '').split(',').includes('memory'))
      out.push({ mountPoint, root: f[3], version: 1 });
  }
  return out;
}

/** The cgroup paths of /proc/self/cgroup: v2's `0::/path` and v1's memory line. */
export function parseProcCgroup(text: string): { v2: string | null; v1memory: string | null } {
  let v2: string | null = null;
  let v1memory: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') v2 = m[3]!;
    else if (m[2]!.split(',').includes('memory')) v1memory = m[3]!;
  }
  return { v2, v1memory };
}

function limitOf(dir: string, version: 1 | 2, read: (path: string) => string | null): number | null {
  const raw = read(`${dir}/${version === 2 ? 'memory.max' : 'memory.limit_in_bytes'}`)?.trim();
  if (raw === undefined || raw === 'max' || !/^\d+$/.test(raw)) return null;
  const n = Number(raw);
  return n >= CGROUP_V1_UNLIMITED_BYTES ? null : n;
}

function statField(text: string | null, key: string): number | null {
  const m = text ? new RegExp(`^${key} (\\d+)$`, 'm').exec(text) : null;
  return m ? Number(m[1]) : null;
}

/**
 * The tightest memory limit over a process's cgroup and its ancestors (below the mount point): this
 * process's by default, or `pid`'s (a pass's leader, for the watch during the pass).
 */
export function measureCgroup(
  read: (path: string) => string | null = readText,
  pid: number | 'self' = 'self',
): CgroupMemory | null {
  const cg = parseProcCgroup(read(`/proc/${pid}/cgroup`) ?? '');
  const mounts = parseCgroupMounts(read('/proc/self/mountinfo') ?? '');
  let best: CgroupMemory | null = null;
  for (const version of [2, 1] as const) {
    const path = version === 2 ? cg.v2 : cg.v1memory;
    const mount = mounts.find((m) => m.version === version);
    if (path === null || !mount) continue;
    // A namespaced cgroup mount's root is the process's own cgroup or an ancestor of it.
    const rel = mount.root !== '/' && path.startsWith(mount.root) ? path.slice(mount.root.length) : path;
    const parts = rel.split('/').filter((x) => x !== '');
    for (let n = parts.length; n >= 0; n--) {
      const dir = `${mount.mountPoint}/${parts.slice(0, n).join('/')}`.replace(/\/+$/, '') || mount.mountPoint;
      const limit = limitOf(dir, version, read);
      if (limit === null || (best && best.limitBytes <= limit)) continue;
      const stat = read(`${dir}/memory.stat`);
      const usage = read(`${dir}/${version === 2 ? 'memory.current' : 'memory.usage_in_bytes'}`)?.trim();
      best = {
        version,
        path: dir,
        limitBytes: limit,
        usageBytes: usage && /^\d+$/.test(usage) ? Number(usage) : null,
        inactiveFileBytes: statField(stat, version === 2 ? 'inactive_file' : 'total_inactive_file'),
      };
    }
  }
  return best;
}

/** Measures the host's memory and the cgroup limit (of this process, or of `pid`). */
export function measureMemory(
  read: (path: string) => string | null = readText,
  pid: number | 'self' = 'self',
): MemoryInfo {
  const { totalBytes, availableBytes } = parseMeminfo(read('/proc/meminfo') ?? '');
  return { totalBytes, availableBytes, cgroup: measureCgroup(read, pid) };
}

/** What the processes here may use: the smaller of RAM and the cgroup limit, and how much of it is free now. */
export function memoryRoom(m: MemoryInfo): { limitBytes: number; freeBytes: number; limitedBy: 'ram' | 'cgroup' } {
  const cg = m.cgroup;
  if (!cg || cg.limitBytes >= m.totalBytes)
    return { limitBytes: m.totalBytes, freeBytes: m.availableBytes, limitedBy: 'ram' };
  const working = cg.usageBytes === null ? 0 : Math.max(0, cg.usageBytes - (cg.inactiveFileBytes ?? 0));
  return {
    limitBytes: cg.limitBytes,
    freeBytes: Math.min(m.availableBytes, cg.limitBytes - working),
    limitedBy: 'cgroup',
  };
}

/** Judges host memory against the estimate; `lessCpu` names a mode that needs less CPU memory (fit.ts). */
export function judgeHostMemory(
  plan: CheckPlan,
  m: MemoryInfo,
  /** A mode needing less CPU memory, or how to find one that fits the memory measured here (the estimate's table). */
  lessCpu: string | null | ((hostBytes: number) => string | null),
): CheckResult {
  const id = 'host-memory';
  const room = memoryRoom(m);
  const cg = m.cgroup;
  const measured = `${formatBytesShort(m.totalBytes)} of RAM (${formatBytesShort(m.availableBytes)} available)${
    cg
      ? `; cgroup v${cg.version} limit ${formatBytesShort(cg.limitBytes)} (${cg.path})${cg.usageBytes !== null ? `, ${formatBytesShort(cg.usageBytes)} in use` : ''}`
      : '; no cgroup memory limit'
  }`;
  const est = plan.estimate;
  if (!est)
    return warned(
      id,
      measured,
      "unknown: the setup gives no model size, so the estimate's CPU memory per node is unknown",
      'give the model size (`model: params:` in the preset, or --model-params with `zerowiz preset save`) so zerowiz can check',
    );
  const needBytes = est.cpuBytesPerNode;
  const need = `${formatBytesShort(needBytes)} per node for ${est.label} (the estimate: loading, offloaded states, pinned buffers; pinned pages count against the cgroup and never swap)`;
  const where =
    room.limitedBy === 'cgroup'
      ? `the cgroup limit (${formatBytesShort(room.limitBytes)})`
      : `RAM (${formatBytesShort(room.limitBytes)})`;
  const raise =
    room.limitedBy === 'cgroup'
      ? `raise the memory limit to ${wholeGiBUp(needBytes / HOST_MEMORY_USABLE_FRACTION)}G or more (docker run --memory, Slurm --mem or --sbatch-arg=--mem=0)`
      : 'a node with more RAM';
  const less = typeof lessCpu === 'function' ? lessCpu(room.limitBytes) : lessCpu;
  const fix = less ? `${raise}; or ${less}` : raise;
  if (needBytes > room.limitBytes)
    return failed(
      id,
      `${measured}: the estimate needs more than ${where}; the OOM killer ends the pass (exit -9)`,
      need,
      fix,
    );
  if (needBytes > room.limitBytes * HOST_MEMORY_USABLE_FRACTION)
    return warned(
      id,
      `${measured}: the estimate needs more than ${HOST_MEMORY_USABLE_FRACTION * 100}% of ${where}`,
      need,
      fix,
    );
  if (needBytes > room.freeBytes)
    return warned(
      id,
      `${measured}: only ${formatBytesShort(room.freeBytes)} is free now; other processes hold the rest`,
      need,
      'stop what holds the memory (top -o %MEM), or wait for it',
    );
  return passed(id, measured, need);
}

/** Who holds a port, and whether it can be bound. */
export interface PortInfo {
  port: number;
  free: boolean;
  /** EADDRINUSE, EACCES, ...; null when free. */
  code: string | null;
  /** The listening process, when /proc says (pid and command). */
  holder: { pid: number; command: string } | null;
}

function bindOnce(port: number, host: string): Promise<string | null> {
  return new Promise((resolve) => {
    const s = createServer();
    s.unref();
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'ERROR'));
    s.listen({ port, host, exclusive: true }, () => s.close(() => resolve(null)));
  });
}

/** The inode of a LISTEN socket on `port` in /proc/net/tcp and tcp6, or null. */
export function listeningInode(tables: readonly string[], port: number): string | null {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const t of tables) {
    for (const line of t.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (f[1]?.endsWith(`:${hex}`) && f[3] === '0A') return f[9] ?? null;
    }
  }
  return null;
}

/** The process with a file descriptor on socket `inode` (scans /proc; null when not visible). */
export function socketHolder(inode: string): { pid: number; command: string } | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const want = `socket:[${inode}]`;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== want) continue;
      } catch {
        continue;
      }
      const comm = readText(`/proc/${pid}/comm`)?.trim() ?? '?';
      return { pid: Number(pid), command: comm };
    }
  }
  return null;
}

/** Tries to bind `port` on every address (as torch's TCPStore does), and names the holder when it cannot. */
export async function measurePort(port: number): Promise<PortInfo> {
  let code = await bindOnce(port, '::');
  if (code === 'EAFNOSUPPORT' || code === 'EADDRNOTAVAIL') code = await bindOnce(port, '0.0.0.0');
  if (code === null) return { port, free: true, code: null, holder: null };
  const inode = listeningInode([readText('/proc/net/tcp') ?? '', readText('/proc/net/tcp6') ?? ''], port);
  return { port, free: false, code, holder: inode ? socketHolder(inode) : null };
}

/**
 * Judges the port. On one machine accelerate 1.8 and later find another port themselves (a warning); before,
 * and on the main node of several, a taken port stops the pass (accelerate's "another process is utilizing it").
 */
export function judgePort(
  plan: CheckPlan,
  p: PortInfo,
  accelerateVersion: string | null,
  freePort: number | null,
  fixCommand: (port: number) => string,
): CheckResult {
  const id = 'port';
  const need = `port ${plan.port}${plan.portFromSetup ? ' (main_process_port)' : " (accelerate's default)"} free on the main node`;
  if (plan.numMachines > 1 && plan.machineRank !== 0)
    return passed(id, `this is node ${plan.machineRank}: the main node (rank 0) binds the port`, need);
  if (p.free) return passed(id, `port ${p.port} is free`, need);
  const who = p.holder ? `pid ${p.holder.pid} (${p.holder.command}) listens on it` : `binding it fails with ${p.code}`;
  const measured = `port ${p.port} is taken: ${who}`;
  const stop = p.holder ? `${shellJoin(['kill', String(p.holder.pid)])} if it is yours, or ` : '';
  const fix = `${stop}${freePort !== null ? `use port ${freePort} (free now): ${fixCommand(freePort)}` : 'give main_process_port another port'}`;
  const falls = accelerateVersion !== null && compareDotted(accelerateVersion, ACCELERATE_PORT_FALLBACK_SINCE) >= 0;
  if (plan.numMachines === 1 && falls)
    return warned(
      id,
      `${measured}; accelerate ${accelerateVersion} then picks a free port itself (standalone mode)`,
      need,
      fix,
    );
  return failed(
    id,
    `${measured}; accelerate stops with "another process is utilizing it"${p.code === 'EACCES' ? ' (a port below 1024 needs root)' : ''}`,
    need,
    fix,
  );
}
