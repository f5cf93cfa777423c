/**
 * A small tmpfs for the tests that need a full or a read-only disk. It needs root (and a kernel that lets
 * this container mount); without that the caller skips with the reason this returns.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tempDir } from './cli.js';

const mounted: string[] = [];

/** Mounts a tmpfs of `size` (e.g. `256k`) on a fresh temp dir; read-only when asked. */
export function mountTmpfs(size: string, readOnly = false): { ok: true; dir: string } | { ok: false; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'mounting a tmpfs needs root' };
  const dir = tempDir('zw-tmpfs-');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}${readOnly ? ',ro' : ''}`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (r.status !== 0)
    return { ok: false, reason: `cannot mount a tmpfs here: ${(r.stderr || String(r.error)).trim()}` };
  mounted.push(dir);
  return { ok: true, dir };
}

/** Unmounts every tmpfs this process mounted. */
export function unmountAll(): void {
  for (const dir of mounted.splice(0)) {
    spawnSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}
