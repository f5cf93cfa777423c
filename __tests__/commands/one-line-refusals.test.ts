/**
 * Small edges of bad input, each refused in one line and a hint (exit 2): a newline typed into a flag's value
 * stays on its line (shown escaped); `check --machine-rank` beyond the setup's machines; a step that gives one
 * secret several values (zerowiz records and reruns a secret by one variable, so `launch --last` could only
 * rerun one of them: refused before anything runs, locally as for Slurm).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';
import { FAKE_ACCELERATE } from '../helpers/launch.js';

describe('a newline in a flag value never makes a second line', () => {
  for (const args of [
    ['launch', 'zero2', '--dry-run', '--pin-step', 'a\nb'],
    ['estimate', '--model', 'qw\nen', '--gpus-per-node', '8', '--gpu-memory', '80GiB'],
    ['generate', '--optimizer', 'ada\nfactor', '--print', 'json'],
  ]) {
    it(`zerowiz ${args.slice(0, 2).join(' ')} ...`, () => {
      const box = sandbox();
      const r = runCli(args, { cwd: box.cwd, env: box.env });
      expectOneLineError(r, /\\n|control character/);
    });
  }
});

describe('zerowiz check --machine-rank', () => {
  it('beyond a one-machine setup is refused', () => {
    const box = sandbox();
    const r = runCli(['check', 'zero2', '--machine-rank', '5', '--skip-check', 'all'], { cwd: box.cwd, env: box.env });
    expectOneLineError(r, /--machine-rank 5 is beyond the setup's 1 machine/);
  });

  it('0 on a one-machine setup is taken', () => {
    const box = sandbox();
    const r = runCli(['check', 'zero2', '--machine-rank', '0', '--skip-check', 'all'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('one secret given several values in a step', () => {
  it('a local launch refuses it before anything runs', () => {
    const box = sandbox();
    writeFileSync(join(box.cwd, 'train.py'), '# stand-in\n');
    writeFileSync(
      join(box.cwd, 's.yaml'),
      'name: s\nanswers:\n  num_processes: 1\n  mode: "2"\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py, --hf_token, A, --hf-token=B, HF_TOKEN=C]\n',
    );
    for (const args of [['--dry-run'], ['--no-tui']]) {
      const r = runCli(['launch', 's.yaml', '--accelerate', FAKE_ACCELERATE, ...args], { cwd: box.cwd, env: box.env });
      expectOneLineError(r, /the steps give the secret hf.token different values.*one variable, HF_TOKEN/);
    }
  });
});
