/**
 * One launch entry (issue 17): every way into a run checks the setup as the wizard's review does and stops
 * the same way, with a fix that runs as printed; `export` writes every file its commands name, for the shape
 * the exported job runs, and says nothing of Slurm where no Slurm is involved. Through the built bin.
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
  const d = tempDir('zw-entry-');
  mkdirSync(join(d, 'examples/qwen_image/model_training'), { recursive: true });
  writeFileSync(join(d, 'examples/qwen_image/model_training/train.py'), '# stand-in\n');
  return d;
}

/** $HF_HOME whose accelerate default config is ZeRO-3 offload: what a step without --config_file runs under. */
function zero3Default(): string {
  const hf = tempDir('zw-hf-');
  mkdirSync(join(hf, 'accelerate'), { recursive: true });
  writeFileSync(
    join(hf, 'accelerate', 'default_config.yaml'),
    'compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  offload_optimizer_device: cpu\n  offload_param_device: cpu\n  zero_stage: 3\ndistributed_type: DEEPSPEED\nnum_processes: 8\n',
  );
  return hf;
}

describe("a step that accelerate's ZeRO-3 default config would run under DeepSpeed (DiffSynth-Studio#1107)", () => {
  it('`zerowiz launch` refuses it before anything is written, with the fix; --pin-step runs it pinned, and --last keeps it', () => {
    const d = checkout();
    const env = { HF_HOME: zero3Default(), FAKE_ACCELERATE_STEP_MS: '0', FAKE_ACCELERATE_LOG: join(d, 'argv.jsonl') };
    const r = runCli(['launch', SEED, '--accelerate', FAKE, '--no-tui'], { cwd: d, env });
    expect(r.code).toBe(2);
    // Its first error is the step's (gradient checkpointing under the default config's ZeRO-3 offload, or the
    // data pass under DeepSpeed: one fix for both).
    expect(r.stderr).toMatch(/^zerowiz: 'qwen-image-lora-lowvram' is not valid: step data_process .*\(and 1 more\)$/m);
    expect(r.stderr).toMatch(
      /hint: .*run zerowiz launch qwen-image-lora-lowvram --pin-step data_process \(the run's record keeps the pin for --last\)/,
    );
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
    expect(existsSync(join(d, '.zerowiz'))).toBe(false);
    expect(existsSync(join(d, 'examples/qwen_image/model_training/special'))).toBe(false);

    const pinned = runCli(['launch', SEED, '--accelerate', FAKE, '--no-tui', '--pin-step', 'data_process'], {
      cwd: d,
      env,
    });
    expect(pinned.code, pinned.stderr).toBe(0);
    const calls = readFileSync(join(d, 'argv.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[] });
    const data = calls.find((c) => c.argv.includes('sft:data_process'))!;
    const config = data.argv[data.argv.indexOf('--config_file') + 1]!;
    expect(config).toMatch(/accelerate_no_deepspeed\.yaml$/);
    const yaml = parseYaml(readFileSync(join(d, config), 'utf8')) as Record<string, unknown>;
    expect(yaml.distributed_type).not.toBe('DEEPSPEED');

    const last = runCli(['launch', '--last', '--accelerate', FAKE, '--no-tui'], { cwd: d, env });
    expect(last.code, last.stderr).toBe(0);
    const again = readFileSync(join(d, 'argv.jsonl'), 'utf8').trim().split('\n').slice(2);
    expect(again.some((l) => l.includes('sft:data_process') && l.includes('accelerate_no_deepspeed.yaml'))).toBe(true);
  });

  it('the hint runs as printed when the preset was given as a file, and from export it names export', async () => {
    const d = checkout();
    const env = { HF_HOME: zero3Default(), FAKE_ACCELERATE_STEP_MS: '0' };
    const { presetsDir } = await import('../../src/fs/paths.js');
    const file = join(d, 'my preset.yaml');
    writeFileSync(file, readFileSync(join(presetsDir(), `${SEED}.yaml`), 'utf8'));
    const r = runCli(['launch', 'my preset.yaml', '--accelerate', FAKE, '--no-tui'], { cwd: d, env });
    expect(r.code).toBe(2);
    const command = /hint: .*run (zerowiz launch .*--pin-step data_process) \(/.exec(r.stderr)?.[1];
    expect(command, r.stderr).toBe("zerowiz launch 'my preset.yaml' --pin-step data_process");
    // As printed, in a shell.
    const again = spawnSync(
      'bash',
      ['-c', `${command!.replace(/^zerowiz/, '"$NODE" "$BIN"')} --accelerate "$FAKE" --dry-run`],
      {
        cwd: d,
        env: { ...process.env, ...env, NODE: process.execPath, BIN: join(ROOT, 'dist', 'zerowiz.js'), FAKE },
        encoding: 'utf8',
      },
    );
    expect(again.status, again.stderr).toBe(0);
    const out = join(d, 'sb');
    const ex = runCli(['export', 'slurm', 'my preset.yaml', '--out', out], { cwd: d, env });
    expect(ex.code).toBe(2);
    expect(ex.stderr).toMatch(
      /hint: .*run zerowiz export slurm 'my preset\.yaml' --out .*sb --pin-step data_process, or pin it/,
    );
    expect(ex.stderr).not.toMatch(/zerowiz launch/);
  });

  it('--pin-step of a step the preset does not have is bad input naming its steps', () => {
    const d = checkout();
    const r = runCli(['launch', SEED, '--accelerate', FAKE, '--no-tui', '--pin-step', 'nope'], { cwd: d });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--pin-step nope: 'qwen-image-lora-lowvram' has no step of that name");
    expect(r.stderr).toContain('hint: its steps are: data_process, train');
  });

  it('`zerowiz export slurm` refuses it the same way; pinned, it writes the config without DeepSpeed for the shape, which the script names', () => {
    const d = checkout();
    const env = { HF_HOME: zero3Default() };
    const out = join(d, 'sb');
    const args = ['export', 'slurm', SEED, '--out', out, '--nodes', '2', '--gpus-per-node', '4'];
    const r = runCli(args, { cwd: d, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not valid: step data_process /);
    expect(r.stderr).toMatch(/hint: .*--pin-step data_process/);
    expect(existsSync(out)).toBe(false);

    const ok = runCli([...args, '--pin-step', 'data_process'], { cwd: d, env });
    expect(ok.code, ok.stderr).toBe(0);
    const noDs = join(out, 'accelerate_no_deepspeed.yaml');
    expect(ok.stdout).toContain(`wrote ${noDs}`);
    // For the job's shape: one process per GPU of both nodes, not one plain process per node.
    expect(parseYaml(readFileSync(noDs, 'utf8'))).toMatchObject({
      distributed_type: 'MULTI_GPU',
      num_machines: 2,
      num_processes: 8,
    });
    const script = readFileSync(join(out, `${SEED}.sbatch`), 'utf8');
    expect(script).toContain(noDs);
  });
});

describe('zerowiz export torchrun and hostfile', () => {
  it('torchrun: the YAML names the main node and port of --hosts; nothing is said of srun or Slurm', () => {
    const d = checkout();
    const out = join(d, 'tr');
    const r = runCli(['export', 'torchrun', 'zero3', '--out', out, '--hosts', 'gpu01,gpu02', '--gpus-per-node', '2'], {
      cwd: d,
    });
    expect(r.code, r.stderr).toBe(0);
    const yaml = parseYaml(readFileSync(join(out, 'accelerate_config.yaml'), 'utf8')) as Record<string, unknown>;
    expect(yaml).toMatchObject({ main_process_ip: 'gpu01', main_process_port: 29500, num_machines: 2 });
    expect(r.stderr).not.toMatch(/srun|Slurm|job|run record/);
    expect(r.stderr).toMatch(/torchrun: multinode_launcher .* -> standard \(every node runs accelerate itself/);
  });

  it('hostfile: only the hostfile, and no word about a shape', () => {
    const d = checkout();
    const out = join(d, 'hf');
    const r = runCli(['export', 'hostfile', 'zero3', '--out', out, '--hosts', 'a,b', '--gpus-per-node', '8'], {
      cwd: d,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(out)).toEqual(['hostfile']);
    expect(r.stderr).toBe('');
  });
});

describe('--dry-run of the same entry', () => {
  it('names what a real launch would refuse, and the exit status says it', () => {
    const d = checkout();
    const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'zerowiz.js'), 'launch', SEED, '--dry-run'], {
      cwd: d,
      encoding: 'utf8',
      env: { ...process.env, PATH: '/nonexistent', HF_HOME: zero3Default() },
    });
    // The ZeRO-3 default config's trap is an error even in a dry run: nothing it prints could run.
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/is not valid: step data_process .*--pin-step data_process/s);
  });
});
