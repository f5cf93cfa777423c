import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runCli, tempDir } from '../helpers/cli.js';
import { SEED_DIR } from '../helpers/paths.js';
import { importAccelerateConfig } from '../../src/setups/import.js';
import { validate } from '../../src/rules/validate.js';

const seedYaml = readFileSync(join(SEED_DIR, 'deepspeed_zero3_cpuoffload.yaml'), 'utf8');
const seedJson = readFileSync(join(SEED_DIR, 'ds_z3_cpuoffload.json'), 'utf8');

/** Bad input: exit 2, one line saying what is wrong (plus a hint line), no stack trace. */
function expectUsageError(r: { code: number; stdout: string; stderr: string }, pattern: RegExp) {
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines[0]).toMatch(/^zerowiz: /);
  expect(lines[0]).toMatch(pattern);
  expect(lines.length).toBeLessThanOrEqual(2);
  expect(r.stderr).not.toMatch(/\n\s+at |Error:/);
}

describe('zerowiz generate (built bin)', () => {
  it('prints the seed YAML byte for byte for the seed preset', () => {
    const r = runCli(['generate', '--preset', 'qwen-image-lora-lowvram', '--print', 'yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(seedYaml);
  });

  it('prints the seed JSON (same keys, order and values)', () => {
    const r = runCli(['generate', '--preset', 'qwen-image-lora-lowvram', '--print', 'json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${seedJson}\n`);
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(Object.keys(JSON.parse(seedJson)));
  });

  it('writes both files with --out; the YAML points at the JSON; the pair validates', () => {
    const dir = tempDir();
    const r = runCli([
      'generate',
      '--mode',
      '3-offload',
      '--num-processes',
      '8',
      '--mixed-precision',
      'bf16',
      '--gradient-checkpointing',
      '--out',
      dir,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${join(dir, 'accelerate_config.yaml')}`);
    expect(r.stdout).toMatch(/run: accelerate launch --config_file \S+accelerate_config.yaml train.py/);
    const yaml = parseYaml(readFileSync(join(dir, 'accelerate_config.yaml'), 'utf8')) as {
      deepspeed_config: { deepspeed_config_file: string };
    };
    expect(yaml.deepspeed_config.deepspeed_config_file).toBe(join(dir, 'ds_config.json'));
    const json = JSON.parse(readFileSync(join(dir, 'ds_config.json'), 'utf8'));
    expect(json.zero_optimization).toMatchObject({
      stage: 3,
      offload_param: { device: 'cpu' },
      offload_optimizer: { device: 'cpu' },
    });
    expect(json.activation_checkpointing).toBeDefined();
    const imported = importAccelerateConfig(join(dir, 'accelerate_config.yaml'));
    expect(imported.findings.filter((f) => f.level === 'error')).toEqual([]);
    expect(validate(imported.setup).filter((f) => f.level === 'error')).toEqual([]);
  });

  it('keeps a differing existing file as a backup, and leaves identical files alone', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'accelerate_config.yaml'), 'my: own file\n');
    const first = runCli(['generate', '--mode', '2', '--num-processes', '8', '--out', dir]);
    expect(first.code).toBe(0);
    const backups = readdirSync(dir).filter((f) => f.startsWith('accelerate_config.yaml.bak-'));
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(dir, backups[0]!), 'utf8')).toBe('my: own file\n');
    const second = runCli(['generate', '--mode', '2', '--num-processes', '8', '--out', dir]);
    expect(second.stdout).toContain('unchanged');
    expect(readdirSync(dir).filter((f) => f.includes('.bak-'))).toHaveLength(1);
  });

  const bad: Array<[string, string[], RegExp]> = [
    ['an unknown mode', ['--mode', '4'], /--mode: '4' is not a ZeRO mode/],
    ['zero processes', ['--num-processes', '0'], /--num-processes: must be from 1/],
    ['a non-number', ['--num-processes', 'abc'], /--num-processes: 'abc' is not a whole number/],
    ['a missing preset', ['--preset', 'no-such-preset'], /no preset named 'no-such-preset'/],
    ['a bad precision', ['--mixed-precision', 'fp32'], /--mixed-precision: 'fp32' is not one of/],
    [
      'a setup accelerate refuses',
      ['--num-machines', '2', '--num-processes', '3', '--main-process-ip', '10.0.0.1'],
      /not divisible by num_machines/,
    ],
    ['an unknown flag', ['--stage', '3'], /unknown option '--stage'/],
    ['a micro-batch of 0', ['--model-params', '7B', '--micro-batch', '0'], /--micro-batch: must be from 1 to 100000/],
    [
      'a LoRA method that is not one',
      ['--model-params', '7B', '--fine-tuning', 'qlora'],
      /--fine-tuning: 'qlora' is not one of full, lora/,
    ],
  ];
  for (const [what, args, pattern] of bad) {
    it(`refuses ${what} with exit 2 and writes nothing`, () => {
      const dir = join(tempDir(), 'out');
      const r = runCli(['generate', ...args, '--out', dir]);
      expectUsageError(r, pattern);
      expect(existsSync(dir)).toBe(false);
    });
  }

  it('refuses a broken preset file with its key and problem, leaving the file as it was', () => {
    const dir = tempDir();
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'answers:\n  num_processes: -3\n');
    const r = runCli(['generate', '--preset', file, '--print', 'yaml']);
    expectUsageError(r, /answers\.num_processes/);
    expect(readFileSync(file, 'utf8')).toBe('answers:\n  num_processes: -3\n');
  });

  it('takes the workload answers as flags, and warns on the peak of the chosen mode', () => {
    // The seed's training pass on one 24 GiB GPU: ZeRO-2 holds the frozen 20B DiT whole (41 GB) and cannot fit;
    // ZeRO-3 offload (the seed's choice) fits, so it draws no warning.
    const args = (mode: string) => [
      'generate',
      '--preset',
      'qwen-image-lora-lowvram',
      '--mode',
      mode,
      '--model-params',
      '20430401088',
      '--gpu-memory',
      '24GiB',
      '--cpu-memory',
      '128GiB',
      '--micro-batch',
      '1',
      '--max-pixels',
      '1024x1024',
      '--print',
      'json',
    ];
    const two = runCli(args('2'));
    expect(two.code).toBe(0);
    expect(two.stderr).toMatch(/warning: ZeRO-2 peaks at [\d.]+ GiB per GPU, over the 21\.60 GiB usable of 24\.00 GiB/);
    expect(two.stderr).toContain('Instead: ');
    const seed = runCli(args('3-offload'));
    expect(seed.code).toBe(0);
    expect(seed.stderr).not.toContain('mode-does-not-fit');
    expect(seed.stderr).not.toMatch(/peaks at/);
    // Targets the catalog does not know: the estimate says so instead of guessing.
    const bogus = runCli([...args('3-offload'), '--lora-targets', 'to_q,bogus']);
    expect(bogus.stderr).toMatch(
      /warning: the peak memory cannot be estimated: LoRA target 'bogus' is not a module of qwen-image/,
    );
  });

  it('needs --out or --print', () => {
    expectUsageError(runCli(['generate', '--mode', '2']), /needs --out DIR or --print/);
  });
});

describe('zerowiz preset (built bin)', () => {
  it('save, list, show, delete as a user would', () => {
    const home = tempDir('zw-home-');
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'cfg') };
    const saved = runCli(
      ['preset', 'save', 'big', '--preset', 'zero3', '--num-processes', '16', '--description', 'two boxes'],
      { env },
    );
    expect(saved.code).toBe(0);
    expect(saved.stdout).toContain(join(home, 'cfg', 'zerowiz', 'presets', 'big.yaml'));
    const list = runCli(['preset', 'list', '--json'], { env });
    const parsed = JSON.parse(list.stdout) as {
      presets: Array<{ name: string; source: string; numProcesses: number }>;
    };
    expect(parsed.presets.find((p) => p.name === 'big')).toMatchObject({ source: 'user', numProcesses: 16 });
    const show = runCli(['preset', 'show', 'big'], { env });
    expect(show.stdout).toContain('num_processes: 16');
    expect(runCli(['generate', '--preset', 'big', '--print', 'yaml'], { env }).stdout).toContain('num_processes: 16');
    const del = runCli(['preset', 'delete', 'big'], { env });
    expect(del.code).toBe(0);
    expect(runCli(['preset', 'show', 'big'], { env }).code).toBe(2);
  });

  it('reports a broken user preset on stderr and still lists the rest', () => {
    const home = tempDir('zw-home-');
    const dir = join(home, 'cfg', 'zerowiz', 'presets');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'oops.yaml'), 'answers:\n  mode: 9\n');
    const r = runCli(['preset', 'list'], { env: { HOME: home, XDG_CONFIG_HOME: join(home, 'cfg') } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('zero3-offload');
    expect(r.stderr).toContain(`skipped ${join(dir, 'oops.yaml')}: answers.mode:`);
    expect(existsSync(join(dir, 'oops.yaml'))).toBe(true);
  });
});

describe('zerowiz itself', () => {
  it('without a terminal, the wizard exits 2 pointing to generate', () => {
    const r = runCli([]);
    expectUsageError(r, /needs an interactive terminal/);
    expect(r.stderr).toContain('zerowiz generate');
  });
  it('an unknown subcommand exits 2', () => {
    expect(runCli(['frobnicate']).code).toBe(2);
  });
});
