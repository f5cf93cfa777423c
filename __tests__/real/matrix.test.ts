/**
 * Every config zerowiz writes, through the real accelerate 1.15.0 in ONE Python process (harness.py):
 * accelerate's loader reads the YAML; accelerate's launch-argument parser and its launcher's command and
 * environment builder run on it (per machine rank for two nodes); then, in that process, Accelerator() and
 * prepare() of the probe's tiny model run with exactly the environment that builder made (world size 1:
 * the process count is checked in the launch command here and through real `accelerate launch` runs in
 * launch.test.ts). The DeepSpeed stand-in records the dict accelerate hands to deepspeed.initialize, which
 * must hold no "auto" and equal zerowiz's own prediction (src/explain/effective.ts, what the preview shows).
 *
 * The matrix: every built-in preset; every mode (1, 2, 2-offload, 3, 3-offload, and NVMe for the two offload
 * modes) x {1, 2, 8} processes x {bf16, fp16, auto, auto with --mixed_precision bf16, no} x gradient
 * checkpointing {no, yes}; and two nodes with the standard and the pdsh launchers, for rank 0 and rank 1.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { effectiveDeepSpeedConfig } from '../../src/explain/effective.js';
import { MODE_INFO, type Mode } from '../../src/config/modes.js';
import { listPresets } from '../../src/setups/presets.js';
import { ACCELERATE_KEYS_REFUSED_WITH_DS_FILE, withDefaults, type Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import {
  PROBE_HIDDEN,
  PROBE_MICRO,
  asRecorded,
  autosIn,
  freePort,
  runHarness,
  tempDir,
  writeSetup,
  type HarnessCase,
  type HarnessResult,
} from './real.js';

/** The script's Accelerator(gradient_accumulation_steps=...) in the probe: 2, so a pinned 1 would show. */
const PROBE_ACCUM = 2;

interface Case {
  id: string;
  setup: Setup;
  launchArgs: string[];
}

const setupOf = (name: string, given: Partial<Answers>): Setup => ({
  name,
  answers: withDefaults(given),
  files: { ...DEFAULT_FILES },
  steps: [],
});

const MODE_VARIANTS: { name: string; given: Partial<Answers> }[] = [
  { name: '1', given: { mode: '1' } },
  { name: '2', given: { mode: '2' } },
  { name: '2-offload', given: { mode: '2-offload', offload_device: 'cpu' } },
  { name: '2-offload-nvme', given: { mode: '2-offload', offload_device: 'nvme', nvme_path: '/local_nvme' } },
  { name: '3', given: { mode: '3' } },
  { name: '3-offload', given: { mode: '3-offload', offload_device: 'cpu' } },
  { name: '3-offload-nvme', given: { mode: '3-offload', offload_device: 'nvme', nvme_path: '/local_nvme' } },
];
const PRECISIONS: { name: string; value: Answers['mixed_precision']; launch: string[] }[] = [
  { name: 'bf16', value: 'bf16', launch: [] },
  { name: 'fp16', value: 'fp16', launch: [] },
  { name: 'auto', value: 'auto', launch: [] },
  { name: 'auto+launch-bf16', value: 'auto', launch: ['--mixed_precision', 'bf16'] },
  { name: 'no', value: 'no', launch: [] },
];

const single: Case[] = [];
for (const p of listPresets({ ...process.env, XDG_CONFIG_HOME: '/nonexistent' }).presets) {
  single.push({ id: `preset ${p.name}`, setup: p.setup, launchArgs: [] });
}
for (const m of MODE_VARIANTS)
  for (const n of [1, 2, 8])
    for (const pr of PRECISIONS)
      for (const gc of [false, true])
        single.push({
          id: `mode ${m.name}, ${n} process(es), ${pr.name}, gradient checkpointing ${gc ? 'yes' : 'no'}`,
          setup: setupOf('matrix', {
            ...m.given,
            num_processes: n,
            mixed_precision: pr.value,
            gradient_checkpointing: gc,
          }),
          launchArgs: pr.launch,
        });

single.push({
  id: 'mode 3, 2 processes, bucket sizes "auto" (filled from the model\'s hidden_size)',
  setup: setupOf('matrix', {
    mode: '3',
    num_processes: 2,
    reduce_bucket_size: 'auto',
    prefetch_bucket_size: 'auto',
    param_persistence_threshold: 'auto',
  }),
  launchArgs: [],
});

for (const [name, given] of [
  ['optimizer cpu, parameters on the GPUs', { mode: '3-offload', offload_device: 'cpu', offload_param_device: 'none' }],
  ['optimizer on the GPUs, parameters cpu', { mode: '3', offload_param_device: 'cpu' }],
  ['optimizer cpu, parameters nvme', { mode: '3-offload', offload_device: 'cpu', offload_param_device: 'nvme' }],
  ['optimizer nvme, parameters cpu', { mode: '3-offload', offload_device: 'nvme', offload_param_device: 'cpu' }],
] as const)
  single.push({
    id: `split devices: ZeRO-3, ${name}, 8 processes`,
    setup: setupOf('matrix', { ...given, num_processes: 8, nvme_path: '/local_nvme' }),
    launchArgs: [],
  });

/** accelerate's own list of deepspeed_config keys it refuses next to a JSON file, checked by accelerate itself. */
const REFUSED: [string, Record<string, unknown>][] = [
  ['deepspeed_config.zero_stage', { deepspeed_config: { zero_stage: 2 } }],
  ['deepspeed_config.offload_optimizer_device', { deepspeed_config: { offload_optimizer_device: 'cpu' } }],
  ['deepspeed_config.offload_param_device', { deepspeed_config: { offload_param_device: 'cpu' } }],
  ['deepspeed_config.offload_param_nvme_path', { deepspeed_config: { offload_param_nvme_path: '/n' } }],
  ['deepspeed_config.offload_optimizer_nvme_path', { deepspeed_config: { offload_optimizer_nvme_path: '/n' } }],
  ['deepspeed_config.gradient_accumulation_steps', { deepspeed_config: { gradient_accumulation_steps: 1 } }],
  ['deepspeed_config.gradient_clipping', { deepspeed_config: { gradient_clipping: 1.0 } }],
  ['deepspeed_config.zero3_save_16bit_model', { deepspeed_config: { zero3_save_16bit_model: true } }],
  ['mixed_precision', { mixed_precision: 'bf16' }],
];

const TWO_NODE_LAUNCHERS = ['standard', 'pdsh'] as const;
const MAIN_IP = '127.0.0.2';

let results = new Map<string, HarnessResult>();
let port = 0;
let hostfile = '';
const written = new Map<string, Setup>();

beforeAll(async () => {
  const dir = tempDir('zw-matrix-');
  port = await freePort();
  hostfile = join(dir, 'hostfile');
  (await import('node:fs')).writeFileSync(hostfile, 'node1 slots=8\nnode2 slots=8\n');
  const cases: HarnessCase[] = [];
  for (const [i, c] of single.entries()) {
    const placed = await writeSetup(c.setup, join(dir, `c${i}`));
    written.set(c.id, placed);
    cases.push({
      id: c.id,
      yaml: placed.files.accelerateConfig,
      launch_args: c.launchArgs,
      prepare: true,
      record: join(dir, `c${i}`, 'rec'),
      probe_env: {
        ZEROWIZ_PROBE_ACCUM: String(PROBE_ACCUM),
        ZEROWIZ_PROBE_MICRO: String(PROBE_MICRO),
        ZEROWIZ_PROBE_HIDDEN: String(PROBE_HIDDEN),
      },
    });
  }
  for (const [key, yaml] of REFUSED) {
    const setup: Setup = { ...setupOf('refused', { mode: '2' }), extra: { yaml } };
    const placed = await writeSetup(setup, join(dir, `refused-${key}`));
    cases.push({
      id: `refused ${key}`,
      yaml: placed.files.accelerateConfig,
      prepare: true,
      record: join(dir, `refused-${key}`, 'rec'),
    });
  }
  for (const launcher of TWO_NODE_LAUNCHERS)
    for (const rank of [0, 1]) {
      const id = `two nodes, ${launcher}, rank ${rank}`;
      const setup = setupOf('two-node', {
        num_machines: 2,
        machine_rank: rank,
        main_process_ip: MAIN_IP,
        main_process_port: port,
        num_processes: 16,
        mode: '3',
        multinode_launcher: launcher,
        hostfile: launcher === 'standard' ? '' : hostfile,
      });
      const placed = await writeSetup(setup, join(dir, `${launcher}-${rank}`));
      written.set(id, placed);
      cases.push({ id, yaml: placed.files.accelerateConfig, record: join(dir, `${launcher}-${rank}`, 'rec') });
    }
  results = runHarness(cases);
});

function result(id: string): HarnessResult {
  const r = results.get(id);
  if (!r) throw new Error(`no harness result for ${id}`);
  return r;
}

describe("accelerate's loader reads every YAML zerowiz writes, with every key as written", () => {
  it.each([
    ...single.map((c) => c.id),
    ...TWO_NODE_LAUNCHERS.flatMap((l) => [0, 1].map((r) => `two nodes, ${l}, rank ${r}`)),
  ])('%s', (id) => {
    const r = result(id);
    expect(r.load_error).toBeUndefined();
    const wrote = parseYaml(readFileSync(written.get(id)!.files.accelerateConfig, 'utf8'), {
      version: '1.1',
    }) as Record<string, unknown>;
    for (const [k, v] of Object.entries(wrote)) expect({ key: k, value: r.loaded?.[k] }).toEqual({ key: k, value: v });
    expect(r.launch_error).toBeUndefined();
    expect(r.launcher).toBe('deepspeed');
  });
});

describe('single node: the launch builder starts num_processes through torchrun, and prepare() fills every "auto" as zerowiz predicts', () => {
  it.each(single.map((c) => c.id))('%s', (id) => {
    const c = single.find((x) => x.id === id)!;
    const setup = written.get(id)!;
    const r = result(id);
    expect(r.cmd).toBeNull();
    expect(r.launch?.nproc_per_node).toBe(String(setup.answers.num_processes));
    expect(r.torchrun?.nproc_per_node).toBe(String(setup.answers.num_processes));
    // The YAML's deepspeed_config keys (none refused next to the JSON) are what accelerate passes on.
    expect(r.env?.ACCELERATE_CONFIG_DS_FIELDS?.split(',').sort()).toEqual(
      Object.keys(
        (parseYaml(readFileSync(setup.files.accelerateConfig, 'utf8')) as { deepspeed_config: object })
          .deepspeed_config,
      ).sort(),
    );
    expect(r.prepare_error, r.prepare_trace).toBeUndefined();
    const rec = r.record!;
    expect(autosIn(rec.config)).toEqual([]);
    const mp = c.launchArgs.includes('--mixed_precision')
      ? c.launchArgs[c.launchArgs.indexOf('--mixed_precision') + 1]
      : null;
    const predicted = effectiveDeepSpeedConfig(setup, {
      worldSize: 1,
      microBatchSize: PROBE_MICRO,
      scriptAccumulationSteps: PROBE_ACCUM,
      launchMixedPrecision: mp as 'bf16' | null,
      hiddenSize: PROBE_HIDDEN,
      torchOptimizer: true,
    });
    expect(predicted.errors).toEqual([]);
    expect(rec.config).toEqual(asRecorded(predicted.config));
    const info = MODE_INFO[setup.answers.mode as Mode];
    expect(rec.optimizer).toBe(info.offloadOptimizer ? 'DeepSpeedCPUAdam' : 'AdamW');
    expect(r.probe?.gradient_accumulation_steps).toBe(predicted.accumulationSteps);
    // A built-in preset leaves the accumulation to the script: the script's value wins, with no mismatch.
    if (id.startsWith('preset ')) expect(r.probe?.gradient_accumulation_steps).toBe(PROBE_ACCUM);
    expect(r.probe?.zero3_init_flag).toBe(predicted.zeroInit);
    expect(r.probe?.zero3_for_transformers).toBe(predicted.zeroInit);
    expect(r.probe?.losses_finite).toBe(true);
  });
});

describe("two nodes: accelerate's command builder, called for each rank, starts the right processes", () => {
  it.each([0, 1])(
    'standard launcher, rank %i: torchrun with 8 processes per node, 2 nodes, this rank, the main address and port',
    (rank) => {
      const r = result(`two nodes, standard, rank ${rank}`);
      expect(r.cmd).toBeNull();
      expect(r.torchrun).toMatchObject({ nproc_per_node: '8', nnodes: '2', node_rank: rank });
      // accelerate's --same_network flag defaults to False, so the YAML's same_network: true never reaches the
      // launcher: the address and port go to torchrun as the rendezvous endpoint (static backend), not as master_*.
      expect(r.torchrun_config).toEqual({
        min_nodes: 2,
        max_nodes: 2,
        nproc_per_node: 8,
        rdzv_backend: 'static',
        rdzv_endpoint: `${MAIN_IP}:${port}`,
        rank,
      });
    },
  );
  it.each([0, 1])(
    'pdsh launcher, rank %i: the deepspeed runner with the hostfile, 8 GPUs per node, the main address and port',
    (rank) => {
      const r = result(`two nodes, pdsh, rank ${rank}`);
      expect(r.cmd).toEqual([
        'deepspeed',
        '--hostfile',
        hostfile,
        '--no_local_rank',
        '--launcher',
        'pdsh',
        '--num_gpus',
        '8',
        '--master_addr',
        MAIN_IP,
        '--master_port',
        String(port),
        expect.stringMatching(/probe\.py$/),
      ]);
    },
  );
});

describe('the keys zerowiz keeps out of the YAML (src/config/questions.ts ACCELERATE_KEYS_REFUSED_WITH_DS_FILE) are the ones accelerate refuses', () => {
  it('the catalog lists exactly the keys of this test', () => {
    expect([...ACCELERATE_KEYS_REFUSED_WITH_DS_FILE].sort()).toEqual(REFUSED.map(([k]) => k).sort());
  });
  it.each(REFUSED.map(([k]) => k))('%s next to a deepspeed_config_file: accelerate refuses it', (key) => {
    const r = result(`refused ${key}`);
    expect(r.load_error).toBeUndefined();
    expect(r.prepare_error).toMatch(/following accelerate config variables will be ignored/);
  });
});
