import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GPU_ID,
  GPU_CATALOG,
  LINK_EFFICIENCY,
  describeInternode,
  findGpu,
  gpuOfSmiName,
  internodeBytesPerS,
  intraNodeLink,
  parseInternode,
  peakFlops,
} from '../../src/estimate/gpus.js';
import { NearMiss } from '../../src/text/suggest.js';

describe('the GPU catalog', () => {
  it('holds the GPUs the issue names, in kebab case, each with its source', () => {
    const ids = GPU_CATALOG.map((g) => g.id);
    for (const id of [
      'a100-40',
      'a100-80',
      'a800',
      'h100-sxm',
      'h100-pcie',
      'h800',
      'h200',
      'b200',
      'l40s',
      'a10',
      'a40',
      'rtx-3090',
      'rtx-4090',
      'a6000',
      'rtx-6000-ada',
      'v100',
      't4',
      'titan-rtx',
      'quadro-rtx-6000',
      'quadro-rtx-8000',
    ])
      expect(ids).toContain(id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const g of GPU_CATALOG) {
      expect(g.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(g.source.length).toBeGreaterThan(30);
      expect(g.fp16Tflops).toBeGreaterThan(g.fp32Tflops);
    }
    expect(ids).toContain(DEFAULT_GPU_ID);
  });
  it('uses dense tensor peaks, not the sparsity figures of the datasheets', () => {
    expect(findGpu('h100-sxm').bf16Tflops).toBeCloseTo(989.4, 1);
    expect(findGpu('a100-80').bf16Tflops).toBe(312);
    expect(findGpu('l40s').bf16Tflops).toBeCloseTo(362.05, 2);
  });
  it('runs bf16 at the FP32 rate on GPUs without BF16 tensor cores (Volta, Turing)', () => {
    const v100 = findGpu('v100');
    expect(v100.bf16Tflops).toBeNull();
    expect(peakFlops(v100, 'bf16')).toBe(15.7e12);
    expect(peakFlops(v100, 'fp16')).toBe(125e12);
  });
  it('recognises nvidia-smi names, the memory deciding between sizes', () => {
    expect(gpuOfSmiName('NVIDIA H100 80GB HBM3')?.id).toBe('h100-sxm');
    expect(gpuOfSmiName('NVIDIA A100-SXM4-40GB')?.id).toBe('a100-40');
    expect(gpuOfSmiName('NVIDIA A100-SXM4-80GB')?.id).toBe('a100-80');
    expect(gpuOfSmiName('NVIDIA A100 something', 80 * 2 ** 30)?.id).toBe('a100-80');
    expect(gpuOfSmiName('NVIDIA A100 something', 40 * 2 ** 30)?.id).toBe('a100-40');
    expect(gpuOfSmiName('NVIDIA GeForce RTX 4090')?.id).toBe('rtx-4090');
    expect(gpuOfSmiName('Tesla V100-SXM2-32GB')?.id).toBe('v100');
    expect(gpuOfSmiName('NVIDIA TITAN RTX')?.id).toBe('titan-rtx');
    expect(gpuOfSmiName('NVIDIA H100 PCIe')?.id).toBe('h100-pcie');
    expect(gpuOfSmiName('Some Other Accelerator')).toBeNull();
  });
  it('refuses an unknown name with the near miss and the list', () => {
    let err: unknown;
    try {
      findGpu('h100sxm');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NearMiss);
    expect((err as NearMiss).near).toContain('h100-sxm');
    expect((err as NearMiss).hint).toContain('a100-80');
  });
});

describe('links', () => {
  it('NVLink: the detected links x the generation per-link speed x the efficiency', () => {
    const a100 = findGpu('a100-80');
    const l = intraNodeLink(a100, { kind: 'nvlink', nvlinks: 12 });
    expect(l.bytesPerS).toBeCloseTo(12 * 25e9 * LINK_EFFICIENCY, 0);
    expect(l.assumed).toBe(false);
    expect(intraNodeLink(findGpu('b200'), { kind: 'nvlink', nvlinks: 18 }).bytesPerS).toBeCloseTo(18 * 50e9 * 0.8, 0);
  });
  it('undetected links: an NVSwitch board for SXM parts, PCIe for cards, each said assumed', () => {
    const sxm = intraNodeLink(findGpu('h100-sxm'), { kind: 'unknown', nvlinks: null });
    expect(sxm.link).toBe('NVLink x18 (assumed)');
    const card = intraNodeLink(findGpu('rtx-4090'), { kind: 'unknown', nvlinks: null });
    expect(card.link).toBe('PCIe 4.0 (assumed)');
    expect(card.bytesPerS).toBeCloseTo(31.5e9 * 0.8, 0);
  });
  it('parses --internode specs, and refuses an unknown one with the near miss', () => {
    expect(parseInternode('ib-ndr')).toMatchObject({ nics: 1, gbitPerNic: 400 });
    expect(parseInternode('8xib-ndr')).toMatchObject({ nics: 8, gbitPerNic: 400 });
    expect(parseInternode('400Gb')).toMatchObject({ nics: 1, gbitPerNic: 400 });
    expect(parseInternode('2x100Gb')).toMatchObject({ nics: 2, gbitPerNic: 100 });
    expect(parseInternode('eth-100g')).toMatchObject({ nics: 1, gbitPerNic: 100 });
    expect(internodeBytesPerS(parseInternode('8xib-ndr'))).toBeCloseTo((8 * 400e9 * 0.8) / 8, 0);
    expect(describeInternode(parseInternode('8xib-ndr'))).toBe('8 x 400 Gb/s per node');
    let err: unknown;
    try {
      parseInternode('ib-nrd');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NearMiss);
    expect((err as NearMiss).near).toContain('ib-ndr');
  });
});

describe('docs/gpus.md', () => {
  it('shows the catalog as `zerowiz estimate --list-gpus` prints it', async () => {
    const { readFileSync } = await import('node:fs');
    const { join, dirname } = await import('node:path');
    const { fileURLToPath } = await import('node:url');
    const { spawnSync } = await import('node:child_process');
    const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
    const r = spawnSync(process.execPath, [join(root, 'dist', 'zerowiz.js'), 'estimate', '--list-gpus'], {
      encoding: 'utf8',
      env: { PATH: join(root, '__tests__', 'fixtures', 'bin-empty'), HOME: process.env.HOME },
    });
    expect(r.status).toBe(0);
    const page = readFileSync(join(root, 'docs', 'gpus.md'), 'utf8');
    expect(page).toContain(r.stdout.trimEnd());
    for (const g of GPU_CATALOG) expect(page).toContain(g.id);
  });
});
