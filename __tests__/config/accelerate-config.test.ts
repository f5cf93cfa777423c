import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  describeAccelerateConfig,
  extraConfigFiles,
  isZero3Offload,
  noDeepSpeedConfigPath,
  readAccelerateConfigSummary,
  summarizeAccelerateConfig,
  toNoDeepSpeedYaml,
} from '../../src/config/accelerate-config.js';
import { withDefaults } from '../../src/config/questions.js';
import { checkAccelerateConfig } from '../../src/config/accept.js';
import { withStepConfig } from '../../src/config/step-args.js';
import { SEED_DIR } from '../helpers/paths.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'zw-acc-'));

describe('the config without DeepSpeed that a step can be pinned to', () => {
  it('is what `accelerate config` writes for multi-GPU with no DeepSpeed, FSDP or Megatron-LM', () => {
    expect(toNoDeepSpeedYaml(withDefaults({ num_processes: 8, mixed_precision: 'bf16' }))).toBe(
      [
        'compute_environment: LOCAL_MACHINE',
        'debug: false',
        'distributed_type: MULTI_GPU',
        "downcast_bf16: 'no'",
        'enable_cpu_affinity: false',
        'gpu_ids: all',
        'machine_rank: 0',
        'main_training_function: main',
        'mixed_precision: bf16',
        'num_machines: 1',
        'num_processes: 8',
        'rdzv_backend: static',
        'same_network: true',
        'tpu_env: []',
        'tpu_use_cluster: false',
        'tpu_use_sudo: false',
        'use_cpu: false',
        '',
      ].join('\n'),
    );
  });

  it('is "No distributed training" for one process (accelerate refuses MULTI_GPU with one GPU)', () => {
    const y = parseYaml(toNoDeepSpeedYaml(withDefaults({ num_processes: 1, mixed_precision: 'auto', debug: true })), {
      version: '1.1',
    });
    expect(y).toMatchObject({ distributed_type: 'NO', num_processes: 1, mixed_precision: 'no', debug: false });
    expect(toNoDeepSpeedYaml(withDefaults({ num_processes: 1 }))).toContain("distributed_type: 'NO'");
  });

  it('keeps the machines of a multi-node setup', () => {
    const a = withDefaults({
      num_machines: 2,
      num_processes: 16,
      machine_rank: 1,
      main_process_ip: '10.0.0.1',
      main_process_port: 29500,
    });
    const y = parseYaml(toNoDeepSpeedYaml(a), { version: '1.1' });
    expect(y).toMatchObject({
      distributed_type: 'MULTI_GPU',
      num_machines: 2,
      num_processes: 16,
      machine_rank: 1,
      main_process_ip: '10.0.0.1',
      main_process_port: 29500,
    });
  });

  it.each([1, 2, 8])('passes accelerate’s load checks with %d process(es)', (n) => {
    const y = parseYaml(toNoDeepSpeedYaml(withDefaults({ num_processes: n })), { version: '1.1' }) as Record<
      string,
      unknown
    >;
    expect(checkAccelerateConfig(y).filter((f) => f.level === 'error')).toEqual([]);
  });

  it('is written beside the setup config, only when a step is pinned to it', () => {
    const setup = {
      name: 's',
      answers: withDefaults({ num_processes: 8 }),
      files: { accelerateConfig: 'cfg/accelerate_config.yaml', dsConfig: 'cfg/ds.json' },
      steps: [{ name: 'data', usesConfig: false, args: ['t.py'] }],
    };
    expect(noDeepSpeedConfigPath(setup)).toBe('cfg/accelerate_no_deepspeed.yaml');
    expect(noDeepSpeedConfigPath({ files: { accelerateConfig: 'a.yaml', dsConfig: 'd.json' } })).toBe(
      'accelerate_no_deepspeed.yaml',
    );
    expect(extraConfigFiles(setup)).toEqual([]);
    const pinned = {
      ...setup,
      steps: [withStepConfig(setup.steps[0]!, { kind: 'pinned', path: 'cfg/accelerate_no_deepspeed.yaml' })],
    };
    expect(extraConfigFiles(pinned)).toEqual([
      { path: 'cfg/accelerate_no_deepspeed.yaml', text: toNoDeepSpeedYaml(setup.answers) },
    ]);
  });
});

describe("what accelerate's default config holds", () => {
  it('reads a DeepSpeed YAML and the JSON it names (relative to where the step runs): the seed files', () => {
    const d = tmp();
    const json = 'examples/qwen_image/model_training/special/low_vram_training/ds_z3_cpuoffload.json';
    mkdirSync(join(d, 'examples/qwen_image/model_training/special/low_vram_training'), { recursive: true });
    writeFileSync(join(d, json), readFileSync(join(SEED_DIR, 'ds_z3_cpuoffload.json')));
    const yamlPath = join(d, 'default_config.yaml');
    writeFileSync(yamlPath, readFileSync(join(SEED_DIR, 'deepspeed_zero3_cpuoffload.yaml')));
    const s = readAccelerateConfigSummary(yamlPath, d);
    expect(s).toMatchObject({ exists: true, problem: null, distributedType: 'DEEPSPEED', numProcesses: 1 });
    expect(s.deepspeed).toEqual({
      configFile: json,
      configFileProblem: null,
      stage: 3,
      offloadOptimizer: 'cpu',
      offloadParam: 'cpu',
      activationCheckpointing: true,
      gather16bitOnSave: true,
    });
    expect(isZero3Offload(s.deepspeed)).toBe(true);
    expect(describeAccelerateConfig(s)).toBe(
      `distributed_type DEEPSPEED, ZeRO-3, offload optimizer cpu + params cpu, from ${json}, 1 process`,
    );
    // Run from another directory, the JSON is not found: said, not guessed.
    const elsewhere = readAccelerateConfigSummary(yamlPath, tmp());
    expect(elsewhere.deepspeed?.configFileProblem).toBe('no such file');
    expect(elsewhere.deepspeed?.stage).toBeNull();
  });

  it('reads the JSON text that `accelerate config default` writes into default_config.yaml', () => {
    const d = tmp();
    const p = join(d, 'default_config.yaml');
    writeFileSync(
      p,
      `${JSON.stringify({ compute_environment: 'LOCAL_MACHINE', distributed_type: 'MULTI_GPU', mixed_precision: 'no', num_processes: 8, num_machines: 1 }, null, 2)}\n`,
    );
    const s = readAccelerateConfigSummary(p, d);
    expect(s).toMatchObject({ distributedType: 'MULTI_GPU', numProcesses: 8, mixedPrecision: 'no', deepspeed: null });
    expect(describeAccelerateConfig(s)).toBe('distributed_type MULTI_GPU, 8 processes');
  });

  it('a DeepSpeed YAML without a JSON: its own keys, stage 2 when it names none (as accelerate)', () => {
    const s = summarizeAccelerateConfig('x', {
      distributed_type: 'DEEPSPEED',
      deepspeed_config: { offload_optimizer_device: 'cpu', zero3_init_flag: false },
    });
    expect(s.deepspeed).toMatchObject({
      configFile: null,
      stage: 2,
      offloadOptimizer: 'cpu',
      activationCheckpointing: false,
      gather16bitOnSave: false,
    });
    expect(isZero3Offload(s.deepspeed)).toBe(false);
    const z3 = summarizeAccelerateConfig('x', {
      distributed_type: 'DEEPSPEED',
      deepspeed_config: { zero_stage: 3, offload_param_device: 'nvme', deepspeed_config_file: 'none' },
    });
    expect(isZero3Offload(z3.deepspeed)).toBe(true);
  });

  it('says when there is no file, or when it cannot be read', () => {
    const d = tmp();
    expect(readAccelerateConfigSummary(join(d, 'none.yaml'), d)).toMatchObject({ exists: false, problem: null });
    const bad = join(d, 'bad.yaml');
    writeFileSync(bad, 'a: [1,\n');
    expect(readAccelerateConfigSummary(bad, d).problem).toMatch(/^not YAML\/JSON/);
    const list = join(d, 'list.yaml');
    writeFileSync(list, '- 1\n');
    expect(readAccelerateConfigSummary(list, d).problem).toBe('it does not hold a mapping of keys');
    // PyYAML reads an unquoted NO as false; accelerate then runs it like NO.
    const no = join(d, 'no.yaml');
    writeFileSync(no, 'distributed_type: NO\nnum_processes: 1\n');
    expect(readAccelerateConfigSummary(no, d).distributedType).toBe('NO');
  });
});
