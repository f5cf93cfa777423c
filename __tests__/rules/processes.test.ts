import { describe, expect, it } from 'vitest';
import type { HostDetection } from '../../src/machine/detect.js';
import { envFromDetection, processFindings, processPlan } from '../../src/rules/processes.js';

const GiB = 2 ** 30;
const host = (n: number): HostDetection => ({
  gpu: {
    detected: n > 0,
    gpus: Array.from({ length: n }, (_, index) => ({ index, name: 'NVIDIA H100 80GB HBM3', memoryBytes: 80 * GiB })),
    mixed: false,
    minMemoryBytes: n > 0 ? 80 * GiB : null,
    reason: n > 0 ? null : 'nvidia-smi not found on PATH',
  },
  cpuMemoryBytes: 1024 * GiB,
  cpuCores: 96,
  nvmePath: null,
  nvmeFreeBytes: null,
  interconnect: { kind: 'unknown', nvlinks: null },
});

describe('what detection gives the answers', () => {
  it("the GPU catalog's name for nvidia-smi's GPU and the host's cores, for the step time", () => {
    expect(envFromDetection(host(8))).toMatchObject({ gpuModel: 'h100-sxm', cpuCores: 96 });
    expect(envFromDetection(host(0)).gpuModel).toBeUndefined();
  });
});

describe('the number of processes', () => {
  it('without --num-processes: the detected GPUs times the machines (not 1 with 8 GPUs detected)', () => {
    expect(processPlan({}, envFromDetection(host(8)))).toEqual({ numProcesses: 8, source: 'detected', findings: [] });
    expect(processPlan({ num_machines: 2 }, envFromDetection(host(8)))).toMatchObject({
      numProcesses: 16,
      source: 'detected',
    });
    expect(processPlan({}, envFromDetection(host(0)))).toMatchObject({ numProcesses: 1, source: 'fallback' });
  });

  it('a given count wins; more per machine than GPUs here is a finding naming the fix', () => {
    expect(processPlan({ num_processes: 4 }, envFromDetection(host(8)))).toEqual({
      numProcesses: 4,
      source: 'given',
      findings: [],
    });
    const p = processPlan({ num_processes: 16 }, envFromDetection(host(8)));
    expect(p.numProcesses).toBe(16);
    expect(p.findings).toHaveLength(1);
    expect(p.findings[0]).toMatchObject({
      level: 'warning',
      rule: 'more-processes-than-gpus',
      questions: ['num_processes', 'num_machines'],
    });
    expect(p.findings[0]!.message).toMatch(/starts 16 processes per machine, but this machine has 8 GPUs/);
    expect(p.findings[0]!.fix).toMatch(/set num_processes to 8 \(8 GPUs x 1 machine\)/);
  });

  it('counts per machine: 16 over 2 machines of 8 is fine, 17 is not; nothing is said without detection', () => {
    expect(processFindings(16, 2, 8)).toEqual([]);
    expect(processFindings(17, 2, 8)).toHaveLength(1);
    expect(processFindings(64, 1, null)).toEqual([]);
  });

  it('turns detection into the defaults the questions use', () => {
    const interconnect = { kind: 'unknown', nvlinks: null };
    expect(envFromDetection(host(8))).toEqual({
      gpuCount: 8,
      gpuMemoryBytes: 80 * GiB,
      cpuMemoryBytes: 1024 * GiB,
      interconnect,
      gpuModel: 'h100-sxm',
      cpuCores: 96,
    });
    expect(envFromDetection(host(0))).toEqual({
      gpuCount: null,
      gpuMemoryBytes: null,
      cpuMemoryBytes: 1024 * GiB,
      interconnect,
      cpuCores: 96,
    });
  });
});
