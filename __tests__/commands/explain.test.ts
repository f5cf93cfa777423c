/**
 * `zerowiz explain NAME|FILE` on the built bin, as users run it: the source of each value a step will use, for
 * every kind of source, the --json shape, --step, --since-last against a real run record (made by `zerowiz
 * launch` with the stand-in accelerate), and bad input.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';
import { FAKE_ACCELERATE } from '../helpers/launch.js';
import { ROOT } from '../helpers/paths.js';

beforeAll(() => {
  const b = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
  expect(b.status, b.stderr).toBe(0);
});

interface Value {
  key: string;
  value: unknown;
  source: string;
  where: string;
  rule: string;
  overridden: { value: unknown; source: string; where: string }[];
}
interface Step {
  name: string;
  config: { kind: string; path: string | null; json: string | null };
  deepspeed: boolean;
  values: Value[];
  batch: Record<string, { value: number | null; source: string }> & { holds: boolean | null };
  errors: string[];
}

function explain(args: string[], opts: Parameters<typeof runCli>[1] = {}) {
  const r = runCli(['explain', ...args, '--json'], opts);
  const out =
    r.code <= 1 && r.stdout
      ? (JSON.parse(r.stdout) as { steps: Step[]; sinceLast?: { run: string; changes: unknown[] } })
      : null;
  return { ...r, out };
}
const val = (s: Step, key: string): Value => {
  const v = s.values.find((x) => x.key === key);
  if (!v) throw new Error(`no ${key}`);
  return v;
};

/** A preset file with one training step; `args` go before train.py (accelerate launch's own flags). */
function presetFile(dir: string, answers: string[], launchArgs: string[] = [], name = 'p'): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    [
      `name: ${name}`,
      'answers:',
      ...answers.map((a) => `  ${a}`),
      'files:',
      '  accelerate_config: cfg/accelerate_config.yaml',
      '  ds_config: cfg/ds_config.json',
      'steps:',
      '  - name: train',
      '    uses_config: true',
      `    args: [${[...launchArgs, 'train.py'].map((a) => JSON.stringify(a)).join(', ')}]`,
    ].join('\n'),
  );
  return path;
}

describe('zerowiz explain', () => {
  it("a preset: each value with its source (the preset's answer or zerowiz's default), the batch identity's factors", () => {
    const box = sandbox();
    const r = explain(['zero3', '--script-batch-size', '2', '--script-accumulation', '3'], {
      cwd: box.cwd,
      env: box.env,
    });
    expect(r.code, r.stderr).toBe(0);
    const s = r.out!.steps[0]!;
    expect(s.deepspeed).toBe(true);
    expect(val(s, 'zero_optimization.stage')).toMatchObject({
      value: 3,
      source: 'preset',
      where: 'preset zero3: mode 3',
    });
    expect(val(s, 'zero_optimization.overlap_comm')).toMatchObject({ value: false, source: 'zerowiz-default' });
    expect(val(s, 'zero_optimization.allgather_bucket_size')).toMatchObject({
      value: 5e8,
      source: 'deepspeed-default',
    });
    expect(val(s, 'train_micro_batch_size_per_gpu')).toMatchObject({ value: 2, source: 'script' });
    expect(s.batch).toMatchObject({
      trainBatchSize: { value: 2 * 3 * 8, source: 'script' },
      microBatch: { value: 2, source: 'script' },
      accumulation: { value: 3, source: 'script' },
      worldSize: { value: 8, source: 'preset' },
      holds: true,
    });
  });

  it("a launch flag in the step's argv, and an ACCELERATE_* variable of the environment, are named as sources", () => {
    const box = sandbox();
    const p = presetFile(
      box.cwd,
      ['mode: "2"', 'mixed_precision: auto', 'num_processes: 2'],
      ['--mixed_precision', 'fp16'],
    );
    const r = explain([p], { cwd: box.cwd, env: { ...box.env, ACCELERATE_GRADIENT_ACCUMULATION_STEPS: '4' } });
    expect(r.code, r.stderr).toBe(0);
    const s = r.out!.steps[0]!;
    expect(val(s, 'fp16.enabled')).toMatchObject({
      value: true,
      source: 'launch-flag',
      where: '--mixed_precision fp16',
    });
    expect(val(s, 'gradient_accumulation_steps')).toMatchObject({
      value: 4,
      source: 'environment',
      where: 'ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4',
    });
  });

  it("a step without --config_file reads accelerate's default config, named as the source", () => {
    const box = sandbox();
    const hf = join(box.home, 'hf');
    mkdirSync(join(hf, 'accelerate'), { recursive: true });
    writeFileSync(
      join(hf, 'accelerate', 'default_config.yaml'),
      'compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\nnum_processes: 2\nmixed_precision: bf16\n',
    );
    const path = join(box.cwd, 'p.yaml');
    writeFileSync(path, 'name: p\nsteps:\n  - name: data\n    args: [prep.py]\n');
    const r = explain([path], { cwd: box.cwd, env: { ...box.env, HF_HOME: hf } });
    expect(r.code, r.stderr).toBe(0);
    const s = r.out!.steps[0]!;
    expect(s.config).toMatchObject({ kind: 'default', path: join(hf, 'accelerate', 'default_config.yaml') });
    expect(val(s, 'zero_optimization.stage')).toMatchObject({ value: 3, source: 'default-config' });
    expect(val(s, 'bf16.enabled')).toMatchObject({ value: true, source: 'default-config' });
  });

  it("an accelerate YAML and its JSON: the values are the files', with the file and key named", () => {
    const box = sandbox();
    writeFileSync(
      join(box.cwd, 'ds.json'),
      JSON.stringify({ zero_optimization: { stage: 2 }, bf16: { enabled: true }, gradient_accumulation_steps: 8 }),
    );
    writeFileSync(
      join(box.cwd, 'acc.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n',
    );
    const r = explain(['./acc.yaml', '--script-accumulation', '2'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const s = r.out!.steps[0]!;
    expect(val(s, 'zero_optimization.stage')).toMatchObject({
      source: 'deepspeed-json',
      where: 'ds.json: zero_optimization.stage',
    });
    // The accumulation sync: the JSON's 8 wins over the script's 2.
    expect(val(s, 'gradient_accumulation_steps')).toMatchObject({
      value: 8,
      overridden: [{ value: 2, source: 'script' }],
    });
    expect(val(s, 'launch.num_processes')).toMatchObject({
      value: 4,
      source: 'accelerate-yaml',
      where: './acc.yaml: num_processes',
    });
  });

  it('a step accelerate would refuse exits 1 and says why; the text names the sources too', () => {
    const box = sandbox();
    writeFileSync(join(box.cwd, 'ds.json'), JSON.stringify({ zero_optimization: { stage: 2 } }));
    writeFileSync(
      join(box.cwd, 'acc.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 4\nmixed_precision: bf16\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero_stage: 3\n',
    );
    const r = runCli(['explain', 'acc.yaml'], { cwd: box.cwd, env: box.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/error: accelerate refuses zero_stage, mixed_precision/);
    expect(r.stdout).toMatch(
      /zero_optimization\.stage = 2 +\(the DeepSpeed JSON: ds\.json: zero_optimization\.stage\)/,
    );
  });

  it('--step picks one step; an unknown step is one line with the steps named, exit 2', () => {
    const box = sandbox();
    const r = explain(['qwen-image-lora-lowvram', '--step', 'train'], { cwd: box.cwd, env: box.env });
    expect(r.out!.steps.map((s) => s.name)).toEqual(['train']);
    expectOneLineError(
      runCli(['explain', 'qwen-image-lora-lowvram', '--step', 'nope'], { cwd: box.cwd, env: box.env }),
      /no step 'nope'/,
    );
    expectOneLineError(runCli(['explain', 'no-such-preset'], { cwd: box.cwd, env: box.env }), /no preset named/);
    expectOneLineError(
      runCli(['explain', 'zero3', '--script-batch-size', 'x'], { cwd: box.cwd, env: box.env }),
      /--script-batch-size 'x' is not a whole number/,
    );
  });

  it('--since-last: what changed since the last run of the preset that worked, value by value, with the sources', () => {
    const box = sandbox();
    writeFileSync(join(box.cwd, 'train.py'), '');
    const p = presetFile(box.cwd, ['mode: 3-offload', 'mixed_precision: bf16', 'num_processes: 1'], [], 'mine');
    const env = { ...box.env, ZEROWIZ_ACCELERATE: FAKE_ACCELERATE };
    const run = runCli(['launch', p, '--no-tui'], { cwd: box.cwd, env });
    expect(run.code, run.stderr).toBe(0);
    expectOneLineError(runCli(['explain', 'zero3', '--since-last'], { cwd: box.cwd, env }), /no run of preset zero3/);
    presetFile(box.cwd, ['mode: "2"', 'mixed_precision: bf16', 'num_processes: 1'], [], 'mine');
    const r = explain([p, '--since-last'], { cwd: box.cwd, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.out!.sinceLast!.changes).toContainEqual({
      step: 'train',
      key: 'zero_optimization.stage',
      before: expect.objectContaining({ value: 3 }),
      after: expect.objectContaining({ value: 2, source: 'preset' }),
    });
    const text = runCli(['explain', p, '--since-last'], { cwd: box.cwd, env });
    expect(text.stdout).toMatch(/since run \S+-mine \(succeeded\): \d+ value\(s\) changed/);
    expect(text.stdout).toMatch(/train: zero_optimization\.stage: 3 \(.*\) -> 2 \(the preset: preset mine: mode 2\)/);
    expect(text.stdout).toMatch(/train: zero_optimization\.offload_optimizer\.device: cpu .* -> \(absent\)/);
  });
});
