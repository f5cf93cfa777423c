import { describe, expect, it } from 'vitest';
import { ENV_NUMBERS, envNumber, envNumbersProblem } from '../../src/text/env.js';
import { expectOneLineError, runCli, tempDir } from '../helpers/cli.js';
import { FAKE_ACCELERATE, oneStepCheckout } from '../helpers/launch.js';

describe('envNumber', () => {
  it('keeps the default when unset or empty, and takes a number within the bounds', () => {
    expect(envNumber({}, 'ZEROWIZ_TELEMETRY_MS', 1000)).toBe(1000);
    expect(envNumber({ ZEROWIZ_TELEMETRY_MS: ' ' }, 'ZEROWIZ_TELEMETRY_MS', 1000)).toBe(1000);
    expect(envNumber({ ZEROWIZ_TELEMETRY_MS: '100' }, 'ZEROWIZ_TELEMETRY_MS', 1000)).toBe(100);
    expect(envNumber({ ZEROWIZ_SIGINT_GRACE_MS: '0' }, 'ZEROWIZ_SIGINT_GRACE_MS', 10_000)).toBe(0);
    expect(envNumber({ ZEROWIZ_STALL_FACTOR: '2.5' }, 'ZEROWIZ_STALL_FACTOR', 5)).toBe(2.5);
  });

  it('refuses a value out of its bounds or not a number, naming it, its unit and its bound', () => {
    expect(() => envNumber({ ZEROWIZ_TELEMETRY_MS: '50' }, 'ZEROWIZ_TELEMETRY_MS', 1000)).toThrow(
      'ZEROWIZ_TELEMETRY_MS="50" is not a number of milliseconds at least 100',
    );
    expect(() => envNumber({ ZEROWIZ_STALL_FACTOR: '0' }, 'ZEROWIZ_STALL_FACTOR', 5)).toThrow(
      'ZEROWIZ_STALL_FACTOR="0" is not a number of times the median step above 0',
    );
    expect(() => envNumber({ ZEROWIZ_LOCK_WAIT_MS: '10s' }, 'ZEROWIZ_LOCK_WAIT_MS', 1)).toThrow(/10s/);
    expect(envNumbersProblem({ ZEROWIZ_SLURM_POLL_MS: 'fast' })?.hint).toBe(
      "set it to a number at least 50, or unset it for zerowiz's default",
    );
    for (const name of Object.keys(ENV_NUMBERS) as (keyof typeof ENV_NUMBERS)[])
      expect(envNumbersProblem({ [name]: 'x' })?.message).toContain(name);
  });
});

describe('a bad setting on the command line', () => {
  it('stops a launch before anything is written or run, in one line with the hint', () => {
    const d = oneStepCheckout('zw-env-');
    const r = runCli(['launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE], {
      cwd: d,
      env: { ZEROWIZ_SIGINT_GRACE_MS: 'soon' },
    });
    expectOneLineError(r, /ZEROWIZ_SIGINT_GRACE_MS="soon" is not a number of milliseconds at least 0/);
    expect(r.stderr).toContain("hint: set it to a number at least 0, or unset it for zerowiz's default");
  });

  it('stops a write that would wait on a lock', () => {
    const out = tempDir('zw-env-out-');
    const r = runCli(['generate', '--mode', '2', '--out', out], { env: { ZEROWIZ_LOCK_WAIT_MS: '-1' } });
    expectOneLineError(r, /ZEROWIZ_LOCK_WAIT_MS="-1" is not a number of milliseconds at least 0/);
  });
});
