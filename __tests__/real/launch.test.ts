/**
 * The real `accelerate launch --config_file Y probe.py`: accelerate's CLI, its DeepSpeed launcher and torchrun
 * start the processes on the CPU (gloo), each runs Accelerator() + prepare() + one step, and the DeepSpeed
 * stand-in records, per rank, the dict accelerate hands to deepspeed.initialize. It must hold no "auto" and
 * equal zerowiz's prediction (src/explain/effective.ts) for the processes that really ran.
 *
 * Two cores: `--num_processes` is overridden to min(num_processes, 2) (the test names say so), and
 * `--main_process_port 0` lets accelerate pick a free port (several test runs share the machine).
 * One launch per distinct way accelerate treats a config (each launch costs seconds: torch is imported by
 * the launcher and by every rank); the whole matrix goes through accelerate's functions in matrix.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { effectiveDeepSpeedConfig } from '../../src/explain/effective.js';
import { launchMixedPrecision } from '../../src/config/argv.js';
import { findPreset } from '../../src/setups/presets.js';
import { withDefaults, type Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import { PROBE_HIDDEN, PROBE_MICRO, accelerateLaunch, asRecorded, autosIn, tempDir, writeSetup } from './real.js';

/** The probe's Accelerator(gradient_accumulation_steps=2): a preset that pinned 1 would override it. */
const PROBE_ACCUM = 2;
const CPU_PROCESSES = 2;

const custom = (given: Partial<Answers>): Setup => ({
  name: 'custom',
  answers: withDefaults(given),
  files: { ...DEFAULT_FILES },
  steps: [],
});
const preset = (name: string): Setup => findPreset(name, { ...process.env, XDG_CONFIG_HOME: '/nonexistent' }).setup;

interface LaunchCase {
  why: string;
  setup: Setup;
  extra?: string[];
}

const CASES: LaunchCase[] = [
  { why: 'preset zero1 (ZeRO-1, bf16)', setup: preset('zero1') },
  { why: 'preset zero2-offload (optimizer offloaded: DeepSpeedCPUAdam swapped in)', setup: preset('zero2-offload') },
  { why: 'preset zero3 (ZeRO-3, zero.Init on through transformers)', setup: preset('zero3') },
  { why: 'preset zero3-nvme (NVMe paths and the aio block)', setup: preset('zero3-nvme') },
  {
    why: 'preset qwen-image-lora-lowvram (the seed: auto precision, debug, activation checkpointing)',
    setup: preset('qwen-image-lora-lowvram'),
  },
  {
    why: 'ZeRO-2 with fp16 (loss scaling block)',
    setup: custom({ mode: '2', mixed_precision: 'fp16', num_processes: 8 }),
  },
  {
    why: 'ZeRO-3 offload with auto precision and --mixed_precision bf16 at launch',
    setup: custom({ mode: '3-offload', mixed_precision: 'auto', num_processes: 8 }),
    extra: ['--mixed_precision', 'bf16'],
  },
  { why: 'ZeRO-1 in fp32 (no mixed precision)', setup: custom({ mode: '1', mixed_precision: 'no', num_processes: 4 }) },
  {
    why: 'ZeRO-3 with split devices: optimizer nvme, parameters cpu',
    setup: custom({ mode: '3-offload', offload_device: 'nvme', offload_param_device: 'cpu', num_processes: 8 }),
  },
];

describe('real accelerate launch on the CPU (gloo): the config handed to DeepSpeed is the one zerowiz predicts', () => {
  it.each(
    CASES.map(
      (c) =>
        [
          `${c.why}: num_processes ${c.setup.answers.num_processes} run as ${Math.min(c.setup.answers.num_processes, CPU_PROCESSES)}`,
          c,
        ] as const,
    ),
  )('%s', async (_name, c) => {
    const setup = await writeSetup(c.setup, tempDir('zw-launch-'));
    const n = Math.min(setup.answers.num_processes, CPU_PROCESSES);
    const extra = c.extra ?? [];
    const r = accelerateLaunch(
      setup.files.accelerateConfig,
      ['--num_processes', String(n), '--main_process_port', '0', ...extra],
      {
        ZEROWIZ_PROBE_ACCUM: String(PROBE_ACCUM),
        ZEROWIZ_PROBE_MICRO: String(PROBE_MICRO),
        ZEROWIZ_PROBE_HIDDEN: String(PROBE_HIDDEN),
      },
    );
    expect(r.code, r.output.replace(/^W\d{4} .*\n/gm, '').slice(-6000)).toBe(0);
    expect(r.records).toHaveLength(n);
    const mp = extra.includes('--mixed_precision')
      ? (extra[extra.indexOf('--mixed_precision') + 1] as 'bf16')
      : launchMixedPrecision(setup);
    const predicted = effectiveDeepSpeedConfig(setup, {
      worldSize: n,
      microBatchSize: PROBE_MICRO,
      scriptAccumulationSteps: PROBE_ACCUM,
      launchMixedPrecision: mp,
      hiddenSize: PROBE_HIDDEN,
      torchOptimizer: true,
    });
    expect(predicted.errors).toEqual([]);
    for (const rec of r.records) {
      expect(rec.world_size).toBe(n);
      expect(autosIn(rec.config)).toEqual([]);
      expect(rec.config).toEqual(asRecorded(predicted.config));
    }
    for (const p of r.probes) {
      // A built-in preset leaves the accumulation to the script (a pinned 1 would override its 2).
      if (c.why.startsWith('preset ')) expect(p.gradient_accumulation_steps).toBe(PROBE_ACCUM);
      expect(p.distributed_type).toBe('DistributedType.DEEPSPEED');
      expect(p.num_processes).toBe(n);
      expect(p.gradient_accumulation_steps).toBe(predicted.accumulationSteps);
      expect(p.zero3_for_transformers).toBe(predicted.zeroInit);
      expect(p.losses_finite).toBe(true);
    }
  });
});
