/**
 * Calibration: zerowiz's peak against published measurements (__tests__/fixtures/peak-calibration.json),
 * with DeepSpeed's estimator beside it. Goals (issue 12): zerowiz within ±25% of the measured peak on at
 * least 3 cases of 4, and never further from the measurement than DeepSpeed's estimator.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deepspeedZero2, deepspeedZero3, estimatePlacement, normalizeInput } from '../src/estimate/estimate.js';
import type { EstimateInput } from '../src/estimate/estimate.js';
import type { Placement } from '../src/config/modes.js';

const here = dirname(fileURLToPath(import.meta.url));

interface Row {
  id: string;
  source: string;
  /** Why DeepSpeed's states-only figure happens to be closer on this row (a known miss of the second goal). */
  deepspeedCloser?: string;
  measured: { gb: number; gpus: number; bytesPerGpu: number };
  workload: {
    model: {
      name: string;
      params: number;
      largestLayer: number;
      block: 'llama';
      layers: number;
      hidden: number;
      heads: number;
      kvHeads: number;
      ffn: number;
      vocab: number;
      loraModules: Record<string, [number, number, number]>;
    };
    method: 'full' | 'lora';
    precision: 'bf16';
    microBatch: number;
    seqLen: number;
    gradientCheckpointing: boolean;
    gpusPerNode: number;
    nodes: number;
    zero: { stage: 2 | 3; optimizer: 'none'; param: 'none'; zeroInit: boolean };
    lora?: { rank: number; targets: string[] };
    knobs: EstimateInput['knobs'];
  };
}

const doc = JSON.parse(readFileSync(join(here, 'fixtures', 'peak-calibration.json'), 'utf8')) as {
  rows: Row[];
  excluded: { source: string; reason: string }[];
};

/** The estimator input of a calibration row (the same fields the CLI and the wizard fill). */
function inputOf(r: Row): EstimateInput {
  const w = r.workload;
  const m = w.model;
  return {
    params: m.params,
    largestLayer: m.largestLayer,
    gpusPerNode: w.gpusPerNode,
    nodes: w.nodes,
    zeroInit: w.zero.zeroInit,
    precision: w.precision,
    knobs: w.knobs,
    activation: {
      block: m.block,
      layers: m.layers,
      hidden: m.hidden,
      heads: m.heads,
      kvHeads: m.kvHeads,
      ffn: m.ffn,
      vocab: m.vocab,
      tokens: w.seqLen,
      microBatch: w.microBatch,
      checkpointing: w.gradientCheckpointing ? 'full' : 'none',
      bytesPerValue: 2,
    },
    lora: w.lora ? { rank: w.lora.rank, shapes: w.lora.targets.map((t) => m.loraModules[t]!) } : null,
  };
}

/** zerowiz's peak per GPU for a row, and DeepSpeed's estimator figure for the same stage (no offload). */
function figures(r: Row): { zerowiz: number; deepspeed: number } {
  const n = normalizeInput(inputOf(r));
  const placement: Placement = { stage: r.workload.zero.stage, optimizer: 'none', param: 'none' };
  const mode = r.workload.zero.stage === 3 ? '3' : '2';
  const zerowiz = estimatePlacement(placement, n, mode, null).peak.gpuBytes;
  const deepspeed =
    r.workload.zero.stage === 3
      ? deepspeedZero3(n.params, n.largestLayer, n.gpusPerNode, n.nodes, false, false, r.workload.zero.zeroInit)[1]
      : deepspeedZero2(n.params, n.gpusPerNode, n.nodes, false)[1];
  return { zerowiz, deepspeed };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

describe('calibration against published measurements', () => {
  const table = doc.rows.map((r) => {
    const { zerowiz, deepspeed } = figures(r);
    const meas = r.measured.bytesPerGpu;
    return {
      id: r.id,
      meas,
      zerowiz,
      deepspeed,
      zwErr: (zerowiz - meas) / meas,
      dsErr: (deepspeed - meas) / meas,
      known: r.deepspeedCloser ?? null,
    };
  });

  it('has sourced rows, each with a link and a per-GPU figure that matches the quoted total', () => {
    expect(doc.rows.length).toBeGreaterThanOrEqual(4);
    for (const r of doc.rows) {
      expect(r.source).toMatch(/^https:\/\//);
      expect(r.measured.bytesPerGpu).toBe(Math.round((r.measured.gb * 1e9) / r.measured.gpus));
      expect(r.measured.gpus).toBe(r.workload.gpusPerNode * r.workload.nodes);
    }
    expect(doc.excluded.length).toBeGreaterThan(0);
  });

  it('zerowiz is within ±25% on at least 3 rows of 4, and never further than DeepSpeed from the measurement', () => {
    const gb = (b: number) => (b / 1e9).toFixed(1);
    const lines = table.map(
      (t) =>
        `${t.id.padEnd(34)} measured ${gb(t.meas).padStart(5)} GB  zerowiz ${gb(t.zerowiz).padStart(5)} (${(t.zwErr * 100).toFixed(0).padStart(4)}%)  DeepSpeed ${gb(t.deepspeed).padStart(5)} (${(t.dsErr * 100).toFixed(0).padStart(4)}%)`,
    );
    const zwMedian = median(table.map((t) => Math.abs(t.zwErr)));
    const dsMedian = median(table.map((t) => Math.abs(t.dsErr)));
    lines.push(
      `median absolute error: zerowiz ${(zwMedian * 100).toFixed(1)}%, DeepSpeed's estimator ${(dsMedian * 100).toFixed(1)}%`,
    );
    console.log(lines.join('\n'));
    const within = table.filter((t) => Math.abs(t.zwErr) <= 0.25).length;
    expect(within / table.length, lines.join('\n')).toBeGreaterThanOrEqual(0.75);
    for (const t of table) {
      // A row where DeepSpeed is closer must say why, and stops being excused once zerowiz is closer.
      if (t.known) expect(Math.abs(t.dsErr), t.id).toBeLessThan(Math.abs(t.zwErr));
      else expect(Math.abs(t.zwErr), t.id).toBeLessThanOrEqual(Math.abs(t.dsErr));
    }
    expect(table.filter((t) => t.known).length).toBeLessThanOrEqual(1);
    expect(zwMedian).toBeLessThan(dsMedian);
  });
});
