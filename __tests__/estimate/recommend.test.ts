import { describe, expect, it } from 'vitest';
import { DEFAULT_HEADROOM_PERCENT, estimateModes, usableGpu } from '../../src/estimate/estimate.js';
import { formatBand } from '../../src/estimate/time.js';
import { formatSeconds } from '../../src/text/format.js';
import type { EstimateInput } from '../../src/estimate/estimate.js';
import { LLAMA_8B_SHAPE } from '../helpers/fixtures.js';
import { formatBytesShort } from '../../src/text/format.js';

const GiB = 2 ** 30;
const base = (over: Partial<EstimateInput> = {}): EstimateInput => ({
  params: 2851e6,
  largestLayer: 32e6,
  gpusPerNode: 8,
  nodes: 1,
  zeroInit: true,
  gpuMemoryBytes: 80 * GiB,
  cpuMemoryBytes: 1024 * GiB,
  ...over,
});
const llama = { ...LLAMA_8B_SHAPE, microBatch: 1 };

describe('fits and headroom', () => {
  it('keeps the headroom percentage of the GPU free (10% by default)', () => {
    expect(DEFAULT_HEADROOM_PERCENT).toBe(10);
    expect(usableGpu(80 * GiB)).toBe(72 * GiB);
    expect(usableGpu(80 * GiB, 25)).toBe(60 * GiB);
    expect(usableGpu(80 * GiB, 0)).toBe(80 * GiB);
    expect(estimateModes(base({ headroomPercent: 25 })).input.usableGpuBytes).toBe(60 * GiB);
  });
  it('is null everywhere when GPU memory is unknown, and nothing is recommended', () => {
    const r = estimateModes(base({ gpuMemoryBytes: null }));
    expect(r.modes.every((m) => m.fits === null)).toBe(true);
    expect(r.recommended).toBeNull();
    expect(r.reason).toMatch(/--gpu-memory/);
  });
  it('judges by the GPU alone when CPU memory is unknown', () => {
    const r = estimateModes(base({ cpuMemoryBytes: null }));
    expect(r.modes.every((m) => m.cpuFits === null && m.fits === m.gpuFits)).toBe(true);
  });
  it('a CPU too small for offload makes offload rows not fit', () => {
    const r = estimateModes(
      base({ params: 20e9, largestLayer: 60e6, gpuMemoryBytes: 24 * GiB, cpuMemoryBytes: 64 * GiB }),
    );
    const o = r.modes.find((m) => m.mode === '3-offload' && m.offloadDevice === 'cpu')!;
    expect([o.gpuFits, o.cpuFits, o.fits]).toEqual([true, false, false]);
  });
  it('decides on the peak, activations and margin included', () => {
    // ZeRO-3 of 2851M on 8 GPUs peaks near 12 GiB; 70 GiB of activations (plus their 10% margin) push it over 72.
    const without = estimateModes(base()).modes.find((m) => m.mode === '3')!;
    const withActs = estimateModes(base({ activationBytes: 70 * GiB })).modes.find((m) => m.mode === '3')!;
    expect(without.fits).toBe(true);
    expect(withActs.peak.items.activations).toBe(70 * GiB);
    // The optimizer step's copy of a moment reuses the freed activations, so it adds nothing once they are larger.
    expect(without.peak.items.optimizerStep).toBeGreaterThan(0);
    expect(withActs.peak.items.optimizerStep).toBe(0);
    expect(withActs.peak.items.margin).toBe(Math.round((70 * GiB + withActs.peak.items.buffers) * 0.1));
    expect(withActs.gpuNeedBytes - without.gpuNeedBytes).toBe(
      70 * GiB - without.peak.items.optimizerStep + withActs.peak.items.margin - without.peak.items.margin,
    );
    expect(withActs.gpuNeedBytes).toBe(withActs.peak.gpuBytes);
    expect(withActs.fits).toBe(false);
  });
});

describe('recommendation: the fastest mode whose peak fits', () => {
  it('says what fits as a sum that adds up: the peak, the usable figure, what it is, and what is left', () => {
    const r = estimateModes(base({ loraParams: 30e6 }));
    const m = r.modes.find((x) => x.mode === r.recommended && x.offloadDevice === r.recommendedOffloadDevice)!;
    const spare = 72 * GiB - m.gpuNeedBytes;
    expect(r.reason).toContain(
      `fits: peak ${formatBytesShort(m.gpuNeedBytes)} per GPU of the 72 GiB usable (80 GiB less 10% headroom), ${formatBytesShort(spare)} to spare; ${formatBand(m.time)}`,
    );
  });
  it('at the same time prefers the room: ZeRO-2 over ZeRO-1 when it leaves 1 GiB or more, and says what ZeRO-1 would give', () => {
    // 2851M trained in full: ZeRO-2 keeps 1/8 of the 5.7 GB of 16-bit gradients, about 5 GiB more room; no
    // activations known, so the step is its collectives, and ZeRO-1's reduce waits where ZeRO-2's does too.
    const r = estimateModes(base({ knobs: { overlapComm: true } }));
    const [one, two] = ['1', '2'].map((m) => r.modes.find((x) => x.mode === m)!);
    expect(one!.fits && two!.fits).toBe(true);
    expect(one!.gpuNeedBytes - two!.gpuNeedBytes).toBeGreaterThan(GiB);
    expect(r.recommended).toBe('2');
    expect(r.reason).toMatch(/^ZeRO-2 fits: /);
  });
  it('picks ZeRO-2 when ZeRO-1 does not fit', () => {
    // 7B on 8 x 80 GiB with 30 GiB of activations: ZeRO-1 keeps 2P of 16-bit gradients on every GPU and
    // peaks over 72 GiB; ZeRO-2 keeps a 1/8 slice and fits.
    const r = estimateModes(base({ params: 7e9, largestLayer: 0, activationBytes: 30 * GiB }));
    const one = r.modes.find((m) => m.mode === '1')!;
    expect(one.gpuFits).toBe(false);
    expect(r.recommended).toBe('2');
    expect(r.reason).toMatch(/^ZeRO-2 fits: peak [0-9.]+ GiB per GPU/);
  });
  it('with offload only, says no mode without offload fits and what bounds the step', () => {
    // 8B on one 24 GiB GPU: 2-offload keeps the 16 GB of 16-bit weights; nothing without offload fits.
    const r = estimateModes(
      base({ params: 8e9, largestLayer: 5e8, gpusPerNode: 1, gpuMemoryBytes: 24 * GiB, cpuMemoryBytes: 512 * GiB }),
    );
    expect(r.modes.filter((m) => m.fits).map((m) => `${m.mode}/${m.offloadDevice}`)).toEqual([
      '2-offload/cpu',
      '2-offload/nvme',
      '3-offload/cpu',
      '3-offload/nvme',
    ]);
    expect(r.recommended === '2-offload' || r.recommended === '3-offload').toBe(true);
    expect(r.recommendedOffloadDevice).toBe('cpu');
    expect(r.reason).toMatch(/No mode without offload fits/);
    expect(r.reason).toMatch(/bound by the CPU optimizer on 32 threads per node/);
  });
  it('falls back to 3-offload on NVMe when only that fits', () => {
    const r = estimateModes(
      base({ params: 70e9, largestLayer: 1e9, gpusPerNode: 8, gpuMemoryBytes: 24 * GiB, cpuMemoryBytes: 512 * GiB }),
    );
    expect([r.recommended, r.recommendedOffloadDevice]).toEqual(['3-offload', 'nvme']);
  });
  it('with one GPU says that stages 1-3 without offload save nothing', () => {
    const r = estimateModes(base({ params: 1e9, largestLayer: 0, gpusPerNode: 1 }));
    expect(r.reason).toMatch(/^With one GPU, stages 1-3 without offload shard over a single device and save nothing; /);
    expect(r.recommended).toBe('1');
  });
  it('says what the same training needs without DeepSpeed', () => {
    const fits = estimateModes(base({ loraParams: 30e6 }));
    expect(fits.baseline.fits).toBe(true);
    expect(fits.reason).toMatch(/Without DeepSpeed \(DDP\) it fits too, at [0-9.]+x the time/);
    const big = estimateModes(base({ params: 30e9, largestLayer: 100e6 }));
    expect(big.reason).toContain(
      `Without DeepSpeed (DDP) it needs ${formatBytesShort(big.baseline.gpuNeedBytes)} per GPU`,
    );
  });
});

describe('when nothing fits: what to change', () => {
  it('says so, and names more GPUs when the model states are too big for these GPUs', () => {
    // 70B on 8 x 80 GiB with 64 GiB of CPU per node (no room to offload): ZeRO-3 needs 16 bytes per
    // parameter over the GPUs, 1.12 TB in all, so more nodes make it fit.
    const r = estimateModes(base({ params: 70e9, largestLayer: 1e9, cpuMemoryBytes: 64 * GiB }));
    expect(r.recommended).toBeNull();
    expect(r.reason).toMatch(/^No mode fits/);
    // The host is short too for the offload modes that fit the GPU: said with what they need.
    expect(r.advice).toContainEqual(
      expect.stringMatching(/^\d+ GPUs \(\d+ nodes of 8\) \(ZeRO-3 at [0-9.]+ GiB\/GPU\)$/),
    );
    expect(r.advice).toContainEqual(
      expect.stringMatching(/^more CPU memory: ZeRO-\d offload needs [\d.]+ TiB of CPU memory per node/),
    );
    expect(r.reason).toContain(`What would fit: ${r.advice.slice(0, 2).join('; ')}.`);
  });
  it('offers nothing when no change could help (one layer gathered whole is bigger than the GPU)', () => {
    const r = estimateModes(
      base({ params: 70e9, largestLayer: 8e9, gpuMemoryBytes: 16 * GiB, cpuMemoryBytes: 64 * GiB }),
    );
    expect(r.recommended).toBeNull();
    expect(r.advice).toEqual([]);
    expect(r.reason).toMatch(/^No mode fits: even ZeRO-3 offload peaks at [0-9.]+ GiB per GPU/);
  });
  it('names gradient checkpointing when the activations are what does not fit', () => {
    // Llama-3.1-8B shape, 16k tokens, no checkpointing: activations alone pass 80 GiB; with it, ZeRO-2 fits.
    const r = estimateModes(
      base({
        params: 8030261248,
        largestLayer: 525336576,
        activation: { ...llama, tokens: 16384, checkpointing: 'none' },
      }),
    );
    expect(r.recommended).toBeNull();
    expect(r.advice[0]).toMatch(/^gradient checkpointing \(ZeRO-\d.* at [0-9.]+ GiB\/GPU\)$/);
  });
  it('names micro-batch 1 when a larger micro-batch is what does not fit', () => {
    const r = estimateModes(
      base({
        params: 8030261248,
        largestLayer: 525336576,
        activation: { ...llama, tokens: 4096, microBatch: 16, checkpointing: 'full' },
      }),
    );
    expect(r.recommended).toBeNull();
    expect(r.advice).toContainEqual(expect.stringMatching(/^micro-batch 1 \(/));
  });
});

describe('step time', () => {
  it('reads as seconds with the digits a step needs, and a band as low-high', () => {
    expect(formatSeconds(0.004)).toBe('<0.01 s');
    expect(formatSeconds(0.42)).toBe('0.42 s');
    expect(formatSeconds(3.14)).toBe('3.1 s');
    expect(formatSeconds(16.4)).toBe('16 s');
    expect(formatSeconds(65)).toBe('1m05s');
    expect(formatBand({ low: 9.1, high: 12.3 })).toBe('9.1-12 s/step');
    expect(formatBand({ low: 12.1, high: 12.3 })).toBe('12 s/step');
  });
});
