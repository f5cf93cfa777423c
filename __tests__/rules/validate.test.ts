import { describe, expect, it } from 'vitest';
import { withDefaults, type Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES, type LaunchStep, type Setup } from '../../src/config/setup.js';
import { validate } from '../../src/rules/validate.js';
import { checkAccelerateConfig, checkDeepSpeedConfig } from '../../src/config/accept.js';
import type { Finding } from '../../src/config/finding.js';

const rules = (fs: Finding[]) => fs.map((f) => `${f.level}:${f.rule}`);
function setup(given: Partial<Answers>, steps: LaunchStep[] = []): Setup {
  return { name: 't', answers: withDefaults(given), files: { ...DEFAULT_FILES }, steps };
}
const train = (...args: string[]): LaunchStep => ({ name: 'train', usesConfig: true, args: ['train.py', ...args] });
const GOOD: Partial<Answers> = { num_processes: 8, mode: '2', mixed_precision: 'bf16', zero3_init: false };

describe('validate(setup): rules about the answers', () => {
  it('a plain 8-GPU ZeRO-2 bf16 setup has no findings', () => {
    expect(validate(setup(GOOD))).toEqual([]);
  });

  const table: Array<[string, Partial<Answers>, LaunchStep[], string]> = [
    [
      'NVMe needs a path',
      { ...GOOD, mode: '3-offload', offload_device: 'nvme', nvme_path: '' },
      [],
      'error:nvme-needs-path',
    ],
    [
      'NVMe only really works at stage 3',
      { ...GOOD, mode: '2-offload', offload_device: 'nvme', nvme_path: '/nvme' },
      [],
      'warning:nvme-needs-stage-3',
    ],
    [
      'an NVMe offload device with a mode that offloads nothing',
      { ...GOOD, mode: '2', offload_device: 'nvme' },
      [],
      'warning:offload-device-unused',
    ],
    ['zero3_init below stage 3 has no effect', { ...GOOD, zero3_init: true }, [], 'warning:zero3-init-below-stage-3'],
    [
      'ZeRO-3 offload + checkpointing needs the activation_checkpointing block',
      { ...GOOD, mode: '3-offload', gradient_checkpointing: false },
      [train('--use_gradient_checkpointing')],
      'error:zero3-offload-needs-activation-checkpointing',
    ],
    [
      'one GPU without offload saves nothing',
      { ...GOOD, num_processes: 1, mode: '3' },
      [],
      'warning:single-gpu-no-saving',
    ],
    [
      '"auto" precision without --mixed_precision trains in fp32',
      { ...GOOD, mixed_precision: 'auto' },
      [],
      'warning:precision-auto-fp32',
    ],
    [
      'num_processes divisible by num_machines',
      { ...GOOD, num_machines: 2, num_processes: 9, main_process_ip: '10.0.0.1', hostfile: 'h' },
      [],
      'error:processes-divisible-by-machines',
    ],
    [
      'torchrun (standard) multi-node needs the main IP',
      { ...GOOD, num_machines: 2, num_processes: 16, multinode_launcher: 'standard' },
      [],
      'error:multinode-needs-ip',
    ],
    [
      'nossh multi-node needs the main IP',
      { ...GOOD, num_machines: 2, num_processes: 16, multinode_launcher: 'nossh', hostfile: 'h' },
      [],
      'error:multinode-needs-ip',
    ],
    [
      'pdsh without the main IP asks the first host over ssh (warning only)',
      { ...GOOD, num_machines: 2, num_processes: 16, hostfile: 'h' },
      [],
      'warning:multinode-needs-ip',
    ],
    [
      'multi-node pdsh without a hostfile would train on one node',
      { ...GOOD, num_machines: 2, num_processes: 16, main_process_ip: '10.0.0.1' },
      [],
      'error:multinode-hostfile',
    ],
    [
      '--mixed_precision at launch that contradicts the JSON',
      { ...GOOD, mixed_precision: 'bf16' },
      [train('--mixed_precision', 'fp16')],
      'error:precision-conflict',
    ],
  ];
  for (const [what, given, steps, rule] of table) {
    it(what, () => {
      const found = rules(validate(setup(given, steps)));
      expect(found).toContain(rule);
    });
  }

  it('warns when the chosen mode does not fit the memory given, and names one that does', () => {
    const model = {
      model_params: 20.4e9,
      largest_layer_params: 57e6,
      gpu_memory: 80 * 2 ** 30,
      cpu_memory: 24 * 2 ** 30,
      zero3_init: true,
    };
    const tooMuchCpu = validate(setup({ ...GOOD, ...model, mode: '3-offload' })).find(
      (f) => f.rule === 'mode-does-not-fit',
    );
    expect(tooMuchCpu?.message).toMatch(/ZeRO-3 offload needs [\d.]+ GiB of CPU memory per node of 24\.00 GiB/);
    expect(tooMuchCpu?.message).toContain('Instead: ZeRO-3 fits: peak');
    const tooMuchGpu = validate(setup({ ...GOOD, ...model, mode: '2' })).find((f) => f.rule === 'mode-does-not-fit');
    expect(tooMuchGpu?.message).toMatch(
      /^ZeRO-2 peaks at [\d.]+ GiB per GPU, over the 72\.00 GiB usable of 80\.00 GiB \(10% headroom\)/,
    );
    expect(rules(validate(setup({ ...GOOD, ...model, mode: '3' })))).not.toContain('warning:mode-does-not-fit');
    expect(rules(validate(setup({ ...GOOD, mode: '2' })))).not.toContain('warning:mode-does-not-fit'); // no model size: nothing to say
  });

  it('the checkpointing rule is quiet when the block is written, or when no step asks for checkpointing', () => {
    expect(
      rules(
        validate(
          setup({ ...GOOD, mode: '3-offload', gradient_checkpointing: true }, [train('--use_gradient_checkpointing')]),
        ),
      ),
    ).not.toContain('error:zero3-offload-needs-activation-checkpointing');
    expect(rules(validate(setup({ ...GOOD, mode: '3-offload' }, [train()])))).not.toContain(
      'error:zero3-offload-needs-activation-checkpointing',
    );
  });

  it('"auto" precision is fine when a step passes --mixed_precision', () => {
    expect(
      rules(validate(setup({ ...GOOD, mixed_precision: 'auto' }, [train('--mixed_precision', 'bf16')]))),
    ).not.toContain('warning:precision-auto-fp32');
  });

  it('every finding says what is wrong and how to fix it', () => {
    const all = validate(
      setup({
        num_machines: 2,
        num_processes: 9,
        mode: '2-offload',
        offload_device: 'nvme',
        nvme_path: '',
        zero3_init: true,
        mixed_precision: 'auto',
      }),
    );
    expect(all.length).toBeGreaterThan(3);
    for (const f of all) {
      expect(f.message.length).toBeGreaterThan(10);
      expect(f.fix.length).toBeGreaterThan(5);
    }
  });
});

describe("checkAccelerateConfig: accelerate's load and launch rules", () => {
  const base = {
    compute_environment: 'LOCAL_MACHINE',
    debug: false,
    distributed_type: 'DEEPSPEED',
    downcast_bf16: 'no',
    machine_rank: 0,
    num_machines: 1,
    num_processes: 8,
    deepspeed_config: { deepspeed_config_file: 'ds.json', zero3_init_flag: false },
  };
  it('accepts a well-formed config', () => {
    expect(checkAccelerateConfig(base)).toEqual([]);
  });
  it('refuses unknown top-level keys, listing them sorted', () => {
    const f = checkAccelerateConfig({ ...base, zeta: 1, alpha: 2 });
    expect(rules(f)).toContain('error:accelerate-unknown-keys');
    expect(f[0]!.message).toContain('alpha, zeta');
  });
  it('refuses mixed_precision and ZeRO keys next to deepspeed_config_file', () => {
    const f = checkAccelerateConfig({
      ...base,
      mixed_precision: 'bf16',
      deepspeed_config: { deepspeed_config_file: 'ds.json', zero_stage: 3, gradient_clipping: 1.0 },
    });
    const hit = f.find((x) => x.rule === 'forbidden-next-to-ds-file')!;
    expect(hit.level).toBe('error');
    expect(hit.message).toContain('zero_stage');
    expect(hit.message).toContain('mixed_precision');
    expect(hit.fix).toContain('--mixed_precision');
  });
  it('allows zero3_init_flag and the launcher keys next to the file', () => {
    const f = checkAccelerateConfig({
      ...base,
      num_machines: 2,
      num_processes: 16,
      main_process_ip: 'h',
      main_process_port: 29500,
      deepspeed_config: {
        deepspeed_config_file: 'ds.json',
        zero3_init_flag: true,
        deepspeed_multinode_launcher: 'pdsh',
        deepspeed_hostfile: '/h',
      },
    });
    expect(f).toEqual([]);
  });
  it('needs a distributed_type and a valid one', () => {
    const { distributed_type: _omit, ...rest } = base;
    expect(rules(checkAccelerateConfig(rest))).toContain('error:accelerate-distributed-type');
    expect(rules(checkAccelerateConfig({ ...base, distributed_type: 'DEEP' }))).toContain(
      'error:accelerate-distributed-type',
    );
  });
  it('checks mixed_precision values as launch does', () => {
    expect(rules(checkAccelerateConfig({ ...base, deepspeed_config: {}, mixed_precision: 'fp32' }))).toContain(
      'error:accelerate-mixed-precision',
    );
  });
  it('checks rank and port ranges for multi-node', () => {
    const f = rules(
      checkAccelerateConfig({
        ...base,
        num_machines: 2,
        num_processes: 16,
        machine_rank: 2,
        main_process_ip: 'h',
        main_process_port: 70000,
      }),
    );
    expect(f).toContain('error:machine-rank-range');
    expect(f).toContain('error:port-range');
  });
});

describe("checkDeepSpeedConfig: DeepSpeed's schema", () => {
  const zero = (z: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    zero_optimization: z,
    ...extra,
  });
  it('needs a zero_optimization block', () => {
    expect(rules(checkDeepSpeedConfig({}))).toContain('error:ds-no-zero');
  });
  it('rejects unknown keys in zero_optimization and offload blocks (extra=forbid)', () => {
    expect(rules(checkDeepSpeedConfig(zero({ stage: 2, grad_hooks: true })))).toContain('error:ds-unknown-keys');
    expect(rules(checkDeepSpeedConfig(zero({ stage: 3, offload_param: { device: 'cpu', colour: 'red' } })))).toContain(
      'error:ds-unknown-keys',
    );
  });
  it('accepts the stage3_ aliases and the field names', () => {
    expect(
      checkDeepSpeedConfig(zero({ stage: 3, stage3_prefetch_bucket_size: 5e7, prefetch_bucket_size: 5e7 })),
    ).toEqual([]);
  });
  it('rejects stages outside 0..3 and offload devices outside none/cpu/nvme', () => {
    expect(rules(checkDeepSpeedConfig(zero({ stage: 4 })))).toContain('error:ds-stage');
    expect(rules(checkDeepSpeedConfig(zero({ stage: 3, offload_optimizer: { device: 'gpu' } })))).toContain(
      'error:ds-offload-device',
    );
  });
  it('warns that offload_param is ignored below stage 3', () => {
    expect(rules(checkDeepSpeedConfig(zero({ stage: 2, offload_param: { device: 'cpu' } })))).toContain(
      'warning:offload-param-needs-stage-3',
    );
    expect(rules(checkDeepSpeedConfig(zero({ stage: 3, offload_param: { device: 'cpu' } })))).not.toContain(
      'warning:offload-param-needs-stage-3',
    );
  });
  it('refuses partial offload below stage 3, and NVMe without a path', () => {
    expect(rules(checkDeepSpeedConfig(zero({ stage: 2, offload_optimizer: { device: 'cpu', ratio: 0.5 } })))).toContain(
      'error:ds-partial-offload-stage',
    );
    expect(rules(checkDeepSpeedConfig(zero({ stage: 3, offload_optimizer: { device: 'nvme' } })))).toContain(
      'error:nvme-needs-path',
    );
  });
  it('refuses fp16 and bf16 both enabled', () => {
    expect(
      rules(checkDeepSpeedConfig(zero({ stage: 2 }, { fp16: { enabled: true }, bf16: { enabled: true } }))),
    ).toContain('error:fp16-and-bf16');
  });
  it('refuses "auto" where accelerate does not fill it (accelerate raises at prepare())', () => {
    const f = checkDeepSpeedConfig(
      zero(
        { stage: 2, overlap_comm: 'auto', reduce_bucket_size: 'auto' },
        {
          fp16: { enabled: 'auto', loss_scale: 'auto' },
          optimizer: { type: 'AdamW', params: { betas: 'auto', lr: 'auto' } },
        },
      ),
    );
    const hit = f.find((x) => x.rule === 'auto-unfilled')!;
    expect(hit.level).toBe('error');
    expect(hit.message).toContain('zero_optimization.overlap_comm');
    expect(hit.message).toContain('fp16.loss_scale');
    expect(hit.message).not.toContain('reduce_bucket_size');
    // Only the HF Trainer fills betas (from adam_beta1/adam_beta2): said, not refused (transformers' own configs).
    expect(hit.message).not.toContain('optimizer.params.betas');
    const trainer = f.find((x) => x.rule === 'auto-trainer-only')!;
    expect(trainer.level).toBe('warning');
    expect(trainer.message).toMatch(/optimizer\.params\.betas.*HF Trainer \(from adam_beta1, adam_beta2\)/);
    expect(hit.message).not.toContain('fp16.enabled');
    const cond = f.find((x) => x.rule === 'auto-conditional')!;
    expect(cond.level).toBe('warning');
    expect(cond.message).toContain('zero_optimization.reduce_bucket_size');
    expect(cond.message).toContain('hidden_size');
    expect(cond.message).toContain('DummyOptim');
  });
  it('refuses "auto" NVMe paths (accelerate fills them with the string "none")', () => {
    expect(
      rules(checkDeepSpeedConfig(zero({ stage: 3, offload_param: { device: 'nvme', nvme_path: 'auto' } }))),
    ).toContain('error:auto-nvme-path');
  });
  it('the seed JSON\'s "auto" values are all ones accelerate fills', () => {
    const seed = {
      fp16: { enabled: 'auto' },
      bf16: { enabled: 'auto' },
      zero_optimization: { stage: 3 },
      gradient_accumulation_steps: 'auto',
      gradient_clipping: 'auto',
      train_batch_size: 'auto',
      train_micro_batch_size_per_gpu: 'auto',
    };
    expect(checkDeepSpeedConfig(seed)).toEqual([]);
  });
  it('takes pydantic-lax values with a warning, and refuses the rest', () => {
    expect(rules(checkDeepSpeedConfig(zero({ stage: 2, overlap_comm: 'true', reduce_bucket_size: '500000' })))).toEqual(
      ['warning:ds-type', 'warning:ds-type'],
    );
    expect(rules(checkDeepSpeedConfig(zero({ stage: 2, overlap_comm: 'maybe' })))).toEqual(['error:ds-type']);
  });
  it('refuses a deprecated key next to its replacement', () => {
    expect(
      rules(checkDeepSpeedConfig(zero({ stage: 2, cpu_offload: true, offload_optimizer: { device: 'cpu' } }))),
    ).toContain('error:ds-deprecated-and-new');
  });
  it('checks the batch-size identity when all three are numbers', () => {
    expect(
      rules(
        checkDeepSpeedConfig(
          zero(
            { stage: 2 },
            { train_batch_size: 64, train_micro_batch_size_per_gpu: 4, gradient_accumulation_steps: 1 },
          ),
          { worldSize: 8 },
        ),
      ),
    ).toContain('error:ds-batch-size');
    expect(
      checkDeepSpeedConfig(
        zero({ stage: 2 }, { train_batch_size: 32, train_micro_batch_size_per_gpu: 4, gradient_accumulation_steps: 1 }),
        { worldSize: 8 },
      ),
    ).toEqual([]);
  });
  it('rejects non-integer bucket sizes', () => {
    expect(rules(checkDeepSpeedConfig(zero({ stage: 2, reduce_bucket_size: 1.5 })))).toContain('error:ds-type');
  });
});
