/**
 * The NVMe speed `check` measured, remembered for the estimate (src/machine/nvme-speed.ts): per folder, for 30
 * days, private, and a damaged or foreign file is no speed at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NVME_SPEED_MAX_AGE_MS,
  nvmeSpeedFile,
  rememberNvmeSpeed,
  rememberedNvmeSpeed,
} from '../../src/machine/nvme-speed.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function cacheEnv(): NodeJS.ProcessEnv {
  const d = mkdtempSync(join(tmpdir(), 'zw-nvme-speed-'));
  dirs.push(d);
  return { XDG_CACHE_HOME: join(d, 'cache') };
}

describe('the NVMe speed check measured', () => {
  it('is remembered per folder, privately, and read back for that folder only', () => {
    const env = cacheEnv();
    const now = 1_800_000_000_000;
    rememberNvmeSpeed('/mnt/nvme0/ds', { readBytesPerS: 3.1e9, writeBytesPerS: 2.4e9 }, env, now);
    expect(rememberedNvmeSpeed('/mnt/nvme0/ds', env, now + 1000)).toEqual({
      readBytesPerS: 3.1e9,
      writeBytesPerS: 2.4e9,
      at: now,
    });
    expect(rememberedNvmeSpeed('/mnt/nvme1/ds', env, now)).toBeNull();
    const file = nvmeSpeedFile(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
  });

  it('is forgotten after 30 days', () => {
    const env = cacheEnv();
    rememberNvmeSpeed('/nvme', { readBytesPerS: 2e9, writeBytesPerS: 2e9 }, env, 1_000);
    expect(rememberedNvmeSpeed('/nvme', env, 1_000 + NVME_SPEED_MAX_AGE_MS + 1)).toBeNull();
  });

  it('a damaged file, a value of the wrong kind or a file of another user is no speed', () => {
    for (const text of ['{"speeds": {', '{"speeds": {"x": {"readBytesPerS": -1}}}', '[1, 2]']) {
      const env = cacheEnv();
      mkdirSync(join(nvmeSpeedFile(env), '..'), { recursive: true });
      writeFileSync(nvmeSpeedFile(env), text);
      expect(rememberedNvmeSpeed('/nvme', env)).toBeNull();
    }
    const env = cacheEnv();
    rememberNvmeSpeed('/srv/nvme', { readBytesPerS: 2e9, writeBytesPerS: 2e9 }, env, Date.now());
    chmodSync(nvmeSpeedFile(env), 0o644);
    // Not the user's own file (root runs the tests: chown to nobody).
    if (process.getuid?.() === 0) {
      chownSync(nvmeSpeedFile(env), 65534, 65534);
      expect(rememberedNvmeSpeed('/srv/nvme', env)).toBeNull();
    }
  });
});
