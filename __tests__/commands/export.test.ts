/**
 * `zerowiz export slurm|torchrun|hostfile`, `launch --slurm --dry-run` and the Slurm flags' bad input,
 * through the built bin; none of these needs a Slurm cluster (the real one is in e2e/slurm.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runCli, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/pty.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const SEED = 'qwen-image-lora-lowvram';

/** A DiffSynth-like checkout with the seed's training script. */
function checkout(): string {
  const d = tempDir('zw-export-');
  mkdirSync(join(d, 'examples/qwen_image/model_training'), { recursive: true });
  writeFileSync(join(d, 'examples/qwen_image/model_training/train.py'), '# stand-in\n');
  return d;
}

/** Bad input: exit 2, a `zerowiz:` line and a hint, no stack trace. */
function expectUsage(r: { code: number; stderr: string }, what: string | RegExp, hint: string | RegExp) {
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(
    typeof what === 'string' ? new RegExp(`zerowiz: ${what.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) : what,
  );
  expect(r.stderr).toMatch(
    typeof hint === 'string' ? new RegExp(`hint: .*${hint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) : hint,
  );
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe('zerowiz export', () => {
  it('torchrun: a per-node script each node runs with its rank; run on both "nodes", each launcher gets its rank', () => {
    const d = checkout();
    const out = join(d, 'out');
    const r = runCli(
      [
        'export',
        'torchrun',
        SEED,
        '--out',
        out,
        '--hosts',
        'gpu01,gpu02',
        '--gpus-per-node',
        '2',
        '--accelerate',
        FAKE,
      ],
      { cwd: d },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${join(out, 'per-node-commands.sh')}`);
    expect(r.stderr).toContain('torchrun: num_processes 1 -> 4');
    const yaml = parseYaml(readFileSync(join(out, 'accelerate_config.yaml'), 'utf8')) as Record<string, unknown>;
    expect(yaml).toMatchObject({ num_machines: 2, num_processes: 4 });
    const script = join(out, 'per-node-commands.sh');
    const log = join(d, 'calls.jsonl');
    for (const rank of ['0', '1']) {
      const run = spawnSync('sh', [script], {
        encoding: 'utf8',
        env: { ...process.env, NODE_RANK: rank, FAKE_ACCELERATE_LOG: log, FAKE_ACCELERATE_STEP_MS: '0' },
      });
      expect(run.status, run.stderr).toBe(0);
    }
    const calls = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; cwd: string });
    const at = (c: { argv: string[] }, f: string) => c.argv[c.argv.indexOf(f) + 1];
    expect(calls.map((c) => `${at(c, '--machine_rank')}:${c.argv.find((a) => a.startsWith('sft:'))}`)).toEqual([
      '0:sft:data_process',
      '0:sft:train',
      '1:sft:data_process',
      '1:sft:train',
    ]);
    for (const c of calls) {
      expect(at(c, '--main_process_ip')).toBe('gpu01');
      expect(at(c, '--main_process_port')).toBe('29500');
      expect(at(c, '--num_processes')).toBe('4');
      expect(at(c, '--num_machines')).toBe('2');
      expect(c.cwd).toBe(d);
    }
    // Without a rank it says what to set.
    const none = spawnSync('sh', [script], { encoding: 'utf8', env: { ...process.env, NODE_RANK: '' } });
    expect(none.status).not.toBe(0);
    expect(none.stderr).toMatch(/set NODE_RANK to this node's rank, 0 to 1/);
  });

  it('hostfile: one `host slots=N` row per node; no host names is bad input', () => {
    const d = checkout();
    const out = join(d, 'hf');
    const r = runCli(['export', 'hostfile', SEED, '--out', out, '--hosts', 'a,b,c', '--gpus-per-node', '8'], {
      cwd: d,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(out, 'hostfile'), 'utf8')).toBe('a slots=8\nb slots=8\nc slots=8\n');
    expect(readdirSync(out)).toEqual(['hostfile']);
    const none = runCli(['export', 'hostfile', SEED, '--out', out], { cwd: d, env: { SLURM_JOB_NODELIST: undefined } });
    expectUsage(none, 'export hostfile needs the node host names', '--hosts node1,node2');
    const mismatch = runCli(['export', 'torchrun', SEED, '--out', out, '--hosts', 'a,b', '--nodes', '3'], { cwd: d });
    expectUsage(mismatch, '--nodes 3 but 2 host name(s)', 'one host name per node');
  });

  it('slurm: writes the script and the shaped configs; a second export with other content keeps a backup', () => {
    const d = checkout();
    const out = join(d, 'sb');
    const r = runCli(
      ['export', 'slurm', SEED, '--out', out, '--nodes', '2', '--gpus-per-node', '4', '--partition', 'gpu'],
      {
        cwd: d,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const script = readFileSync(join(out, `${SEED}.sbatch`), 'utf8');
    expect(spawnSync('bash', ['-n'], { input: script }).status).toBe(0);
    expect(script).toContain('#SBATCH --partition=gpu');
    expect(script).toContain('#SBATCH --gres=gpu:4');
    expect(script).toContain(`#SBATCH --output=${join(out, 'logs')}/slurm-%j.out`);
    expect(script).toContain(`ACCELERATE=accelerate`);
    expect(existsSync(join(out, 'logs'))).toBe(true);
    const again = runCli(['export', 'slurm', SEED, '--out', out, '--nodes', '2', '--gpus-per-node', '8'], { cwd: d });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/updated .*\.sbatch \(previous content kept as .*\.sbatch\.bak-\d{8}-\d{6}\)/);
    const backup = readdirSync(out).find((f) => f.startsWith(`${SEED}.sbatch.bak-`))!;
    expect(readFileSync(join(out, backup), 'utf8')).toBe(script);
  });

  it('bad input: an unknown kind, no --out, a bad --gpus-per-node, a bad --time', () => {
    const d = checkout();
    const kind = runCli(['export', 'k8s', SEED, '--out', join(d, 'x')], { cwd: d });
    expect(kind.code).toBe(2);
    expect(kind.stderr).toMatch(/zerowiz: .*'k8s'.*slurm, torchrun, hostfile/);
    expectUsage(runCli(['export', 'slurm', SEED], { cwd: d }), 'export needs --out DIR', 'zerowiz export slurm');
    expectUsage(
      runCli(['export', 'slurm', SEED, '--out', join(d, 'x'), '--gpus-per-node', '0'], { cwd: d }),
      "--gpus-per-node '0' is not a whole number",
      '--gpus-per-node 8',
    );
    expectUsage(
      runCli(['export', 'slurm', SEED, '--out', join(d, 'x'), '--time', '2h'], { cwd: d }),
      "--time '2h' is not a Slurm time",
      'HH:MM:SS',
    );
    expect(existsSync(join(d, 'x'))).toBe(false);
  });
});

describe('zerowiz launch --slurm without a cluster', () => {
  it('--dry-run prints the sbatch script and what a real launch would refuse; nothing is written', () => {
    const d = checkout();
    const r = runCli(
      ['launch', SEED, '--slurm', '--nodes', '2', '--gpus-per-node', '2', '--dry-run', '--accelerate', FAKE],
      {
        cwd: d,
        env: { PATH: join(d, 'no-bin') },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^# the sbatch script a real launch writes to \.zerowiz\/runs\/\d{8}-\d{6}-qwen-image-lora-lowvram\/job\.sbatch/,
    );
    expect(r.stdout).toContain('#SBATCH --nodes=2');
    expect(r.stderr).toContain("note: Slurm's sbatch is not on PATH (a real launch would stop here)");
    expect(r.stderr).toContain('slurm: num_processes 1 -> 4');
    expect(existsSync(join(d, '.zerowiz'))).toBe(false);
  });

  it('Slurm flags without --slurm, and --slurm without Slurm, are bad input', () => {
    const d = checkout();
    expectUsage(
      runCli(['launch', SEED, '--partition', 'gpu', '--accelerate', FAKE], { cwd: d }),
      /zerowiz: --partition, --nodes, .* only apply with --slurm/,
      'add --slurm',
    );
    expectUsage(
      runCli(['launch', SEED, '--slurm', '--accelerate', FAKE], { cwd: d, env: { PATH: join(d, 'no-bin') } }),
      "Slurm's sbatch is not on PATH",
      'zerowiz export slurm NAME --out DIR',
    );
    expectUsage(
      runCli(['launch', SEED, '--slurm', '--sbatch-arg=--output=x', '--accelerate', FAKE], { cwd: d }),
      '--sbatch-arg: --output is set by zerowiz',
      '--sbatch-arg=--exclusive',
    );
    expect(existsSync(join(d, '.zerowiz'))).toBe(false);
  });

  it('attach without a run says so; a finished local run is replayed to its end with the exit code launch gave', () => {
    const d = checkout();
    expectUsage(runCli(['attach'], { cwd: d }), 'no run recorded in this directory', 'zerowiz launch NAME');
    expectUsage(runCli(['attach', 'nope'], { cwd: d }), "no run 'nope' in .zerowiz/runs", 'zerowiz runs');
    const local = runCli(['launch', SEED, '--accelerate', FAKE, '--no-tui'], {
      cwd: d,
      env: { FAKE_ACCELERATE_STEP_MS: '0' },
    });
    expect(local.code, local.stderr).toBe(0);
    const [id] = readdirSync(join(d, '.zerowiz/runs'));
    const again = runCli(['attach', id!, '--no-tui'], { cwd: d });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`attaching to run ${id}, which has ended`);
    expect(again.stdout).toMatch(/^\[train\] +Steps: 100%/m);
    expect(again.stdout).toMatch(/^\[zerowiz\] all 2 steps done/m);
  });

  it('re-checks the memory fit for the Slurm shape: a 20B ZeRO-3 setup fits 8 GPUs, not 1', () => {
    const d = checkout();
    const preset = join(d, 'big.yaml');
    writeFileSync(
      preset,
      [
        'name: big',
        'answers:',
        '  num_processes: 8',
        '  mode: 3',
        '  mixed_precision: bf16',
        '  model_params: 20.4B',
        '  largest_layer_params: 57M',
        '  gpu_memory: 80GiB',
        '  cpu_memory: 1TiB',
        'steps:',
        '  - name: train',
        '    uses_config: true',
        '    args: [examples/qwen_image/model_training/train.py]',
        '',
      ].join('\n'),
    );
    const fits = runCli(['launch', preset, '--slurm', '--dry-run', '--accelerate', FAKE], { cwd: d });
    expect(fits.code, fits.stderr).toBe(0);
    expect(fits.stderr).not.toContain('does not fit');
    expect(fits.stderr).not.toMatch(/for 1 node\(s\) x 8 GPU\(s\): warning/);
    const one = runCli(['launch', preset, '--slurm', '--gpus-per-node', '1', '--dry-run', '--accelerate', FAKE], {
      cwd: d,
    });
    expect(one.code, one.stderr).toBe(0);
    expect(one.stderr).toContain('slurm: num_processes 8 -> 1');
    expect(one.stderr).toMatch(
      /for 1 node\(s\) x 1 GPU\(s\): warning: ZeRO-3 peaks at .* per GPU, over the .* usable of 80/,
    );
  });
});
