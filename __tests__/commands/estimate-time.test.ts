/**
 * `zerowiz estimate`'s step times, pipeline and box, as a user runs the built bin: every mode's time and the
 * baseline row in --json and the table, the GPU catalog and the host's facts (flags, --detect, or stated
 * defaults), ETA and price, --min-box, and one clear line for a name zerowiz does not know.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { barePath } from '../helpers/seal.js';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(here, '..');
const bin = join(root, 'dist', 'zerowiz.js');
const FAKE_BIN = join(here, 'fixtures', 'bin-nvidia');
const EMPTY_BIN = join(here, 'fixtures', 'bin-empty');
const GiB = 2 ** 30;

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [bin, 'estimate', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: EMPTY_BIN, HOME: process.env.HOME, ...env },
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Time {
  hostThreads: number;
  stepSeconds: number;
  low: number;
  high: number;
  bound: string;
  terms: Record<string, number>;
}
type Doc = {
  input: Record<string, unknown> & {
    gpu: { id: string; name: string; peakTflops: number; source: string };
    hostCores: { count: number; source: string };
    links: { intraNode: string; internode: string | null };
  };
  modes: (Record<string, unknown> & {
    mode: string;
    offloadDevice: string | null;
    time: Time;
    peak: { gpuBytes: number };
  })[];
  recommended: string | null;
  recommendedOffloadDevice: string | null;
  reason: string;
  notes: string[];
  pipeline?: { steps: number; trainSeconds: number; gpuHours: number; price: number | null };
  minBox?: {
    gpu: string;
    gpus: number;
    nodes: number;
    mode: string;
    peak: number;
    stepSeconds: number;
    epochSeconds: number | null;
    price: number | null;
    withoutOffload: { gpus: number; mode: string; stepSeconds: number } | null;
  }[];
};

function json(args: string[], env?: NodeJS.ProcessEnv): Doc {
  const r = run([...args, '--json'], env);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Doc;
}

const LLAMA = ['--model', 'llama-3.1-8b', '--gpus-per-node', '8', '--seq-len', '4096', '--gradient-checkpointing'];

beforeAll(() => {
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  expect(b.status, b.stderr).toBe(0);
});

describe('estimate --json: a step time for every mode, and the baseline', () => {
  it("has modes[].time in the issue's shape, mode 0 first, and names the GPU, the links and the host", () => {
    const out = json([...LLAMA, '--gpu', 'h100-sxm']);
    expect(out.modes[0]!.mode).toBe('0');
    for (const m of out.modes) {
      expect(Object.keys(m.time.terms).sort()).toEqual(['collectives', 'compute', 'hostOptimizer', 'nvme', 'offload']);
      expect(m.time.low).toBeLessThanOrEqual(m.time.stepSeconds);
      expect(m.time.high).toBeGreaterThanOrEqual(m.time.stepSeconds);
      expect(Object.keys(m.time.terms)).toContain(m.time.bound);
    }
    expect(out.input.gpu).toMatchObject({ id: 'h100-sxm', source: 'flag' });
    expect(out.input.gpu.peakTflops).toBeCloseTo(989.4, 1);
    // --gpu gives the GPU's memory when --gpu-memory does not.
    expect(out.input.gpuMemoryBytes).toBe(81559 * 2 ** 20);
    expect(out.input.hostCores).toEqual({ count: 32, source: 'default' });
    expect(out.input.links.intraNode).toBe('NVLink x18 (assumed)');
    expect(out.notes.join(' ')).not.toMatch(/step times assume an/);
  });
  it('states the default GPU when none is given, and --cpu-cores and --internode change the answer', () => {
    const plain = json(LLAMA);
    expect(plain.input.gpu).toMatchObject({ id: 'a100-80', source: 'default' });
    expect(plain.notes.join(' ')).toMatch(/step times assume an NVIDIA A100 SXM4 80 GB \(the default/);
    const offload = (d: Doc) => d.modes.find((m) => m.mode === '2-offload' && m.offloadDevice === 'cpu')!.time;
    const few = json([...LLAMA, '--cpu-cores', '2']);
    expect(few.input.hostCores).toEqual({ count: 2, source: 'flag' });
    expect(offload(few).terms.hostOptimizer!).toBeGreaterThan(offload(plain).terms.hostOptimizer!);
    const nodes = ['--model', 'llama-3.1-8b', '--gpus-per-node', '8', '--nodes', '2', '--seq-len', '4096'];
    const slow = json([...nodes, '--internode', 'eth-10g']);
    const fast = json([...nodes, '--internode', '8xib-ndr']);
    const z3 = (d: Doc) => d.modes.find((m) => m.mode === '3')!.time;
    expect(z3(slow).stepSeconds).toBeGreaterThan(z3(fast).stepSeconds);
    expect(slow.input.links.internode).toBe('10 Gb/s per node');
  });
  it('--detect reads the GPU from nvidia-smi (an 8 x H100 stand-in) and the host cores from the OS', () => {
    const out = json(['--model', 'llama-3.1-8b', '--detect'], { PATH: `${FAKE_BIN}:${barePath()}` });
    expect(out.input.gpu).toMatchObject({ id: 'h100-sxm', source: 'detected' });
    expect(out.input.hostCores.source).toBe('detected');
    expect(out.input.hostCores.count).toBeGreaterThan(0);
    expect(out.input.links.intraNode).toBe('NVLink x18');
  });
});

describe("the issue's case: Wan2.1-14B full fine-tune on 8 GPUs", () => {
  it("ZeRO-2 offload adds DeepSpeedCPUAdam's 1.8B parameters per rank: seconds a step, not '+0.3 s/step'", () => {
    const args = [
      '--model',
      'wan2.1-14b',
      '--gpus-per-node',
      '8',
      '--frames',
      '81',
      '--max-pixels',
      '480x832',
      '--gpu',
      'h100-sxm',
      '--gradient-checkpointing',
    ];
    const out = json(args);
    const z2o = out.modes.find((m) => m.mode === '2-offload' && m.offloadDevice === 'cpu')!;
    const z3 = out.modes.find((m) => m.mode === '3')!;
    expect(z2o.time.terms.hostOptimizer).toBeCloseTo(14288491584 / 1.41e9, 1);
    expect(z2o.time.stepSeconds).toBeGreaterThan(z3.time.stepSeconds + 9);
    const table = run(args).stdout;
    expect(table).toMatch(/ZeRO-2 offload\s+[0-9.]+ GiB\s+[0-9.]+ GiB\s+\d+-\d+ s\/step\s+compute/);
    expect(table).toMatch(/^0 no DeepSpeed \(DDP\)\s/m);
  });
  it('on 2 GPUs the CPU optimizer bounds it, on the one thread per process torchrun leaves it', () => {
    const out = json([
      '--model',
      'llama-3.1-8b',
      '--gpus-per-node',
      '2',
      '--seq-len',
      '2048',
      '--gradient-checkpointing',
      '--gpu',
      'a100-80',
    ]);
    const z2o = out.modes.find((m) => m.mode === '2-offload' && m.offloadDevice === 'cpu')!;
    expect(z2o.time.bound).toBe('hostOptimizer');
    expect(z2o.time.hostThreads).toBe(2);
    expect(out.reason).toMatch(
      /export OMP_NUM_THREADS=16 before the launch \(32 cores \/ 2 processes\): about [0-9.]+-[0-9.]+ s\/step/,
    );
    expect(out.reason).toMatch(/ZeRO-3 offload also fits in the same time, with [0-9.]+ GiB more room/);
  });
});

describe('the pipeline: ETA and price', () => {
  it('--steps N gives the training seconds, GPU-hours and the price at --gpu-hour-price', () => {
    const out = json([...LLAMA, '--gpu', 'a100-80', '--steps', '1000', '--gpu-hour-price', '2.5']);
    const rec = out.modes.find((m) => m.mode === out.recommended && m.offloadDevice === out.recommendedOffloadDevice)!;
    expect(out.pipeline!.steps).toBe(1000);
    expect(out.pipeline!.trainSeconds).toBeCloseTo(1000 * rec.time.stepSeconds, 0);
    expect(out.pipeline!.gpuHours).toBeCloseTo((out.pipeline!.trainSeconds * 8) / 3600, 2);
    expect(out.pipeline!.price).toBeCloseTo(out.pipeline!.gpuHours * 2.5, 2);
    expect(run([...LLAMA, '--gpu', 'a100-80', '--steps', '1000', '--gpu-hour-price', '2.5']).stdout).toMatch(
      /1000 steps: .* GPU-hours, 2\.5 per GPU-hour: [0-9.]+/,
    );
  });
  it('--epochs N --dataset-size N counts the steps over the global batch', () => {
    const out = json([...LLAMA, '--epochs', '2', '--dataset-size', '10000', '--gradient-accumulation-steps', '4']);
    // Global batch: micro-batch 1 x accumulation 4 x 8 GPUs = 32; ceil(10000 / 32) = 313 steps an epoch.
    expect(out.pipeline!.steps).toBe(2 * 313);
    expect(out.pipeline!.price).toBeNull();
  });
  it('refuses --epochs without --dataset-size, --steps with --epochs, and a price that is not one', () => {
    for (const [args, re] of [
      [['--epochs', '2'], /--epochs needs --dataset-size/],
      [['--steps', '10', '--epochs', '2', '--dataset-size', '5'], /--steps and --epochs cannot be used together/],
      [['--gpu-hour-price', 'cheap'], /--gpu-hour-price 'cheap'/],
    ] as const) {
      const r = run([...LLAMA, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(re);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('--min-box: what a newcomer must rent', () => {
  it('one row per catalog GPU that can run the job: the smallest box, its mode, peak, step, epoch and price', () => {
    const out = json([
      '--model',
      'llama-3.1-8b',
      '--seq-len',
      '4096',
      '--gradient-checkpointing',
      '--min-box',
      '--dataset-size',
      '10000',
      '--gpu-hour-price',
      '2',
    ]);
    const rows = out.minBox!;
    expect(rows.length).toBeGreaterThan(5);
    const h100 = rows.find((r) => r.gpu === 'h100-sxm')!;
    expect(h100.gpus).toBe(h100.nodes * (h100.gpus / h100.nodes));
    expect(h100.peak).toBeLessThanOrEqual(81559 * 2 ** 20);
    expect(h100.epochSeconds).toBeGreaterThan(0);
    expect(h100.price).toBeCloseTo((h100.epochSeconds! * h100.gpus * 2) / 3600, 1);
    // A smaller GPU never needs fewer of them than a bigger one of the same generation.
    const a40 = rows.find((r) => r.gpu === 'a100-40')!;
    const a80 = rows.find((r) => r.gpu === 'a100-80')!;
    expect(a40.gpus).toBeGreaterThanOrEqual(a80.gpus);
    expect(rows.every((r) => r.peak < 200 * GiB)).toBe(true);
    // Without offload it takes at least as many GPUs, and no longer a step.
    for (const r of rows.filter((x) => x.withoutOffload)) {
      expect(r.withoutOffload!.gpus).toBeGreaterThanOrEqual(r.gpus);
      expect(r.withoutOffload!.mode).not.toMatch(/offload/);
    }
  });
});

describe('names zerowiz does not know: one line, the near miss and the list', () => {
  it('--gpu', () => {
    const r = run([...LLAMA, '--gpu', 'h100sxm']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown GPU 'h100sxm'/);
    expect(r.stderr).toMatch(/did you mean/);
    expect(r.stderr).toMatch(/h100-sxm/);
  });
  it('--internode', () => {
    const r = run([...LLAMA, '--internode', 'ib-nrd']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--internode 'ib-nrd'/);
    expect(r.stderr).toMatch(/ib-ndr/);
  });
  it('--list-gpus lists the catalog', () => {
    const r = run(['--list-gpus']);
    expect(r.code).toBe(0);
    for (const id of ['a100-80', 'h100-sxm', 'rtx-4090', 'titan-rtx', 'b200']) expect(r.stdout).toContain(id);
  });
});

describe('estimate --preset: the run of a DiffSynth preset, end to end', () => {
  it("counts DiffSynth's epochs x metadata rows x --dataset_repeat over the global batch, at the preset's price", () => {
    const cwd = mkdtempSync(join(tmpdir(), 'zw-eta-'));
    const home = mkdtempSync(join(tmpdir(), 'zw-eta-home-'));
    try {
      mkdirSync(join(cwd, 'data'));
      writeFileSync(
        join(cwd, 'data', 'metadata.csv'),
        `video,prompt\n${Array.from({ length: 20 }, (_, i) => `v${i}.mp4,a prompt`).join('\n')}\n`,
      );
      const presets = join(home, '.config', 'zerowiz', 'presets');
      mkdirSync(presets, { recursive: true });
      writeFileSync(
        join(presets, 'wan-eta.yaml'),
        [
          'name: wan-eta',
          'answers:',
          '  model_name: wan2.1-1.3b',
          '  model_params: 1418996800',
          '  num_processes: 4',
          '  mode: "2"',
          '  gpu_memory: 80GiB',
          '  gpu_model: a100-80',
          '  gpu_hour_price: 2',
          'steps:',
          '  - name: train',
          '    uses_config: true',
          '    args: [examples/wanvideo/model_training/train.py, --dataset_base_path, data, --dataset_metadata_path, data/metadata.csv, --num_epochs, "3", --dataset_repeat, "10"]',
          '',
        ].join('\n'),
      );
      const e = { HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
      const r = spawnSync(process.execPath, [bin, 'estimate', '--preset', 'wan-eta', '--json'], {
        cwd,
        encoding: 'utf8',
        env: { PATH: EMPTY_BIN, ...e },
      });
      expect(r.stderr).toBe('');
      const out = JSON.parse(r.stdout) as Doc;
      // 20 rows x 10 repeats = 200 samples; 4 GPUs x micro-batch 1: 50 steps an epoch, 3 epochs.
      expect(out.pipeline!.steps).toBe(150);
      expect(out.pipeline!.price).toBeCloseTo(out.pipeline!.gpuHours * 2, 2);
      const text = spawnSync(process.execPath, [bin, 'estimate', '--preset', 'wan-eta'], {
        cwd,
        encoding: 'utf8',
        env: { PATH: EMPTY_BIN, ...e },
      }).stdout;
      expect(text).toMatch(/150 steps \(50 an epoch of 4 samples a step\): .* GPU-hours, 2 per GPU-hour: [0-9.]+/);
    } finally {
      rmSync(cwd, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  });
});
