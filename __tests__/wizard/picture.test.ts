import { describe, expect, it } from 'vitest';
import {
  drawPicture,
  pictureText,
  type Home,
  type Picture,
  type StatePiece,
  type ZeroBreakdown,
} from '../../src/wizard/picture.js';
import { formatBytesCompact } from '../../src/text/format.js';

/**
 * A breakdown from the ZeRO paper's formulas (Rajbhandari et al. 2020, fig. 1 and sec. 5; mixed-precision
 * Adam, K = 12): 2 bytes/param fp16 params, 2 fp16 grads, 4+4+4 fp32 master, momentum, variance; stage 1
 * shards the optimizer states over Nd, stage 2 the gradients too, stage 3 the parameters too. Offload
 * (ZeRO-Offload) moves the gradients and optimizer states, at stage 3 the parameters too, to the CPU.
 * Communication per GPU per step in ring volume: DDP all-reduce 2 x 2P x (Nd-1)/Nd bytes; stages 1-2 the
 * same as reduce-scatter + all-gather; stage 3 1.5x.
 */
function paper(stage: 0 | 1 | 2 | 3, P: number, gpusPerNode: number, nodes = 1, offload: Home = 'gpu'): ZeroBreakdown {
  const n = gpusPerNode * nodes;
  const piece = (kind: StatePiece['kind'], bpp: number, sharded: boolean, home: Home): StatePiece => {
    const total = bpp * P;
    const perRank = sharded ? total / n : total;
    return {
      kind,
      bytesPerParam: bpp,
      totalBytes: total,
      home,
      sharded,
      bytes: home === 'gpu' ? perRank : perRank * gpusPerNode,
    };
  };
  const off = (k: 'grads' | 'params' | 'opt'): Home =>
    offload === 'gpu' || (k === 'params' && stage < 3) ? 'gpu' : offload === 'nvme' && k === 'grads' ? 'cpu' : offload;
  const ring = (elements: number) => (2 * elements * (n - 1)) / n;
  const traffic: ZeroBreakdown['traffic'] =
    stage === 0
      ? [{ kind: 'all-reduce', what: 'grads', bytesPerStep: 2 * ring(P) }]
      : stage < 3
        ? [
            { kind: 'reduce-scatter', what: 'grads', bytesPerStep: ring(P) },
            { kind: 'all-gather', what: 'params', bytesPerStep: ring(P) },
          ]
        : [
            { kind: 'all-gather', what: 'params', bytesPerStep: ring(P), when: 'forward' },
            { kind: 'all-gather', what: 'params', bytesPerStep: ring(P), when: 'backward' },
            { kind: 'reduce-scatter', what: 'grads', bytesPerStep: ring(P) },
          ];
  if (offload !== 'gpu') {
    traffic.push({ kind: 'pcie', what: 'grads', bytesPerStep: (2 * P) / n, direction: 'out' });
    traffic.push({ kind: 'pcie', what: 'params', bytesPerStep: ((stage === 3 ? 4 : 2) * P) / n, direction: 'in' });
  }
  return {
    label: `ZeRO-${stage}${offload !== 'gpu' ? ' offload' : ''}`,
    gpusPerNode,
    nodes,
    pieces: [
      piece('params', 2, stage >= 3, off('params')),
      piece('grads', 2, stage >= 2, off('grads')),
      piece('master', 4, stage >= 1, off('opt')),
      piece('momentum', 4, stage >= 1, off('opt')),
      piece('variance', 4, stage >= 1, off('opt')),
    ],
    traffic,
    ddpBytesPerStep: 2 * ring(P),
  };
}

const QWEN = 20_430_401_088;
const text = (p: Picture) => pictureText(p);
/** The cells of column `col` (0 = params) in a row, between the │ separators. */
const column = (line: string, col: number) => line.split('│')[col + 1] ?? '';
const gpuLines = (p: Picture) => text(p).filter((l) => /^GPU \d+/.test(l));
const held = (cells: string) => [...cells].map((c, i) => (c === '█' ? i : -1)).filter((i) => i >= 0);

const CASES = [
  ['DDP', paper(0, QWEN, 8)],
  ['ZeRO-1', paper(1, QWEN, 8)],
  ['ZeRO-2', paper(2, QWEN, 8)],
  ['ZeRO-2 offload', paper(2, QWEN, 8, 1, 'cpu')],
  ['ZeRO-3', paper(3, QWEN, 8)],
  ['ZeRO-3 offload', paper(3, QWEN, 8, 1, 'cpu')],
  ['ZeRO-3 NVMe', paper(3, QWEN, 8, 1, 'nvme')],
] as const;

describe('the ZeRO picture: figure 1 of the paper for this model', () => {
  it.each(CASES)('%s fits 80x20 (the body of an 80x24 terminal) and 160x40', (_name, b) => {
    for (const [width, height] of [
      [80, 20],
      [160, 40],
    ] as const) {
      const lines = text(drawPicture(b, { width, height, color: false }));
      expect(lines.length).toBeLessThanOrEqual(height);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
      expect(gpuLines(drawPicture(b, { width, height, color: false }))).toHaveLength(8);
    }
  });

  it.each(CASES)('%s: its numbers are the breakdown’s, per GPU and per node', (_name, b) => {
    const p = drawPicture(b, { width: 80, height: 20, color: false });
    const lines = text(p);
    const each = lines.find((l) => l.startsWith('each GPU'))!;
    const gpu = b.pieces.filter((x) => x.home === 'gpu');
    expect(p.figures.filter((f) => f.row === 'gpu' && f.kind !== 'total').map((f) => [f.kind, f.bytes])).toEqual(
      gpu.map((x) => [x.kind, x.bytes]),
    );
    b.pieces.forEach((x, i) => {
      expect(column(each, i).trim()).toBe(x.home === 'gpu' ? formatBytesCompact(x.bytes) : '-');
    });
    const total = gpu.reduce((s, x) => s + x.bytes, 0);
    expect(p.figures.find((f) => f.row === 'gpu' && f.kind === 'total')?.bytes).toBe(total);
    expect(each.endsWith(formatBytesCompact(total))).toBe(true);
    for (const home of ['cpu', 'nvme'] as const) {
      const there = b.pieces.filter((x) => x.home === home);
      const perNode = lines.find(
        (l, i) => l.startsWith('per node') && lines[i - 1]?.startsWith(home === 'cpu' ? 'CPU' : 'NVMe'),
      );
      if (there.length === 0) {
        expect(perNode).toBeUndefined();
        continue;
      }
      b.pieces.forEach((x, i) => {
        if (x.home === home) expect(column(perNode!, i).trim()).toBe(formatBytesCompact(x.bytes));
      });
    }
    for (const f of b.traffic) expect(lines.join(' ')).toContain(formatBytesCompact(f.bytesPerStep));
  });

  it('draws a sharded piece as 1/N slices: each GPU holds its own, together they cover the piece', () => {
    const p = drawPicture(paper(3, QWEN, 8), { width: 80, height: 20, color: false });
    for (let col = 0; col < 5; col++) {
      const cells = gpuLines(p).map((l) => held(column(l, col)));
      const width = column(gpuLines(p)[0]!, col).length;
      expect(cells.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: width }, (_, i) => i));
      expect(new Set(cells.flat()).size).toBe(width); // disjoint
      for (const c of cells) expect(c.length).toBeGreaterThan(0); // every GPU holds a slice
      // GPU g's slice lies left of GPU g+1's, as ranks do.
      for (let g = 1; g < cells.length; g++) expect(Math.min(...cells[g]!)).toBeGreaterThan(Math.max(...cells[g - 1]!));
    }
  });

  it('draws a replicated piece whole on every GPU and an offloaded one on the CPU side only', () => {
    const z1 = drawPicture(paper(1, QWEN, 8), { width: 80, height: 20, color: false });
    for (const l of gpuLines(z1)) {
      expect(column(l, 0)).toMatch(/^█+$/); // params: every GPU keeps all of them
      expect(column(l, 1)).toMatch(/^█+$/);
      expect(column(l, 2)).toMatch(/^[█·]+$/);
    }
    const z3o = drawPicture(paper(3, QWEN, 8, 1, 'cpu'), { width: 80, height: 20, color: false });
    for (const l of gpuLines(z3o)) for (let col = 0; col < 5; col++) expect(column(l, col).trim()).toBe('');
    const cpu = text(z3o).find((l) => l.startsWith('CPU'))!;
    for (let col = 0; col < 5; col++) expect(column(cpu, col)).toMatch(/^█+$/); // one node holds all 8 slices
    expect(text(z3o).join(' ')).toMatch(/↕ GPU↔CPU↔NVMe, per GPU per step: grads GPU→CPU .* · params CPU→GPU/);
  });

  it('labels the traffic with its kind and what 1x DDP is', () => {
    const lines = text(drawPicture(paper(3, QWEN, 8), { width: 80, height: 20, color: false })).join(' ');
    expect(lines).toMatch(/all-gather params \(fwd\) 33\.3 GiB/);
    const wide = text(drawPicture(paper(3, QWEN, 8), { width: 160, height: 40, color: false })).join(' ');
    expect(wide).toMatch(/all-gather params \(backward\) 33\.3 GiB/);
    expect(lines).toMatch(/reduce-scatter grads/);
    expect(lines).toMatch(/\(1\.5x DDP; 1x = 66\.6 GiB\)/);
    const ddp = text(drawPicture(paper(0, QWEN, 8), { width: 80, height: 20, color: false })).join(' ');
    expect(ddp).toMatch(/all-reduce grads 66\.6 GiB = 66\.6 GiB \(1x DDP/);
  });

  it("the paper's own example, 7.5B params on 64 GPUs: 120 GB per GPU for DDP, 1.9 GB for stage 3", () => {
    const P = 7.5e9;
    const ddp = drawPicture(paper(0, P, 8, 8), { width: 80, height: 20, color: false });
    expect(ddp.figures.find((f) => f.row === 'gpu' && f.kind === 'total')?.bytes).toBe(120e9);
    const z3 = drawPicture(paper(3, P, 8, 8), { width: 80, height: 20, color: false });
    expect(z3.figures.find((f) => f.row === 'gpu' && f.kind === 'total')?.bytes).toBe(1.875e9);
    // 64 GPUs do not fit 20 rows: the first ones, a line for the rest, and the last.
    const lines = text(z3);
    expect(lines.length).toBeLessThanOrEqual(20);
    expect(lines.some((l) => /^… \d+ more GPUs, the same, each with its own slice \(x 64 in all\)/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('GPU 63 n7'))).toBe(true);
    expect(lines.some((l) => l.startsWith('GPU 0 n0'))).toBe(true);
  });

  it('uses 160 columns for wider slices and full names', () => {
    const narrow = drawPicture(paper(3, QWEN, 8), { width: 80, height: 20, color: false });
    const wide = drawPicture(paper(3, QWEN, 8), { width: 160, height: 40, color: false });
    const w = (p: Picture) => column(gpuLines(p)[0]!, 0).length;
    expect(w(wide)).toBeGreaterThanOrEqual(2 * w(narrow));
    expect(text(wide).join('\n')).toContain('fp32 master weights');
    expect(Math.max(...text(wide).map((l) => l.length))).toBeGreaterThan(150);
  });

  it('carries colour roles only when colour is on; the glyphs alone tell the story without it', () => {
    const b = paper(2, QWEN, 8, 1, 'cpu');
    const plain = drawPicture(b, { width: 80, height: 20, color: false });
    expect(plain.lines.flat().every((s) => s.role === null)).toBe(true);
    const coloured = drawPicture(b, { width: 80, height: 20, color: true });
    const roles = new Set(coloured.lines.flat().map((s) => s.role));
    for (const r of ['params', 'master', 'dim', 'title', 'traffic']) expect(roles.has(r as never)).toBe(true);
    expect(pictureText(coloured)).toEqual(pictureText(plain));
  });
});
