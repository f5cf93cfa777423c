/**
 * Checks before a job is submitted: Slurm is here (sbatch on PATH), the partition exists (sinfo), and the
 * files the job shares with zerowiz (the run record, the configs, the scripts, the data pass's cache) are
 * on storage the compute nodes see, not under /tmp or on a local disk of this machine.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';
import { UsageError } from '../text/index.js';
import { earlierOutputs } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { firstMessage, slurm, type SlurmContext } from './tools.js';

/** A partition as sinfo lists it. */
export interface Partition {
  name: string;
  /** The cluster's default partition (sinfo marks it with `*`). */
  isDefault: boolean;
  /** `up`, `down`, `drain`, `inact`. */
  avail: string;
  /** Slurm's time limit text (`infinite`, `1:00:00`, `7-00:00:00`). */
  timeLimit: string;
  nodes: number;
  /** GRES of its nodes as sinfo prints them (`gpu:8`, `gpu:a100:4(S:0-1)`), distinct, `(null)` left out. */
  gres: string[];
}

/** Parses `sinfo -h -o '%P|%a|%l|%D|%G'` (a partition may take several rows: one per node group). */
export function parseSinfo(text: string): Partition[] {
  const byName = new Map<string, Partition>();
  for (const raw of text.split('\n')) {
    const parts = raw.trim().split('|');
    if (parts.length < 5 || parts[0] === '') continue;
    const [p, avail, limit, nodes, gres] = parts as [string, string, string, string, string];
    const name = p.replace(/\*$/, '');
    const cur = byName.get(name) ?? {
      name,
      isDefault: p.endsWith('*'),
      avail,
      timeLimit: limit,
      nodes: 0,
      gres: [],
    };
    cur.nodes += Number(nodes) || 0;
    for (const g of gres.split(',')) if (g !== '' && g !== '(null)' && !cur.gres.includes(g)) cur.gres.push(g);
    byName.set(name, cur);
  }
  return [...byName.values()];
}

/** The partitions of the cluster (for the wizard's partition question and the pre-flight). Throws UsageError. */
export async function listPartitions(ctx: SlurmContext): Promise<Partition[]> {
  const r = await slurm('sinfo', ['-h', '-o', '%P|%a|%l|%D|%G'], ctx);
  if (r.code !== 0)
    throw new UsageError(
      `could not list the Slurm partitions: ${firstMessage(r)}`,
      'check that Slurm answers here (`sinfo`), or give --partition and skip nothing: sbatch checks it too',
    );
  return parseSinfo(r.stdout);
}

/** Throws UsageError unless `name` is one of the partitions; returns it. */
export function requirePartition<P extends Pick<Partition, 'name' | 'isDefault'>>(
  partitions: readonly P[],
  name: string,
): P {
  const p = partitions.find((x) => x.name === name);
  if (p) return p;
  const names = partitions.map((x) => (x.isDefault ? `${x.name} (default)` : x.name));
  throw new UsageError(
    `Slurm has no partition '${name}'`,
    names.length > 0
      ? `the partitions here are: ${names.join(', ')} (sinfo); pick one with --partition, or leave it out for the default`
      : 'sinfo lists no partition you can use; ask the cluster admins',
  );
}

/** Where a path lives: the mount point and its file system type (from /proc/self/mountinfo). */
export interface Storage {
  mountPoint: string;
  fsType: string;
}

/** Parses /proc/self/mountinfo into mount points and types. */
export function parseMountinfo(text: string): Storage[] {
  const out: Storage[] = [];
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep === -1) continue;
    const left = line.slice(0, sep).split(' ');
    const right = line.slice(sep + 3).split(' ');
    const mp = left[4];
    const type = right[0];
    if (!mp || !type) continue;
    out.push({
      mountPoint: mp.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8))),
      fsType: type,
    });
  }
  return out;
}

/** The storage of a path: the longest mount point that contains it (the last mounted wins). */
export function storageOf(path: string, mounts: Storage[]): Storage | null {
  let best: Storage | null = null;
  for (const m of mounts) {
    const mp = m.mountPoint;
    const inside = path === mp || path.startsWith(mp.endsWith('/') ? mp : `${mp}/`);
    if (inside && (!best || mp.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

/** File systems that live on one machine (a compute node sees its own, not this one's). */
const LOCAL_FS = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'f2fs',
  'tmpfs',
  'ramfs',
  'overlay',
  'vfat',
  'exfat',
  'ntfs',
  'ntfs3',
  'squashfs',
  'devtmpfs',
]);
/** Directories that are per node on clusters whatever their type. */
const NODE_LOCAL_DIRS = ['/tmp', '/var/tmp', '/dev/shm', '/run', '/scratch/local', '/local'];

/** Why a path would not be seen by the compute nodes, or null when its storage looks shared (or is unknown). */
export function nodeLocalReason(path: string, mounts: Storage[]): string | null {
  const real = realExisting(path);
  const dir = NODE_LOCAL_DIRS.find((d) => real === d || real.startsWith(`${d}/`));
  if (dir) return `under ${dir}, which each node has for itself on most clusters`;
  const st = storageOf(real, mounts);
  if (st && LOCAL_FS.has(st.fsType))
    return `on a local ${st.fsType} file system of this machine (${st.mountPoint}), which the compute nodes do not see unless it is exported to them`;
  return null;
}

/** The real path of `p`, or of its nearest existing parent with the rest appended. */
function realExisting(p: string): string {
  let cur = p;
  let rest = '';
  for (;;) {
    try {
      const real = realpathSync(cur);
      return rest === '' ? real : resolve(real, rest);
    } catch {
      const parent = dirname(cur);
      if (parent === cur) return p;
      rest = rest === '' ? basename(cur) : `${basename(cur)}/${rest}`;
      cur = parent;
    }
  }
}

/** The mounts of this machine; empty when /proc is not there. */
export function readMounts(): Storage[] {
  try {
    return existsSync('/proc/self/mountinfo') ? parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')) : [];
  } catch {
    return [];
  }
}

/**
 * Warnings about files the job and zerowiz share: the directory the job runs in (configs, scripts and the
 * run record zerowiz follows) and what the passes write (the data pass's cache, which the next pass reads
 * on every node).
 */
export function storageWarnings(
  setup: Setup,
  cwd: string,
  mounts: Storage[] = readMounts(),
  launcher: 'srun' | 'torchrun' = 'srun',
): string[] {
  const out: string[] = [];
  const inCwd: string[] = [];
  const elsewhere: string[] = [];
  for (const abs of new Set(earlierOutputs(setup, setup.steps.length, cwd))) {
    if (abs === cwd || abs.startsWith(`${cwd}/`)) inCwd.push(`./${relative(cwd, abs)}`);
    else elsewhere.push(abs);
  }
  const cwdWhy = nodeLocalReason(cwd, mounts);
  if (cwdWhy)
    out.push(
      launcher === 'srun'
        ? `the job runs in ${cwd}, ${cwdWhy}: every node must see it (the configs and scripts the job reads${inCwd.length > 0 ? `, what the passes write (${inCwd.join(', ')})` : ''}, and the run record zerowiz follows)`
        : `every node runs the commands in ${cwd}, ${cwdWhy}: every node must see it (the configs and scripts they read${inCwd.length > 0 ? `, what the passes write (${inCwd.join(', ')})` : ''})`,
    );
  for (const abs of elsewhere) {
    const why = nodeLocalReason(abs, mounts);
    if (why) out.push(`${abs}, written by a pass and read by the next one on every node, is ${why}`);
  }
  return out;
}
