/**
 * The step-time model (src/estimate/time.ts) through the estimator: every row gets a time whose terms add up,
 * each term follows its formula, the baseline row (mode 0, no DeepSpeed) has one too, and the recommendation
 * weighs time.
 */
import { describe, expect, it } from 'vitest';
import { estimateModes } from '../../src/estimate/estimate.js';
import type { EstimateInput, ModeEstimate } from '../../src/estimate/estimate.js';
import { trainingFlops } from '../../src/estimate/flops.js';
import { findGpu } from '../../src/estimate/gpus.js';
import {
  COMPUTE_EFFICIENCY,
  HOST_OPTIMIZER_PARAMS_PER_S_PER_NODE,
  HOST_OPTIMIZER_PARAMS_PER_S_PER_THREAD,
  formatBand,
} from '../../src/estimate/time.js';
import { LLAMA_8B_SHAPE } from '../helpers/fixtures.js';

const GiB = 2 ** 30;
const llama = (over: Partial<EstimateInput> = {}): EstimateInput => ({
  params: 8030261248,
  largestLayer: 525336576,
  gpusPerNode: 8,
  nodes: 1,
  zeroInit: true,
  gpuMemoryBytes: 80 * GiB,
  cpuMemoryBytes: 1024 * GiB,
  activation: { ...LLAMA_8B_SHAPE, tokens: 4096, microBatch: 1, checkpointing: 'full' },
  interconnect: { kind: 'nvlink', nvlinks: 12 },
  timing: { gpu: findGpu('a100-80') },
  ...over,
});
const row = (rows: ModeEstimate[], mode: string, device: 'cpu' | 'nvme' | null = null) =>
  rows.find((m) => m.mode === mode && (device === null ? m.offloadDevice !== 'nvme' : m.offloadDevice === device))!;

describe('every row has a step time', () => {
  it('whose terms add up to it, inside its band, bound by its largest term', () => {
    const r = estimateModes(llama());
    for (const m of [...r.modes, r.baseline]) {
      const t = m.time;
      const sum = t.terms.compute + t.terms.collectives + t.terms.offload + t.terms.hostOptimizer + t.terms.nvme;
      expect(t.stepSeconds).toBeCloseTo(sum, 9);
      expect(t.low).toBeLessThanOrEqual(t.stepSeconds);
      expect(t.high).toBeGreaterThanOrEqual(t.stepSeconds);
      const largest = Object.entries(t.terms).reduce((a, b) => (b[1] > a[1] ? b : a));
      expect(t.bound).toBe(largest[0]);
    }
  });
  it("computes the workload's FLOPs over the GPU's dense peak and the efficiency", () => {
    const r = estimateModes(llama());
    const flops = trainingFlops({ ...LLAMA_8B_SHAPE, tokens: 4096, microBatch: 1, checkpointing: 'full' }, 1).total;
    expect(row(r.modes, '2').time.terms.compute).toBeCloseTo(flops / (312e12 * COMPUTE_EFFICIENCY), 6);
    // About 6 x 8B x 4096 tokens x 4/3 (recomputation) of weights' work.
    expect(flops).toBeGreaterThan(6 * 8.03e9 * 4096 * (4 / 3));
    expect(flops).toBeLessThan(6 * 8.03e9 * 4096 * 1.6);
  });
  it('multiplies compute by the micro-batch and the gradient accumulation', () => {
    const one = row(estimateModes(llama()).modes, '2').time.terms.compute;
    const acc = row(estimateModes(llama({ timing: { gpu: findGpu('a100-80'), accumulation: 4 } })).modes, '2').time;
    expect(acc.terms.compute).toBeCloseTo(4 * one, 6);
  });
  it('charges a frozen model one backward pass instead of two (LoRA)', () => {
    const full = row(estimateModes(llama()).modes, '2').time.terms.compute;
    const lora = row(estimateModes(llama({ loraParams: 20e6 })).modes, '2').time.terms.compute;
    expect(lora / full).toBeGreaterThan(0.7);
    expect(lora / full).toBeLessThan(0.85);
  });
});

describe('collectives', () => {
  it('ZeRO-3 re-gathers the parameters on every pass: slower than ZeRO-2 when compute is too short to hide them', () => {
    const short = { ...LLAMA_8B_SHAPE, tokens: 512, microBatch: 1, checkpointing: 'full' } as const;
    const r = estimateModes(llama({ interconnect: { kind: 'pcie', nvlinks: null }, activation: short }));
    const z3 = row(r.modes, '3').time;
    expect(z3.stepSeconds).toBeGreaterThan(row(r.modes, '2').time.stepSeconds);
    expect(z3.bound).toBe('collectives');
    expect(z3.link).toBe('PCIe 4.0');
    // Three passes (forward, recomputation, backward) of the 16-bit parameters' ring on the link.
    expect(z3.raw.collectives).toBeGreaterThan((3 * (8030261248 * 2 * 7)) / 8 / (31.5e9 * 0.8));
  });
  it("without overlap_comm, ZeRO-2's reduce-scatter and all-gather wait: 2 x the gradients' ring volume on the link", () => {
    const r = estimateModes(llama({ interconnect: { kind: 'pcie', nvlinks: null }, knobs: { overlapComm: false } }));
    const ring = (8030261248 * 2 * 7) / 8;
    expect(row(r.modes, '2').time.terms.collectives).toBeCloseTo((2 * ring) / (31.5e9 * 0.8), 6);
  });
  it('across nodes runs on the network when it is slower than the node, and names it', () => {
    const r = estimateModes(
      llama({
        nodes: 2,
        timing: { gpu: findGpu('a100-80'), internode: { nics: 1, gbitPerNic: 100, spec: 'eth-100g', assumed: false } },
      }),
    );
    expect(row(r.modes, '3').time.link).toBe('the network (eth-100g)');
    expect(row(r.modes, '3').time.bound).toBe('collectives');
  });
});

describe('offload', () => {
  it('ZeRO-2 offload of a full fine-tune is bound by the CPU optimizer, tens of seconds', () => {
    const r = estimateModes(llama({ timing: { gpu: findGpu('a100-80'), ompThreads: 16, hostCores: 128 } }));
    const t = row(r.modes, '2-offload', 'cpu').time;
    expect(t.bound).toBe('hostOptimizer');
    expect(t.terms.hostOptimizer).toBeCloseTo(8030261248 / HOST_OPTIMIZER_PARAMS_PER_S_PER_NODE, 6);
    expect(formatBand(t)).toMatch(/^\d.*s\/step$/);
  });
  it("runs DeepSpeedCPUAdam on torchrun's one thread per process when OMP_NUM_THREADS is unset", () => {
    const two = llama({ gpusPerNode: 2, timing: { gpu: findGpu('a100-80'), hostCores: 64 } });
    const t = row(estimateModes(two).modes, '2-offload', 'cpu').time;
    expect(t.hostThreads).toBe(2);
    expect(t.terms.hostOptimizer).toBeCloseTo(8030261248 / (2 * HOST_OPTIMIZER_PARAMS_PER_S_PER_THREAD), 6);
    const set = llama({ gpusPerNode: 2, timing: { gpu: findGpu('a100-80'), hostCores: 64, ompThreads: 32 } });
    expect(row(estimateModes(set).modes, '2-offload', 'cpu').time.terms.hostOptimizer).toBeCloseTo(
      8030261248 / HOST_OPTIMIZER_PARAMS_PER_S_PER_NODE,
      6,
    );
  });
});

describe('the baseline row: no DeepSpeed', () => {
  it('is mode 0 with its peak (every state whole on every GPU) and a DDP time', () => {
    const r = estimateModes(llama({ loraParams: 20e6 }));
    expect(r.baseline.mode).toBe('0');
    expect(r.baseline.placement.stage).toBe(0);
    expect(r.baseline.gpuNeedBytes).toBe(r.baseline.peak.gpuBytes);
    expect(r.baseline.fits).toBe(true);
    expect(r.baseline.time.terms.offload).toBe(0);
  });
  it('does not fit a full fine-tune that ZeRO-3 fits', () => {
    const r = estimateModes(llama({ params: 20e9, largestLayer: 1e9 }));
    expect(r.baseline.fits).toBe(false);
    expect(row(r.modes, '3').fits).toBe(true);
  });
});

describe('the recommendation weighs time', () => {
  it('picks the fastest mode that fits and says what the slower fitting ones cost', () => {
    // Llama-3.1-8B full on 8 x A100 80GB at 4096 tokens: ZeRO-2 and ZeRO-3 fit and compute bounds them; offload
    // adds DeepSpeedCPUAdam's 8B parameters a step on the host.
    const r = estimateModes(llama());
    const fitting = r.modes.filter((m) => m.fits);
    const fastest = [...fitting].sort((a, b) => a.time.stepSeconds - b.time.stepSeconds)[0]!;
    const rec = r.modes.find((m) => m.mode === r.recommended && m.offloadDevice === r.recommendedOffloadDevice)!;
    expect(rec.time.stepSeconds).toBeLessThanOrEqual(fastest.time.stepSeconds * 1.1);
    const offload = row(r.modes, '2-offload', 'cpu');
    expect(offload.fits).toBe(true);
    const times = (offload.time.stepSeconds / rec.time.stepSeconds).toFixed(1);
    expect(Number(times)).toBeGreaterThan(2);
    expect(r.reason).toContain(`ZeRO-2 offload also fits, at ${times}x the time`);
  });
});
