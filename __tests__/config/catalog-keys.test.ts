/**
 * Config-key knowledge lives in its owners: each question's yamlKey/jsonKey is exactly what the emitters write
 * for it, the keys accelerate refuses next to a JSON file come from the catalog, and validation uses the
 * catalog's launchers.
 */
import { describe, expect, it } from 'vitest';
import { accelerateConfigObject, deepSpeedConfigObject, isPlainObject, plainJson } from '../../src/config/emit.js';
import {
  ACCELERATE_KEYS_REFUSED_WITH_DS_FILE,
  LAUNCHERS,
  QUESTIONS,
  withDefaults,
  type Answers,
  type Question,
  type QuestionId,
} from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import { FORBIDDEN_WITH_DS_FILE, checkAccelerateConfig } from '../../src/config/accept.js';

const MULTI: Partial<Answers> = { num_machines: 2, num_processes: 16, main_process_ip: '10.0.0.1' };
/** For each question with keys: the answers it needs to be written, and two values that must differ in the output. */
const SAMPLES: Partial<Record<QuestionId, { base?: Partial<Answers>; values: [unknown, unknown] }>> = {
  num_machines: { values: [1, 2] },
  machine_rank: { base: MULTI, values: [0, 1] },
  main_process_ip: { base: MULTI, values: ['10.0.0.1', '10.0.0.2'] },
  main_process_port: { base: MULTI, values: [29500, 29600] },
  same_network: { base: MULTI, values: [true, false] },
  rdzv_backend: { base: { ...MULTI, same_network: false }, values: ['static', 'c10d'] },
  debug: { values: [false, true] },
  dynamo_backend: { values: ['no', 'inductor'] },
  ds_config_path: { values: ['', '/x/ds.json'] },
  mode: { values: ['1', '3-offload'] },
  offload_device: { base: { mode: '2-offload' }, values: ['cpu', 'nvme'] },
  offload_param_device: { base: { mode: '3' }, values: ['none', 'cpu'] },
  nvme_path: { base: { mode: '3-offload', offload_device: 'nvme' }, values: ['/a', '/b'] },
  gradient_accumulation_steps: { values: ['auto', 4] },
  gradient_clipping: { values: ['auto', 0.5] },
  zero3_save_16bit_model: { base: { mode: '3' }, values: [true, false] },
  zero3_init: { values: [false, true] },
  moe_layer_cls_names: { values: ['', 'MixtralSparseMoeBlock'] },
  multinode_launcher: { base: MULTI, values: ['pdsh', 'standard'] },
  hostfile: { base: MULTI, values: ['/h1', '/h2'] },
  exclusion_filter: { base: MULTI, values: ['', 'node1'] },
  inclusion_filter: { base: MULTI, values: ['', 'node2'] },
  num_processes: { values: [8, 16] },
  mixed_precision: { values: ['bf16', 'fp16'] },
  gradient_checkpointing: { values: [false, true] },
  master_weights: { values: ['fp32', 'none'] },
  overlap_comm: { values: [false, true] },
  pin_memory: { base: { mode: '3-offload' }, values: [true, false] },
  contiguous_gradients: { values: [true, false] },
  sub_group_size: { base: { mode: '3' }, values: [1e9, 1e8] },
  reduce_bucket_size: { values: [5e7, 5e8] },
  prefetch_bucket_size: { base: { mode: '3' }, values: [5e7, 5e8] },
  param_persistence_threshold: { base: { mode: '3' }, values: [1e5, 1e6] },
  max_live_parameters: { base: { mode: '3' }, values: [1e8, 1e9] },
  max_reuse_distance: { base: { mode: '3' }, values: [1e8, 1e9] },
};

const setup = (given: Partial<Answers>): Setup => ({
  name: 't',
  answers: withDefaults(given),
  files: { ...DEFAULT_FILES },
  steps: [],
});

/** Every leaf of an object as dotted path -> JSON text (a missing path reads as undefined). */
function leaves(v: unknown, path = '', out = new Map<string, string>()): Map<string, string> {
  if (isPlainObject(v) && Object.keys(v).length > 0)
    for (const [k, x] of Object.entries(v)) leaves(x, path ? `${path}.${k}` : k, out);
  else out.set(path, JSON.stringify(v));
  return out;
}
const changed = (a: Map<string, string>, b: Map<string, string>) =>
  [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
const keysOf = (q: Question, which: 'yamlKey' | 'jsonKey') => (q[which] ? q[which].split(', ') : []);
const written = (paths: string[], key: string) => paths.some((p) => p === key || p.startsWith(`${key}.`));

const withKeys = (QUESTIONS as readonly Question[]).filter((q) => q.yamlKey || q.jsonKey);
const ALL_KEYS = withKeys.flatMap((q) => [...keysOf(q, 'yamlKey'), ...keysOf(q, 'jsonKey')]);

describe("each question's yamlKey/jsonKey is exactly what the emitters write", () => {
  it('every question with keys has a sample here', () => {
    expect(withKeys.map((q) => q.id).filter((id) => !SAMPLES[id as QuestionId])).toEqual([]);
  });

  it.each(withKeys.map((q) => [q.id, q] as const))('%s', (id, q) => {
    const sample = SAMPLES[id as QuestionId]!;
    const [x, y] = sample.values.map((v) => setup({ ...sample.base, [id]: v }));
    const yamlChanged = changed(leaves(accelerateConfigObject(x!)), leaves(accelerateConfigObject(y!)));
    const jsonChanged = changed(
      leaves(plainJson(deepSpeedConfigObject(x!))),
      leaves(plainJson(deepSpeedConfigObject(y!))),
    );
    // Each key the question names is written and follows the answer...
    for (const k of keysOf(q, 'yamlKey'))
      expect({ id, key: k, written: written(yamlChanged, k) }).toEqual({ id, key: k, written: true });
    for (const k of keysOf(q, 'jsonKey'))
      expect({ id, key: k, written: written(jsonChanged, k) }).toEqual({ id, key: k, written: true });
    // ...and whatever else changes is a key some question names (answers whose defaults follow this one, the
    // questions it turns on), or NVMe's aio block.
    const unclaimed = [...yamlChanged, ...jsonChanged].filter(
      (p) => !ALL_KEYS.some((k) => p === k || p.startsWith(`${k}.`) || k.startsWith(`${p}.`)) && !p.startsWith('aio'),
    );
    expect({ id, unclaimed }).toEqual({ id, unclaimed: [] });
  });
});

describe('the keys accelerate refuses next to a deepspeed_config_file: one list, from the catalog', () => {
  it("is accelerate 1.15.0's list (DeepSpeedPlugin._deepspeed_config_checks)", () => {
    expect([...ACCELERATE_KEYS_REFUSED_WITH_DS_FILE].sort()).toEqual(
      [
        'deepspeed_config.gradient_accumulation_steps',
        'deepspeed_config.gradient_clipping',
        'deepspeed_config.offload_optimizer_device',
        'deepspeed_config.offload_optimizer_nvme_path',
        'deepspeed_config.offload_param_device',
        'deepspeed_config.offload_param_nvme_path',
        'deepspeed_config.zero3_save_16bit_model',
        'deepspeed_config.zero_stage',
        'mixed_precision',
      ].sort(),
    );
    expect(
      [...FORBIDDEN_WITH_DS_FILE, 'mixed_precision']
        .map((k) => (k === 'mixed_precision' ? k : `deepspeed_config.${k}`))
        .sort(),
    ).toEqual([...ACCELERATE_KEYS_REFUSED_WITH_DS_FILE].sort());
  });

  it('validation reports each of them next to a JSON file', () => {
    for (const k of ACCELERATE_KEYS_REFUSED_WITH_DS_FILE) {
      const cfg = accelerateConfigObject(setup({})) as Record<string, unknown>;
      if (k === 'mixed_precision') cfg.mixed_precision = 'bf16';
      else (cfg.deepspeed_config as Record<string, unknown>)[k.split('.')[1]!] = 1;
      expect({ k, rules: checkAccelerateConfig(cfg).map((f) => f.rule) }).toEqual({
        k,
        rules: ['forbidden-next-to-ds-file'],
      });
    }
  });

  it("validation knows the catalog's launchers, and no other", () => {
    for (const l of LAUNCHERS) {
      const cfg = accelerateConfigObject(setup({ ...MULTI, multinode_launcher: l, hostfile: '/h' })) as Record<
        string,
        unknown
      >;
      expect(checkAccelerateConfig(cfg).filter((f) => f.rule === 'multinode-launcher')).toEqual([]);
    }
    const cfg = accelerateConfigObject(setup({ ...MULTI, hostfile: '/h' })) as Record<string, unknown>;
    (cfg.deepspeed_config as Record<string, unknown>).deepspeed_multinode_launcher = 'srun';
    expect(checkAccelerateConfig(cfg).map((f) => f.rule)).toContain('multinode-launcher');
  });
});
