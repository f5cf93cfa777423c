/**
 * The write transaction's lock and journal, with real files and real (dead and live) processes: a lock left
 * by a killed writer never blocks the next one, a live holder is waited for and then named, and a dead
 * writer's half-done commit is finished (or, before its first rename, undone) by the next writer.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, tempDir } from '../helpers/cli.js';
import { LOCK_FILE_NAME, writeFileSafely } from '../../src/fs/write.js';

const GEN = ['generate', '--mode', '2', '--num-processes', '8'];

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

/** A lock file as zerowiz writes it, naming `pid` on this host. */
function lockOf(pid: number): string {
  return JSON.stringify({ pid, host: hostname(), start: null, nonce: 'n0', time: Date.now() });
}

describe('the lock', () => {
  it('a lock left by a killed writer does not block the next one, and is gone afterwards', () => {
    const out = tempDir();
    writeFileSync(join(out, LOCK_FILE_NAME), lockOf(deadPid()));
    const r = runCli([...GEN, '--out', out], { env: { ZEROWIZ_LOCK_WAIT_MS: '0' } });
    expect(r.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['accelerate_config.yaml', 'ds_config.json']);
  });

  it('a lock held by a live process is waited for, then named in one line; nothing is written', () => {
    const out = tempDir();
    writeFileSync(join(out, LOCK_FILE_NAME), lockOf(process.pid));
    const r = runCli([...GEN, '--out', out], { env: { ZEROWIZ_LOCK_WAIT_MS: '300' } });
    expectOneLineError(r, new RegExp(`is locked by another zerowiz \\(pid ${process.pid}`));
    expect(r.stderr).toContain(join(out, LOCK_FILE_NAME));
    expect(readdirSync(out)).toEqual([LOCK_FILE_NAME]);
  });
});

describe('the journal of a writer killed mid-commit', () => {
  /** A folder as a writer killed by SIGKILL leaves it: old files, staged temps, backups, a journal. */
  function killedWriter(renamed: boolean) {
    const dir = tempDir();
    const pid = deadPid();
    const yaml = join(dir, 'accelerate_config.yaml');
    const json = join(dir, 'ds_config.json');
    writeFileSync(yaml, 'old: yaml\n');
    writeFileSync(json, '{"old": "json"}\n');
    const tj = join(dir, `.ds_config.json.zerowiz-${pid}-aa.tmp`);
    const ty = join(dir, `.accelerate_config.yaml.zerowiz-${pid}-bb.tmp`);
    writeFileSync(tj, '{"new": "json"}\n');
    writeFileSync(ty, 'new: yaml\n');
    const bj = `${json}.bak-20260101-000000`;
    const by = `${yaml}.bak-20260101-000000`;
    spawnSync('ln', [json, bj]);
    spawnSync('ln', [yaml, by]);
    const entries = [
      { path: json, temp: tj, backup: bj, existed: true },
      { path: yaml, temp: ty, backup: by, existed: true },
    ];
    writeFileSync(join(dir, `.zerowiz-${pid}-cc.journal`), JSON.stringify({ pid, entries }));
    if (renamed) spawnSync('mv', [tj, json]);
    return { dir, yaml, json, bj, by };
  }

  it('after its first rename: the next writer finishes the commit (the new pair is whole)', async () => {
    const { dir, yaml, json, bj, by } = killedWriter(true);
    await writeFileSafely(join(dir, 'unrelated.txt'), 'x');
    expect(readFileSync(json, 'utf8')).toBe('{"new": "json"}\n');
    expect(readFileSync(yaml, 'utf8')).toBe('new: yaml\n');
    expect(readFileSync(bj, 'utf8')).toBe('{"old": "json"}\n');
    expect(readFileSync(by, 'utf8')).toBe('old: yaml\n');
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('before its first rename: the next writer undoes it (old pair, no temp, no extra backup)', async () => {
    const { dir, yaml, json, bj, by } = killedWriter(false);
    await writeFileSafely(join(dir, 'unrelated.txt'), 'x');
    expect(readFileSync(json, 'utf8')).toBe('{"old": "json"}\n');
    expect(readFileSync(yaml, 'utf8')).toBe('old: yaml\n');
    expect([existsSync(bj), existsSync(by)]).toEqual([false, false]);
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});
