/**
 * `explain` and `generate --from` answer with one set of rules (src/config/accept.ts: what accelerate and
 * DeepSpeed accept), in the same words: an accelerate YAML and its DeepSpeed JSON that the real code refuses are
 * refused by `generate --from` (exit 2, one line and a hint) and explained with that same line as an error (a
 * non-zero exit). Neither crashes on a JSON nested 100,000 deep, and numbers keep their value or are refused by
 * name: a whole number past 2^53, a hexadecimal or binary bucket size, a parameter count past a float.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';

/** An accelerate YAML naming ds.json, in a fresh folder; `yaml` replaces lines, `json` is the DeepSpeed JSON. */
function files(yaml: Record<string, string>, json: string): { cwd: string; env: Record<string, string> } {
  const box = sandbox();
  const lines = {
    compute_environment: 'LOCAL_MACHINE',
    distributed_type: 'DEEPSPEED',
    num_processes: '2',
    num_machines: '1',
    machine_rank: '0',
    ...yaml,
  };
  writeFileSync(
    join(box.cwd, 'acc.yaml'),
    `${Object.entries(lines)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n')}\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero3_init_flag: false\n`,
  );
  writeFileSync(join(box.cwd, 'ds.json'), json);
  mkdirSync(join(box.home, 'cfg'), { recursive: true });
  return { cwd: box.cwd, env: box.env };
}

const Z2 = '{"zero_optimization": {"stage": 2}}';

/** Files the real accelerate 1.15 or DeepSpeed 0.19.5 refuses (see each rule's source in accept.ts). */
const REFUSED: [string, Record<string, string>, string][] = [
  ['an unknown top-level YAML key', { bogus_key: '1' }, Z2],
  ['num_processes -2', { num_processes: '-2' }, Z2],
  ['num_processes NaN', { num_processes: '.nan' }, Z2],
  ['num_processes true', { num_processes: 'true' }, Z2],
  ['ZeRO stage 5', {}, '{"zero_optimization": {"stage": 5}}'],
  ['ZeRO stage 4', {}, '{"zero_optimization": {"stage": 4}}'],
  ['an unknown zero_optimization key', {}, '{"zero_optimization": {"stage": 2, "colour": "blue"}}'],
  [
    'fp16 and bf16 both on',
    {},
    '{"zero_optimization": {"stage": 2}, "fp16": {"enabled": true}, "bf16": {"enabled": true}}',
  ],
  ['offload device "gpu"', {}, '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "gpu"}}}'],
  ['a negative bucket', {}, '{"zero_optimization": {"stage": 2, "reduce_bucket_size": -1}}'],
  ['a non-boolean overlap_comm', {}, '{"zero_optimization": {"stage": 2, "overlap_comm": "maybe"}}'],
  ['an unknown bf16 key', {}, '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true, "colour": 1}}'],
  ['NVMe offload without a path', {}, '{"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}'],
  [
    'bf16_optimizer_states without bf16_master_weights_and_grads',
    {},
    '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true, "bf16_optimizer_states": true}}',
  ],
  [
    'bf16 optimizer states with an offloaded optimizer',
    {},
    '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}, "bf16": {"enabled": true, "bf16_master_weights_and_grads": true, "bf16_optimizer_states": true}}',
  ],
];

describe('a config the real code refuses: generate --from refuses it, explain names the same error', () => {
  for (const [what, yaml, json] of REFUSED) {
    it(what, () => {
      const f = files(yaml, json);
      const gen = runCli(['generate', '--from', 'acc.yaml', '--print', 'yaml'], { cwd: f.cwd, env: f.env });
      expectOneLineError(gen, /./);
      const line = gen.stderr
        .split('\n')
        .find(
          (l) => l.startsWith('zerowiz: ') && !l.startsWith('zerowiz: warning: ') && !l.startsWith('zerowiz: import: '),
        )!
        .slice('zerowiz: '.length);
      const ex = runCli(['explain', 'acc.yaml'], { cwd: f.cwd, env: f.env });
      expect(ex.code, ex.stdout + ex.stderr).not.toBe(0);
      expect(ex.stdout + ex.stderr).not.toMatch(/unexpected error|\n\s+at /);
      expect(ex.stdout).toContain(`error: ${line}`);
    });
  }

  it('a config both accept is explained with exit 0 and no error', () => {
    const f = files({}, '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}');
    expect(runCli(['generate', '--from', 'acc.yaml', '--print', 'yaml'], { cwd: f.cwd, env: f.env }).code).toBe(0);
    const ex = runCli(['explain', 'acc.yaml'], { cwd: f.cwd, env: f.env });
    expect(ex.code, ex.stdout + ex.stderr).toBe(0);
    expect(ex.stdout).not.toMatch(/^\s*error: /m);
  });
});

describe('JSON that would crash a reader, and numbers that would change', () => {
  it('a DeepSpeed JSON nested 100,000 deep: one line and exit 2 from generate, a named error from explain', () => {
    const deep = `{"zero_optimization": {"stage": 2}, "x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const f = files({}, deep);
    const gen = runCli(['generate', '--from', 'acc.yaml', '--print', 'yaml'], { cwd: f.cwd, env: f.env });
    expectOneLineError(gen, /nests deeper than/);
    const ex = runCli(['explain', 'acc.yaml'], { cwd: f.cwd, env: f.env });
    expect(ex.code).not.toBe(0);
    expect(ex.stdout + ex.stderr).not.toMatch(/unexpected error|Maximum call stack/);
    expect(ex.stdout + ex.stderr).toMatch(/nests deeper than/);
  });

  it('a whole number past 2^53 in the JSON is refused by name, never rewritten as a float', () => {
    const f = files({}, '{"zero_optimization": {"stage": 2, "reduce_bucket_size": 123456789012345678901234}}');
    const gen = runCli(['generate', '--from', 'acc.yaml', '--print', 'json'], { cwd: f.cwd, env: f.env });
    expectOneLineError(gen, /zero_optimization\.reduce_bucket_size: the whole number 123456789012345678901234/);
    const ex = runCli(['explain', 'acc.yaml'], { cwd: f.cwd, env: f.env });
    expect(ex.code).not.toBe(0);
    expect(ex.stdout + ex.stderr).toMatch(
      /zero_optimization\.reduce_bucket_size: the whole number 123456789012345678901234/,
    );
  });

  for (const [flag, value] of [
    ['--reduce-bucket-size', '0x10'],
    ['--reduce-bucket-size', '0b11'],
    ['--reduce-bucket-size', '0o7'],
    ['--reduce-bucket-size', '1e400'],
  ] as const) {
    it(`${flag} ${value} is refused by name, not read as another number`, () => {
      const box = sandbox();
      const r = runCli(['generate', flag, value, '--print', 'json'], { cwd: box.cwd, env: box.env });
      expectOneLineError(r, new RegExp(`${flag}: '${value}'`));
    });
  }

  it('--params 1e309 says the number is too large, not that it is not above zero', () => {
    const box = sandbox();
    const r = runCli(['estimate', '--params', '1e309', '--gpus-per-node', '8', '--gpu-memory', '80GiB'], {
      cwd: box.cwd,
      env: box.env,
    });
    expectOneLineError(r, /--params '1e309' is too large/);
  });
});
