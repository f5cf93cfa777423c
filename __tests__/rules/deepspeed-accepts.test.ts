/**
 * What zerowiz writes, the real accelerate 1.15 and DeepSpeed 0.19.5 accept, or zerowiz says why not (each rule
 * cites the source it was read in: src/config/accept.ts, src/rules/validate.ts). Through the built bin, as a
 * user generates files:
 * - `--master-weights none` writes bf16_master_weights_and_grads and bf16_optimizer_states, which DeepSpeed
 *   reads at stages 1-3 (never "not written", never "ZeRO-3 only"); with an offloaded optimizer accelerate's
 *   DeepSpeedCPUAdam keeps fp32 moments and DeepSpeed refuses bf16 optimizer states: refused here; with the
 *   precision "auto" the model may train in fp32 beside them: said;
 * - an offloaded optimizer replaces the script's: Adafactor's first step fails (refused), 8-bit AdamW and SGD
 *   train as a CPU Adam (said);
 * - the refusal of a step's --mixed_precision beside the JSON's precision quotes accelerate as it is;
 * - explain cites the DeepSpeed release its defaults were read in (0.19.5; 0.19.6 is not released).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';

function generate(args: string[]) {
  const box = sandbox();
  return runCli(['generate', '--num-processes', '2', ...args, '--print', 'json'], { cwd: box.cwd, env: box.env });
}

describe('--master-weights none', () => {
  it('without offload: both keys are written, and nothing says they are not (with or without a model size)', () => {
    for (const model of [[], ['--model-params', '7B']]) {
      const r = generate(['--mode', '2', '--mixed-precision', 'bf16', '--master-weights', 'none', ...model]);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.bf16).toMatchObject({ bf16_master_weights_and_grads: true, bf16_optimizer_states: true });
      expect(r.stderr).not.toMatch(/not written|ZeRO-3 only|does not apply/);
    }
  });

  for (const mode of ['2-offload', '3-offload']) {
    it(`with ${mode}: refused, saying why (accelerate's DeepSpeedCPUAdam keeps fp32 moments)`, () => {
      const r = generate(['--mode', mode, '--mixed-precision', 'bf16', '--master-weights', 'none']);
      expectOneLineError(
        r,
        /bf16_optimizer_states with an offloaded optimizer: accelerate swaps .*DeepSpeedCPUAdam with fp32 moments/,
      );
      expect(r.stderr).toMatch(/hint: keep fp32 master weights \(--master-weights fp32\)/);
    });
  }

  it('with the precision auto: the files are written, and the warning says the model may train in fp32', () => {
    const r = generate(['--mode', '2', '--mixed-precision', 'auto', '--master-weights', 'none']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: bf16\.enabled is "auto" beside bf16 master weights: .*the model trains in fp32/);
  });

  it('with fp16: it does not apply, and the reason is the precision', () => {
    const r = generate(['--mode', '2', '--mixed-precision', 'fp16', '--master-weights', 'none']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/--master-weights does not apply: the precision is fp16/);
    expect(JSON.parse(r.stdout).bf16.bf16_master_weights_and_grads).toBeUndefined();
  });
});

describe('an offloaded optimizer replaces the script optimizer (accelerate map_pytorch_optim_to_deepspeed)', () => {
  const base = ['--model-params', '7B', '--gpu-memory', '80GiB', '--mixed-precision', 'bf16'];

  it("Adafactor with 2-offload is refused: its parameter groups keep Adafactor's settings, so the first step fails", () => {
    const r = generate([...base, '--mode', '2-offload', '--optimizer', 'adafactor']);
    expectOneLineError(r, /accelerate replaces the script's Adafactor by DeepSpeedCPUAdam/);
  });

  for (const [opt, name] of [
    ['adamw-8bit', '8-bit AdamW'],
    ['sgd', 'SGD'],
  ] as const) {
    it(`${name} with 3-offload: written, and the warning says a CPU Adam with fp32 moments runs`, () => {
      const r = generate([...base, '--mode', '3-offload', '--optimizer', opt]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(
        new RegExp(`warning: .*replaces the script's ${name} by DeepSpeedCPUAdam in Adam mode .*fp32 moments`),
      );
    });
  }

  it('without offload nothing is said of it', () => {
    const r = generate([...base, '--mode', '2', '--optimizer', 'adafactor']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/DeepSpeedCPUAdam/);
  });
});

describe('words that quote the real code', () => {
  it("a step's --mixed_precision fp16 beside a bf16 JSON: accelerate's own sentence", () => {
    const box = sandbox();
    writeFileSync(join(box.cwd, 'train.py'), '# stand-in\n');
    writeFileSync(
      join(box.cwd, 'p.yaml'),
      'name: p\nanswers:\n  num_processes: 2\n  mode: "2"\n  mixed_precision: bf16\nsteps:\n  - name: train\n    uses_config: true\n    args: [--mixed_precision, fp16, train.py]\n',
    );
    const r = runCli(['launch', 'p.yaml', '--dry-run', '--accelerate', '/bin/true'], { cwd: box.cwd, env: box.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '("`--mixed_precision` arg cannot be set to `fp16` when `bf16` is set in the DeepSpeed config file.")',
    );
  });

  it("explain cites DeepSpeed 0.19.5 for DeepSpeed's defaults, a release that exists", () => {
    const box = sandbox();
    const r = runCli(['explain', 'zero2', '--json'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const wheres = new Set<string>(
      JSON.parse(r.stdout)
        .steps.flatMap((s: { values: { source: string; where: string }[] }) => s.values)
        .filter((v: { source: string }) => v.source === 'deepspeed-default')
        .map((v: { where: string }) => v.where),
    );
    expect([...wheres]).toContain('DeepSpeed 0.19.5');
    expect(r.stdout).not.toContain('0.19.6');
  });
});
