/**
 * `zerowiz estimate` counts every answer and its advice follows them, as a user runs the built bin: the frozen
 * encoders on the GPU (and in fp8), a model whose encoders are unknown said beside the answer, DiffSynth's video
 * size for video models, "what would fit" that never repeats what is already on, a "fits" sentence that adds
 * up, and a CPU column that counts what DiffSynth loads, with its line items.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(here, '..');
const bin = join(root, 'dist', 'zerowiz.js');
const EMPTY_BIN = join(here, 'fixtures', 'bin-empty');
const GiB = 2 ** 30;

function run(args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'estimate', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: EMPTY_BIN, HOME: process.env.HOME },
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
type Row = {
  mode: string;
  offloadDevice: string | null;
  fits: boolean | null;
  cpuBytes: number;
  peak: { gpuBytes: number; items: Record<string, number>; cpu: Record<string, number> };
};
type Doc = {
  input: Record<string, unknown> & { activation: { tokens: number } | null };
  modes: Row[];
  reason: string;
  advice: string[];
  notes: string[];
};
function json(args: string[]): Doc {
  const r = run([...args, '--json']);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Doc;
}
const row = (d: Doc, mode: string) => d.modes.find((m) => m.mode === mode && m.offloadDevice !== 'nvme')!;

beforeAll(() => {
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  expect(b.status, b.stderr).toBe(0);
});

describe('the text encoder and VAE on the GPU every step', () => {
  it('changes the answer for FLUX.1-dev and Wan2.1-14B by their weights', () => {
    for (const model of ['flux.1-dev', 'wan2.1-14b']) {
      const base = ['--model', model, '--lora-rank', '16', '--gpu-memory', '80GiB'];
      const off = json(base);
      const on = json([...base, '--encoders-on-gpu']);
      const grew = row(on, '2').peak.gpuBytes - row(off, '2').peak.gpuBytes;
      expect(grew, model).toBeGreaterThan(9 * 1e9);
      expect(row(on, '2').peak.items.extraModels, model).toBeGreaterThan(9 * 1e9);
      expect(on.notes.join(' '), model).toMatch(/encoders on the GPU: .*bf16/);
    }
  });
  it('in fp8 (DiffSynth --fp8_models) at half the bytes', () => {
    const base = ['--model', 'flux.1-dev', '--lora-rank', '16', '--gpu-memory', '80GiB', '--encoders-on-gpu'];
    const bf16 = row(json(base), '2').peak.items.extraModels!;
    const fp8 = row(json([...base, '--fp8-models', 'encoders']), '2').peak.items.extraModels!;
    expect(fp8).toBe(Math.ceil(bf16 / 2));
  });
  it('a model whose encoders are unknown: said beside the answer, in the text', () => {
    const r = run(['--params', '5B', '--max-pixels', '1048576', '--gpu-memory', '80GiB', '--encoders-on-gpu']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => /encoders on the GPU/.test(l));
    // Beside the answer: in the lines that say what was estimated, before the table.
    expect(at).toBeGreaterThan(-1);
    expect(at).toBeLessThan(lines.findIndex((l) => /^mode\s/.test(l)));
    expect(lines[at]).toMatch(/not counted/);
  });
});

describe("DiffSynth's video size", () => {
  it('a video model defaults to 480x832 (its example scripts), not 1024x1024', () => {
    const d = json(['--model', 'wan2.1-14b']);
    // 480x832 / 256 pixels a token = 1560 tokens a frame; 81 frames make 21 latent frames.
    expect(d.input.activation!.tokens).toBe(1560 * 21);
  });
});

describe('when nothing fits, the advice follows the answers', () => {
  it('never advises what is on, and names a change with its numbers', () => {
    const d = json([
      '--model',
      'wan2.1-14b',
      '--gpu-memory',
      '24GiB',
      '--cpu-memory',
      '128GiB',
      '--gradient-checkpointing',
      '--frames',
      '81',
    ]);
    expect(d.modes.some((m) => m.fits === true)).toBe(false);
    const said = `${d.reason} ${d.advice.join(' ')}`;
    expect(said).not.toMatch(/gradient checkpointing/);
    expect(said).not.toMatch(/smaller micro-batch|micro-batch 1/);
    // Fewer frames or pixels, with the numbers (LoRA alone would not fit: the activations are what is short).
    expect(said).toMatch(/\d+ frames instead of 81|--max_pixels \d+ \(\d+x\d+\) instead of 399360/);
  });
  it('more GPUs only where they shrink the per-GPU figure', () => {
    // One GPU short by its activations: sharding more GPUs does not shrink them.
    const d = json([
      '--model',
      'wan2.1-14b',
      '--lora-rank',
      '16',
      '--gpu-memory',
      '24GiB',
      '--frames',
      '81',
      '--max-pixels',
      '720x1280',
    ]);
    expect(d.modes.some((m) => m.fits === true)).toBe(false);
    expect(`${d.reason} ${d.advice.join(' ')}`).not.toMatch(/add GPUs|\d+ GPUs \(/);
  });
  it('LoRA instead of full, and offload named with the CPU memory it needs', () => {
    const d = json([
      '--model',
      'flux.1-dev',
      '--gpu-memory',
      '24GiB',
      '--cpu-memory',
      '16GiB',
      '--gradient-checkpointing',
    ]);
    expect(d.modes.some((m) => m.fits === true)).toBe(false);
    const said = `${d.reason} ${d.advice.join(' ')}`;
    expect(said).toMatch(/LoRA \(rank \d+\) instead of full fine-tuning \(ZeRO-/);
    expect(said).toMatch(/offload[^;]* needs [\d.]+ [GT]iB of CPU memory per node/);
  });
});

describe('"fits" adds up', () => {
  it('names the usable figure and its headroom beside the peak and what is left', () => {
    const d = json(['--model', 'flux.1-dev', '--lora-rank', '16', '--gpu-memory', '80GiB', '--gradient-checkpointing']);
    expect(d.reason).toMatch(
      /fits: peak [\d.]+ GiB per GPU of the [\d.]+ GiB usable \(80(\.0)? GiB less 10% headroom\), [\d.]+ GiB to spare/,
    );
  });
});

describe('the CPU column counts what DiffSynth loads', () => {
  it('bf16 weights per rank (not fp32) for an image or video model, and its encoders, as line items', () => {
    const d = json(['--model', 'wan2.1-14b', '--gpus-per-node', '8', '--encoders-on-gpu', '--gpu-memory', '80GiB']);
    const z2 = row(d, '2');
    expect(z2.peak.cpu.loadWeights).toBe(8 * 2 * 14_288_491_584);
    expect(z2.peak.cpu.loadEncoders).toBeGreaterThan(8 * 2 * 5e9);
    expect((z2.peak as unknown as { cpuBytes: number }).cpuBytes).toBeGreaterThanOrEqual(
      z2.peak.cpu.loadWeights! + z2.peak.cpu.loadEncoders!,
    );
    const text = run([
      '--model',
      'wan2.1-14b',
      '--gpus-per-node',
      '8',
      '--encoders-on-gpu',
      '--gpu-memory',
      '80GiB',
    ]).stdout;
    expect(text).toMatch(/CPU memory per node line items/);
    expect(text).toMatch(/load weights/);
  });
  it('a language model still loads in fp32 (as DeepSpeed estimates)', () => {
    const d = json(['--model', 'llama-3.1-8b', '--gpus-per-node', '8']);
    expect(row(d, '2').peak.cpu.loadWeights).toBe(8 * 4 * 8_030_261_248);
    expect(GiB).toBeGreaterThan(0);
  });
});
