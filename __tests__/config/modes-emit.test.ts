import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { findPreset } from '../../src/setups/presets.js';
import { accelerateConfigObject, dumpYaml, toAccelerateYaml, toDeepSpeedJson } from '../../src/config/emit.js';
import { validate } from '../../src/rules/validate.js';
import { checkAccelerateConfig, checkDeepSpeedConfig, ZERO_KEYS } from '../../src/config/accept.js';
import { MODES, MODE_INFO } from '../../src/config/modes.js';
import { withDefaults } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';

const PER_MODE = ['zero1', 'zero2', 'zero2-offload', 'zero3', 'zero3-offload', 'zero3-nvme'] as const;

function setupFor(given: Parameters<typeof withDefaults>[0]): Setup {
  return { name: 't', answers: withDefaults(given), files: { ...DEFAULT_FILES }, steps: [] };
}

describe('each built-in mode preset', () => {
  for (const name of PER_MODE) {
    describe(name, () => {
      const { setup } = findPreset(name);
      const yamlText = toAccelerateYaml(setup);
      const jsonText = toDeepSpeedJson(setup);
      const yamlObj = parseYaml(yamlText, { version: '1.1' }) as Record<string, unknown>;
      const jsonObj = JSON.parse(jsonText) as Record<string, unknown>;

      it('matches its reviewed snapshot (YAML and JSON)', async () => {
        await expect(yamlText).toMatchFileSnapshot(`__snapshots__/modes/${name}.yaml`);
        await expect(`${jsonText}\n`).toMatchFileSnapshot(`__snapshots__/modes/${name}.json`);
      });

      it('loads under accelerate rules: known keys only, nothing forbidden next to the JSON file', () => {
        expect(checkAccelerateConfig(yamlObj).filter((f) => f.level === 'error')).toEqual([]);
        const ds = yamlObj.deepspeed_config as Record<string, unknown>;
        expect(Object.keys(ds).sort()).toEqual(['deepspeed_config_file', 'zero3_init_flag']);
        expect(yamlObj).not.toHaveProperty('mixed_precision');
      });

      it("passes DeepSpeed's schema: known keys, valid enums, stage-only keys only at their stage", () => {
        expect(checkDeepSpeedConfig(jsonObj, { worldSize: setup.answers.num_processes })).toEqual([]);
        const zero = jsonObj.zero_optimization as Record<string, unknown>;
        for (const k of Object.keys(zero)) expect(ZERO_KEYS.has(k)).toBe(true);
        const info = MODE_INFO[setup.answers.mode];
        expect(zero.stage).toBe(info.stage);
        expect('offload_param' in zero).toBe(info.offloadParam);
        expect('offload_optimizer' in zero).toBe(info.offloadOptimizer);
        if (info.stage < 3)
          expect(Object.keys(zero).filter((k) => k.startsWith('stage3_') || k === 'sub_group_size')).toEqual([]);
      });

      it('has no validation errors', () => {
        expect(validate(setup).filter((f) => f.level === 'error')).toEqual([]);
      });
    });
  }
});

describe('the YAML serializer behaves like PyYAML safe_dump', () => {
  it("sorts keys, quotes YAML 1.1 booleans as 'no', writes [] and unindented block lists", () => {
    expect(
      dumpYaml({ b: 'no', a: [], c: ['x', 'off'], d: { z: 1, w: 'yes', v: 1.5, u: true }, e: 'plain', f: '' }),
    ).toBe("a: []\nb: 'no'\nc:\n- x\n- 'off'\nd:\n  u: true\n  v: 1.5\n  w: 'yes'\n  z: 1\ne: plain\nf: ''\n");
  });
});

describe('emitting per answer', () => {
  it('writes multi-node keys only for more than one machine', () => {
    const one = accelerateConfigObject(setupFor({}));
    expect(one).not.toHaveProperty('main_process_ip');
    const two = accelerateConfigObject(
      setupFor({
        num_machines: 2,
        num_processes: 16,
        machine_rank: 1,
        main_process_ip: '10.0.0.1',
        main_process_port: 29500,
        hostfile: '/job/hostfile',
      }),
    );
    expect(two).toMatchObject({
      num_machines: 2,
      machine_rank: 1,
      main_process_ip: '10.0.0.1',
      main_process_port: 29500,
    });
    expect(two.deepspeed_config).toMatchObject({
      deepspeed_multinode_launcher: 'pdsh',
      deepspeed_hostfile: '/job/hostfile',
    });
  });

  it('writes precision into the JSON, never into the YAML', () => {
    for (const p of ['no', 'fp16', 'bf16', 'auto'] as const) {
      const s = setupFor({ mixed_precision: p });
      const json = JSON.parse(toDeepSpeedJson(s));
      expect(toAccelerateYaml(s)).not.toContain('mixed_precision');
      expect(json.fp16.enabled).toBe(p === 'auto' ? 'auto' : p === 'fp16');
      expect(json.bf16.enabled).toBe(p === 'auto' ? 'auto' : p === 'bf16');
    }
  });

  it('writes dynamo_config with the backend upper-cased, as accelerate does', () => {
    expect(accelerateConfigObject(setupFor({ dynamo_backend: 'inductor' })).dynamo_config).toEqual({
      dynamo_backend: 'INDUCTOR',
    });
  });

  it("sizes the NVMe parameter swap buffer up when one rank's share of the largest layer would not fit", () => {
    const small = JSON.parse(
      toDeepSpeedJson(
        setupFor({
          mode: '3-offload',
          offload_device: 'nvme',
          nvme_path: '/n',
          num_processes: 8,
          largest_layer_params: 525e6,
        }),
      ),
    );
    expect(small.zero_optimization.offload_param.buffer_size).toBeUndefined(); // 66M per rank fits 1e8
    const big = JSON.parse(
      toDeepSpeedJson(
        setupFor({
          mode: '3-offload',
          offload_device: 'nvme',
          nvme_path: '/n',
          num_processes: 2,
          largest_layer_params: 525e6,
        }),
      ),
    );
    expect(big.zero_optimization.offload_param.buffer_size).toBe(3e8); // 262.5M per rank
    expect(big.zero_optimization.offload_optimizer.buffer_size).toBeUndefined();
  });

  it('adds the aio block only for NVMe offload', () => {
    for (const mode of MODES) {
      for (const dev of ['cpu', 'nvme'] as const) {
        const json = JSON.parse(toDeepSpeedJson(setupFor({ mode, offload_device: dev })));
        const offload = MODE_INFO[mode].offloadOptimizer;
        expect('aio' in json).toBe(offload && dev === 'nvme');
      }
    }
  });
});
