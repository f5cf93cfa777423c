/**
 * scripts/real-tier.mjs (`npm run test:real`): pip is pointed at the local wheel stores only, and a tier that
 * cannot run says SKIPPED and why (never a silent pass). Runs without the venv (the unit tier).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

const SCRIPT = join(ROOT, 'scripts', 'real-tier.mjs');
type IndexArgs = (cfg: Record<string, string[]>) => { args?: string[]; reason?: string };

/** Runs the script with --venv-only in a temp venv folder; PIP_* variables of this machine left out. */
function runScript(env: Record<string, string>) {
  const venv = join(mkdtempSync(join(tmpdir(), 'zw-venv-')), 'venv');
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PIP_')));
  const r = spawnSync(process.execPath, [SCRIPT, '--venv-only'], {
    env: { ...base, ZEROWIZ_REAL_VENV: venv, ...env },
    encoding: 'utf8',
  });
  return { code: r.status, stderr: r.stderr, venv };
}

describe('the real tier script', () => {
  it('passes the local stores as the only indexes, with the constraints file', async () => {
    const { localIndexArgs } = (await import(pathToFileURL(SCRIPT).href)) as { localIndexArgs: IndexArgs };
    const dir = mkdtempSync(join(tmpdir(), 'zw-wheels-'));
    const constraints = join(dir, 'c.txt');
    writeFileSync(constraints, 'torch<=9\n');
    expect(
      localIndexArgs({
        'find-links': [dir, '/no/such/dir'],
        'extra-index-url': ['file:///opt/a/simple', 'https://pypi.org/simple', 'file:///opt/b/simple'],
        constraint: [constraints],
      }).args,
    ).toEqual([
      '--index-url',
      'file:///opt/a/simple',
      '--extra-index-url',
      'file:///opt/b/simple',
      '--find-links',
      dir,
      '--constraint',
      constraints,
    ]);
    expect(localIndexArgs({ 'index-url': ['https://pypi.org/simple'] }).reason).toMatch(/no local wheel store/);
    expect(localIndexArgs({ 'find-links': [dir] }).args).toEqual(['--no-index', '--find-links', dir]);
  });

  it('without python3 it says SKIPPED and why, exits 0, and makes nothing', () => {
    const r = runScript({ PATH: '/nonexistent' });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('real accelerate tier SKIPPED: no python3 on PATH');
    expect(existsSync(r.venv)).toBe(false);
  });

  it('when pip names no local wheel store it says SKIPPED and why, and never asks the default index', () => {
    const r = runScript({ PIP_CONFIG_FILE: '/dev/null' });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('real accelerate tier SKIPPED: `pip config list` names no local wheel store');
    expect(existsSync(r.venv)).toBe(false);
  });
});
