/**
 * Path flags and the process count of `zerowiz generate`, as a subprocess: `~` and `$VAR` in every path flag
 * expand as a shell would (never a directory named `~`), a variable that is not set is one error line, and
 * without --num-processes the count is the GPUs nvidia-smi finds times the machines.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { expectOneLineError, runCli, tempDir } from '../helpers/cli.js';
import { barePath } from '../helpers/seal.js';

const FAKE_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'bin-nvidia');
const EMPTY_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'bin-empty');
const yamlOf = (dir: string) =>
  parseYaml(readFileSync(join(dir, 'accelerate_config.yaml'), 'utf8')) as Record<string, unknown>;
const jsonOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'ds_config.json'), 'utf8')) as {
    zero_optimization: { offload_optimizer?: { nvme_path?: string } };
  };

describe('generate: path flags as a shell reads them', () => {
  it('--out ~/cfg writes into $HOME/cfg, never a directory named ~; $VAR and relative paths too', () => {
    const home = tempDir('zw-paths-home-');
    const cwd = tempDir('zw-paths-cwd-');
    const r = runCli(['generate', '--mode', '2', '--num-processes', '1', '--out', '~/cfg'], {
      cwd,
      env: { HOME: home, PATH: `${EMPTY_BIN}:${barePath()}` },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(cwd, '~'))).toBe(false);
    expect(yamlOf(join(home, 'cfg')).deepspeed_config).toMatchObject({
      deepspeed_config_file: join(home, 'cfg', 'ds_config.json'),
    });
    const v = runCli(['generate', '--mode', '2', '--num-processes', '1', '--out', '$WORK/x'], {
      cwd,
      env: { HOME: home, WORK: join(cwd, 'w'), PATH: `${EMPTY_BIN}:${barePath()}` },
    });
    expect(v.code, v.stderr).toBe(0);
    expect(existsSync(join(cwd, 'w', 'x', 'accelerate_config.yaml'))).toBe(true);
  });

  it('answers that are paths (--nvme-path, --hostfile, --ds-config-path) are written expanded and absolute', () => {
    const home = tempDir('zw-paths-home-');
    const cwd = tempDir('zw-paths-cwd-');
    mkdirSync(join(home, 'fast'));
    const r = runCli(
      [
        'generate',
        '--mode',
        '3-offload',
        '--offload-device',
        'nvme',
        '--nvme-path',
        '~/fast',
        '--num-processes',
        '8',
        '--num-machines',
        '2',
        '--main-process-ip',
        '10.0.0.1',
        '--hostfile',
        'hosts.txt',
        '--out',
        '.',
      ],
      { cwd, env: { HOME: home, PATH: `${EMPTY_BIN}:${barePath()}` } },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(cwd).zero_optimization.offload_optimizer?.nvme_path).toBe(join(home, 'fast'));
    expect(yamlOf(cwd).deepspeed_config).toMatchObject({ deepspeed_hostfile: join(cwd, 'hosts.txt') });
  });

  it('a variable that is not set is one line naming it, with a hint, and nothing is written', () => {
    const cwd = tempDir('zw-paths-cwd-');
    const r = runCli(['generate', '--mode', '2', '--num-processes', '1', '--out', '$NOPE_ZW/cfg'], {
      cwd,
      env: { NOPE_ZW: undefined, PATH: `${EMPTY_BIN}:${barePath()}` },
    });
    expectOneLineError(r, /--out: '\$NOPE_ZW\/cfg': \$NOPE_ZW is not set/);
    expect(r.stderr).toMatch(/hint: export NOPE_ZW=/);
    const n = runCli(
      [
        'generate',
        '--mode',
        '3-offload',
        '--offload-device',
        'nvme',
        '--nvme-path',
        '~nosuchuserzw/x',
        '--print',
        'json',
      ],
      {
        cwd,
        env: { PATH: `${EMPTY_BIN}:${barePath()}` },
      },
    );
    expectOneLineError(n, /--nvme-path: ~nosuchuserzw: there is no user 'nosuchuserzw'/);
  });

  it('--from ~/a.yaml imports the file in $HOME', () => {
    const home = tempDir('zw-paths-home-');
    writeFileSync(
      join(home, 'a.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  zero_stage: 3\n',
    );
    const r = runCli(['generate', '--from', '~/a.yaml', '--print', 'json'], {
      cwd: tempDir(),
      env: { HOME: home, PATH: `${EMPTY_BIN}:${barePath()}` },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).zero_optimization.stage).toBe(3);
  });
});

describe('generate: the process count from the GPUs found', () => {
  it('without --num-processes: the 8 GPUs nvidia-smi finds x the machines, and says so', () => {
    const cwd = tempDir('zw-procs-');
    const r = runCli(['generate', '--mode', '2', '--out', '.'], {
      cwd,
      env: { PATH: `${FAKE_BIN}:${barePath()}`, ZW_FAKE_NVIDIA_SMI: '8' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(yamlOf(cwd).num_processes).toBe(8);
    expect(r.stderr).toContain('num_processes 8: the 8 GPU(s) nvidia-smi found here x 1 machine(s)');
    const two = tempDir('zw-procs-');
    const m = runCli(
      [
        'generate',
        '--mode',
        '2',
        '--num-machines',
        '2',
        '--main-process-ip',
        '10.0.0.1',
        '--multinode-launcher',
        'standard',
        '--out',
        '.',
      ],
      { cwd: two, env: { PATH: `${FAKE_BIN}:${barePath()}`, ZW_FAKE_NVIDIA_SMI: '8' } },
    );
    expect(m.code, m.stderr).toBe(0);
    expect(yamlOf(two).num_processes).toBe(16);
  });

  it('--num-processes 16 on one machine with 8 GPUs is written, with a warning saying why it will not run here', () => {
    const cwd = tempDir('zw-procs-');
    const r = runCli(['generate', '--mode', '2', '--num-processes', '16', '--out', '.'], {
      cwd,
      env: { PATH: `${FAKE_BIN}:${barePath()}`, ZW_FAKE_NVIDIA_SMI: '8' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(yamlOf(cwd).num_processes).toBe(16);
    expect(r.stderr).toMatch(
      /warning: num_processes 16 over 1 machine starts 16 processes per machine, but this machine has 8 GPUs/,
    );
    expect(r.stderr).not.toContain('nvidia-smi found here');
  });

  it('without GPUs (no nvidia-smi) it stays one process, and a preset keeps its own count', () => {
    const cwd = tempDir('zw-procs-');
    const r = runCli(['generate', '--mode', '2', '--out', '.'], { cwd, env: { PATH: `${EMPTY_BIN}:${barePath()}` } });
    expect(r.code, r.stderr).toBe(0);
    expect(yamlOf(cwd).num_processes).toBe(1);
    const p = runCli(['generate', '--preset', 'zero3', '--print', 'yaml'], {
      env: { PATH: `${FAKE_BIN}:${barePath()}`, ZW_FAKE_NVIDIA_SMI: '1' },
    });
    expect(p.code, p.stderr).toBe(0);
    expect(parseYaml(p.stdout).num_processes).toBe(8);
  });
});

describe('preset save without steps', () => {
  it('says that `zerowiz launch NAME` will have nothing to run (the same words as the wizard)', () => {
    const r = runCli(['preset', 'save', 'bare', '--mode', '2', '--num-processes', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'note: preset bare has no steps: `zerowiz launch bare` will have nothing to run (add steps in the wizard',
    );
  });
});
