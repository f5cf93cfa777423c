import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
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
      '0',
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
      // The peak: integers, its items exactly these ten, summing to the GPU peak; fits decided on it.
      const peak = m.peak as { gpuBytes: number; cpuBytes: number; items: Record<string, number> };
      expect(Object.keys(peak.items)).toEqual([
        'cudaContext',
        'params',
        'grads',
        'optimizer',
        'activations',
        'optimizerStep',
        'encoders',
        'buffers',
        'extraModels',
        'margin',
      ]);
      for (const v of [peak.gpuBytes, peak.cpuBytes, ...Object.values(peak.items)])
        expect(Number.isSafeInteger(v)).toBe(true);
      expect(Object.values(peak.items).reduce((a, b) => a + b, 0)).toBe(peak.gpuBytes);
      expect(m.gpuNeedBytes).toBe(peak.gpuBytes);
      const usable = out.input.usableGpuBytes as number;
      const cpuUsable = out.input.usableCpuBytes as number;
      expect(m.fits).toBe(peak.gpuBytes <= usable && peak.cpuBytes <= cpuUsable && m.nvmeFits !== false);
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
    expect(out.recommended).toBe('2');
    expect(out.reason).toMatch(
      /^ZeRO-2 fits: peak .* per GPU of the 72 GiB usable \(80 GiB less 10% headroom\), .* to spare; .* s\/step, bound by compute\. ZeRO-1 also fits in the same time, with .* less room/,
    );
    // The new inputs (issue 23) are under input; the shape is otherwise kept.
    expect(out.input).toMatchObject({ optimizer: 'adamw', masterWeights: 'fp32', frames: null, preset: null });
    expect(JSON.stringify(out)).not.toMatch(/e\+/);
  });

  it('--no-zero-init changes the ZeRO-3 rows, and fits is null without GPU memory', () => {
    const out = json(['--params', '7B', '--largest-layer', '500M', '--no-zero-init']);
    const m3 = out.modes.find((m) => m.mode === '3')!;
    expect(m3.zeroInit).toBe(false);
    expect(m3.cpuBytes).toBe(7e9 * 4 * 1 * 1.5);
    expect(out.modes.every((m) => m.fits === null)).toBe(true);
    expect(out.recommended).toBeNull();
  });

  it('--model fills params, largest layer and shape from the catalog; the workload flags set the activations', () => {
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
      '--gradient-checkpointing',
    ]);
    expect(out.input).toMatchObject({ params: 8030261248, largestLayer: 525336576, gpuMemoryBytes: 80e9 });
    // Checkpointed: 31 block inputs (s*h) + one Llama block (4h + 2*kv_dim + 2h + 4f values per token), in
    // 16-bit, + the logits (10 bytes x vocab x tokens), + FlashAttention's fp32 dq accumulator of one block
    // (4 bytes x s x h). s 4096, h 4096, kv_dim 1024, f 14336, vocab 128256.
    const block = 4096 * (4 * 4096 + 2 * 1024 + 2 * 4096 + 4 * 14336) * 2;
    expect(out.input.activationBytes).toBe(31 * 4096 * 4096 * 2 + block + 10 * 128256 * 4096 + 4 * 4096 * 4096);
    const m1 = out.modes.find((m) => m.mode === '1')!;
    expect((m1.peak as { items: { activations: number } }).items.activations).toBe(out.input.activationBytes);
    // The explicit flags win over the catalog's shape.
    const wider = json(['--model', 'llama-3.1-8b', '--seq-len', '4096', '--hidden-size', '8192', '--kv-heads', '32']);
    expect(wider.input.activation).toMatchObject({ hidden: 8192, kvHeads: 32, heads: 32, layers: 32 });
  });

  it('LoRA from rank and the catalog targets; --trainable-params for a frozen backbone', () => {
    const seed = json([
      '--model',
      'qwen-image',
      '--lora-rank',
      '32',
      '--max-pixels',
      '1024x1024',
      '--gradient-checkpointing',
      '--gpu-memory',
      '24GiB',
      '--cpu-memory',
      '128GiB',
    ]);
    // The seed's twelve targets at rank 32: 122,880 x 32 per block, 60 blocks; tokens 4096 + 512 text.
    expect(seed.input).toMatchObject({ trainableParams: 235929600, baseParams: 20430401088 });
    expect(seed.input.activation).toMatchObject({ tokens: 4608, checkpointing: 'full' });
    // On 24 GiB only ZeRO-3 offload holds a 20B model: the seed's choice.
    expect([seed.recommended, seed.recommendedOffloadDevice]).toEqual(['3-offload', 'cpu']);
    const frozen = json(['--params', '7B', '--trainable-params', '1B', '--gpus-per-node', '8']);
    expect(frozen.input).toMatchObject({ params: 7e9, trainableParams: 1e9 });
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
      expect.stringMatching(
        /^detected: 8 x NVIDIA H100 80GB HBM3 \(79\.6 GiB\); CPU memory .*; GPUs linked by NVLink x18\.$/,
      ),
      expect.stringMatching(/^activations not estimated/),
      expect.stringMatching(/^step times assume 47 blocks \(a Llama-like shape for 20.4B parameters\)/),
    ]);
    // nvidia-smi topo -m's NV18: the step time runs on NVLink.
    expect(out.input.interconnect).toEqual({ kind: 'nvlink', nvlinks: 18 });
    const m3 = out.modes.find((m) => m.mode === '3')! as { time: { link: string } };
    expect(m3.time.link).toBe('NVLink x18');
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
    // Full fine-tuning: ZeRO-2 leaves more room than ZeRO-1 at the same traffic, so it is the one recommended.
    expect(r.stdout).toMatch(/^ZeRO-2 .*<- recommended$/m);
    expect(r.stdout).toMatch(/^ZeRO-3 offload NVMe /m);
    expect(r.stdout).toMatch(/^mode\s+ctx\s+params\s+grads\s+optim\s+acts\s+step\s+enc\s+buffers\s+extra\s+margin$/m);
    expect(r.stdout).toMatch(/zero3\s+71\.69 GiB\s+0\.12 GiB\s+offload_param=cpu, offload_optimizer=cpu, zero_init=1/);
    expect(r.stdout).toContain('Recommended: ZeRO-2.');
  });
  it('a size in decimal units is said in GiB, as generate says it (an "80 GB" card holds 80 GiB, not 74.5)', () => {
    const r = run(['--params', '7B', '--gpus-per-node', '1', '--gpu-memory', '80GB', '--cpu-memory', '512GB']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('note: --gpu-memory 80GB = 74.51 GiB (GB counts 10^9; 80G or 80GiB counts 2^30).');
    expect(r.stdout).toContain('note: --cpu-memory 512GB = 476.84 GiB (GB counts 10^9; 512G or 512GiB counts 2^30).');
    const binary = run(['--params', '7B', '--gpus-per-node', '1', '--gpu-memory', '80GiB', '--cpu-memory', '512G']);
    expect(binary.stdout).not.toMatch(/counts 10\^9/);
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
      'cudaContext',
      'ml-engineering',
      'reduce_bucket_size x 2 B (x2 with --overlap-comm)',
      'stage3_max_live_parameters',
      '10% of what a step allocates and frees',
      'nvidia-smi topo -m',
      '--no-zero-init',
      '--trainable-params',
      '--lora-targets',
      '--max-pixels',
      '--kv-heads',
      '--headroom',
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
    [['--params', '7B', '--lora-targets', 'q'], /^zerowiz: --lora-targets needs --lora-rank$/],
    [
      ['--model', 'qwen-image', '--lora-rank', '8', '--trainable-params', '1B'],
      /--lora-rank and --trainable-params cannot be used together/,
    ],
    [['--params', '7B', '--lora-rank', '8'], /LoRA needs the module shapes of the model/],
    [
      ['--model', 'qwen-image', '--lora-rank', '8', '--lora-targets', 'to_q,nope'],
      /'nope' is not a module of qwen-image/,
    ],
    [['--model', 'llama-3.1-8b', '--max-pixels', '1048576'], /--max-pixels applies to image models/],
    [['--model', 'qwen-image', '--seq-len', '4096', '--max-pixels', '1048576'], /cannot be used together/],
    [['--params', '7B', '--heads', '8', '--kv-heads', '16'], /--kv-heads \(16\) cannot exceed --heads \(8\)/],
    [['--params', '7B', '--precision', 'fp8'], /--precision 'fp8' is not bf16, fp16 or fp32/],
    [['--params', '7B', '--headroom', '95'], /--headroom '95' is out of range/],
    [['--params', '7B', '--trainable-params', '8B'], /trainable parameters must be a whole number from 0 to/],
    [['--params', '7B', '--gpu-memory', '1e30GiB'], /--gpu-memory '1e30GiB' is beyond 64\.00 TiB/],
    [['--params', '7B', '--cpu-memory', '1e30GiB'], /--cpu-memory '1e30GiB' is beyond/],
    [['--params', '7B', '--extra-gpu-params', '1e30'], /--extra-gpu-params '1e30' is beyond/],
    [['--params', '7B', '--reduce-bucket-size', '1e20'], /--reduce-bucket-size '1e20' is beyond/],
    [['--params', '88T', '--gpus-per-node', '1013', '--nodes', '3'], /more than 2\^53 bytes/],
    [
      ['--model', 'llama-3.1-8b', '--seq-len', '100000000', '--micro-batch', '100000'],
      /beyond anything zerowiz can size/,
    ],
    [['--model', 'flux.1-dev', '--params', '20B'], /--model flux.1-dev already sets the parameter count/],
    [
      ['--model', 'qwen-image', '--seq-len', '4096', '--micro-batch', '1', '--checkpointing', 'some'],
      /--checkpointing 'some' is not none or full/,
    ],
    [['--model', 'qwen-image', '--gradient-checkpointing', '--checkpointing', 'full'], /cannot be used together/],
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
    expect(d.reason).toMatch(/needs [\d.]+ GiB of CPU memory per node\. What would fit: .*more CPU memory: /);
    expect(d.reason).not.toContain('shorten sequences');
  });
});

describe('--json never prints a float or an integer above 2^53, whatever the flags (seeded)', () => {
  it('either exit 2 with one line and a hint, or safe integers only', () => {
    let seed = 17;
    const pick = <T>(xs: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return xs[seed % xs.length]!;
    };
    const sizes = ['1', '80GiB', '1e12GiB', '64TiB', '65TiB', '1PiB', '1e30'];
    const counts = ['1', '7B', '1e14', '100T', '1e15', '1e300'];
    for (let i = 0; i < 12; i++) {
      const args = [
        '--params',
        pick(counts),
        '--gpus-per-node',
        pick(['1', '8', '1024']),
        '--nodes',
        pick(['1', '100000']),
        '--gpu-memory',
        pick(sizes),
        '--cpu-memory',
        pick(sizes),
        '--extra-gpu-params',
        pick(['0', '1e13', '1e15']),
        '--json',
      ];
      const r = run(args);
      if (r.code === 0) {
        expect(r.stdout, args.join(' ')).not.toMatch(/\d[eE][+-]?\d/);
        const walk = (v: unknown): void => {
          if (typeof v === 'number') expect(Number.isSafeInteger(v), `${v} in ${args.join(' ')}`).toBe(true);
          else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
        };
        walk(JSON.parse(r.stdout));
      } else {
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        const lines = r.stderr.trimEnd().split('\n');
        expect(lines.length).toBe(2);
        expect(lines[1]).toMatch(/^ {2}hint: /);
      }
    }
  });
});

describe('flags that do not apply say so', () => {
  it('--vocab on an image model and --nvme-path with --no-nvme are notes', () => {
    const d = json(['--model', 'qwen-image', '--vocab', '1000', '--nvme-path', '/tmp', '--no-nvme']);
    expect(d.notes).toContain('--vocab does not apply to an image model (it has no logits); ignored.');
    expect(d.notes).toContain('--nvme-path is not used with --no-nvme (no NVMe rows are shown).');
  });
  it('a model without a shape says the activations are left out', () => {
    const d = json(['--params', '7B', '--largest-layer', '500M']);
    expect(d.notes.join('\n')).toMatch(/activations not estimated: the model's layers, hidden, heads are unknown/);
    expect(d.input.activation).toBeNull();
  });
});
