/**
 * The fault-injection suite in its reduced form (`npm run torture` runs 1,000 iterations): every scenario
 * of __tests__/torture/, a few iterations each with a fixed seed, through the runner as a user runs it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

/** Iterations per scenario here; the seed is fixed so a failure here fails the same way again. */
const ITERATIONS_PER_SCENARIO = 6;
const SEED = 20261130;

describe('torture (reduced)', () => {
  const dir = join(ROOT, '__tests__', 'torture');
  const scenarios = readdirSync(dir).filter((f) => f.endsWith('.scenario.mjs'));

  it('finds the scenarios by listing the folder', () => {
    expect(scenarios).toEqual(expect.arrayContaining(['generate-out.scenario.mjs', 'preset.scenario.mjs']));
  });

  it('every scenario holds its promises under SIGKILL/SIGINT at random instants', () => {
    const iterations = ITERATIONS_PER_SCENARIO * scenarios.length;
    const r = spawnSync(
      process.execPath,
      [join(dir, 'run.mjs'), '--iterations', String(iterations), '--seed', String(SEED)],
      { cwd: ROOT, encoding: 'utf8', timeout: 300_000 },
    );
    const failures = r.stdout.split('\n').filter((l) => l.startsWith('FAIL '));
    expect(failures).toEqual([]);
    expect(r.stdout).toContain(`torture: ${iterations} iterations, 0 failures (seed ${SEED})`);
    expect(r.status).toBe(0);
  }, 320_000);

  it('refuses an unknown scenario name with a non-zero exit', () => {
    const r = spawnSync(process.execPath, [join(dir, 'run.mjs'), '--only', 'no-such-scenario'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr + r.stdout).toMatch(/no scenario named no-such-scenario/);
  });
});
