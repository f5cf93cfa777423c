/**
 * The probe's answer, remembered: importing torch and deepspeed takes seconds, so a clean answer (every
 * package imports, every op the setup needs is prebuilt or buildable, DeepSpeed accepts the config) is kept
 * in `$XDG_CACHE_HOME/zerowiz/probe/` and reused while nothing it depends on changed: the same interpreter
 * (path, inode, mtime), the same package folders and the site-packages holding them (pip changes their
 * mtime when it installs or removes anything), the same request, host and environment variables that change
 * the answer (PATH, PYTHONPATH, CUDA_HOME, CFLAGS, LDFLAGS, CXX, DS_*, ...), and at most a day old. An answer
 * with anything to fix is never kept, so a fix (`apt install libaio-dev`) is always seen by the next check.
 * Files are written privately (0700 folder, 0600 file, O_EXCL temp file renamed over the target: a link
 * planted there is replaced, never followed).
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { cacheHome, readOwnedFile } from '../fs/index.js';
import { probeResultOf, type ProbeRequest, type ProbeResult } from './probe.js';

/** How long a remembered answer is used at most. */
export const PROBE_CACHE_MAX_AGE_MS = 24 * 3600_000;
/** The largest cache file read back. */
const CACHE_MAX_BYTES = 256 * 1024;
/** Environment variables that change what the probe answers. */
const ENV_KEYS_RE =
  /^(PATH|PYTHONPATH|PYTHONHOME|VIRTUAL_ENV|CONDA_PREFIX|CUDA_HOME|CUDA_PATH|CUDA_VISIBLE_DEVICES|LD_LIBRARY_PATH|CFLAGS|LDFLAGS|CC|CXX|TORCH_CUDA_ARCH_LIST|DS_.*|ZW_FAKE_DS_.*)$/;

/** The folder of the cache (XDG_CACHE_HOME, else ~/.cache). */
export function probeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheHome(env), 'zerowiz', 'probe');
}

/** The key of a probe: the interpreter, the request, the host and the environment that matters. */
export function probeCacheKey(python: string, req: ProbeRequest, env: NodeJS.ProcessEnv): string {
  const vars = Object.keys(env)
    .filter((k) => ENV_KEYS_RE.test(k))
    .sort()
    .map((k) => [k, env[k]]);
  return createHash('sha256')
    .update(JSON.stringify([python, req, hostname(), vars]))
    .digest('hex')
    .slice(0, 32);
}

/** A file or folder's identity: when it changes, the answer may have. */
interface Stamp {
  path: string;
  ino: number;
  mtimeMs: number;
}

function stamp(path: string): Stamp | null {
  try {
    const s = statSync(path);
    return { path, ino: s.ino, mtimeMs: s.mtimeMs };
  } catch {
    return null;
  }
}

/** What the answer depends on: the interpreter, each package's folder and the folder holding it. */
function stampsOf(python: string, result: ProbeResult): Stamp[] {
  const paths = new Set<string>([python]);
  for (const p of [result.packages.torch, result.packages.accelerate, result.packages.deepspeed]) {
    if (p?.path) {
      paths.add(p.path);
      paths.add(dirname(p.path));
    }
  }
  return [...paths].map(stamp).filter((s): s is Stamp => s !== null);
}

/** Whether an answer has nothing to fix (only such answers are kept). */
export function cleanAnswer(result: ProbeResult, req: ProbeRequest): boolean {
  const pk = result.packages;
  if (!pk.torch.importable || !pk.accelerate.importable) return false;
  if (!req.deepspeed) return true;
  const d = result.deepspeed;
  if (!pk.deepspeed?.importable || !d || d.error !== null) return false;
  if (d.zeroConfig && (d.zeroConfig.errors.length > 0 || d.zeroConfig.unavailable !== null)) return false;
  const t = result.torch;
  return req.ops.every((op) => {
    const o = d.ops[op.name];
    if (!o) return false;
    if (o.installed) return true;
    return o.compatible === true && t?.ninja !== false && t?.cxx !== null && o.cudaProblem === null;
  });
}

interface Entry {
  key: string;
  at: number;
  python: string;
  stamps: Stamp[];
  result: ProbeResult;
}

/** A remembered answer as read back (its result checked by the probe's own schema). */
const entrySchema = z.object({
  key: z.string(),
  at: z.number(),
  stamps: z.array(z.object({ path: z.string(), ino: z.number(), mtimeMs: z.number() })),
  result: z.unknown(),
});

/** A remembered answer for `key`, when it is still good; null otherwise. */
export function loadProbe(dir: string, key: string, now = Date.now()): { result: ProbeResult; at: number } | null {
  const file = join(dir, `${key}.json`);
  try {
    // A file of the user's own, never through a link, bounded (../fs/read.ts), its answer through the schema.
    const read = readOwnedFile(file, CACHE_MAX_BYTES);
    if ('problem' in read) return null;
    const e = z.safeParse(entrySchema, JSON.parse(read.text));
    if (!e.success) return null;
    const result = probeResultOf(e.data.result);
    if (!result || e.data.key !== key || now - e.data.at > PROBE_CACHE_MAX_AGE_MS || now < e.data.at) return null;
    for (const s of e.data.stamps) {
      const cur = stamp(s.path);
      if (!cur || cur.ino !== s.ino || cur.mtimeMs !== s.mtimeMs) return null;
    }
    return { result, at: e.data.at };
  } catch {
    return null;
  }
}

/** Keeps a clean answer (never throws: a cache that cannot be written is no cache). */
export function saveProbe(dir: string, key: string, python: string, result: ProbeResult, now = Date.now()): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const entry: Entry = { key, at: now, python, stamps: stampsOf(python, result), result };
    const tmp = join(dir, `.${key}.${process.pid}.${now}.tmp`);
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, JSON.stringify(entry));
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(dir, `${key}.json`));
  } catch {
    // a read-only or full cache folder: the next check asks the interpreter again
  }
}
