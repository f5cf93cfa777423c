import { describe, expect, it } from 'vitest';
import {
  activationBreakdown,
  blockBytes,
  elementsPerToken,
  LOGITS_BYTES_PER_VOCAB_TOKEN,
} from '../../src/estimate/activations.js';
import type { ActivationInput } from '../../src/estimate/activations.js';
import { estimateModes, estimatePlacement, normalizeInput } from '../../src/estimate/estimate.js';
import type { EstimateInput } from '../../src/estimate/estimate.js';
import { modeRows, placementOf, rowKey } from '../../src/config/modes.js';
import type { Placement } from '../../src/config/modes.js';
import {
  buffersItem,
  CUDA_CONTEXT_BYTES,
  cpuPerNode,
  cudaContextItem,
  loraParams,
  marginItem,
  memoryLayout,
  NCCL_INIT_BYTES,
  peakOf,
  pictureBreakdown,
} from '../../src/estimate/peak.js';
import { LLAMA_8B_SHAPE, randInt, rng } from '../helpers/fixtures.js';

const GiB = 2 ** 30;

const P = 1e9;
const base = (over: Partial<EstimateInput> = {}): EstimateInput => ({
  params: P,
  largestLayer: 5e7,
  gpusPerNode: 4,
  nodes: 1,
  zeroInit: true,
  knobs: { reduceBucketElems: 5e7, overlapComm: false, prefetchBucketElems: 5e7, maxLiveParams: 1e8 },
  ...over,
});
const n = (over: Partial<EstimateInput> = {}) => normalizeInput(base(over));
const stage = (s: 1 | 2 | 3, optimizer: Placement['optimizer'] = 'none', param: Placement['param'] = 'none') => ({
  stage: s,
  optimizer,
  param,
});
const gpu = (p: Placement, over: Partial<EstimateInput> = {}, state?: string) =>
  memoryLayout(p, n(over))
    .states.filter((x) => state === undefined || x.state === state)
    .reduce((a, x) => a + x.gpuBytes, 0);

describe('model states per GPU (1B parameters, 4 GPUs, bf16: hand-derived)', () => {
  it('16-bit parameters: whole at stages 1-2 (2 GB), a quarter at stage 3, none on the GPU with offload_param', () => {
    expect(gpu(stage(1), {}, 'params')).toBe(2e9);
    expect(gpu(stage(2, 'cpu'), {}, 'params')).toBe(2e9);
    expect(gpu(stage(3), {}, 'params')).toBe(0.5e9);
    expect(gpu(stage(3, 'cpu', 'cpu'), {}, 'params')).toBe(0);
  });
  it('16-bit gradients: whole at stage 1, a quarter at 2 and 3, none on the GPU with the optimizer offloaded', () => {
    expect(gpu(stage(1), {}, 'grads')).toBe(2e9);
    expect(gpu(stage(2), {}, 'grads')).toBe(0.5e9);
    expect(gpu(stage(3), {}, 'grads')).toBe(0.5e9);
    expect(gpu(stage(2, 'cpu'), {}, 'grads')).toBe(0);
    expect(gpu(stage(3, 'cpu'), {}, 'grads')).toBe(0);
  });
  it('optimizer: fp32 master, m and v (12 bytes) + fp32 gradients (4) per trainable parameter, over the GPUs', () => {
    const opt = (p: Placement, over: Partial<EstimateInput> = {}) =>
      ['master', 'momentum', 'variance', 'gradsFp32'].reduce((a, s) => a + gpu(p, over, s), 0);
    expect(opt(stage(1))).toBe(4e9);
    expect(opt(stage(2))).toBe(4e9);
    // Stage 3 keeps one sub-group of fp32 gradients: min(sub_group_size, T/N) = 2.5e8 here.
    expect(opt(stage(3))).toBe(4e9);
    expect(opt(stage(3), { knobs: { subGroupElems: 1e8 } })).toBe(3e9 + 4e8);
    expect(opt(stage(2, 'cpu'))).toBe(0);
  });
  it('trainable vs frozen: frozen parameters cost only their 16-bit weights', () => {
    const frozen = n({ trainableParams: 1e8 });
    const l = memoryLayout(stage(2), frozen);
    expect(l.states.find((s) => s.state === 'params')!.gpuBytes).toBe(2e9);
    expect(l.states.find((s) => s.state === 'grads')!.gpuBytes).toBe(0.5e8);
    expect(l.states.find((s) => s.state === 'master')!.gpuBytes).toBe(1e8);
  });
  it('LoRA: rank x (in + out) per matched Linear, added to the model', () => {
    // The seed's Qwen-Image targets at rank 32: 8 x (3072+3072) + 2 x (12288+3072) + 2 x (3072+18432) per block.
    const perBlock = 8 * 6144 + 2 * 15360 + 2 * 21504;
    expect(perBlock).toBe(122880);
    expect(
      loraParams(32, [
        [3072, 3072, 480],
        [12288, 3072, 120],
        [3072, 18432, 120],
      ]),
    ).toBe(32 * perBlock * 60);
    const lora = n({ lora: { rank: 8, shapes: [[1000, 1000, 10]] } });
    expect([lora.trainable, lora.params, lora.largestTrainable]).toEqual([160_000, P + 160_000, 8000]);
  });
});

describe('the other line items (hand-derived)', () => {
  it('CUDA context + NCCL: the documented constants (ml-engineering), or the override', () => {
    expect(CUDA_CONTEXT_BYTES).toBe(Math.round(0.92 * GiB));
    expect(NCCL_INIT_BYTES).toBe(Math.round(1.45 * GiB));
    expect(cudaContextItem(n())).toBe(CUDA_CONTEXT_BYTES + NCCL_INIT_BYTES);
    expect(cudaContextItem(n({ cudaContextBytes: 3 * GiB }))).toBe(3 * GiB);
  });
  it('buffers, stages 1-2: the reduce bucket in 16-bit, twice with overlap_comm, plus the staging buffer with offload', () => {
    expect(buffersItem(stage(2), n())).toBe(2 * 5e7);
    expect(buffersItem(stage(2), n({ knobs: { reduceBucketElems: 5e7, overlapComm: true } }))).toBe(2 * 2 * 5e7);
    expect(buffersItem(stage(2, 'cpu'), n())).toBe(2 * 5e7 + 2 * 5e7);
    expect(buffersItem(stage(1), n({ knobs: { reduceBucketElems: 5e7, contiguousGradients: false } }))).toBe(0);
  });
  it('buffers, stage 3: one bucket, the largest layer + max(prefetch, max live) gathered, the largest gradient', () => {
    // 2 x 5e7 + 2 x (5e7 + max(5e7, 1e8)) + 2 x 5e7; overlap_comm adds no second bucket at stage 3.
    const expected = 1e8 + 3e8 + 1e8;
    expect(buffersItem(stage(3), n())).toBe(expected);
    expect(buffersItem(stage(3), n({ knobs: { reduceBucketElems: 5e7, overlapComm: true, maxLiveParams: 1e8 } }))).toBe(
      expected,
    );
    // Never more gathered than the whole model.
    expect(buffersItem(stage(3), n({ params: 1e8, largestLayer: 5e7 }))).toBe(1e8 + 2e8 + 1e8);
  });
  it('margin: 10% of what a step allocates and frees (activations, buffers, stage-1 gradients)', () => {
    expect(marginItem(10 * GiB)).toBe(GiB);
    const p = peakOf(stage(1), n({ activationBytes: 10e9 }));
    expect(p.items.margin).toBe(Math.round(0.1 * (10e9 + 1e8 + 2e9)));
  });
  it('extra models: their weights in the training precision, whole on every GPU', () => {
    expect(peakOf(stage(3), n({ extraGpuParams: 7e9 })).items.extraModels).toBe(14e9);
    expect(peakOf(stage(3), n({ extraGpuParams: 7e9, precision: 'fp32' })).items.extraModels).toBe(28e9);
  });
  it('the peak is the sum of its items, and the layout gives params, grads and optimizer', () => {
    for (const row of modeRows()) {
      const p = peakOf(placementOf(row.mode, row.device), n({ activationBytes: 3e9, extraGpuParams: 1e8 }));
      const i = p.items;
      expect(p.gpuBytes).toBe(Object.values(i).reduce((a, b) => a + b, 0));
      const sum = (...s: string[]) =>
        p.layout.states.filter((x) => s.includes(x.state)).reduce((a, x) => a + x.gpuBytes, 0);
      expect([i.params, i.grads, i.optimizer]).toEqual([
        sum('params'),
        sum('grads'),
        sum('master', 'momentum', 'variance', 'gradsFp32'),
      ]);
    }
  });
});

describe('CPU per node (hand-derived)', () => {
  it('every rank loads the model in fp32 before sharding, unless ZeRO-3 with zero.Init', () => {
    const l = (p: Placement, zeroInit: boolean) => cpuPerNode(p, n({ zeroInit }), memoryLayout(p, n({ zeroInit })));
    expect(l(stage(2), true).loadBytes).toBe(4 * 4 * P);
    expect(l(stage(3), false).loadBytes).toBe(4 * 4 * P);
    expect(l(stage(3), true).loadBytes).toBe(4 * 4 * 5e7);
  });
  it('offloaded states, pinned copies and swap buffers in training', () => {
    // Stage 2 + CPU optimizer, 4 ranks: 16 T/N of states + the 16-bit partition copy and the staging buffer.
    const s2 = cpuPerNode(stage(2, 'cpu'), n(), memoryLayout(stage(2, 'cpu'), n()));
    expect(s2.steadyBytes).toBe(4 * (4e9 + 0.5e9 + 1e8));
    // Stage 3, both offloaded to CPU: 16-bit params and grads (2 + 2) + 16 bytes of optimizer, per parameter.
    const s3 = cpuPerNode(stage(3, 'cpu', 'cpu'), n(), memoryLayout(stage(3, 'cpu', 'cpu'), n()));
    expect(s3.steadyBytes).toBe(20 * P);
    // NVMe: buffer_count 4 fp32 sub-groups (min(1e9, T/N)) + 5 x 1e8 16-bit parameter buffers per rank, and
    // the 16-bit gradient partitions, pinned on the CPU whenever the optimizer is offloaded.
    const nv = cpuPerNode(stage(3, 'nvme', 'nvme'), n(), memoryLayout(stage(3, 'nvme', 'nvme'), n()));
    expect(nv.steadyBytes).toBe(4 * (16 * 2.5e8 + 2 * 5e8) + 2 * P);
    expect(peakOf(stage(3, 'nvme', 'nvme'), n()).nvmeBytes).toBe(2 * P + 16 * P);
  });
  it('stage 2 with device nvme acts as cpu (DeepSpeed swaps to NVMe only at stage 3)', () => {
    expect(peakOf(stage(2, 'nvme'), n()).cpuBytes).toBe(peakOf(stage(2, 'cpu'), n()).cpuBytes);
    expect(peakOf(stage(2, 'nvme'), n()).nvmeBytes).toBe(0);
  });
});

describe('traffic (hand-derived)', () => {
  it('stages 1-2: reduce-scatter + all-gather of T; stage 3: two all-gathers of P + a reduce-scatter', () => {
    const t1 = memoryLayout(stage(1), n()).traffic;
    expect([t1.reduceScatter, t1.allGather, t1.allReduce]).toEqual([1.5e9, 1.5e9, 0]);
    const t3 = memoryLayout(stage(3), n({ trainableParams: 1e8 })).traffic;
    expect([t3.reduceScatter, t3.allGather]).toEqual([1.5e8, 3e9]);
  });
  it('PCIe with offload: gradients out and parameters back (stage 2), parameters in twice (stage 3 params)', () => {
    expect(memoryLayout(stage(2, 'cpu'), n()).traffic).toMatchObject({ pcieToCpu: 0.5e9, pcieToGpu: 0.5e9 });
    expect(memoryLayout(stage(3, 'cpu', 'cpu'), n()).traffic).toMatchObject({ pcieToCpu: 0.5e9, pcieToGpu: 1e9 });
  });
});

describe('activations (hand-derived, flash attention)', () => {
  const llama: ActivationInput = { ...LLAMA_8B_SHAPE, tokens: 4096, microBatch: 1, checkpointing: 'none' };
  it('values per token per block: attention 4h + 2 kv_dim, MLP 2h + 4f (gated) or 2h + 2f, DiT +6h, cross-attention DiT +4h more', () => {
    expect(elementsPerToken(llama)).toBe(4 * 4096 + 2 * 1024 + 2 * 4096 + 4 * 14336);
    // A GPT block with f = 4h and full attention keeps 16h values = 32h bytes (Korthikanti's 34h less dropout).
    expect(elementsPerToken({ block: 'gpt', hidden: 1024, heads: 16, kvHeads: 16, ffn: 4096 })).toBe(16 * 1024);
    // Joint attention (the text in the sequence): the adaLN modulation adds 6h.
    expect(elementsPerToken({ block: 'mmdit', hidden: 3072, heads: 24, kvHeads: 24, ffn: 12288 })).toBe(
      14 * 3072 + 2 * 12288,
    );
    // Cross-attention: its norm input, the query projection's input, the query and the output projection's input.
    expect(elementsPerToken({ block: 'dit', hidden: 3072, heads: 24, kvHeads: 24, ffn: 12288 })).toBe(
      18 * 3072 + 2 * 12288,
    );
  });
  it('eager attention adds the 5*a*s^2*b score bytes', () => {
    const { attention: _a, ...flash } = { ...llama, attention: 'flash' as const };
    expect(blockBytes({ ...flash, attention: 'eager' }) - blockBytes(flash)).toBe(5 * 32 * 4096 * 4096);
  });
  it('no checkpointing: every block; full: (layers - 1) inputs + one block; logits 10 bytes x vocab x tokens', () => {
    const one = 4096 * elementsPerToken(llama) * 2;
    const none = activationBreakdown(llama);
    // FlashAttention's backward keeps an fp32 dq accumulator for the block it differentiates.
    const workspace = 4 * 4096 * 4096;
    expect(none).toEqual({
      blocksBytes: 32 * one,
      recomputeBytes: 0,
      logitsBytes: LOGITS_BYTES_PER_VOCAB_TOKEN * 128256 * 4096,
      workspaceBytes: workspace,
      totalBytes: 32 * one + 10 * 128256 * 4096 + workspace,
    });
    const full = activationBreakdown({ ...llama, checkpointing: 'full' });
    expect(full.blocksBytes).toBe(31 * 4096 * 4096 * 2);
    expect(full.recomputeBytes).toBe(one);
    expect(activationBreakdown({ ...llama, block: 'dit', vocab: 0 }).logitsBytes).toBe(0);
  });
});

describe('properties over random workloads (seeded)', () => {
  const r = rng(12);
  const samples = Array.from({ length: 400 }, () => {
    const hidden = 256 * randInt(r, 2, 32);
    const heads = hidden / 128;
    const layers = randInt(r, 2, 80);
    const ffn = hidden * randInt(r, 2, 4);
    const params = layers * 12 * hidden * hidden + randInt(r, 0, 5e8);
    const largestLayer = Math.min(params, hidden * ffn);
    return {
      input: {
        params,
        largestLayer,
        gpusPerNode: randInt(r, 1, 8),
        nodes: randInt(r, 1, 4),
        zeroInit: r() < 0.5,
        precision: r() < 0.8 ? ('bf16' as const) : ('fp32' as const),
        extraGpuParams: r() < 0.2 ? randInt(r, 0, 1e9) : 0,
        knobs: { overlapComm: r() < 0.5, reduceBucketElems: randInt(r, 1e6, 5e8) },
        activation: {
          block: (['llama', 'gpt', 'dit'] as const)[randInt(r, 0, 2)]!,
          layers,
          hidden,
          heads,
          kvHeads: heads % 4 === 0 ? heads / [1, 2, 4][randInt(r, 0, 2)]! : heads,
          ffn,
          vocab: r() < 0.5 ? randInt(r, 32000, 160000) : 0,
          tokens: randInt(r, 128, 16384),
          microBatch: randInt(r, 1, 8),
          checkpointing: r() < 0.5 ? ('full' as const) : ('none' as const),
          bytesPerValue: 2,
        },
      } satisfies EstimateInput,
      rank: 2 ** randInt(r, 2, 6),
    };
  });
  const peaks = (input: EstimateInput) => {
    const rep = estimateModes(input);
    return new Map(rep.modes.map((m) => [rowKey(m.mode, m.offloadDevice), m.peak.gpuBytes]));
  };

  it('more GPUs (per node or nodes) never raise the per-GPU peak', () => {
    for (const { input } of samples) {
      const before = peaks(input);
      for (const more of [
        { ...input, gpusPerNode: input.gpusPerNode + 1 },
        { ...input, nodes: input.nodes * 2 },
      ]) {
        for (const [k, v] of peaks(more)) expect(v, `${k} ${JSON.stringify(more)}`).toBeLessThanOrEqual(before.get(k)!);
      }
    }
  });
  it('gradient checkpointing never raises it', () => {
    for (const { input } of samples) {
      const off = peaks({ ...input, activation: { ...input.activation, checkpointing: 'none' } });
      const on = peaks({ ...input, activation: { ...input.activation, checkpointing: 'full' } });
      for (const [k, v] of on) expect(v, k).toBeLessThanOrEqual(off.get(k)!);
    }
  });
  it('LoRA never exceeds full fine-tuning of the same model, save its own 16-bit adapter weights under offload', () => {
    for (const { input, rank } of samples) {
      const h = input.activation.hidden;
      const f = input.activation.ffn;
      const L = input.activation.layers;
      const lora = peaks({
        ...input,
        lora: {
          rank,
          shapes: [
            [h, 3 * h, L],
            [h, h, L],
            [h, f, L],
            [f, h, L],
          ],
        },
      });
      const full = peaks(input);
      // With offload nothing trainable stays on the GPU, while the adapters' own 16-bit weights do (stage 2)
      // or are gathered with a small model (stage 3): there they can outweigh full fine-tuning's staging
      // buffer of its largest parameter, never by more than their weights (+ margin).
      const adapters = normalizeInput({ ...input, lora: { rank, shapes: [[h, 7 * h + 2 * f, L]] } }).trainable;
      const w = input.precision === 'fp32' ? 4 : 2;
      for (const [k, v] of lora) {
        const slack = k.includes('offload') ? Math.ceil(1.1 * w * adapters) : 0;
        expect(v, `${k} rank ${rank}`).toBeLessThanOrEqual(full.get(k)! + slack);
      }
    }
  });
  it('offload never raises the GPU peak (stage 3 always; stages 1-2 while 18 T/N covers the staging buffer)', () => {
    for (const { input } of samples) {
      const nn = normalizeInput(input);
      const p = (mode: '2' | '2-offload' | '3' | '3-offload') =>
        estimatePlacement(placementOf(mode, 'cpu'), nn, mode, mode.endsWith('offload') ? 'cpu' : null).peak.gpuBytes;
      expect(p('3-offload')).toBeLessThanOrEqual(p('3'));
      // DeepSpeed allocates a GPU buffer of the largest trainable parameter for stage 1-2 offload
      // (stage_1_and_2.py temp_grad_buffer_for_gpu_offload): it outweighs the savings only past that point.
      if ((18 * nn.trainable) / nn.totalGpus >= 2 * nn.largestTrainable)
        expect(p('2-offload')).toBeLessThanOrEqual(p('2'));
    }
  });
  it('the exception is real: with many GPUs and one huge parameter, stage-2 offload can use more GPU', () => {
    const nn = normalizeInput({ params: 1e9, largestLayer: 5e8, gpusPerNode: 8, nodes: 16, zeroInit: false });
    const two = estimatePlacement(placementOf('2'), nn, '2', null).peak.gpuBytes;
    const off = estimatePlacement(placementOf('2-offload', 'cpu'), nn, '2-offload', 'cpu').peak.gpuBytes;
    expect(off).toBeGreaterThan(two);
  });
  it('every figure is a non-negative integer', () => {
    for (const { input } of samples.slice(0, 100)) {
      for (const m of estimateModes(input).modes) {
        for (const v of [m.peak.gpuBytes, m.peak.cpuBytes, m.peak.nvmeBytes, ...Object.values(m.peak.items)])
          expect(Number.isSafeInteger(v) && v >= 0, String(v)).toBe(true);
      }
    }
  });
});

describe('the split the ZeRO picture draws (pictureBreakdown)', () => {
  it("gives each state's home, sharding and bytes, equal to the peak's items, and the step's flows", () => {
    for (const row of modeRows()) {
      const placement = placementOf(row.mode, row.device);
      const nn = n({ trainableParams: 4e8 });
      const b = pictureBreakdown(rowKey(row.mode, row.device), placement, nn);
      const p = peakOf(placement, nn);
      const onGpu = (...k: string[]) =>
        b.pieces.filter((x) => x.home === 'gpu' && k.includes(x.kind)).reduce((a, x) => a + x.bytes, 0);
      expect(onGpu('params')).toBe(p.items.params);
      expect(onGpu('grads', 'master', 'momentum', 'variance')).toBe(p.items.grads + p.items.optimizer);
      expect(b.gpuBufferBytes).toBe(p.items.buffers);
      const off = b.pieces.filter((x) => x.home !== 'gpu').reduce((a, x) => a + x.bytes, 0);
      expect(off).toBe(p.layout.states.reduce((a, s) => a + s.cpuBytesPerNode + s.nvmeBytesPerNode, 0));
    }
    const z3o = pictureBreakdown('ZeRO-3 offload', stage(3, 'cpu', 'cpu'), n());
    expect(z3o.pieces.find((x) => x.kind === 'params')).toMatchObject({ home: 'cpu', sharded: true, bytes: 2e9 });
    expect(z3o.traffic.map((f) => `${f.kind}:${f.what}:${f.direction ?? ''}`)).toEqual([
      'reduce-scatter:grads:',
      'all-gather:params:',
      'pcie:grads:out',
      'pcie:params:in',
    ]);
    // Stage 1 keeps the 16-bit gradients whole; DDP's 1x is a ring all-reduce of them.
    const z1 = pictureBreakdown('ZeRO-1', stage(1), n());
    expect(z1.pieces.find((x) => x.kind === 'grads' && x.bytesPerParam === 2)).toMatchObject({ sharded: false });
    expect(z1.ddpBytesPerStep).toBe(3e9);
  });
});
