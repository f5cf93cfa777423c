/**
 * Calibration: zerowiz's step time against published measurements (__tests__/fixtures/step-time-calibration.json),
 * language models and diffusion transformers apart: the absolute error of every row and the error of the ratio of
 * every pair (the same workload under two modes). The table it computes is the one docs/step-time.md shows (a
 * test below holds the page to it). Goals: on each family the median absolute error within 35% and three rows in
 * four within a factor of two; every pair's ratio within a factor of two. Rows that miss are what the model gets
 * wrong, and the page says why.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { baselineOf, estimatePlacement, normalizeInput } from '../../src/estimate/estimate.js';
import type { EstimateInput } from '../../src/estimate/estimate.js';
import { findGpu, parseInternode } from '../../src/estimate/gpus.js';
import type { BlockKind } from '../../src/estimate/models.js';
import type { StepTimeBand } from '../../src/estimate/time.js';
import type { Interconnect } from '../../src/config/training.js';
import type { Mode } from '../../src/config/modes.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Row {
  id: string;
  family: 'llm' | 'dit';
  source: string;
  quote: string;
  setup: string;
  measured: { stepSeconds: number; range?: [number, number] };
  /** The constant of src/estimate/time.ts this row set (it is then no test of the model). */
  sets?: string;
  /** Why the model misses this row, when it does. */
  knownMiss?: string;
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
    };
    method: 'full' | 'lora';
    trainableParams?: number;
    precision: 'bf16';
    microBatch: number;
    accumulation: number;
    seqLen?: number;
    tokens?: number;
    crossTokens?: number;
    gradientCheckpointing: boolean;
    gpusPerNode: number;
    nodes: number;
    zero: {
      stage: 0 | 1 | 2 | 3;
      optimizer: 'none' | 'cpu' | 'nvme';
      param: 'none' | 'cpu' | 'nvme';
      overlapComm: boolean;
    };
    gpu: string;
    interconnect: Interconnect;
    internode?: string;
    hostCores?: number;
    ompThreads?: number;
  };
}
interface Pair {
  id: string;
  a: string;
  b: string;
  why: string;
  knownMiss?: string;
}

const doc = JSON.parse(readFileSync(join(root, '__tests__', 'fixtures', 'step-time-calibration.json'), 'utf8')) as {
  rows: Row[];
  pairs: Pair[];
  excluded: { source: string; reason: string }[];
};

/** The estimator input of a row (the same fields the CLI and the wizard fill). */
function inputOf(r: Row): EstimateInput {
  const w = r.workload;
  const m = w.model;
  return {
    params: m.params,
    largestLayer: m.largestLayer,
    gpusPerNode: w.gpusPerNode,
    nodes: w.nodes,
    zeroInit: true,
    activation: {
      block: m.block,
      layers: m.layers,
      hidden: m.hidden,
      heads: m.heads,
      kvHeads: m.kvHeads,
      ffn: m.ffn,
      vocab: m.vocab,
      tokens: w.seqLen ?? w.tokens!,
      microBatch: w.microBatch,
      checkpointing: w.gradientCheckpointing ? 'full' : 'none',
      bytesPerValue: 2,
      ...(w.crossTokens ? { crossTokens: w.crossTokens } : {}),
    },
    ...(w.method === 'lora' ? { loraParams: w.trainableParams! } : {}),
    precision: w.precision,
    knobs: { overlapComm: w.zero.overlapComm },
    interconnect: w.interconnect,
    timing: {
      gpu: findGpu(w.gpu),
      accumulation: w.accumulation,
      ...(w.hostCores !== undefined ? { hostCores: w.hostCores } : {}),
      ...(w.ompThreads !== undefined ? { ompThreads: w.ompThreads } : {}),
      ...(w.internode !== undefined ? { internode: parseInternode(w.internode) } : {}),
    },
  };
}

/** zerowiz's step time for a row's placement. */
function predicted(r: Row): StepTimeBand {
  const n = normalizeInput(inputOf(r));
  const z = r.workload.zero;
  if (z.stage === 0) return baselineOf(n).time;
  const offloads = z.optimizer !== 'none' || z.param !== 'none';
  const mode = (
    z.stage === 3 ? (offloads ? '3-offload' : '3') : z.stage === 2 ? (offloads ? '2-offload' : '2') : '1'
  ) as Mode;
  const device = offloads ? (z.optimizer === 'nvme' || z.param === 'nvme' ? 'nvme' : 'cpu') : null;
  return estimatePlacement({ stage: z.stage, optimizer: z.optimizer, param: z.param }, n, mode, device).time;
}

/** Signed relative error of the prediction against the measurement. */
const errorOf = (predictedS: number, measuredS: number) => (predictedS - measuredS) / measuredS;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${Math.round(x * 100)}%`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const s2 = (x: number) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));

const results = doc.rows.map((r) => {
  const t = predicted(r);
  return { row: r, t, error: errorOf(t.stepSeconds, r.measured.stepSeconds) };
});
const pairResults = doc.pairs.map((p) => {
  const a = results.find((x) => x.row.id === p.a)!;
  const b = results.find((x) => x.row.id === p.b)!;
  const measured = b.row.measured.stepSeconds / a.row.measured.stepSeconds;
  const model = b.t.stepSeconds / a.t.stepSeconds;
  return { pair: p, family: a.row.family, measured, model, error: errorOf(model, measured) };
});

/** The calibration table, as docs/step-time.md holds it (markdown). */
function calibrationTable(): string {
  const lines = [
    '| row | family | measured s/step | zerowiz s/step (band) | error | bound |',
    '| --- | --- | ---: | ---: | ---: | --- |',
  ];
  for (const x of results)
    lines.push(
      `| ${x.row.id}${x.row.sets ? ' (sets a constant)' : x.row.knownMiss ? ' (known miss)' : ''} | ${x.row.family} | ${s2(x.row.measured.stepSeconds)} | ${s2(x.t.stepSeconds)} (${s2(x.t.low)}-${s2(x.t.high)}) | ${pct(x.error)} | ${x.t.bound} |`,
    );
  lines.push(
    '',
    '| pair (b / a) | family | measured ratio | zerowiz ratio | error |',
    '| --- | --- | ---: | ---: | ---: |',
  );
  for (const p of pairResults)
    lines.push(
      `| ${p.pair.id}${p.pair.knownMiss ? ' (known miss)' : ''} | ${p.family} | ${p.measured.toFixed(2)} | ${p.model.toFixed(2)} | ${pct(p.error)} |`,
    );
  lines.push(
    '',
    '| family | rows (without those that set a constant) | median abs error | mean abs error | within 2x | pairs | median abs ratio error |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const fam of ['llm', 'dit'] as const) {
    const rs = results.filter((x) => x.row.family === fam && x.row.sets === undefined);
    const ps = pairResults.filter((x) => x.family === fam);
    const abs = rs.map((x) => Math.abs(x.error));
    const within = rs.filter(
      (x) => x.t.stepSeconds <= 2 * x.row.measured.stepSeconds && x.t.stepSeconds >= x.row.measured.stepSeconds / 2,
    ).length;
    lines.push(
      `| ${fam} | ${rs.length} | ${Math.round(median(abs) * 100)}% | ${Math.round((abs.reduce((a, b) => a + b, 0) / abs.length) * 100)}% | ${within}/${rs.length} | ${ps.length} | ${ps.length ? `${Math.round(median(ps.map((p) => Math.abs(p.error))) * 100)}%` : '-'} |`,
    );
  }
  return lines.join('\n');
}

describe('step-time calibration (published measurements)', () => {
  it('every row names its source and says how it was measured', () => {
    expect(doc.rows.length).toBeGreaterThanOrEqual(20);
    for (const r of doc.rows) {
      expect(r.source).toMatch(/^https:\/\//);
      expect(r.quote.length).toBeGreaterThan(10);
      expect(r.setup.length).toBeGreaterThan(40);
    }
    for (const fam of ['llm', 'dit']) expect(doc.rows.some((r) => r.family === fam)).toBe(true);
  });
  it('prints the table', () => {
    console.log(calibrationTable());
  });
  for (const fam of ['llm', 'dit'] as const) {
    it(`${fam}: median absolute error within 35%, three rows in four within a factor of two`, () => {
      const rs = results.filter((x) => x.row.family === fam && x.row.sets === undefined);
      expect(median(rs.map((x) => Math.abs(x.error)))).toBeLessThanOrEqual(0.35);
      const within = rs.filter(
        (x) => x.t.stepSeconds <= 2 * x.row.measured.stepSeconds && x.t.stepSeconds >= x.row.measured.stepSeconds / 2,
      );
      expect(within.length / rs.length).toBeGreaterThanOrEqual(0.75);
    });
  }
  it('every pair not marked a known miss: the ratio of the two modes within a factor of two', () => {
    for (const p of pairResults.filter((x) => x.pair.knownMiss === undefined)) {
      expect(p.model, p.pair.id).toBeLessThanOrEqual(2 * p.measured);
      expect(p.model, p.pair.id).toBeGreaterThanOrEqual(p.measured / 2);
    }
  });
  it('docs/step-time.md shows this table', () => {
    const page = readFileSync(join(root, 'docs', 'step-time.md'), 'utf8');
    expect(page).toContain(calibrationTable());
  });
});
