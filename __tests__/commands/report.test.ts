/**
 * `zerowiz report RUN [--out FILE]`, and where the report is named: a run writes report.html into its directory
 * when it ends; stream mode's summary, `zerowiz runs` (text and --json) and `attach` say where it is; `report`
 * writes it again for any run, or to a file of the user's (an existing one kept as a backup).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expectOneLineError } from '../helpers/cli.js';
import { diffsynthCheckout, launchSeed, runDirs, runEnv, zerowiz } from '../helpers/diffsynth-run.js';

describe('the report of a run', { timeout: 90_000 }, () => {
  let d = '';
  let dir = '';
  let rel = '';
  let launched = { code: 0, stdout: '', stderr: '' };

  beforeAll(async () => {
    d = diffsynthCheckout('zw-reportcmd-');
    launched = await launchSeed(d, runEnv(d));
    dir = runDirs(d)[0]!;
    rel = relative(d, join(dir, 'report.html'));
  }, 90_000);
  afterAll(() => rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

  it('is written into the run directory at its end, and the summary says where', () => {
    expect(launched.code, launched.stderr).toBe(0);
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toMatch(/^<!doctype html>/);
    expect(statSync(join(dir, 'report.html')).mode & 0o077).toBe(0);
    expect(launched.stdout).toContain(`[zerowiz] report: ${rel} (open it in a browser)\n`);
  });

  it('`runs` names it (text and --json), and `attach` to the ended run says it', async () => {
    const runs = await zerowiz(['runs'], d, runEnv(d));
    expect(runs.stdout).toContain(`  report: ${rel}\n`);
    const json = JSON.parse((await zerowiz(['runs', '--json'], d, runEnv(d))).stdout) as { report: string | null }[];
    expect(json[0]!.report).toBe(join(dir, 'report.html'));
    const attach = await zerowiz(['attach', '--no-tui'], d, runEnv(d));
    expect(attach.code).toBe(0);
    expect(attach.stdout).toContain(`[zerowiz] report: ${rel} (open it in a browser)\n`);
  });

  it('`zerowiz report` writes it again and prints its path; --out writes elsewhere, keeping what was there', async () => {
    const before = statSync(join(dir, 'report.html')).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    const again = await zerowiz(['report'], d, runEnv(d));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`${rel}\n`);
    expect(statSync(join(dir, 'report.html')).mtimeMs).toBeGreaterThan(before);

    // A file of the user's is where the report goes: it is kept beside it.
    mkdirSync(join(d, 'shared'));
    writeFileSync(join(d, 'shared', 'run.html'), 'my notes\n');
    const out = await zerowiz(['report', dir, '--out', './shared/run.html'], d, runEnv(d));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe('shared/run.html\n');
    expect(readFileSync(join(d, 'shared', 'run.html'), 'utf8')).toMatch(/^<!doctype html>/);
    const names = readdirSync(join(d, 'shared')).sort();
    expect(names).toHaveLength(2);
    expect(names[1]).toMatch(/^run\.html\.bak-/);
    expect(readFileSync(join(d, 'shared', names[1]!), 'utf8')).toBe('my notes\n');
  });

  it('a run that is not there: one line and a hint, exit 2', async () => {
    expectOneLineError(await zerowiz(['report', 'no-such-run'], d, runEnv(d)), /no run 'no-such-run'/);
    expect(existsSync(join(d, 'no-such-run'))).toBe(false);
  });
});
