import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importAccelerateConfig } from '../../src/setups/import.js';
import { listPresets } from '../../src/setups/presets.js';
import { configTexts } from '../../src/config/files.js';
import { writeConfigFiles } from '../../src/config/write-files.js';
import { toAccelerateYaml, toDeepSpeedJson } from '../../src/config/emit.js';
import { UsageError } from '../../src/text/errors.js';
import { question, type QuestionId } from '../../src/config/questions.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'zw-import-'));

describe('round trip: emit(parse(x)) reproduces what zerowiz writes', () => {
  for (const preset of listPresets({ XDG_CONFIG_HOME: tmp() }).presets) {
    it(`${preset.name}`, async () => {
      const dir = tmp();
      await writeConfigFiles(preset.setup, dir);
      const before = configTexts(preset.setup);
      const r = importAccelerateConfig(preset.setup.files.accelerateConfig, dir);
      expect(r.kept).toEqual([]);
      expect(r.jsonPath).toBe(join(dir, preset.setup.files.dsConfig));
      expect(configTexts(r.setup)).toEqual(before);
      // And the answers themselves survive (not just the text).
      for (const [k, v] of Object.entries(preset.setup.answers)) {
        // Answers for the estimate only (the model, memory, workload) are not in the config files.
        const q = question(k as QuestionId);
        if (!q.yamlKey && !q.jsonKey) continue;
        expect([k, (r.setup.answers as unknown as Record<string, unknown>)[k]]).toEqual([k, v]);
      }
    });
  }
});

describe('importing files zerowiz did not write', () => {
  it("moves a DiffSynth-style ZeRO-2 offload YAML's inline keys into the answers", () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'a.yaml'),
      [
        'compute_environment: LOCAL_MACHINE',
        'debug: false',
        'deepspeed_config:',
        '  gradient_accumulation_steps: 1',
        "  offload_optimizer_device: 'cpu'",
        "  offload_param_device: 'cpu'",
        '  zero3_init_flag: false',
        '  zero_stage: 2',
        'distributed_type: DEEPSPEED',
        "downcast_bf16: 'no'",
        'enable_cpu_affinity: false',
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
    const r = importAccelerateConfig('a.yaml', dir);
    expect(r.setup.answers).toMatchObject({
      mode: '2-offload',
      offload_device: 'cpu',
      mixed_precision: 'bf16',
      gradient_accumulation_steps: 1,
      num_processes: 8,
    });
    expect(r.moved).toEqual(
      expect.arrayContaining([
        'mixed_precision',
        'deepspeed_config.zero_stage',
        'deepspeed_config.offload_param_device',
      ]),
    );
    // offload_param at stage 2 is kept as it was (DeepSpeed ignores it), and said so.
    expect(r.kept).toEqual(['json:zero_optimization.offload_param']);
    expect(r.findings.map((f) => f.rule)).toContain('offload-param-needs-stage-3');
    const yaml = toAccelerateYaml(r.setup);
    expect(yaml).not.toContain('mixed_precision');
    expect(yaml).not.toContain('zero_stage');
    expect(JSON.parse(toDeepSpeedJson(r.setup)).zero_optimization).toMatchObject({
      stage: 2,
      offload_optimizer: { device: 'cpu' },
    });
  });

  it('keeps and reports keys it does not model, and writes them back', () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'ds.json'),
      JSON.stringify({
        zero_optimization: { stage: 3, round_robin_gradients: true },
        steps_per_print: 50,
        optimizer: { type: 'AdamW', params: { lr: 'auto' } },
      }),
    );
    writeFileSync(
      join(dir, 'a.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 4\ngpu_ids: all\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero3_init_flag: true\n',
    );
    const r = importAccelerateConfig('a.yaml', dir);
    expect(r.kept).toEqual(
      expect.arrayContaining([
        'gpu_ids',
        'json:zero_optimization.round_robin_gradients',
        'json:steps_per_print',
        'json:optimizer',
      ]),
    );
    expect(r.setup.answers.mode).toBe('3');
    expect(r.setup.answers.overlap_comm).toBe(true); // DeepSpeed's own default at stage 3 when the key is absent
    const json = JSON.parse(toDeepSpeedJson(r.setup));
    expect(json.steps_per_print).toBe(50);
    expect(json.optimizer).toEqual({ type: 'AdamW', params: { lr: 'auto' } });
    expect(json.zero_optimization.round_robin_gradients).toBe(true);
    expect(toAccelerateYaml(r.setup)).toContain('gpu_ids: all');
  });

  it("reads `accelerate config default`'s JSON-in-YAML file and turns it into a DeepSpeed config", () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'default_config.yaml'),
      JSON.stringify(
        {
          compute_environment: 'LOCAL_MACHINE',
          debug: false,
          distributed_type: 'MULTI_GPU',
          downcast_bf16: false,
          num_processes: 2,
          same_network: false,
        },
        null,
        2,
      ),
    );
    const r = importAccelerateConfig('default_config.yaml', dir);
    expect(r.setup.answers.num_processes).toBe(2);
    expect(r.findings.map((f) => f.rule)).toContain('accelerate-not-deepspeed');
    expect(r.findings.find((f) => f.rule === 'import-note')?.message).toContain('distributed_type was MULTI_GPU');
    expect(toAccelerateYaml(r.setup)).toContain('distributed_type: DEEPSPEED');
    expect(r.kept).not.toContain('distributed_type');
  });

  it('reads ZeRO-3 with only the optimizer offloaded as ZeRO-3 offload with the parameters on the GPUs (split devices)', () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'a.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: none\n  zero3_init_flag: true\n',
    );
    const r = importAccelerateConfig('a.yaml', dir);
    expect(r.setup.answers.mode).toBe('3-offload');
    expect(r.setup.answers.offload_device).toBe('cpu');
    expect(r.setup.answers.offload_param_device).toBe('none');
    const zero = JSON.parse(toDeepSpeedJson(r.setup)).zero_optimization;
    expect(zero.offload_optimizer).toEqual({ device: 'cpu', pin_memory: true });
    expect(zero.offload_param).toBeUndefined();
    expect(r.kept).toEqual([]);
    // accelerate's default for a YAML without the key: do not gather 16-bit weights on save.
    expect(zero.stage3_gather_16bit_weights_on_model_save).toBe(false);
  });

  it('reads ZeRO-3 with the optimizer on cpu and the parameters on NVMe as those two devices', () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'a.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: nvme\n  offload_param_nvme_path: /local_nvme\n  zero3_init_flag: true\n',
    );
    const r = importAccelerateConfig('a.yaml', dir);
    expect([r.setup.answers.mode, r.setup.answers.offload_device, r.setup.answers.offload_param_device]).toEqual([
      '3-offload',
      'cpu',
      'nvme',
    ]);
    const j = JSON.parse(toDeepSpeedJson(r.setup));
    expect(j.zero_optimization.offload_optimizer).toEqual({ device: 'cpu', pin_memory: true });
    expect(j.zero_optimization.offload_param).toEqual({ device: 'nvme', nvme_path: '/local_nvme', pin_memory: true });
    expect(j.aio).toBeDefined();
    expect(r.kept).toEqual([]);
  });

  it('a precision in the YAML wins over "auto" in the JSON, and fp8 is reported, not dropped', () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'ds.json'),
      JSON.stringify({ fp16: { enabled: 'auto' }, bf16: { enabled: 'auto' }, zero_optimization: { stage: 2 } }),
    );
    writeFileSync(
      join(dir, 'a.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 8\nmixed_precision: bf16\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n',
    );
    expect(importAccelerateConfig('a.yaml', dir).setup.answers.mixed_precision).toBe('bf16');
    writeFileSync(
      join(dir, 'b.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 8\nmixed_precision: fp8\ndeepspeed_config:\n  zero_stage: 2\n',
    );
    const r = importAccelerateConfig('b.yaml', dir);
    expect(r.setup.answers.mixed_precision).toBe('bf16');
    expect(r.findings.find((f) => f.message.includes('fp8'))?.fix).toContain('--mixed_precision fp8');
  });

  it('refuses a deepspeed_config_file that does not exist, naming it (no ZeRO-2 stand-in)', () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'a.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 1\ndeepspeed_config:\n  deepspeed_config_file: missing.json\n',
    );
    expect(() => importAccelerateConfig('a.yaml', dir)).toThrow(
      /deepspeed_config_file missing\.json, which does not exist/,
    );
  });

  it('refuses a broken file with a UsageError and leaves it untouched', () => {
    const dir = tmp();
    const text = 'distributed_type: [DEEPSPEED\n';
    writeFileSync(join(dir, 'bad.yaml'), text);
    expect(() => importAccelerateConfig('bad.yaml', dir)).toThrow(UsageError);
    expect(readFileSync(join(dir, 'bad.yaml'), 'utf8')).toBe(text);
  });
});

describe('where an import moved each key', () => {
  it('names the DeepSpeed JSON key each refused YAML key went to', async () => {
    const { movedTo } = await import('../../src/config/questions.js');
    expect(movedTo('deepspeed_config.zero_stage')).toBe('zero_optimization.stage');
    expect(movedTo('deepspeed_config.offload_optimizer_device')).toBe('zero_optimization.offload_optimizer.device');
    expect(movedTo('deepspeed_config.offload_param_nvme_path')).toBe('zero_optimization.offload_param.nvme_path');
    expect(movedTo('mixed_precision')).toBe('fp16.enabled / bf16.enabled');
    expect(movedTo('deepspeed_config.gradient_clipping')).toBe('gradient_clipping');
  });
});
