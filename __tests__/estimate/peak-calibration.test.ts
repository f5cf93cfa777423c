/**
 * Calibration: zerowiz's peak against published measurements (__tests__/fixtures/peak-calibration.json),
 * with DeepSpeed's estimator beside it, language models and diffusion transformers apart. Goals (issues 12 and
 * 23): on the language-model rows zerowiz within ±25% on at least 3 rows of 4 and never further from the
 * measurement than DeepSpeed's estimator (one recorded exception); on every DiT row whose reading is the
 * training's own peak within ±25%; on a row whose reading only bounds the training from above (cache an
 * earlier phase left), zerowiz never more than 25% over it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deepspeedZero2, deepspeedZero3, estimatePlacement, normalizeInput } from '../../src/estimate/estimate.js';
import type { EstimateInput } from '../../src/estimate/estimate.js';
import { NO_ZERO, cudaContextItem, peakOf } from '../../src/estimate/peak.js';
import type { PeakPlacement } from '../../src/estimate/peak.js';
import type { MasterWeights, OptimizerKind } from '../../src/config/training.js';
import type { BlockKind } from '../../src/estimate/models.js';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Row {
  id: string;
  family: 'llm' | 'dit';
  source: string;
  reading: string;
  comparable: 'peak' | 'bound';
  /** Why DeepSpeed's states-only figure happens to be closer on this row (a known miss of the second goal). */
  deepspeedCloser?: string;
  poolBefore?: { gib: number; why: string };
  measured: { gb?: number; gib?: number; gpus?: number; bytesPerGpu: number };
  workload: {
    model: {
      name: string;
      params: number;
      largestLayer: number;
      block: BlockKind;
      layers: number;
      hidden: number;
      heads: number;
      kvHeads: number;
      ffn: number;
      vocab: number;
      residualFp32?: boolean;
      loraModules: Record<string, [number, number, number]>;
    };
    method: 'full' | 'lora';
    /** The trained parameters as a count (rows of scripts/calibrate-gpu.py), instead of LoRA modules. */
    trainableParams?: number;
    precision: 'bf16';
    microBatch: number;
    seqLen?: number;
    tokens?: number;
    crossTokens?: number;
    gradientCheckpointing: boolean;
    gpusPerNode: number;
    nodes: number;
    zero: { stage: 0 | 2 | 3; optimizer: 'none'; param: 'none'; zeroInit: boolean };
    optimizer: { kind: OptimizerKind; fused: boolean; master: MasterWeights };
    lora?: { rank: number; targets: string[] };
    knobs: EstimateInput['knobs'];
    extraGpuParams?: number;
    encoderTransientBytes?: number;
  };
}

const doc = JSON.parse(readFileSync(join(here, 'fixtures', 'peak-calibration.json'), 'utf8')) as {
  rows: Row[];
  excluded: { source: string; reason: string }[];
};

/** The estimator input of a calibration row (the same fields the CLI and the wizard fill). */
function inputOf(r: Row, over: Partial<EstimateInput> = {}): EstimateInput {
  const w = r.workload;
  const m = w.model;
  return {
    params: m.params,
    largestLayer: m.largestLayer,
    gpusPerNode: w.gpusPerNode,
    nodes: w.nodes,
    zeroInit: w.zero.zeroInit,
    precision: w.precision,
    optimizer: w.optimizer.kind,
    masterWeights: w.optimizer.master,
    fusedOptimizer: w.optimizer.fused,
    knobs: w.knobs,
    extraGpuParams: w.extraGpuParams ?? 0,
    encoderTransientBytes: w.encoderTransientBytes ?? 0,
    activation: {
      block: m.block,
      layers: m.layers,
      hidden: m.hidden,
      heads: m.heads,
      kvHeads: m.kvHeads,
      ffn: m.ffn,
      vocab: m.vocab,
      tokens: w.tokens ?? w.seqLen!,
      microBatch: w.microBatch,
      checkpointing: w.gradientCheckpointing ? 'full' : 'none',
      bytesPerValue: 2,
      ...(w.crossTokens ? { crossTokens: w.crossTokens } : {}),
      ...(m.residualFp32 ? { residualBytes: 4 } : {}),
    },
    lora: w.lora ? { rank: w.lora.rank, shapes: w.lora.targets.map((t) => m.loraModules[t]!) } : null,
    ...(w.trainableParams !== undefined && !w.lora
      ? w.method === 'lora'
        ? { loraParams: w.trainableParams, params: m.params - w.trainableParams }
        : { trainableParams: w.trainableParams }
      : {}),
    ...over,
  };
}

function placementOf(r: Row): PeakPlacement {
  return r.workload.zero.stage === 0 ? NO_ZERO : { stage: r.workload.zero.stage, optimizer: 'none', param: 'none' };
}

/** zerowiz's figure as the row was read (PyTorch's reserved memory leaves out the CUDA context and NCCL). */
function zerowizOf(r: Row, over: Partial<EstimateInput> = {}): number {
  const n = normalizeInput(inputOf(r, over));
  const p = placementOf(r);
  const peak =
    p.stage === 0 ? peakOf(p, n).gpuBytes : estimatePlacement(p, n, p.stage === 3 ? '3' : '2', null).peak.gpuBytes;
  return r.reading.startsWith('torch') ? peak - cudaContextItem(n) : peak;
}

/** DeepSpeed's estimator figure for the row's stage (no offload); stage 0 rows take its ZeRO-2 figure on one GPU. */
function deepspeedOf(r: Row): number {
  const n = normalizeInput(inputOf(r));
  return r.workload.zero.stage === 3
    ? deepspeedZero3(n.params, n.largestLayer, n.gpusPerNode, n.nodes, false, false, r.workload.zero.zeroInit)[1]
    : deepspeedZero2(n.params, n.gpusPerNode, n.nodes, false)[1];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

describe('calibration against published measurements', () => {
  const table = doc.rows.map((r) => {
    const zerowiz = zerowizOf(r);
    const deepspeed = deepspeedOf(r);
    const meas = r.measured.bytesPerGpu;
    return {
      id: r.id,
      family: r.family,
      comparable: r.comparable,
      meas,
      zerowiz,
      deepspeed,
      zwErr: (zerowiz - meas) / meas,
      dsErr: (deepspeed - meas) / meas,
      known: r.deepspeedCloser ?? null,
    };
  });
  const gb = (b: number) => (b / 1e9).toFixed(1);
  const lineOf = (t: (typeof table)[number]) =>
    `${t.id.padEnd(36)} ${t.comparable.padEnd(5)} measured ${gb(t.meas).padStart(5)} GB  zerowiz ${gb(t.zerowiz).padStart(5)} (${(t.zwErr * 100).toFixed(0).padStart(4)}%)  DeepSpeed ${gb(t.deepspeed).padStart(5)} (${(t.dsErr * 100).toFixed(0).padStart(4)}%)`;

  it('has sourced rows, each with a link, how it was read and a per-GPU figure that matches the quoted one', () => {
    expect(doc.rows.length).toBeGreaterThanOrEqual(4);
    for (const r of doc.rows) {
      // A published page, or a run of scripts/calibrate-gpu.py on a named GPU.
      expect(r.source).toMatch(/^(https:\/\/|scripts\/calibrate-gpu\.py on )/);
      expect(r.reading.length, r.id).toBeGreaterThan(10);
      if (r.measured.gib !== undefined) expect(r.measured.bytesPerGpu).toBe(Math.round(r.measured.gib * 2 ** 30));
      else expect(r.measured.bytesPerGpu).toBe(Math.round((r.measured.gb! * 1e9) / (r.measured.gpus ?? 1)));
      if (r.measured.gpus !== undefined) expect(r.measured.gpus).toBe(r.workload.gpusPerNode * r.workload.nodes);
      if (r.comparable === 'bound') expect(r.poolBefore?.why.length, r.id).toBeGreaterThan(20);
    }
    expect(doc.excluded.length).toBeGreaterThan(0);
  });

  it('language models: within ±25% on at least 3 rows of 4, and never further than DeepSpeed from the measurement', () => {
    const rows = table.filter((t) => t.family === 'llm');
    const lines = rows.map(lineOf);
    const zwMedian = median(rows.map((t) => Math.abs(t.zwErr)));
    const dsMedian = median(rows.map((t) => Math.abs(t.dsErr)));
    lines.push(
      `LLM median absolute error: zerowiz ${(zwMedian * 100).toFixed(1)}%, DeepSpeed's estimator ${(dsMedian * 100).toFixed(1)}%`,
    );
    console.log(lines.join('\n'));
    const within = rows.filter((t) => Math.abs(t.zwErr) <= 0.25).length;
    expect(within / rows.length, lines.join('\n')).toBeGreaterThanOrEqual(0.75);
    for (const t of rows) {
      // A row where DeepSpeed is closer must say why, and stops being excused once zerowiz is closer.
      if (t.known) expect(Math.abs(t.dsErr), t.id).toBeLessThan(Math.abs(t.zwErr));
      else expect(Math.abs(t.zwErr), t.id).toBeLessThanOrEqual(Math.abs(t.dsErr));
    }
    expect(rows.filter((t) => t.known).length).toBeLessThanOrEqual(1);
    expect(zwMedian).toBeLessThan(dsMedian);
  });

  it('diffusion transformers: every measured peak within ±25%, every bound never exceeded by more than 25%', () => {
    const rows = table.filter((t) => t.family === 'dit');
    const peaks = rows.filter((t) => t.comparable === 'peak');
    const lines = rows.map(lineOf);
    lines.push(
      `DiT median absolute error (peak rows): zerowiz ${(median(peaks.map((t) => Math.abs(t.zwErr))) * 100).toFixed(1)}%, DeepSpeed's estimator ${(median(peaks.map((t) => Math.abs(t.dsErr))) * 100).toFixed(1)}%`,
    );
    console.log(lines.join('\n'));
    expect(peaks.length).toBeGreaterThanOrEqual(3);
    for (const t of peaks) expect(Math.abs(t.zwErr), `${t.id}\n${lines.join('\n')}`).toBeLessThanOrEqual(0.25);
    for (const t of rows.filter((x) => x.comparable === 'bound'))
      expect(t.zwErr, `${t.id}\n${lines.join('\n')}`).toBeLessThanOrEqual(0.25);
    // The rows cover what issue 23 asks: full fine-tunes and LoRA, pure bf16 and mixed, an 8-bit optimizer.
    const w = doc.rows.filter((r) => r.family === 'dit').map((r) => r.workload);
    expect(w.some((x) => x.method === 'full') && w.some((x) => x.method === 'lora')).toBe(true);
    expect(w.some((x) => x.optimizer.master === 'none') && w.some((x) => x.optimizer.master === 'fp32')).toBe(true);
    expect(w.some((x) => x.optimizer.kind === 'adamw-8bit')).toBe(true);
  });

  it("pure bf16 full fine-tunes are what fp32 master weights would overstate by about twice (issue 23's +93% and +116%)", () => {
    for (const id of ['ltx-video-full-pure-bf16', 'cogvideox-5b-full-pure-bf16']) {
      const r = doc.rows.find((x) => x.id === id)!;
      const mixed = zerowizOf(r, { masterWeights: 'fp32' });
      const err = (mixed - r.measured.bytesPerGpu) / r.measured.bytesPerGpu;
      expect(err, id).toBeGreaterThan(0.5);
      expect(Math.abs((zerowizOf(r) - r.measured.bytesPerGpu) / r.measured.bytesPerGpu), id).toBeLessThan(0.25);
    }
  });

  it("torch's foreach AdamW step is what the short sequence missed; at long sequences the freed activations absorb it", () => {
    // LTX-Video at 2,688 tokens: the activations are small, so the step's copy of a moment sets the peak.
    const ltx = doc.rows.find((x) => x.id === 'ltx-video-full-pure-bf16')!;
    const ltxFused = zerowizOf(ltx, { fusedOptimizer: true });
    expect((ltxFused - ltx.measured.bytesPerGpu) / ltx.measured.bytesPerGpu).toBeLessThan(-0.15);
    // CogVideoX at 17,776 tokens: the step reuses the activations' memory and adds only the rest.
    const cog = doc.rows.find((x) => x.id === 'cogvideox-5b-full-pure-bf16')!;
    const n = normalizeInput(inputOf(cog));
    const items = peakOf(NO_ZERO, n).items;
    expect(items.optimizerStep).toBe(2 * cog.workload.model.params - items.activations);
  });
});
