/**
 * The one table of accelerate's and DeepSpeed's keys (src/config/keys.ts): its facts against the references
 * (shared/reference/deepspeed-zero.md, accelerate-config.md), and the readers that must take them from it.
 */
import { describe, expect, it } from 'vitest';
import { DEEPSPEED_DEFAULTS } from '../../src/config/deepspeed-defaults.js';
import {
  ACCELERATE_KEYS_REFUSED_WITH_DS_FILE,
  CONFIG_KEYS,
  HIDDEN_SIZE_KEYS,
  PLUGIN_KEYS,
  autoFill,
  autoRule,
  canonicalPath,
  keyInfo,
  keysIn,
  onlyTrainerFills,
} from '../../src/config/keys.js';
import { ACCELERATE_DS_KEYS, ZERO_KEYS } from '../../src/config/accept.js';

const ctx = (hiddenSize: number | null) => ({ hiddenSize, microBatch: 4, accumulation: 2, worldSize: 8 });

describe('the key table', () => {
  it("holds DeepSpeed 0.19.6's defaults (deepspeed-zero.md §1-2)", () => {
    expect(DEEPSPEED_DEFAULTS).toMatchObject({
      stage: 0,
      contiguous_gradients: true,
      reduce_bucket_size: 5e8,
      allgather_bucket_size: 5e8,
      sub_group_size: 1e9,
      stage3_prefetch_bucket_size: 5e7,
      stage3_param_persistence_threshold: 1e5,
      stage3_max_live_parameters: 1e9,
      stage3_max_reuse_distance: 1e9,
      stage3_gather_16bit_weights_on_model_save: false,
      pin_memory: true,
      offload_param_buffer_size: 1e8,
      offload_param_buffer_count: 5,
      offload_optimizer_buffer_count: 4,
      gradient_clipping: 1.0,
    });
    expect([DEEPSPEED_DEFAULTS.overlapComm(3), DEEPSPEED_DEFAULTS.overlapComm(2)]).toEqual([true, false]);
    expect(keyInfo('json', 'gradient_clipping')?.history).toMatch(/0\.19\.3.*0\.0/);
  });

  it("knows every name DeepSpeed's zero_optimization accepts: fields, aliases and deprecated names", () => {
    for (const k of [
      'stage3_prefetch_bucket_size',
      'prefetch_bucket_size',
      'cpu_offload',
      'stage3_gather_fp16_weights_on_model_save',
    ])
      expect(ZERO_KEYS.has(k)).toBe(true);
    expect(ZERO_KEYS.has('grad_hooks')).toBe(false); // documented, but not a field: DeepSpeed refuses it
    expect(canonicalPath('zero_optimization.prefetch_bucket_size')).toBe(
      'zero_optimization.stage3_prefetch_bucket_size',
    );
    expect(canonicalPath('bfloat16.enabled')).toBe('bf16.enabled');
    expect(keysIn('json', 'zero_optimization.offload_param')).toEqual(
      new Set(['device', 'nvme_path', 'buffer_count', 'buffer_size', 'max_in_cpu', 'pin_memory']),
    );
  });

  it("holds accelerate's launch flags, environment variables and refusals (accelerate-config.md §3)", () => {
    expect([...ACCELERATE_DS_KEYS].sort()).toEqual(
      [
        'deepspeed_config_file',
        'zero_stage',
        'offload_optimizer_device',
        'offload_param_device',
        'offload_optimizer_nvme_path',
        'offload_param_nvme_path',
        'gradient_accumulation_steps',
        'gradient_clipping',
        'zero3_init_flag',
        'zero3_save_16bit_model',
        'deepspeed_hostfile',
        'deepspeed_exclusion_filter',
        'deepspeed_inclusion_filter',
        'deepspeed_multinode_launcher',
        'deepspeed_moe_layer_cls_names',
      ].sort(),
    );
    for (const k of CONFIG_KEYS.filter((x) => x.path.startsWith('deepspeed_config.')))
      expect(k.flag).toBe(`--${k.path.slice('deepspeed_config.'.length)}`);
    expect(ACCELERATE_KEYS_REFUSED_WITH_DS_FILE).toContain('mixed_precision');
    // DeepSpeedPlugin's plugin_to_config_mapping, and its defaults without the YAML, a flag or the environment.
    expect(Object.fromEntries(PLUGIN_KEYS.map((k) => [k.path, [k.sets, k.accelerateDefault]]))).toEqual({
      'deepspeed_config.zero_stage': [['zero_optimization.stage'], 2],
      'deepspeed_config.offload_optimizer_device': [['zero_optimization.offload_optimizer.device'], 'none'],
      'deepspeed_config.offload_param_device': [['zero_optimization.offload_param.device'], 'none'],
      'deepspeed_config.offload_optimizer_nvme_path': [['zero_optimization.offload_optimizer.nvme_path'], 'none'],
      'deepspeed_config.offload_param_nvme_path': [['zero_optimization.offload_param.nvme_path'], 'none'],
      'deepspeed_config.gradient_accumulation_steps': [['gradient_accumulation_steps'], 'auto'],
      'deepspeed_config.gradient_clipping': [['gradient_clipping'], 'auto'],
      'deepspeed_config.zero3_save_16bit_model': [
        ['zero_optimization.stage3_gather_16bit_weights_on_model_save'],
        false,
      ],
    });
  });

  it('one "auto" rule: the hidden-size keys are h^2, int(0.9 h^2), 10 h, and nothing without a hidden size', () => {
    expect([...HIDDEN_SIZE_KEYS].sort()).toEqual(
      [
        'zero_optimization.reduce_bucket_size',
        'zero_optimization.stage3_prefetch_bucket_size',
        'zero_optimization.stage3_param_persistence_threshold',
      ].sort(),
    );
    expect(HIDDEN_SIZE_KEYS.map((k) => autoFill(k, ctx(3072)))).toEqual(
      HIDDEN_SIZE_KEYS.map((k) =>
        k.endsWith('reduce_bucket_size') ? 3072 * 3072 : k.endsWith('prefetch_bucket_size') ? 8493465 : 30720,
      ),
    );
    expect(HIDDEN_SIZE_KEYS.map((k) => autoFill(k, ctx(null)))).toEqual([undefined, undefined, undefined]);
    // The alias reads the same rule.
    expect(autoFill('zero_optimization.prefetch_bucket_size', ctx(16))).toBe(Math.floor(0.9 * 16 * 16));
    expect(autoFill('train_batch_size', ctx(null))).toBe(4 * 2 * 8);
  });

  it('says which launcher fills what: betas and eps only the HF Trainer, the learning rate both', () => {
    expect(onlyTrainerFills('optimizer.params.betas')).toBe(true);
    expect(onlyTrainerFills('optimizer.params.eps')).toBe(true);
    expect(onlyTrainerFills('optimizer.params.lr')).toBe(false);
    expect(autoRule('optimizer.params.lr')?.accelerate?.when).toMatch(/DummyOptim/);
    expect(autoRule('zero_optimization.overlap_comm')).toBeUndefined();
  });
});
