// The estimator's cost: the wizard calls it on every keypress at the ZeRO question.
// In-process: src/estimate/estimate.ts bundled by esbuild into a temp dir, timed per single-mode estimate and per
// full report (all modes + NVMe with the peak model: layout, activations, buffers, CPU, step time; the
// DeepSpeed rows; the recommendation), on workloads with an activation shape and LoRA adapters, against a
// baseline loop of the same length that does trivial arithmetic (ratio = trivial loop iterations per call).
// Out of process: `zerowiz estimate --json` start-up against `node -e 0`.
import { build } from 'esbuild';
import { facesPlugin } from '../../scripts/faces.mjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function perCallNs(fn, iterations) {
  for (let i = 0; i < Math.min(iterations, 20_000); i++) fn(i); // warm-up (JIT)
  const samples = [];
  for (let round = 0; round < 7; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn(i);
    samples.push(Number(process.hrtime.bigint() - t0) / iterations);
  }
  samples.sort((a, b) => a - b);
  return samples[3];
}

export async function bench({ root, bin, nodeBaselineMs, timeNode }) {
  const dir = mkdtempSync(join(tmpdir(), 'zw-bench-estimate-'));
  try {
    const outfile = join(dir, 'estimate.mjs');
    await build({
      plugins: [facesPlugin(root)],
      entryPoints: [join(root, 'src', 'estimate', 'estimate.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
    });
    const { estimateMode, estimateModes } = await import(pathToFileURL(outfile).href);
    const GiB = 2 ** 30;
    const inputs = Array.from({ length: 64 }, (_, i) => ({
      params: 1e9 + i * 3.3e8,
      largestLayer: 5e7 + i * 1e6,
      gpusPerNode: 1 + (i % 8),
      nodes: 1 + (i % 3),
      zeroInit: i % 2 === 0,
      gpuMemoryBytes: 80 * GiB,
      cpuMemoryBytes: 1024 * GiB,
      activation: {
        block: ['llama', 'gpt', 'dit'][i % 3],
        layers: 24 + (i % 40),
        hidden: 2048 + 256 * (i % 12),
        heads: 16,
        kvHeads: 8,
        ffn: 8192 + 512 * (i % 10),
        vocab: i % 3 === 2 ? 0 : 128256,
        tokens: 1024 * (1 + (i % 8)),
        microBatch: 1 + (i % 2),
        checkpointing: i % 2 ? 'full' : 'none',
        bytesPerValue: 2,
      },
      lora:
        i % 4 === 0
          ? {
              rank: 32,
              shapes: [
                [4096, 4096, 128],
                [4096, 14336, 64],
                [14336, 4096, 32],
              ],
            }
          : null,
      knobs: { reduceBucketElems: 5e7, overlapComm: i % 2 === 0, maxLiveParams: 1e8 },
    }));
    const modes = ['1', '2', '2-offload', '3', '3-offload'];
    let sink = 0;
    const baselineNs = perCallNs((i) => {
      sink += (inputs[i & 63].params * 18) / (i + 1);
    }, 200_000);
    const oneNs = perCallNs((i) => {
      sink += estimateMode(modes[i % 5], inputs[i & 63]).gpuBytes;
    }, 200_000);
    const allNs = perCallNs((i) => {
      sink += estimateModes(inputs[i & 63]).modes.length;
    }, 50_000);
    if (sink === 42) console.log('');
    const cli = timeNode([
      bin,
      'estimate',
      '--params',
      '20.4B',
      '--largest-layer',
      '57M',
      '--gpus-per-node',
      '8',
      '--gpu-memory',
      '80GiB',
      '--json',
    ]);
    return [
      {
        name: 'estimate: one mode, in process (vs trivial loop body)',
        value: oneNs / 1000,
        unit: 'µs',
        ratio: oneNs / baselineNs,
        goal: '< 1000 µs (well under a millisecond)',
      },
      {
        name: 'estimate: full report, peak model (7 rows + 8 DeepSpeed rows + recommendation) (vs trivial loop body)',
        value: allNs / 1000,
        unit: 'µs',
        ratio: allNs / baselineNs,
        goal: '< 1000 µs',
      },
      { name: 'zerowiz estimate --json (vs node -e 0)', value: cli, unit: 'ms', ratio: cli / nodeBaselineMs },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
