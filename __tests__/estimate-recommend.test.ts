import { describe, expect, it } from 'vitest';
import { activationBytes, activationBytesPerLayer } from '../src/activations.js';
import { estimateModes, usableGpu, GPU_HEADROOM_MIN_BYTES } from '../src/estimate.js';
import type { EstimateInput } from '../src/estimate.js';

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

describe('fits and headroom', () => {
  it('keeps max(10 %, 2 GiB) of the GPU free', () => {
    expect(usableGpu(80 * GiB)).toBe(72 * GiB);
    expect(usableGpu(16 * GiB)).toBe(16 * GiB - GPU_HEADROOM_MIN_BYTES);
    expect(usableGpu(1 * GiB)).toBe(0);
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
  it('counts activations in fits', () => {
    // ZeRO-3 of 2851M on 8 GPUs needs 6.09 GiB of model states; 70 GiB of activations pushes it over 72 GiB usable.
    const without = estimateModes(base()).modes.find((m) => m.mode === '3')!;
    const withActs = estimateModes(base({ activationBytes: 70 * GiB })).modes.find((m) => m.mode === '3')!;
    expect(without.fits).toBe(true);
    expect(withActs.gpuNeedBytes).toBe(withActs.gpuBytes + 70 * GiB);
    expect(withActs.fits).toBe(false);
  });
});

describe('recommendation: no offload first, then less communication, then the lower stage', () => {
  it('picks ZeRO-1 when both 1 and 2 fit (same communication, lower stage)', () => {
    const r = estimateModes(base());
    expect(r.recommended).toBe('1');
    expect(r.reason).toMatch(/^ZeRO-1 fits in 80 GiB with [0-9.]+ GiB to spare and adds no communication over DDP\.$/);
  });
  it('picks ZeRO-2 when ZeRO-1 does not fit, and says how much is spare', () => {
    // 7B on 8 x 80 GiB: ZeRO-1 4P + 2P = 42e9 B = 39.1 GiB, ZeRO-2 2P + 18P/8 = 29.75e9 B = 27.7 GiB.
    // With 40 GiB of activations: ZeRO-1 79.1 GiB > 72 usable; ZeRO-2 67.7 GiB fits with 4.3 GiB spare.
    const r = estimateModes(base({ params: 7e9, largestLayer: 0, activationBytes: 40 * GiB }));
    expect(r.recommended).toBe('2');
    const spare = (72 * GiB - (29.75e9 + 40 * GiB)) / GiB;
    expect(r.reason).toBe(
      `ZeRO-2 fits in 80 GiB with ${spare.toFixed(1)} GiB to spare (activations included) and adds no communication over DDP.`,
    );
  });
  it('picks ZeRO-3 when stages 1-2 do not fit without offload', () => {
    const r = estimateModes(base({ params: 30e9, largestLayer: 100e6 }));
    expect(r.recommended).toBe('3');
    expect(r.reason).toMatch(/ZeRO-3 fits .*1\.5x/);
  });
  it('prefers 2-offload over 3-offload, and CPU over NVMe', () => {
    // 8B on one 24 GiB GPU: 2-offload needs 2P = 16e9 B (14.9 GiB) of 21.6 usable; ZeRO-3 needs 4L + 18P.
    const r = estimateModes(
      base({ params: 8e9, largestLayer: 5e8, gpusPerNode: 1, gpuMemoryBytes: 24 * GiB, cpuMemoryBytes: 512 * GiB }),
    );
    expect(r.modes.filter((m) => m.fits).map((m) => `${m.mode}/${m.offloadDevice}`)).toEqual([
      '2-offload/cpu',
      '2-offload/nvme',
      '3-offload/cpu',
      '3-offload/nvme',
    ]);
    expect([r.recommended, r.recommendedOffloadDevice]).toEqual(['2-offload', 'cpu']);
    expect(r.reason).toMatch(/no mode without offload fits/);
  });
  it('falls back to 3-offload on NVMe when only that fits', () => {
    const r = estimateModes(
      base({ params: 70e9, largestLayer: 1e9, gpusPerNode: 8, gpuMemoryBytes: 24 * GiB, cpuMemoryBytes: 512 * GiB }),
    );
    expect([r.recommended, r.recommendedOffloadDevice]).toEqual(['3-offload', 'nvme']);
  });
  it('recommends nothing when nothing fits, and says so', () => {
    const r = estimateModes(
      base({ params: 70e9, largestLayer: 8e9, gpuMemoryBytes: 16 * GiB, cpuMemoryBytes: 64 * GiB }),
    );
    expect(r.recommended).toBeNull();
    expect(r.reason).toMatch(/^No mode fits/);
  });
  it('with one GPU says that stages 1-3 without offload save nothing', () => {
    const r = estimateModes(base({ params: 1e9, largestLayer: 0, gpusPerNode: 1 }));
    expect(r.reason).toMatch(/^With one GPU, stages 1-3 without offload shard over a single device and save nothing; /);
    const g = (m: string) => r.modes.find((x) => x.mode === m)!.gpuBytes;
    expect(g('1')).toBe(g('2'));
    expect(r.recommended).toBe('1');
  });
});

describe('activation estimate (Korthikanti et al. 2022)', () => {
  const shape = { hidden: 4096, heads: 32, seqLen: 2048, microBatch: 1 };
  it('per layer is s*b*h*(34 + 5*a*s/h) bytes', () => {
    const { hidden: h, heads: a, seqLen: s, microBatch: b } = shape;
    expect(activationBytesPerLayer(shape)).toBe(s * b * h * (34 + (5 * a * s) / h));
    expect(activationBytesPerLayer(shape)).toBe(956_301_312); // 2048*4096*114
    // A shape where 5*a*s/h is not whole: h = 3072, a = 24, s = 4096 -> 5*24*4096/3072 = 160.
    const qwen = { hidden: 3072, heads: 24, seqLen: 1000, microBatch: 2 };
    expect(activationBytesPerLayer(qwen)).toBeCloseTo(1000 * 2 * 3072 * (34 + (5 * 24 * 1000) / 3072), 0);
  });
  it('no recomputation: layers x per layer; full checkpointing: layers x 2sbh + one layer', () => {
    const per = activationBytesPerLayer(shape);
    expect(activationBytes({ ...shape, layers: 32, checkpointing: 'none' })).toBe(32 * per);
    expect(activationBytes({ ...shape, layers: 32, checkpointing: 'full' })).toBe(32 * 2 * 2048 * 4096 + per);
    expect(activationBytes({ ...shape, layers: 32, checkpointing: 'full' })).toBeLessThan(
      activationBytes({ ...shape, layers: 32, checkpointing: 'none' }),
    );
  });
  it('rejects a zero or fractional shape', () => {
    expect(() => activationBytes({ ...shape, layers: 0, checkpointing: 'none' })).toThrow(/layers/);
    expect(() => activationBytes({ ...shape, layers: 2, microBatch: 1.5, checkpointing: 'none' })).toThrow(
      /microBatch/,
    );
  });
});
