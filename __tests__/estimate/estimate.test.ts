import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MODES } from '../../src/config/modes.js';
import type { Mode } from '../../src/config/modes.js';
import {
  deepspeedRows,
  estimateMode,
  estimateModes,
  normalizeInput,
  zeroPaperBytes,
  EstimateInputError,
} from '../../src/estimate/estimate.js';
import type { DeepSpeedRow, EstimateInput } from '../../src/estimate/estimate.js';
import { randInt, rng } from '../helpers/fixtures.js';

const GiB = 2 ** 30;
const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const toGiB2 = (b: number) => (b / GiB).toFixed(2);

function input(over: Partial<EstimateInput> = {}): EstimateInput {
  return { params: 2851e6, largestLayer: 32e6, gpusPerNode: 8, nodes: 1, zeroInit: true, ...over };
}

describe("DeepSpeed's published check values (docs/code-docs/source/memory.rst)", () => {
  it('reproduces the ZeRO-3 table for 2851M params, 32M largest layer, 1 node x 8 GPUs, to 2 decimals in GiB', () => {
    const zero3 = deepspeedRows(normalizeInput(input())).filter((r) => r.estimator === 'zero3');
    // memory.rst: per CPU | per GPU | options, in the printer's order.
    expect(
      zero3.map((r) => [toGiB2(r.cpuBytes), toGiB2(r.gpuBytes), r.offloadParam, r.offloadOptimizer, r.zeroInit]),
    ).toEqual([
      ['71.69', '0.12', 'cpu', 'cpu', true],
      ['127.45', '0.12', 'cpu', 'cpu', false],
      ['63.72', '0.78', 'none', 'cpu', true],
      ['127.45', '0.78', 'none', 'cpu', false],
      ['1.43', '6.09', 'none', 'none', true],
      ['127.45', '6.09', 'none', 'none', false],
    ]);
  });

  it('modes 3 and 3-offload are the zero3 rows for the zero_init given', () => {
    for (const zeroInit of [true, false]) {
      const rows = deepspeedRows(normalizeInput(input({ zeroInit })));
      const pick = (p: string, o: string) =>
        rows.find(
          (r) => r.estimator === 'zero3' && r.offloadParam === p && r.offloadOptimizer === o && r.zeroInit === zeroInit,
        )!;
      const m3 = estimateMode('3', input({ zeroInit }));
      const m3o = estimateMode('3-offload', input({ zeroInit }));
      expect([m3.gpuBytes, m3.cpuBytes]).toEqual([pick('none', 'none').gpuBytes, pick('none', 'none').cpuBytes]);
      expect([m3o.gpuBytes, m3o.cpuBytes]).toEqual([pick('cpu', 'cpu').gpuBytes, pick('cpu', 'cpu').cpuBytes]);
      expect(m3.zeroInit).toBe(zeroInit);
    }
  });

  it('ZeRO-2 with offload still matches memory.rst (127.45 / 5.31); without offload uses the v0.14.3 formula, not the old 15.93', () => {
    const [offload, none] = deepspeedRows(normalizeInput(input())) as [DeepSpeedRow, DeepSpeedRow];
    expect([toGiB2(offload.cpuBytes), toGiB2(offload.gpuBytes), offload.offloadOptimizer]).toEqual([
      '127.45',
      '5.31',
      'cpu',
    ]);
    // Current: 2P + int(18P/8) = 2P + 6,414,750,000 bytes.
    expect(none.gpuBytes).toBe(2 * 2851e6 + 6_414_750_000);
    expect(toGiB2(none.gpuBytes)).toBe('11.28');
    expect(toGiB2(none.gpuBytes)).not.toBe('15.93');
    expect(toGiB2(none.cpuBytes)).toBe('127.45');
  });

  it("mode 1 (4P + 16P/N) is DeepSpeed's pre-v0.14.3 ZeRO-2 formula, so it lands on memory.rst's old 15.93", () => {
    expect(toGiB2(estimateMode('1', input()).gpuBytes)).toBe('15.93');
  });
});

describe("the ZeRO paper's 7.5B on 64 GPUs example (decimal GB, K = 12)", () => {
  const P = 7.5e9;
  const N = 64;
  it('gives 120, 31.4, 16.6 and 1.9 GB for DDP and stages 1-3', () => {
    const gb = (stage: 0 | 1 | 2 | 3) => Number((zeroPaperBytes(stage, P, N) / 1e9).toFixed(1));
    expect([gb(0), gb(1), gb(2), gb(3)]).toEqual([120, 31.4, 16.6, 1.9]);
  });

  it("the engine's DeepSpeed accounting sits above the paper by the extra 16-bit grad copy it counts", () => {
    const inp = input({ params: P, largestLayer: 0, gpusPerNode: 8, nodes: 8 });
    // Stage 1: 4P + 16P/N vs 4P + 12P/N; stage 2: 2P + 18P/N vs 2P + 14P/N; stage 3 (L = 0): 18P/N vs 16P/N.
    expect(estimateMode('1', inp).gpuBytes - zeroPaperBytes(1, P, N)).toBe((4 * P) / N);
    expect(estimateMode('2', inp).gpuBytes - zeroPaperBytes(2, P, N)).toBe((4 * P) / N);
    expect(estimateMode('3', inp).gpuBytes - zeroPaperBytes(3, P, N)).toBe((2 * P) / N);
  });
});

describe('communication per GPU per step (16-bit ring volume)', () => {
  it('7e9 params on 8 GPUs: stages 1-2 move 2P x 2 B x 7/8 = 24.5 GB, stage 3 3P x 2 B x 7/8 = 36.75 GB', () => {
    const inp = input({ params: 7e9, largestLayer: 0 });
    for (const m of ['1', '2', '2-offload'] as Mode[]) expect(estimateMode(m, inp).commBytesPerStep).toBe(24.5e9);
    for (const m of ['3', '3-offload'] as Mode[]) expect(estimateMode(m, inp).commBytesPerStep).toBe(36.75e9);
  });
  it('is zero with one GPU', () => {
    for (const m of MODES) expect(estimateMode(m, input({ gpusPerNode: 1 })).commBytesPerStep).toBe(0);
  });
  it('offload traffic is 4P/N for 2-offload, 6P/N for 3-offload and 0 without offload', () => {
    const inp = input({ params: 8e9, gpusPerNode: 8 });
    expect(estimateMode('2-offload', inp).offloadBytesPerStep).toBe(4e9);
    expect(estimateMode('3-offload', inp).offloadBytesPerStep).toBe(6e9);
    for (const m of ['1', '2', '3'] as Mode[]) expect(estimateMode(m, inp).offloadBytesPerStep).toBe(0);
  });
});

describe('DeepSpeed rows equal Python evaluating the formulas (fixtures/deepspeed/make_cases.py)', () => {
  const cases = JSON.parse(readFileSync(join(here, 'fixtures', 'deepspeed', 'estimator-cases.json'), 'utf8')) as {
    params: number;
    largestLayer: number;
    gpusPerNode: number;
    nodes: number;
    rows: DeepSpeedRow[];
  }[];
  it('has the cases', () => expect(cases.length).toBeGreaterThan(400));
  it('every row of every case, to the byte, in DeepSpeed order', () => {
    for (const c of cases) {
      const n = normalizeInput({ ...c, zeroInit: true });
      expect(deepspeedRows(n), JSON.stringify(c)).toEqual(c.rows);
    }
  });
  it('modes 2, 2-offload, 3 and 3-offload equal the matching Python rows', () => {
    for (const c of cases) {
      for (const zeroInit of [true, false]) {
        const inp = { ...c, zeroInit };
        const row = (e: string, p: string, o: string, zi: boolean | null) =>
          c.rows.find(
            (r) => r.estimator === e && r.offloadParam === p && r.offloadOptimizer === o && r.zeroInit === zi,
          )!;
        const expectRow = (m: Mode, r: DeepSpeedRow) => {
          // Figures beyond 2^53 bytes are refused (issue 8, item 17); the rest match Python to the byte.
          if (c.rows.some((x) => !Number.isSafeInteger(x.cpuBytes) || !Number.isSafeInteger(x.gpuBytes))) {
            expect(() => estimateModes(inp), JSON.stringify(inp)).toThrow(EstimateInputError);
            return;
          }
          const e = estimateMode(m, inp);
          expect([e.gpuBytes, e.cpuBytes], `${m} ${JSON.stringify(inp)}`).toEqual([r.gpuBytes, r.cpuBytes]);
        };
        expectRow('2', row('zero2', 'none', 'none', null));
        expectRow('2-offload', row('zero2', 'none', 'cpu', null));
        expectRow('3', row('zero3', 'none', 'none', zeroInit));
        expectRow('3-offload', row('zero3', 'cpu', 'cpu', zeroInit));
      }
    }
  });
});

/** A literal transcription of the Python, written separately from src/estimate/estimate.ts. */
function pyRows(P: number, L: number, gpn: number, nodes: number): number[][] {
  const tot = nodes * gpn;
  const gf = 1 / nodes;
  const abf = 1.5;
  const int = Math.trunc;
  return [
    [int(P * Math.max(4 * tot, 16) * abf), 2 * P],
    [int(P * 4 * gpn * abf), 2 * P + int((18 * P) / tot)],
    [int(P * 18 * gf * abf), 4 * L],
    [int(P * Math.max(4 * gpn, 18 * gf) * abf), 4 * L],
    [int(P * 16 * gf * abf), 4 * L + int((2 * P) / tot)],
    [int(P * Math.max(4 * gpn, 16 * gf) * abf), 4 * L + int((2 * P) / tot)],
    [int(L * 4 * gpn * abf), 4 * L + int((18 * P) / tot)],
    [int(P * 4 * gpn * abf), 4 * L + int((18 * P) / tot)],
  ];
}

describe('properties over random inputs (seeded)', () => {
  const r = rng(7);
  const samples = Array.from({ length: 3000 }, () => {
    const params = randInt(r, 1, 2e12);
    return {
      params,
      largestLayer: randInt(r, 0, Math.min(params, 3e9)),
      gpusPerNode: randInt(r, 1, 16),
      nodes: randInt(r, 1, 64),
      zeroInit: r() < 0.5,
    };
  });

  // Inputs whose figures stay below 2^53 bytes; the rest are refused (issue 8, item 17).
  const inRange = samples.filter((s) => {
    try {
      estimateModes(s);
      return true;
    } catch (err) {
      if (!(err instanceof EstimateInputError)) throw err;
      return false;
    }
  });

  it('refuses exactly the inputs whose figures would pass 2^53 bytes', () => {
    expect(inRange.length).toBeGreaterThan(2000);
    for (const s of samples) {
      const unsafe = deepspeedRows(normalizeInput(s)).some((row) => !Number.isSafeInteger(row.cpuBytes));
      if (unsafe) expect(() => estimateModes(s), JSON.stringify(s)).toThrow(/2\^53/);
    }
  });

  it('DeepSpeed rows equal an independent transcription of the Python formulas', () => {
    for (const s of samples) {
      const got = deepspeedRows(normalizeInput(s)).map((row) => [row.cpuBytes, row.gpuBytes]);
      expect(got, JSON.stringify(s)).toEqual(pyRows(s.params, s.largestLayer, s.gpusPerNode, s.nodes));
    }
  });

  it('per-GPU memory never grows with more GPUs per node or more nodes', () => {
    for (const s of inRange.filter((x) => x.gpusPerNode <= 8 && x.nodes <= 56)) {
      for (const m of MODES) {
        const base = estimateMode(m, s).gpuBytes;
        expect(estimateMode(m, { ...s, gpusPerNode: s.gpusPerNode + randInt(r, 1, 8) }).gpuBytes).toBeLessThanOrEqual(
          base,
        );
        expect(estimateMode(m, { ...s, nodes: s.nodes + randInt(r, 1, 8) }).gpuBytes).toBeLessThanOrEqual(base);
      }
    }
  });

  it('offload never raises GPU memory (2-offload <= 2, 3-offload <= 3, NVMe = CPU on the GPU)', () => {
    for (const s of inRange) {
      expect(estimateMode('2-offload', s).gpuBytes).toBeLessThanOrEqual(estimateMode('2', s).gpuBytes);
      expect(estimateMode('3-offload', s).gpuBytes).toBeLessThanOrEqual(estimateMode('3', s).gpuBytes);
      expect(estimateMode('3-offload', s, 'nvme').gpuBytes).toBe(estimateMode('3-offload', s).gpuBytes);
    }
  });

  it('every byte count is a non-negative integer below 2^53', () => {
    for (const s of inRange.slice(0, 300)) {
      const rep = estimateModes(s);
      for (const m of rep.modes) {
        for (const v of [
          m.gpuBytes,
          m.cpuBytes,
          m.commBytesPerStep,
          m.offloadBytesPerStep,
          m.nvmeBytes,
          m.nvmeBytesPerStep,
        ]) {
          expect(Number.isSafeInteger(v) && v >= 0, `${m.mode} ${m.offloadDevice} ${v} ${JSON.stringify(s)}`).toBe(
            true,
          );
        }
      }
    }
  });

  it('communication grows with the stage and never exceeds the paper volume (2P or 3P elements x 2 bytes)', () => {
    for (const s of samples.slice(0, 500)) {
      const c2 = estimateMode('2', s).commBytesPerStep;
      const c3 = estimateMode('3', s).commBytesPerStep;
      expect(c2).toBeLessThanOrEqual(4 * s.params);
      expect(c3).toBeLessThanOrEqual(6 * s.params);
      expect(c3).toBeGreaterThanOrEqual(c2);
    }
  });
});

describe('input validation', () => {
  it.each([
    [{ params: 0 }],
    [{ params: 1.5 }],
    [{ gpusPerNode: 0 }],
    [{ nodes: -1 }],
    [{ largestLayer: 3e9 }],
    [{ params: 2e14 }],
    [{ gpuMemoryBytes: -1 }],
  ])('rejects %j', (over) => {
    expect(() => estimateModes(input(over as Partial<EstimateInput>))).toThrow(EstimateInputError);
  });
});

describe('NVMe rows', () => {
  it('2-offload nvme equals 2-offload cpu and says why', () => {
    const cpu = estimateMode('2-offload', input());
    const nvme = estimateMode('2-offload', input(), 'nvme');
    expect([nvme.gpuBytes, nvme.cpuBytes]).toEqual([cpu.gpuBytes, cpu.cpuBytes]);
    expect(nvme.note).toMatch(/stage 3/);
  });
  it('3-offload nvme: CPU from swap buffers, NVMe space 18P per node (derived formulas in the doc comment)', () => {
    // 20B on 8 GPUs: P/N = 2.5e9 > sub_group_size 1e9, so per rank 16 x 1e9 + 1e9 bytes; x 8 x 1.5.
    const e = estimateMode('3-offload', input({ params: 20e9, largestLayer: 0 }), 'nvme');
    expect(e.cpuBytes).toBe(8 * (16e9 + 1e9) * 1.5);
    expect(e.nvmeBytes).toBe(18 * 20e9);
    expect(e.nvmeBytesPerStep).toBe((30 * 20e9) / 8);
  });
  it('checks NVMe capacity only when the free space is known', () => {
    expect(estimateMode('3-offload', input({ gpuMemoryBytes: 80 * GiB }), 'nvme').nvmeFits).toBeNull();
    const tight = estimateMode('3-offload', input({ gpuMemoryBytes: 80 * GiB, nvmeFreeBytes: 1e9 }), 'nvme');
    expect([tight.nvmeFits, tight.fits]).toEqual([false, false]);
  });
  it('can be left out', () => {
    expect(estimateModes({ ...input(), includeNvme: false }).modes.map((m) => m.mode)).toEqual([...MODES]);
    expect(
      estimateModes(input())
        .modes.filter((m) => m.offloadDevice === 'nvme')
        .map((m) => m.mode),
    ).toEqual(['2-offload', '3-offload']);
  });
});
