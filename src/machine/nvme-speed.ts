/**
 * The NVMe speed `zerowiz check` measured (its nvme-speed check: 256 MiB written and read back with O_DIRECT in
 * the offload folder), remembered per host and folder for the estimate's NVMe term: an NVMe offload's step time
 * then uses the drive's own speed and says it was measured; without a measurement it assumes NVME_BYTES_PER_S
 * and says that. Kept in `$XDG_CACHE_HOME/zerowiz/nvme-speed.json` (else ~/.cache) for 30 days, the folder 0700
 * and the file 0600, written by rename and read without following a link.
 */
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { cacheHome, mkdirPrivate, readOwnedFile, writePrivateFile } from '../fs/index.js';

/** How long a measurement is used. */
export const NVME_SPEED_MAX_AGE_MS = 30 * 24 * 3600_000;
/** The most folders remembered (the oldest go first). */
const MAX_ENTRIES = 64;

/** One measurement: bytes per second each way, and when. */
export interface NvmeSpeed {
  readBytesPerS: number;
  writeBytesPerS: number;
  at: number;
}

/** The file the measurements are kept in. */
export function nvmeSpeedFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheHome(env), 'zerowiz', 'nvme-speed.json');
}

function keyOf(path: string): string {
  return `${hostname()}:${resolve(path)}`;
}

function isSpeed(v: unknown): v is NvmeSpeed {
  const s = v as NvmeSpeed;
  return (
    typeof v === 'object' &&
    v !== null &&
    [s.readBytesPerS, s.writeBytesPerS, s.at].every((x) => typeof x === 'number' && Number.isFinite(x) && x > 0)
  );
}

function readAll(file: string): Record<string, NvmeSpeed> {
  const r = readOwnedFile(file, 64 * 1024);
  if ('problem' in r) return {};
  try {
    const data = JSON.parse(r.text) as { speeds?: Record<string, unknown> };
    const out: Record<string, NvmeSpeed> = {};
    for (const [k, v] of Object.entries(data.speeds ?? {})) if (isSpeed(v)) out[k] = v;
    return out;
  } catch {
    return {};
  }
}

/** Remembers what check measured in the folder `path`; a failure to write is no failure of the check. */
export function rememberNvmeSpeed(
  path: string,
  speed: { readBytesPerS: number; writeBytesPerS: number },
  env: NodeJS.ProcessEnv = process.env,
  now = Date.now(),
): void {
  const file = nvmeSpeedFile(env);
  try {
    const all = readAll(file);
    all[keyOf(path)] = { readBytesPerS: speed.readBytesPerS, writeBytesPerS: speed.writeBytesPerS, at: now };
    const kept = Object.entries(all)
      .filter(([, v]) => now - v.at < NVME_SPEED_MAX_AGE_MS)
      .sort((a, b) => b[1].at - a[1].at)
      .slice(0, MAX_ENTRIES);
    mkdirPrivate(join(file, '..'));
    writePrivateFile(file, `${JSON.stringify({ version: 1, speeds: Object.fromEntries(kept) })}\n`);
  } catch {
    // The measurement is still said by the check; the estimate then assumes the speed, and says so.
  }
}

const memo = new Map<string, NvmeSpeed | null>();

/** What check last measured in the folder `path` on this host within NVME_SPEED_MAX_AGE_MS, or null (read once). */
export function rememberedNvmeSpeed(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  now = Date.now(),
): NvmeSpeed | null {
  const file = nvmeSpeedFile(env);
  const key = `${file}\0${keyOf(path)}`;
  if (!memo.has(key)) {
    const s = readAll(file)[keyOf(path)] ?? null;
    memo.set(key, s && now - s.at < NVME_SPEED_MAX_AGE_MS ? s : null);
  }
  return memo.get(key) ?? null;
}
