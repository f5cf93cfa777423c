import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const bin = join(root, 'dist', 'zerowiz.js');
const FAKE_BIN = join(here, 'fixtures', 'bin-nvidia');
const EMPTY_BIN = join(here, 'fixtures', 'bin-empty');
const GiB = 2 ** 30;

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [bin, 'estimate', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: EMPTY_BIN, HOME: process.env.HOME, ...env },
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(args: string[], env?: NodeJS.ProcessEnv) {
  const r = run([...args, '--json'], env);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown> & {
    input: Record<string, unknown>;
    modes: Record<string, unknown>[];
    deepspeed: Record<string, unknown>[];
    recommended: string | null;
    reason: string;
    notes: string[];
  };
}

beforeAll(() => {
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  expect(b.status, b.stderr).toBe(0);
});

describe('zerowiz estimate --json', () => {
  it("has the documented shape, integer byte counts, and DeepSpeed's 8 rows in order", () => {
    const out = json([
      '--params',
      '2851e6',
      '--largest-layer',
      '32e6',
      '--gpus-per-node',
      '8',
      '--gpu-memory',
      '80GiB',
      '--cpu-memory',
      '1TiB',
    ]);
    expect(Object.keys(out)).toEqual(expect.arrayContaining(['input', 'modes', 'deepspeed', 'recommended', 'reason']));
    expect(out.input).toMatchObject({
      params: 2851e6,
      largestLayer: 32e6,
      gpusPerNode: 8,
      nodes: 1,
      zeroInit: true,
      gpuMemoryBytes: 80 * GiB,
      cpuMemoryBytes: 1024 * GiB,
    });
    expect(out.modes.map((m) => `${m.mode as string}${m.offloadDevice === 'nvme' ? ':nvme' : ''}`)).toEqual([
      '1',
      '2',
      '2-offload',
      '2-offload:nvme',
      '3',
      '3-offload',
      '3-offload:nvme',
    ]);
    for (const m of out.modes) {
      for (const k of ['gpuBytes', 'cpuBytes', 'commBytesPerStep', 'offloadBytesPerStep'])
        expect(Number.isInteger(m[k]), k).toBe(true);
      expect([true, false]).toContain(m.fits);
      expect(m).toHaveProperty('zeroInit');
    }
    expect(out.deepspeed.map((r) => [r.estimator, r.offloadParam, r.offloadOptimizer, r.zeroInit])).toEqual([
      ['zero2', 'none', 'cpu', null],
      ['zero2', 'none', 'none', null],
      ['zero3', 'cpu', 'cpu', true],
      ['zero3', 'cpu', 'cpu', false],
      ['zero3', 'none', 'cpu', true],
      ['zero3', 'none', 'cpu', false],
      ['zero3', 'none', 'none', true],
      ['zero3', 'none', 'none', false],
    ]);
    // memory.rst's ZeRO-3 row for offload_param=cpu, offload_optimizer=cpu, zero_init=1: 71.69 GB | 0.12 GB.
    const z = out.deepspeed[2]!;
    expect([((z.cpuBytes as number) / GiB).toFixed(2), ((z.gpuBytes as number) / GiB).toFixed(2)]).toEqual([
      '71.69',
      '0.12',
    ]);
    expect(out.recommended).toBe('1');
    expect(out.reason).toMatch(/^ZeRO-1 fits in 80 GiB with .* to spare and adds no communication over DDP\.$/);
  });

  it('--no-zero-init changes the ZeRO-3 rows, and fits is null without GPU memory', () => {
    const out = json(['--params', '7B', '--largest-layer', '500M', '--no-zero-init']);
    const m3 = out.modes.find((m) => m.mode === '3')!;
    expect(m3.zeroInit).toBe(false);
    expect(m3.cpuBytes).toBe(7e9 * 4 * 1 * 1.5);
    expect(out.modes.every((m) => m.fits === null)).toBe(true);
    expect(out.recommended).toBeNull();
  });

  it('--model fills params and largest layer from the catalog; activations come in with the shape flags', () => {
    const out = json([
      '--model',
      'llama-3.1-8b',
      '--gpus-per-node',
      '8',
      '--gpu-memory',
      '80GB',
      '--seq-len',
      '4096',
      '--micro-batch',
      '1',
      '--checkpointing',
      'full',
    ]);
    expect(out.input).toMatchObject({ params: 8030261248, largestLayer: 525336576, gpuMemoryBytes: 80e9 });
    // 32 layers x 2*s*b*h + one layer s*b*h*(34 + 5*a*s/h), s 4096, h 4096, a 32.
    const sbh = 4096 * 4096;
    expect(out.input.activationBytes).toBe(32 * 2 * sbh + sbh * (34 + (5 * 32 * 4096) / 4096));
    const m1 = out.modes.find((m) => m.mode === '1')!;
    expect(m1.gpuNeedBytes).toBe((m1.gpuBytes as number) + (out.input.activationBytes as number));
  });

  it('--detect takes GPUs and memory from nvidia-smi', () => {
    const out = json(['--params', '20.4B', '--largest-layer', '57M', '--detect'], {
      PATH: FAKE_BIN,
      ZW_FAKE_NVIDIA_SMI: '8',
    });
    expect(out.input).toMatchObject({ gpusPerNode: 8, gpuMemoryBytes: 81559 * 2 ** 20 });
    expect((out.input.detected as { gpus: unknown[] }).gpus).toHaveLength(8);
    expect(typeof out.input.cpuMemoryBytes).toBe('number');
    expect(out.notes).toEqual([
      expect.stringMatching(/^detected: 8 x NVIDIA H100 80GB HBM3 \(79\.6 GiB\); CPU memory /),
    ]);
  });

  it('explicit flags win over --detect; mixed GPUs size by the smallest', () => {
    const out = json(['--params', '7B', '--detect', '--gpus-per-node', '2'], {
      PATH: FAKE_BIN,
      ZW_FAKE_NVIDIA_SMI: 'mixed',
    });
    expect(out.input).toMatchObject({ gpusPerNode: 2, gpuMemoryBytes: 24564 * 2 ** 20 });
    expect((out.input.detected as { mixed: boolean }).mixed).toBe(true);
  });
});

describe('zerowiz estimate (table)', () => {
  it('prints modes, the recommendation and DeepSpeed rows', () => {
    const r = run(['--params', '2851e6', '--largest-layer', '32e6', '--gpus-per-node', '8', '--gpu-memory', '80GiB']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^1 .*<- recommended$/m);
    expect(r.stdout).toMatch(/^3-offload nvme /m);
    expect(r.stdout).toMatch(/zero3\s+71\.69 GiB\s+0\.12 GiB\s+offload_param=cpu, offload_optimizer=cpu, zero_init=1/);
    expect(r.stdout).toContain('Recommended: ZeRO-1.');
  });
  it('a missing or failing nvidia-smi under --detect is a note, not a failure', () => {
    for (const env of [{ PATH: EMPTY_BIN }, { PATH: FAKE_BIN, ZW_FAKE_NVIDIA_SMI: 'fail' }]) {
      const r = run(['--params', '7B', '--detect'], env);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        /note: detected: GPUs not detected \(nvidia-smi (not found on PATH|failed \(exit 9\)[^)]*)\)/,
      );
      expect(r.stdout).toContain('give --gpus-per-node and --gpu-memory yourself.');
    }
  });
  it('--help documents units, the mode-1 formula and the derived formulas', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    for (const s of [
      '4P + 16P/N',
      '4P + 12P/N',
      '80GB',
      'GiB',
      '2-offload 4P/N',
      '3-offload 6P/N',
      '18P/nodes',
      '34 + 5*a*s/h',
      '--no-zero-init',
    ]) {
      expect(r.stdout).toContain(s);
    }
  });
});

describe('bad input exits 2 with one line and a hint, never a stack trace', () => {
  it.each([
    [['--params', 'abc'], /^zerowiz: --params 'abc' is not a number$/],
    [['--params', '-7B'], /^zerowiz: --params '-7B' is not a number$/],
    [['--params', '0'], /must be greater than zero/],
    [['--params', '7B', '--gpus-per-node', '0'], /--gpus-per-node '0' is out of range/],
    [['--params', '7B', '--nodes', 'two'], /--nodes 'two' is not a whole number/],
    [['--params', '7B', '--gpu-memory', 'lots'], /--gpu-memory 'lots' is not a size/],
    [['--params', '7B', '--largest-layer', '8B'], /--largest-layer \(8B\) cannot exceed --params \(7B\)/],
    [['--params', '1000T'], /beyond/],
    [['--model', 'gpt-5'], /unknown model 'gpt-5'/],
    [[], /--params is required/],
    [
      ['--params', '7B', '--seq-len', '4096'],
      /the activation estimate also needs --layers, --hidden, --heads, --micro-batch/,
    ],
    [['--model', 'flux.1-dev', '--params', '20B'], /--model flux.1-dev already sets the parameter count/],
    [
      ['--model', 'qwen-image', '--seq-len', '4096', '--micro-batch', '1', '--checkpointing', 'some'],
      /--checkpointing 'some' is not none or full/,
    ],
    [['--params', '7B', '--bogus'], /unknown option '--bogus'/],
  ])('%j', (args, message) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(message);
    expect(lines.length).toBeLessThanOrEqual(2);
    if (lines[1] !== undefined) expect(lines[1]).toMatch(/^ {2}hint: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('advice a user can act on', () => {
  it('asks whether a bare small --params meant billions', () => {
    const d = json(['--params', '20', '--gpus-per-node', '8']);
    expect(d.notes.join('\n')).toContain('--params 20 means 20 parameters; did you mean 20B or 20M?');
  });
  it('when only CPU memory is short, says to add CPU memory or offload to NVMe, not to shorten sequences', () => {
    const d = json([
      '--params',
      '20B',
      '--largest-layer',
      '50M',
      '--gpus-per-node',
      '8',
      '--gpu-memory',
      '80GiB',
      '--cpu-memory',
      '16GiB',
      '--no-zero-init',
      '--no-nvme',
    ]);
    expect(d.recommended).toBeNull();
    expect(d.reason).toMatch(/needs [\d.]+ GiB of CPU memory per node; add CPU memory/);
    expect(d.reason).not.toContain('shorten sequences');
  });
});
