import { mkdtempSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  describeGpus,
  describeInterconnect,
  detectCpuMemory,
  detectGpus,
  detectHost,
  detectInterconnect,
  nvmeFreeBytes,
  parseNvidiaSmiCsv,
  parseTopology,
} from '../../src/machine/detect.js';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const FAKE_BIN = join(here, 'fixtures', 'bin-nvidia');
const EMPTY_BIN = join(here, 'fixtures', 'bin-empty');
const MiB = 2 ** 20;

/** The child's whole environment: PATH only has the stand-in (or nothing); process.env is untouched. */
const env = (variant: string | null): NodeJS.ProcessEnv =>
  variant === null ? { PATH: EMPTY_BIN } : { PATH: FAKE_BIN, ZW_FAKE_NVIDIA_SMI: variant };

describe('parseNvidiaSmiCsv', () => {
  it('reads index, name and MiB', () => {
    expect(parseNvidiaSmiCsv('0, NVIDIA H100 80GB HBM3, 81559\n1, NVIDIA H100 80GB HBM3, 81559\n')).toEqual([
      { index: 0, name: 'NVIDIA H100 80GB HBM3', memoryBytes: 81559 * MiB },
      { index: 1, name: 'NVIDIA H100 80GB HBM3', memoryBytes: 81559 * MiB },
    ]);
  });
  it('rejects lines that are not the query format', () => {
    expect(() => parseNvidiaSmiCsv('No devices were found')).toThrow(/unexpected/);
    expect(() => parseNvidiaSmiCsv('0, GPU, [N/A]')).toThrow(/unexpected/);
  });
});

describe('detectGpus with a stand-in nvidia-smi on PATH', () => {
  it('one GPU', async () => {
    const d = await detectGpus({ env: env('1') });
    expect(d).toEqual({
      detected: true,
      gpus: [{ index: 0, name: 'NVIDIA A100-SXM4-80GB', memoryBytes: 81920 * MiB }],
      mixed: false,
      minMemoryBytes: 81920 * MiB,
      reason: null,
    });
    expect(describeGpus(d)).toBe('1 x NVIDIA A100-SXM4-80GB (80.0 GiB)');
  });
  it('eight GPUs', async () => {
    const d = await detectGpus({ env: env('8') });
    expect(d.detected).toBe(true);
    expect(d.gpus.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(d.mixed).toBe(false);
    expect(d.minMemoryBytes).toBe(81559 * MiB);
    expect(describeGpus(d)).toBe('8 x NVIDIA H100 80GB HBM3 (79.6 GiB)');
  });
  it('mixed GPUs are reported and sized by the smallest', async () => {
    const d = await detectGpus({ env: env('mixed') });
    expect(d.mixed).toBe(true);
    expect(d.gpus.map((g) => g.name)).toEqual([
      'NVIDIA GeForce RTX 4090',
      'NVIDIA GeForce RTX 3090',
      'NVIDIA RTX A6000',
    ]);
    expect(d.minMemoryBytes).toBe(24564 * MiB);
    expect(describeGpus(d)).toMatch(
      /^mixed GPUs: 1 x NVIDIA GeForce RTX 4090 .* \+ 1 x NVIDIA RTX A6000 \(48\.0 GiB\); sizing for the smallest$/,
    );
  });
  it('a failing nvidia-smi is "not detected" with its first line, not a crash', async () => {
    const d = await detectGpus({ env: env('fail') });
    expect(d.detected).toBe(false);
    expect(d.gpus).toEqual([]);
    expect(d.reason).toMatch(/^nvidia-smi failed \(exit 9\): NVIDIA-SMI has failed/);
  });
  it('unparsable output is "not detected"', async () => {
    const d = await detectGpus({ env: env('garbage') });
    expect([d.detected, d.reason]).toEqual([false, 'unexpected nvidia-smi line: No devices were found']);
  });
  it('a missing nvidia-smi is "not detected"', async () => {
    const d = await detectGpus({ env: env(null) });
    expect([d.detected, d.reason, d.minMemoryBytes]).toEqual([false, 'nvidia-smi not found on PATH', null]);
    expect(describeGpus(d)).toBe('GPUs not detected (nvidia-smi not found on PATH)');
  });
  it('a hanging nvidia-smi times out as "not detected"', async () => {
    const d = await detectGpus({ env: env('slow'), timeoutMs: 300 });
    expect(d.detected).toBe(false);
    expect(d.reason).toMatch(/did not answer within 300 ms/);
  });
});

describe('host memory and NVMe space', () => {
  it('CPU memory is the OS figure', () => {
    expect(detectCpuMemory()).toBe(totalmem());
  });
  it('free space at a real folder is a positive byte count; at a missing one null', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-nvme-'));
    const free = await nvmeFreeBytes(dir);
    expect(free).not.toBeNull();
    expect(Number.isInteger(free) && free! > 0).toBe(true);
    expect(await nvmeFreeBytes(join(dir, 'does', 'not', 'exist'))).toBeNull();
  });
  it('detectHost puts it together', async () => {
    const h = await detectHost({ env: env('8'), nvmePath: tmpdir() });
    expect(h.gpu.gpus).toHaveLength(8);
    expect(h.cpuMemoryBytes).toBe(totalmem());
    expect(h.nvmePath).toBe(tmpdir());
    expect(h.nvmeFreeBytes).toBeGreaterThan(0);
  });
});

describe('nvidia-smi topo -m: how the GPUs are linked', () => {
  // A 4 x A100 PCIe box as nvidia-smi prints it: tab-separated, ' X ' on the diagonal, the legend after.
  const pcie = [
    '\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID',
    'GPU0\t X \tPXB\tSYS\tSYS\t0-31\t0\t\tN/A',
    'GPU1\tPXB\t X \tSYS\tSYS\t0-31\t0\t\tN/A',
    'GPU2\tSYS\tSYS\t X \tPXB\t32-63\t1\t\tN/A',
    'GPU3\tSYS\tSYS\tPXB\t X \t32-63\t1\t\tN/A',
    '',
    'Legend:',
    '',
    '  X    = Self',
    '  NV#  = Connection traversing a bonded set of # NVLinks',
  ].join('\n');
  it('reads NVLink with the smallest link count, PCIe when a pair has none, unknown for one GPU or other text', () => {
    const nv = pcie.replace(/PXB|SYS/g, 'NV12').replace('GPU3\tNV12\tNV12\tNV12', 'GPU3\tNV12\tNV12\tNV6');
    expect(parseTopology(nv)).toEqual({ kind: 'nvlink', nvlinks: 6 });
    expect(parseTopology(pcie)).toEqual({ kind: 'pcie', nvlinks: null });
    expect(parseTopology('\tGPU0\tCPU Affinity\nGPU0\t X \t0-31\n')).toEqual({ kind: 'unknown', nvlinks: null });
    expect(parseTopology('No devices were found')).toEqual({ kind: 'unknown', nvlinks: null });
    // Copies pasted without the header's leading tab still line up.
    expect(parseTopology(nv.replace(/^\t/, ''))).toEqual({ kind: 'nvlink', nvlinks: 6 });
  });
  it('runs the stand-in: NV18 on the 8 x H100 node (its NIC columns ignored), PCIe on the mixed box', async () => {
    expect(await detectInterconnect({ env: env('8') })).toEqual({ kind: 'nvlink', nvlinks: 18 });
    expect(await detectInterconnect({ env: env('mixed') })).toEqual({ kind: 'pcie', nvlinks: null });
    expect(await detectInterconnect({ env: env('fail') })).toEqual({ kind: 'unknown', nvlinks: null });
    expect(await detectInterconnect({ env: env(null) })).toEqual({ kind: 'unknown', nvlinks: null });
    expect(describeInterconnect({ kind: 'nvlink', nvlinks: 18 })).toBe('GPUs linked by NVLink x18');
  });
  it('detectHost asks only when told to and when there is more than one GPU', async () => {
    expect((await detectHost({ env: env('8'), topology: true })).interconnect).toEqual({ kind: 'nvlink', nvlinks: 18 });
    expect((await detectHost({ env: env('8') })).interconnect.kind).toBe('unknown');
    expect((await detectHost({ env: env('1'), topology: true })).interconnect.kind).toBe('unknown');
  });
});
