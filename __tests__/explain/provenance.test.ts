/**
 * The provenance model (src/explain/provenance.ts): for one step, every value accelerate and DeepSpeed use and
 * where it came from, by the rules of accelerate 1.15.0. The real accelerate tier (__tests__/real/explain.test.ts)
 * flips each source against the real accelerate; these cases pin the rules without Python.
 */
import { describe, expect, it } from 'vitest';
import {
  UNKNOWN_SCRIPT,
  explainStep,
  type ConfigInput,
  type ExplainedValue,
  type StepExplanation,
  type StepInput,
} from '../../src/explain/provenance.js';

const yamlOf = (over: Record<string, unknown> = {}, ds: Record<string, unknown> = {}) => ({
  compute_environment: 'LOCAL_MACHINE',
  distributed_type: 'DEEPSPEED',
  num_processes: 2,
  num_machines: 1,
  deepspeed_config: { deepspeed_config_file: 'ds.json', zero3_init_flag: false, ...ds },
  ...over,
});
const file = (name: string, data: Record<string, unknown>): ConfigInput => ({
  data,
  origin: (p) => ({ source: name.endsWith('.json') ? 'deepspeed-json' : 'accelerate-yaml', where: `${name}: ${p}` }),
});
const JSON_AUTO = {
  bf16: { enabled: 'auto' },
  zero_optimization: { stage: 2 },
  gradient_accumulation_steps: 'auto',
  gradient_clipping: 'auto',
  train_batch_size: 'auto',
  train_micro_batch_size_per_gpu: 'auto',
};

function step(
  over: Partial<StepInput> & { yaml?: Record<string, unknown> | null; json?: Record<string, unknown> | null } = {},
): StepExplanation {
  const yaml = over.yaml === undefined ? yamlOf() : over.yaml;
  const json = over.json === undefined ? JSON_AUTO : over.json;
  return explainStep({
    name: 'train',
    args: yaml ? ['--config_file', 'acc.yaml', 'train.py'] : ['train.py'],
    defaultConfig: null,
    readConfig: (p) => (yaml && p === 'acc.yaml' ? file('acc.yaml', yaml) : { problem: 'no such file' }),
    readJson: (p) => (json ? file(p, json) : { problem: 'no such file' }),
    env: {},
    script: { ...UNKNOWN_SCRIPT, batchSize: 4, accumulation: 2, hiddenSize: 16 },
    ...over,
  });
}
const value = (e: StepExplanation, key: string): ExplainedValue => {
  const v = e.values.find((x) => x.key === key);
  if (!v) throw new Error(`no value ${key} in ${e.values.map((x) => x.key).join(', ')}`);
  return v;
};

describe('explainStep: where each value comes from', () => {
  it('a JSON value is the JSON\'s; an "auto" is filled at prepare() from the script, naming what it replaced', () => {
    const e = step();
    expect(e.errors).toEqual([]);
    expect(value(e, 'zero_optimization.stage')).toMatchObject({
      value: 2,
      source: 'deepspeed-json',
      where: 'ds.json: zero_optimization.stage',
    });
    expect(value(e, 'train_micro_batch_size_per_gpu')).toMatchObject({
      value: 4,
      source: 'script',
      where: 'DataLoader(batch_size=4)',
      overridden: [{ value: 'auto', source: 'deepspeed-json' }],
    });
    expect(value(e, 'gradient_accumulation_steps')).toMatchObject({ value: 2, source: 'script' });
    expect(e.batch).toMatchObject({
      trainBatchSize: { value: 16, source: 'script' },
      microBatch: { value: 4 },
      accumulation: { value: 2 },
      worldSize: { value: 2, source: 'accelerate-yaml', where: 'acc.yaml: num_processes' },
      holds: true,
    });
  });

  it('precedence: a launch flag wins over the YAML, and the YAML over the environment', () => {
    const e = step({ args: ['--config_file', 'acc.yaml', '--num_processes', '4', 'train.py'] });
    expect(value(e, 'launch.num_processes')).toMatchObject({
      value: 4,
      source: 'launch-flag',
      where: '--num_processes 4',
      overridden: [{ value: 2, source: 'accelerate-yaml' }],
    });
    expect(e.batch?.worldSize.value).toBe(4);
    const env = step({
      yaml: yamlOf({}, { deepspeed_config_file: 'ds.json' }),
      env: { ACCELERATE_DEEPSPEED_ZERO_STAGE: '3' },
      json: { ...JSON_AUTO, zero_optimization: { stage: 'auto' } },
    });
    expect(value(env, 'zero_optimization.stage')).toMatchObject({
      value: 3,
      source: 'environment',
      where: 'ACCELERATE_DEEPSPEED_ZERO_STAGE=3',
    });
  });

  it('beside a JSON with a value, a launch flag for it is ignored (DeepSpeedPlugin writes only into "auto"), and said', () => {
    const e = step({ args: ['--config_file', 'acc.yaml', '--zero_stage', '3', 'train.py'] });
    expect(value(e, 'zero_optimization.stage')).toMatchObject({
      value: 2,
      source: 'deepspeed-json',
      overridden: [{ value: 3, source: 'launch-flag', where: '--zero_stage 3' }],
    });
    expect(value(e, 'zero_optimization.stage').rule).toMatch(/JSON wins/);
  });

  it('the accumulation sync: a number in the JSON wins over Accelerator(...), with the mismatch warning', () => {
    const e = step({ json: { ...JSON_AUTO, gradient_accumulation_steps: 8 } });
    expect(value(e, 'gradient_accumulation_steps')).toMatchObject({
      value: 8,
      source: 'deepspeed-json',
      overridden: [{ value: 2, source: 'script', where: 'Accelerator(gradient_accumulation_steps=2)' }],
    });
    expect(e.accumulation).toBe(8);
    expect(e.warnings.join()).toMatch(/mismatch/);
    // ACCELERATE_GRADIENT_ACCUMULATION_STEPS wins over the script's argument in the Accelerator itself.
    const viaEnv = step({ env: { ACCELERATE_GRADIENT_ACCUMULATION_STEPS: '5' } });
    expect(value(viaEnv, 'gradient_accumulation_steps')).toMatchObject({ value: 5, source: 'environment' });
    expect(viaEnv.accumulation).toBe(5);
  });

  it('the keys accelerate refuses beside a JSON file make the step fail, named', () => {
    const e = step({ yaml: yamlOf({ mixed_precision: 'bf16' }, { zero_stage: 3 }) });
    expect(e.errors.join()).toMatch(/refuses zero_stage, mixed_precision/);
  });

  it('without a JSON, the config DeepSpeedPlugin builds from the YAML keys; fp16 gets its auto_cast', () => {
    const yaml = yamlOf(
      { mixed_precision: 'fp16' },
      {
        deepspeed_config_file: undefined,
        zero_stage: 3,
        offload_optimizer_device: 'cpu',
        gradient_accumulation_steps: 4,
      },
    );
    delete (yaml.deepspeed_config as Record<string, unknown>).deepspeed_config_file;
    const e = step({ yaml, json: null });
    expect(e.errors).toEqual([]);
    expect(value(e, 'zero_optimization.stage')).toMatchObject({
      value: 3,
      source: 'accelerate-yaml',
      where: 'acc.yaml: deepspeed_config.zero_stage',
    });
    expect(value(e, 'zero_optimization.offload_optimizer.device')).toMatchObject({ value: 'cpu' });
    expect(value(e, 'fp16.auto_cast')).toMatchObject({
      value: true,
      source: 'accelerate-yaml',
      where: 'acc.yaml: mixed_precision',
    });
    expect(value(e, 'gradient_accumulation_steps')).toMatchObject({ value: 4, source: 'accelerate-yaml' });
    expect(value(e, 'gradient_clipping')).toMatchObject({ value: 1.0, source: 'accelerate-default' });
    expect(e.dict?.gradient_accumulation_steps).toBe(4);
  });

  it("a step without --config_file reads accelerate's default config; with none, no DeepSpeed", () => {
    const def = step({
      yaml: null,
      defaultConfig: { path: '/h/default_config.yaml', ...file('/h/default_config.yaml', yamlOf()) },
    });
    expect(def.config).toEqual({ kind: 'default', path: '/h/default_config.yaml', json: 'ds.json' });
    expect(value(def, 'launch.config_file')).toMatchObject({ source: 'default-config' });
    expect(def.deepspeed).toBe(true);
    const bare = step({ yaml: null });
    expect([bare.deepspeed, bare.dict]).toEqual([false, null]);
    expect(value(bare, 'launch.mixed_precision')).toMatchObject({ value: 'no', source: 'accelerate-default' });
  });

  it("absent keys DeepSpeed reads are listed with DeepSpeed's defaults, at the stage", () => {
    const e = step({ json: { ...JSON_AUTO, zero_optimization: { stage: 3 } } });
    expect(value(e, 'zero_optimization.overlap_comm')).toMatchObject({ value: true, source: 'deepspeed-default' });
    expect(value(e, 'zero_optimization.stage3_prefetch_bucket_size')).toMatchObject({
      value: 5e7,
      source: 'deepspeed-default',
    });
    expect(step().values.some((v) => v.key === 'zero_optimization.stage3_prefetch_bucket_size')).toBe(false);
  });

  it('hidden-size "auto"s come from model.config.hidden_size, and fail without one', () => {
    const json = { ...JSON_AUTO, zero_optimization: { stage: 3, reduce_bucket_size: 'auto' } };
    expect(value(step({ json }), 'zero_optimization.reduce_bucket_size')).toMatchObject({
      value: 256,
      source: 'script',
    });
    const none = step({ json, script: { ...UNKNOWN_SCRIPT, hiddenSize: 'none' } });
    expect(none.errors.join()).toMatch(/model\.config/);
  });

  it("the script's Accelerator(mixed_precision=...) wins over --mixed_precision", () => {
    const e = step({
      args: ['--config_file', 'acc.yaml', '--mixed_precision', 'fp16', 'train.py'],
      script: { ...UNKNOWN_SCRIPT, batchSize: 4, mixedPrecision: 'bf16', hiddenSize: 16 },
    });
    expect(value(e, 'launch.mixed_precision')).toMatchObject({
      value: 'bf16',
      source: 'script',
      overridden: [{ value: 'fp16', source: 'launch-flag' }],
    });
    expect(value(e, 'bf16.enabled')).toMatchObject({ value: true, source: 'script' });
  });

  it('a fixed train_batch_size the micro batch and accumulation cannot match is the error DeepSpeed asserts', () => {
    const e = step({ json: { ...JSON_AUTO, train_batch_size: 7 } });
    expect(e.batch?.holds).toBe(false);
    expect(e.errors.join()).toMatch(/train_batch_size 7 == micro batch 4 x accumulation 2 x 2/);
  });
});
