/**
 * zerowiz's model of what accelerate 1.15.0 hands DeepSpeed (src/explain/effective.ts). The real accelerate tier
 * (__tests__/real) checks it against the real accelerate over the whole matrix; these cases pin the rules
 * that tier found, so they hold without Python too.
 */
import { describe, expect, it } from 'vitest';
import {
  deepSpeedMeaning,
  defaultRun,
  effectiveDeepSpeedConfig,
  effectiveLines,
  summarizeEffective,
  type RunContext,
} from '../../src/explain/effective.js';
import { findPreset, listPresets } from '../../src/setups/presets.js';
import { withDefaults, type Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';

const setupOf = (given: Partial<Answers>, steps: Setup['steps'] = []): Setup => ({
  name: 't',
  answers: withDefaults(given),
  files: { ...DEFAULT_FILES },
  steps,
});
const run = (over: Partial<RunContext> = {}): RunContext => ({
  worldSize: 2,
  microBatchSize: 4,
  scriptAccumulationSteps: 3,
  launchMixedPrecision: null,
  hiddenSize: 16,
  torchOptimizer: true,
  ...over,
});
const autos = (v: unknown): number =>
  v === 'auto' ? 1 : v && typeof v === 'object' ? Object.values(v).reduce<number>((n, x) => n + autos(x), 0) : 0;

describe('effectiveDeepSpeedConfig', () => {
  it('fills every "auto" of every built-in preset, and the batch-size identity holds', () => {
    for (const { name, setup } of listPresets({ XDG_CONFIG_HOME: '/nonexistent' }).presets) {
      const eff = effectiveDeepSpeedConfig(setup, run());
      expect([name, eff.errors, autos(eff.config)]).toEqual([name, [], 0]);
      expect(summarizeEffective(eff.config, 2).batchIdentityHolds).toBe(true);
      expect(eff.config.steps_per_print).toBe(Number.POSITIVE_INFINITY);
      expect(eff.config.zero_allow_untested_optimizer).toBe(true);
    }
  });

  it("'auto' accumulation takes the script's value; a number in the JSON wins over it, with accelerate's warning", () => {
    const auto = effectiveDeepSpeedConfig(setupOf({ gradient_accumulation_steps: 'auto' }), run());
    expect([auto.config.gradient_accumulation_steps, auto.config.train_batch_size, auto.warnings]).toEqual([3, 24, []]);
    const pinned = effectiveDeepSpeedConfig(setupOf({ gradient_accumulation_steps: 1 }), run());
    expect([
      pinned.config.gradient_accumulation_steps,
      pinned.accumulationSteps,
      pinned.config.train_batch_size,
    ]).toEqual([1, 1, 8]);
    expect(pinned.warnings.join()).toContain("Using DeepSpeed's value");
  });

  it('precision: "auto" is fp32 without --mixed_precision and follows it when given; a clash is accelerate\'s error', () => {
    const auto = setupOf({ mixed_precision: 'auto' });
    expect(summarizeEffective(effectiveDeepSpeedConfig(auto, run()).config, 2).precision).toBe('fp32');
    expect(
      summarizeEffective(effectiveDeepSpeedConfig(auto, run({ launchMixedPrecision: 'bf16' })).config, 2).precision,
    ).toBe('bf16');
    expect(
      summarizeEffective(effectiveDeepSpeedConfig(auto, run({ launchMixedPrecision: 'fp8' })).config, 2).precision,
    ).toBe('bf16');
    const clash = effectiveDeepSpeedConfig(setupOf({ mixed_precision: 'bf16' }), run({ launchMixedPrecision: 'fp16' }));
    expect(clash.errors.join()).toContain('cannot be set to `fp16` when `bf16` is set');
  });

  it('clipping "auto" is 1.0; zero.Init is off below stage 3; hidden-size "auto"s need model.config', () => {
    const s3 = setupOf({ mode: '3', reduce_bucket_size: 'auto', prefetch_bucket_size: 'auto' });
    const eff = effectiveDeepSpeedConfig(s3, run());
    expect(eff.config.gradient_clipping).toBe(1);
    expect(eff.zeroInit).toBe(true);
    expect(eff.config.zero_optimization).toMatchObject({ reduce_bucket_size: 256, stage3_prefetch_bucket_size: 230 });
    expect(effectiveDeepSpeedConfig(s3, run({ hiddenSize: null })).errors.join()).toContain('model.config');
    expect(effectiveDeepSpeedConfig(setupOf({ mode: '2', zero3_init: true }), run()).zeroInit).toBe(false);
  });

  it('split offload devices reach DeepSpeed as two devices', () => {
    const eff = effectiveDeepSpeedConfig(
      setupOf({ mode: '3-offload', offload_device: 'cpu', offload_param_device: 'nvme' }),
      run(),
    );
    const s = summarizeEffective(eff.config, 2);
    expect([s.offloadOptimizer, s.offloadParam]).toEqual(['cpu', 'nvme']);
    expect(eff.config.aio).toBeDefined();
  });
});

describe('deepSpeedMeaning', () => {
  it('reads absent keys with DeepSpeed defaults: an explicit default and an absent key mean the same', () => {
    const a = deepSpeedMeaning({ zero_optimization: { stage: 3 } });
    const b = deepSpeedMeaning({
      zero_optimization: { stage: 3, overlap_comm: true, reduce_bucket_size: 5e8, offload_param: { device: 'none' } },
    });
    expect(a).toEqual(b);
    expect(deepSpeedMeaning({ zero_optimization: { stage: 2, overlap_comm: true } })).not.toEqual(
      deepSpeedMeaning({ zero_optimization: { stage: 2 } }),
    );
  });
});

describe('the preview says what will happen', () => {
  it("for the seed preset: fp32 unless --mixed_precision, ZeRO-3, both offloaded to cpu, the script's accumulation", () => {
    const seed = findPreset('qwen-image-lora-lowvram', { XDG_CONFIG_HOME: '/nonexistent' }).setup;
    const text = effectiveLines(seed).join('\n');
    expect(text).toContain('precision fp32 · ZeRO stage 3 · offload: optimizer cpu, parameters cpu · zero.Init on');
    expect(text).toContain(
      'gradient accumulation 1 (your Accelerator(gradient_accumulation_steps=...), 1 assumed) · clipping 1',
    );
    expect(text).toContain('train_batch_size = micro batch x 1 x 1 GPU(s)');
    expect(defaultRun(seed).worldSize).toBe(1);
  });

  it('follows a step that passes --mixed_precision', () => {
    const s = setupOf({ mixed_precision: 'auto' }, [
      { name: 'train', usesConfig: true, args: ['t.py', '--mixed_precision', 'fp16'] },
    ]);
    expect(effectiveLines(s).join('\n')).toContain('precision fp16');
  });
});
