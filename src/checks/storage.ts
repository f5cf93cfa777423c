/**
 * The storage checks: `nvme` (the offload folder exists, is writable, takes O_DIRECT as DeepSpeed's async_io
 * opens its swap files, and has room for what the estimate puts there), `nvme-speed` (a short O_DIRECT
 * write and read with `dd`, against the speed the estimate's step time assumes) and `disk` (room in each
 * pass's output folder for what it writes). Measuring touches only files zerowiz makes itself, in a private
 * folder of its own (mkdtemp, mode 0700), removed at once.
 */
import { constants, accessSync, closeSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runBounded } from '../proc/index.js';

/** How long one dd of the speed test may take. */
const DD_TIMEOUT_MS = 120_000;
import { NVME_BYTES_PER_S } from '../estimate/index.js';
import { formatByteRate, formatBytesShort } from '../text/index.js';
import type { CheckPlan } from './plan.js';
import { type CheckResult, failed, passed, skipped, warned } from './types.js';

/** Bytes the speed test writes and reads back (less when the folder has less room). */
export const NVME_TEST_BYTES = 256 * 2 ** 20;
/** The smallest speed test worth its time. */
export const NVME_TEST_MIN_BYTES = 16 * 2 ** 20;
/** Below this fraction of the speed the estimate assumes, the folder is not an NVMe drive (a network or spinning disk). */
export const NVME_SLOW_FAIL_FRACTION = 0.1;
/** Room kept free beyond what a pass is known to write (logs, the run record, file system overhead). */
export const DISK_FLOOR_BYTES = 2 ** 30;
/** Margin over the offloaded bytes before the NVMe folder counts as tight. */
const NVME_MARGIN_FRACTION = 0.1;

/** File system names of statfs's magic numbers that matter here. */
const FS_NAMES: Record<number, string> = {
  16914836: 'tmpfs',
  2240043254: 'ramfs',
  26985: 'nfs',
  61267: 'ext4',
  1481003842: 'xfs',
  2435016766: 'btrfs',
  2035054128: 'overlay',
  801189825: 'zfs',
  1702057286: 'fuse',
};

/** The nearest folder of `p` that exists (p itself, or an ancestor). */
export function nearestExisting(p: string): string {
  let cur = p;
  for (;;) {
    try {
      statSync(cur);
      return cur;
    } catch {
      const up = dirname(cur);
      if (up === cur) return cur;
      cur = up;
    }
  }
}

/** A folder's file system: free bytes, its device and type. */
export interface FsInfo {
  /** The folder measured (the path, or its nearest existing ancestor). */
  at: string;
  exists: boolean;
  isDir: boolean;
  freeBytes: number | null;
  dev: number | null;
  fsType: string | null;
}

/** statfs and stat of `p` (or of its nearest existing ancestor). */
export async function measureFs(p: string): Promise<FsInfo> {
  const at = nearestExisting(p);
  let isDir = false;
  let dev: number | null = null;
  try {
    const st = statSync(at);
    isDir = st.isDirectory();
    dev = st.dev;
  } catch {
    // unreadable: reported as no free bytes below
  }
  try {
    const s = await statfs(at);
    return {
      at,
      exists: at === p,
      isDir,
      freeBytes: Number(s.bavail) * Number(s.bsize),
      dev,
      fsType: FS_NAMES[Number(s.type)] ?? `0x${Number(s.type).toString(16)}`,
    };
  } catch {
    return { at, exists: at === p, isDir, freeBytes: null, dev, fsType: null };
  }
}

/** What zerowiz found at the NVMe folder. */
export interface NvmeInfo extends FsInfo {
  writable: boolean | null;
  /** Whether a file there opens with O_DIRECT; null when not tried. */
  oDirect: boolean | null;
  /** The error of the write test, when it failed. */
  error: string | null;
}

/** A private folder of zerowiz's own under `dir` (mode 0700: nobody can plant a link in it). */
function privateDir(dir: string): string {
  return mkdtempSync(join(dir, '.zerowiz-check-'));
}

/** Measures the NVMe folder: the file system, then a file created there with O_DIRECT (and without). */
export async function measureNvme(path: string): Promise<NvmeInfo> {
  const fs = await measureFs(path);
  if (!fs.exists || !fs.isDir) return { ...fs, writable: null, oDirect: null, error: null };
  let dir: string;
  try {
    dir = privateDir(path);
  } catch (e) {
    return { ...fs, writable: false, oDirect: null, error: (e as NodeJS.ErrnoException).code ?? String(e) };
  }
  try {
    const file = join(dir, 'odirect');
    try {
      closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT, 0o600));
      return { ...fs, writable: true, oDirect: true, error: null };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      if (code !== 'EINVAL') return { ...fs, writable: false, oDirect: null, error: code };
      return { ...fs, writable: true, oDirect: false, error: code };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A measured speed test. */
export type SpeedInfo =
  | { ok: true; bytes: number; writeBytesPerS: number; readBytesPerS: number }
  | { ok: false; reason: string };

async function dd(args: string[]): Promise<{ ms: number; error: string | null }> {
  const t0 = performance.now();
  const r = await runBounded('dd', args, { timeoutMs: DD_TIMEOUT_MS });
  const ms = performance.now() - t0;
  const why = r.timedOut
    ? `dd did not finish within ${DD_TIMEOUT_MS / 1000} s`
    : (r.error?.message ?? `dd exit ${r.code ?? r.signal}`);
  return { ms, error: r.code === 0 ? null : r.stderr.split('\n')[0]?.trim() || why };
}

/** Writes then reads `bytes` with O_DIRECT in a private folder under `path` (dd, 1 MiB blocks). */
export async function measureNvmeSpeed(path: string, freeBytes: number | null): Promise<SpeedInfo> {
  const room = freeBytes === null ? NVME_TEST_BYTES : Math.floor(freeBytes / 4);
  const mib = Math.floor(Math.min(NVME_TEST_BYTES, room) / 2 ** 20);
  if (mib * 2 ** 20 < NVME_TEST_MIN_BYTES)
    return { ok: false, reason: `too little room for a ${formatBytesShort(NVME_TEST_MIN_BYTES)} test` };
  let dir: string;
  try {
    dir = privateDir(path);
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
  try {
    const file = join(dir, 'speed');
    const w = await dd([
      'if=/dev/zero',
      `of=${file}`,
      'bs=1M',
      `count=${mib}`,
      'oflag=direct',
      'conv=fsync',
      'status=none',
    ]);
    if (w.error) return { ok: false, reason: `dd write: ${w.error}` };
    const r = await dd([`if=${file}`, 'of=/dev/null', 'bs=1M', 'iflag=direct', 'status=none']);
    if (r.error) return { ok: false, reason: `dd read: ${r.error}` };
    const bytes = mib * 2 ** 20;
    return { ok: true, bytes, writeBytesPerS: bytes / (w.ms / 1000), readBytesPerS: bytes / (r.ms / 1000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the NVMe check found a folder the speed test can use. */
export function nvmeUsable(n: NvmeInfo): boolean {
  return n.exists && n.isDir && n.writable === true && n.oDirect === true;
}

/** Judges the NVMe folder. */
export function judgeNvme(plan: CheckPlan, n: NvmeInfo | null): CheckResult {
  const id = 'nvme';
  if (!plan.nvme || !n) return passed(id, 'no NVMe offload in this setup', 'none');
  const { path, bytes, what } = plan.nvme;
  const need = `${path}: a writable folder on a drive that takes O_DIRECT, with ${bytes === null ? 'room' : `${formatBytesShort(bytes)} free`} for ${what}`;
  if (!n.exists)
    return failed(
      id,
      `${path} does not exist (the nearest folder is ${n.at}, on ${n.fsType ?? 'an unknown file system'}): DeepSpeed would make it there, not on the NVMe drive`,
      need,
      `mount the NVMe drive at ${path}, or point --nvme-path at where it is mounted`,
    );
  if (!n.isDir) return failed(id, `${path} is not a folder`, need, `point --nvme-path at a folder on the NVMe drive`);
  if (n.writable === false)
    return failed(id, `${path} cannot be written (${n.error})`, need, `sudo chown "$(id -un)" ${path}`);
  if (n.oDirect === false)
    return failed(
      id,
      `${path} (${n.fsType}) refuses O_DIRECT (${n.error}); DeepSpeed's async_io opens its swap files with O_DIRECT`,
      need,
      'point --nvme-path at a local drive (ext4 or xfs); tmpfs and some network or overlay file systems refuse O_DIRECT',
    );
  const free = n.freeBytes;
  const measured = `${path}: ${n.fsType ?? 'unknown file system'}, ${free === null ? 'free space unknown' : `${formatBytesShort(free)} free`}, writable, O_DIRECT works`;
  if (bytes !== null && free !== null && free < bytes)
    return failed(
      id,
      measured,
      need,
      `free ${formatBytesShort(bytes - free)} at ${path}, or offload to cpu (--offload-device cpu)`,
    );
  if (bytes === null)
    return warned(
      id,
      measured,
      need,
      'give the model size (model: params: in the preset) so zerowiz can size the offload',
    );
  if (free !== null && free < bytes * (1 + NVME_MARGIN_FRACTION))
    return warned(
      id,
      `${measured}: less than ${NVME_MARGIN_FRACTION * 100}% to spare`,
      need,
      `free some space at ${path}`,
    );
  if (n.fsType === 'tmpfs' || n.fsType === 'ramfs')
    return warned(
      id,
      `${measured}; it is a ${n.fsType}: host RAM, not a drive, so the offloaded states take CPU memory after all`,
      need,
      `point --nvme-path at the NVMe drive, or offload to cpu (--offload-device cpu)`,
    );
  return passed(id, measured, need);
}

/** Judges the speed test against NVME_BYTES_PER_S, the speed the estimate's step time assumes. */
export function judgeNvmeSpeed(plan: CheckPlan, n: NvmeInfo | null, s: SpeedInfo | null): CheckResult {
  const id = 'nvme-speed';
  if (!plan.nvme) return passed(id, 'no NVMe offload in this setup', 'none');
  const need = `${formatByteRate(NVME_BYTES_PER_S)} each way (what the estimate's step time assumes)`;
  if (!n || !nvmeUsable(n) || !s) return skipped(id, 'not measured: the NVMe folder is not usable (see nvme)', need);
  if (!s.ok) return skipped(id, `not measured: ${s.reason}`, need);
  const slow = Math.min(s.writeBytesPerS, s.readBytesPerS);
  const measured = `${formatBytesShort(s.bytes)} with O_DIRECT: write ${formatByteRate(s.writeBytesPerS)}, read ${formatByteRate(s.readBytesPerS)} (zeros: a compressing file system reads faster than real data)`;
  const perStep = plan.estimate?.nvmeBytesPerStep ?? 0;
  const cost =
    perStep > 0
      ? `: the step's ${formatBytesShort(perStep)} of NVMe traffic per GPU takes about ${(perStep / slow).toFixed(1)} s instead of ${(perStep / NVME_BYTES_PER_S).toFixed(1)} s`
      : '';
  const fix = `put nvme_path on a local NVMe drive; DeepSpeed's \`ds_nvme_tune --nvme_dir ${plan.nvme.path}\` finds the best aio settings for it`;
  if (slow < NVME_BYTES_PER_S * NVME_SLOW_FAIL_FRACTION)
    return failed(id, `${measured}${cost}; that is no NVMe drive`, need, fix);
  if (slow < NVME_BYTES_PER_S) return warned(id, `${measured}${cost}`, need, fix);
  return passed(id, measured, need);
}

/** One folder the passes write into, measured. */
export interface DiskTarget {
  path: string;
  fs: FsInfo;
  /** Whether zerowiz may write there (the folder, or the nearest existing ancestor it would be made in). */
  writable: boolean;
}

/** Measures each folder (and the nearest existing ancestor of one still to be made). */
export async function measureDisk(paths: readonly string[]): Promise<DiskTarget[]> {
  return Promise.all(
    [...new Set(paths)].map(async (path) => {
      const fs = await measureFs(path);
      let writable = false;
      try {
        accessSync(fs.at, constants.W_OK);
        writable = fs.isDir;
      } catch {
        writable = false;
      }
      return { path, fs, writable };
    }),
  );
}

/** The folders `judgeDisk` wants measured for a plan: each output, and the run records under the cwd. */
export function diskPaths(plan: CheckPlan): string[] {
  return [...plan.steps.flatMap((s) => s.outputs.map((o) => o.path)), join(plan.cwd, '.zerowiz', 'runs')];
}

/** Judges the room for every pass's outputs, per file system (outputs on one device add up). */
export function judgeDisk(plan: CheckPlan, targets: readonly DiskTarget[]): CheckResult {
  const id = 'disk';
  const outputs = plan.steps.flatMap((s) => s.outputs.map((o) => ({ ...o, step: s.name })));
  const needParts = outputs.map(
    (o) => `${o.step}: ${o.bytes === null ? '?' : formatBytesShort(o.bytes)} in ${o.path} (${o.what})`,
  );
  const need = `${needParts.join('; ')}; and ${formatBytesShort(DISK_FLOOR_BYTES)} to spare on each disk (logs, the run record)`;
  const byDev = new Map<string, { free: number | null; known: number; paths: string[]; unknown: boolean }>();
  const bad: string[] = [];
  for (const t of targets) {
    if (!t.writable)
      bad.push(`${t.path} cannot be written (${t.fs.at} is ${t.fs.isDir ? 'read-only to you' : 'not a folder'})`);
    const key = t.fs.dev === null ? t.fs.at : String(t.fs.dev);
    const g = byDev.get(key) ?? { free: t.fs.freeBytes, known: 0, paths: [], unknown: false };
    for (const o of outputs.filter((x) => x.path === t.path)) {
      if (o.bytes === null) g.unknown = true;
      else g.known += o.bytes;
    }
    g.paths.push(t.path);
    byDev.set(key, g);
  }
  const groups = [...byDev.values()];
  const measured = groups
    .map(
      (g) => `${g.free === null ? 'free space unknown' : `${formatBytesShort(g.free)} free`} for ${g.paths.join(', ')}`,
    )
    .join('; ');
  if (bad.length > 0)
    return failed(
      id,
      `${measured}; ${bad.join('; ')}`,
      need,
      'fix the folder permissions, or change the output path in the preset',
    );
  const short = groups.filter((g) => g.free !== null && g.free < g.known);
  if (short.length > 0)
    return failed(
      id,
      `${measured}: ${short.map((g) => `${g.paths[0]} needs ${formatBytesShort(g.known)}`).join('; ')}`,
      need,
      `free ${formatBytesShort(Math.max(...short.map((g) => g.known - (g.free ?? 0))))} there, or point the output path at a bigger disk`,
    );
  const tight = groups.filter((g) => g.free !== null && g.free < g.known + DISK_FLOOR_BYTES);
  if (tight.length > 0)
    return warned(
      id,
      `${measured}: less than ${formatBytesShort(DISK_FLOOR_BYTES)} to spare`,
      need,
      'free some space first',
    );
  return passed(id, measured, need);
}
