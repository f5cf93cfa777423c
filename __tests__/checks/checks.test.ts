/** The checks before a pass: the plan of a setup and each judge, on measured values (pure). */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPreset } from '../../src/setups/presets.js';
import { loadPreset } from '../../src/setups/presets.js';
import type { Setup } from '../../src/config/setup.js';
import { nodeCheckLine, nodeDoneLine, parseNodeCheckLine, reportLines } from '../../src/checks/format.js';
import {
  type DriverInfo,
  capabilityFromName,
  judgeCudaDriver,
  judgeGpus,
  parseCheckQuery,
  parseSmiHeader,
  torchIndexFor,
} from '../../src/checks/gpu.js';
import {
  type MemoryInfo,
  judgeHostMemory,
  judgePort,
  judgeShm,
  listeningInode,
  measureCgroup,
} from '../../src/checks/host.js';
import { diffSynthPattern, globFiles, judgeInputs, judgeModels, parseCsv } from '../../src/checks/inputs.js';
import { judgeOps } from '../../src/checks/ops.js';
import { checkPlan } from '../../src/checks/plan.js';
import { interpreterOf, type ProbeResult } from '../../src/checks/probe.js';
import {
  PROBE_CACHE_MAX_AGE_MS,
  cleanAnswer,
  loadProbe,
  probeCacheKey,
  saveProbe,
} from '../../src/checks/probe-cache.js';
import { judgePython } from '../../src/checks/python.js';
import { type NvmeInfo, judgeDisk, judgeNvme, judgeNvmeSpeed } from '../../src/checks/storage.js';
import { CHECK_IDS, checksJson, failures, inFixOrder, passed, failed, skipChecks } from '../../src/checks/types.js';
import { checkBeforePass } from '../../src/checks/gate.js';
import { AlertEngine } from '../../src/observe/alerts.js';
import { judgeVersions } from '../../src/checks/versions.js';
import { barePath } from '../helpers/seal.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

async function preset(name: string, over: Partial<Setup['answers']> = {}): Promise<Setup> {
  const s = await loadPreset(name);
  return { ...s, answers: { ...s.answers, ...over } };
}

function probe(over: {
  torch?: Partial<NonNullable<ProbeResult['torch']>>;
  torchVersion?: string;
  deepspeed?: Partial<NonNullable<ProbeResult['deepspeed']>> | null;
  dsVersion?: string;
  accVersion?: string;
}): ProbeResult {
  const pkg = (version: string) => ({ version, importable: true, error: null, path: '/venv/x', ms: 100 });
  return {
    python: { executable: '/venv/bin/python', version: '3.11.7' },
    packages: {
      torch: pkg(over.torchVersion ?? '2.5.1+cu124'),
      accelerate: pkg(over.accVersion ?? '1.15.0'),
      deepspeed: over.deepspeed === null ? null : pkg(over.dsVersion ?? '0.19.6'),
    },
    torch: {
      cuda: '12.4',
      hip: null,
      cudaAvailable: true,
      deviceCount: 8,
      warnings: [],
      ninja: true,
      cudaHome: '/usr/local/cuda',
      cxx: '/usr/bin/c++',
      cxxName: 'c++',
      ...over.torch,
    },
    deepspeed:
      over.deepspeed === null
        ? null
        : {
            ops: {},
            torchInfo: { version: '2.5', cuda_version: '12.4' },
            builtFor: 'cuda',
            accelerator: 'cuda',
            zeroConfig: { errors: [], warnings: [], unavailable: null },
            error: null,
            ...over.deepspeed,
          },
  };
}

function driver(over: Partial<DriverInfo> = {}): DriverInfo {
  return {
    found: true,
    reason: null,
    driver: '570.86.10',
    cuda: '12.8',
    gpus: Array.from({ length: 8 }, (_, i) => ({
      index: i,
      name: 'NVIDIA H100 80GB HBM3',
      totalBytes: 81559 * MiB,
      usedBytes: 4 * MiB,
      computeCap: 9.0,
    })),
    visible: null,
    visibleEnv: null,
    ...over,
  };
}

describe('the plan: what a setup needs from the box', () => {
  it('the seed: two passes, ZeRO-3 CPU offload needs cpu_adam, the train pass writes 5 epochs of the LoRA', async () => {
    const plan = checkPlan(await loadPreset('qwen-image-lora-lowvram'), { cwd: '/w' });
    expect(plan.steps.map((s) => [s.name, s.deepspeed])).toEqual([
      ['data_process', false],
      ['train', true],
    ]);
    expect(plan.ops.map((o) => o.name)).toEqual(['cpu_adam']);
    expect(plan.nvme).toBeNull();
    expect(plan.modeLabel).toBe('ZeRO-3 offload');
    const train = plan.steps[1]!;
    expect(train.diffsynth?.dataPass).toBe(false);
    expect(train.diffsynth?.epochs).toBe(5);
    expect(train.outputs[0]!.path).toBe('/w/models/train/Qwen-Image_lora');
    // 235.93M LoRA parameters x 2 bytes x 5 epochs.
    expect(train.outputs[0]!.bytes).toBe(plan.estimate!.trainableParams * 2 * 5);
    expect(plan.steps[0]!.outputs[0]!.bytes).toBeNull();
    expect(plan.steps[0]!.dataloaderWorkers).toBe(8);
    expect(train.scriptMadeEarlier).toBe(false);
    expect(plan.steps[0]!.diffsynth?.models).toEqual([
      {
        kind: 'hub',
        spec: 'Qwen/Qwen-Image:text_encoder/model*.safetensors',
        modelId: 'Qwen/Qwen-Image',
        pattern: 'text_encoder/model*.safetensors',
      },
      {
        kind: 'hub',
        spec: 'Qwen/Qwen-Image:vae/diffusion_pytorch_model.safetensors',
        modelId: 'Qwen/Qwen-Image',
        pattern: 'vae/diffusion_pytorch_model.safetensors',
      },
    ]);
  });

  it('NVMe needs async_io only at stage 3 (stages 1-2 treat nvme as CPU offload)', async () => {
    const nvme = checkPlan(await preset('zero3-nvme', { nvme_path: '/local_nvme' }), { cwd: '/w' });
    expect(nvme.ops.map((o) => o.name)).toEqual(['cpu_adam', 'async_io']);
    expect(nvme.nvme?.path).toBe('/local_nvme');
    const two = checkPlan(await preset('zero2-offload', { offload_device: 'nvme', nvme_path: '/n' }), { cwd: '/w' });
    expect(two.ops.map((o) => o.name)).toEqual(['cpu_adam']);
    expect(two.nvme).toBeNull();
    const none = checkPlan(await preset('zero3'), { cwd: '/w' });
    expect(none.ops).toEqual([]);
    expect(none.processesPerNode).toBe(8);
  });

  it('one pass, by index; a pass that does not exist is a RangeError', async () => {
    const seed = await loadPreset('qwen-image-lora-lowvram');
    const plan = checkPlan(seed, { cwd: '/w', filter: { kind: 'one', index: 1 } });
    expect(plan.steps.map((s) => s.name)).toEqual(['train']);
    expect(plan.totalSteps).toBe(2);
    expect(() => checkPlan(seed, { cwd: '/w', filter: { kind: 'one', index: 2 } })).toThrow(RangeError);
  });
});

describe('the Python that runs accelerate', () => {
  it("reads the interpreter from the shebang pip wrote, env lookups and pip's /bin/sh trampoline", () => {
    expect(interpreterOf('/v/bin/accelerate', '#!/v/bin/python\n# -*- coding: utf-8 -*-\nimport re\n')).toEqual({
      ok: true,
      python: '/v/bin/python',
      how: '/v/bin/accelerate (#!/v/bin/python)',
    });
    const long = `/${'x'.repeat(130)}/bin/python3.11`;
    const tramp = interpreterOf('/a', `#!/bin/sh\n'''exec' "${long}" "$0" "$@"\n' '''\n`);
    expect(tramp.ok && tramp.python).toBe(long);
    const bin = mkdtempSync(join(tmpdir(), 'zw-env-'));
    writeFileSync(join(bin, 'python3'), '#!/bin/sh\n');
    chmodSync(join(bin, 'python3'), 0o755);
    const env = interpreterOf('/a', '#!/usr/bin/env python3\n', { PATH: bin });
    expect(env.ok && env.python).toBe(join(bin, 'python3'));
    expect(interpreterOf('/a', 'ELF...').ok).toBe(false);
    expect(interpreterOf('/a', '#!/usr/bin/env python3\n', { PATH: '/nonexistent' })).toMatchObject({ ok: false });
  });

  it('judges: a missing deepspeed is a FAIL with the pip line for that very interpreter', async () => {
    const plan = checkPlan(await loadPreset('qwen-image-lora-lowvram'), { cwd: '/w' });
    const p = probe({});
    p.packages.deepspeed = {
      version: null,
      importable: false,
      error: "ModuleNotFoundError: No module named 'deepspeed'",
      path: null,
      ms: 3,
    };
    const r = judgePython(plan, {
      kind: 'found',
      accelerate: '/venv/bin/accelerate',
      interpreter: { ok: true, python: '/venv/bin/python', how: '/venv/bin/accelerate (#!/venv/bin/python)' },
      run: { ok: true, result: p, ms: 900 },
    });
    expect(r.status).toBe('fail');
    expect(r.fix).toBe('/venv/bin/python -m pip install deepspeed');
    expect(r.measured).toContain('deepspeed: not importable');
    expect(judgePython(plan, { kind: 'no-accelerate', reason: 'accelerate is not on PATH' }).status).toBe('fail');
  });
});

describe('the driver and the GPUs', () => {
  it('reads nvidia-smi: the header, the query (with and without compute_cap)', () => {
    expect(parseSmiHeader('| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |')).toEqual({
      driver: '470.57.02',
      cuda: '11.4',
    });
    const q = parseCheckQuery('0, NVIDIA H100 80GB HBM3, 81559, 1024, 570.86.10, 9.0\n', true);
    expect(q.driver).toBe('570.86.10');
    expect(q.gpus[0]).toMatchObject({ index: 0, computeCap: 9, usedBytes: 1024 * MiB });
    const old = parseCheckQuery('0, Tesla V100-SXM2-32GB, 32510, 0, 470.57.02\n', false);
    expect(old.gpus[0]!.computeCap).toBe(7.0);
    expect(capabilityFromName('NVIDIA GeForce RTX 4090')).toBe(8.9);
  });

  it('picks the torch CUDA build a driver runs', () => {
    expect(torchIndexFor('12.8')).toBe('cu128');
    expect(torchIndexFor('12.2')).toBe('cu121');
    expect(torchIndexFor('11.4')).toBe('cu118');
    expect(torchIndexFor('13.0')).toBe('cu130');
  });

  it('cuda-driver: a CPU torch, a driver too old, minor compatibility, a match', () => {
    const cpu = judgeCudaDriver(
      driver(),
      probe({ torch: { cuda: null, cudaAvailable: false }, torchVersion: '2.13.0+cpu' }),
    );
    expect(cpu.status).toBe('fail');
    expect(cpu.measured).toContain('CPU-only build');
    expect(cpu.fix).toContain('--index-url https://download.pytorch.org/whl/cu128');
    const old = judgeCudaDriver(driver({ driver: '470.57.02', cuda: '11.4' }), probe({}));
    expect(old.status).toBe('fail');
    expect(old.need).toContain('525.60.13');
    expect(old.fix).toContain('upgrade the NVIDIA driver to 525.60.13');
    const minor = judgeCudaDriver(driver({ driver: '535.104.05', cuda: '12.2' }), probe({}));
    expect(minor.status).toBe('warn');
    expect(minor.measured).toContain('minor version compatibility');
    expect(judgeCudaDriver(driver(), probe({})).status).toBe('pass');
    const none = judgeCudaDriver(driver({ found: false, reason: 'nvidia-smi not found on PATH' }), null);
    expect(none.status).toBe('fail');
    expect(none.measured).toContain('nvidia-smi not found on PATH');
  });

  it('gpus: too few, bf16 on compute capability 7.0, memory held by others', async () => {
    const plan = checkPlan(await preset('zero3', { mixed_precision: 'bf16' }), { cwd: '/w' });
    expect(judgeGpus(plan, driver()).status).toBe('pass');
    const few = judgeGpus(plan, driver({ visible: [0, 1], visibleEnv: '0,1' }));
    expect(few.status).toBe('fail');
    expect(few.fix).toContain('--num-processes 2');
    const v100 = driver({
      gpus: Array.from({ length: 8 }, (_, i) => ({
        index: i,
        name: 'Tesla V100-SXM2-32GB',
        totalBytes: 32 * GiB,
        usedBytes: 0,
        computeCap: 7.0,
      })),
    });
    const bf16 = judgeGpus(plan, v100);
    expect(bf16.status).toBe('fail');
    expect(bf16.fix).toContain('--mixed-precision fp16');
    const busy = driver();
    busy.gpus[3]!.usedBytes = 30 * GiB;
    expect(judgeGpus(plan, busy)).toMatchObject({ status: 'warn' });
    expect(judgeGpus(plan, driver({ found: false, reason: 'x' })).status).toBe('skip');
  });
});

describe('DeepSpeed ops and versions', () => {
  it('ops: prebuilt passes; prebuilt for another torch fails; async_io without libaio fails with the package to install', async () => {
    const plan = checkPlan(await preset('zero3-nvme'), { cwd: '/w' });
    const ok = probe({
      deepspeed: {
        ops: {
          cpu_adam: { installed: true, compatible: true, log: '', cudaProblem: null },
          async_io: { installed: true, compatible: true, log: '', cudaProblem: null },
        },
      },
    });
    expect(judgeOps(plan, ok).status).toBe('pass');
    const mismatch = probe({
      torchVersion: '2.5.1+cu124',
      deepspeed: {
        torchInfo: { version: '2.4', cuda_version: '12.4' },
        ops: {
          cpu_adam: { installed: true, compatible: true, log: '', cudaProblem: null },
          async_io: { installed: true, compatible: true, log: '', cudaProblem: null },
        },
      },
    });
    const m = judgeOps(plan, mismatch);
    expect(m.status).toBe('fail');
    expect(m.measured).toContain('PyTorch version mismatch');
    const noAio = probe({
      deepspeed: {
        ops: {
          cpu_adam: { installed: false, compatible: true, log: '', cudaProblem: null },
          async_io: {
            installed: false,
            compatible: false,
            log: '\u001b[93m [WARNING] \u001b[0m async_io requires the dev libaio .so object and headers but these were not found.\n\u001b[93m [WARNING] \u001b[0m async_io: please install the libaio-dev package with apt\n',
            cudaProblem: null,
          },
        },
      },
    });
    const a = judgeOps(plan, noAio);
    expect(a.status).toBe('fail');
    expect(a.measured).toContain('async_io requires the dev libaio .so object and headers');
    expect(a.fix).toContain('sudo apt install libaio-dev');
  });

  it('ops: a JIT build needs ninja, a compiler, and for the GPU an nvcc that matches torch', async () => {
    const plan = checkPlan(await loadPreset('qwen-image-lora-lowvram'), { cwd: '/w' });
    const jit = (torch: Partial<NonNullable<ProbeResult['torch']>>, cudaProblem: string | null = null) =>
      judgeOps(
        plan,
        probe({
          torch,
          deepspeed: { ops: { cpu_adam: { installed: false, compatible: true, log: '', cudaProblem } } },
        }),
      );
    expect(jit({}).status).toBe('pass');
    expect(jit({}).measured).toContain('compiles it at the first step');
    const noNinja = jit({ ninja: false });
    expect(noNinja.status).toBe('fail');
    expect(noNinja.fix).toBe('/venv/bin/python -m pip install ninja');
    expect(jit({ cxx: null }).fix).toContain('g++');
    const cuda = jit(
      {},
      'CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 11.8 does not match the version torch was compiled with 12.4',
    );
    expect(cuda.status).toBe('fail');
    expect(cuda.fix).toContain('CUDA toolkit 12.4');
    // Without a GPU the op builds for the CPU: no nvcc needed.
    expect(jit({ cudaAvailable: false }, 'MissingCUDAException: CUDA_HOME does not exist').status).toBe('pass');
  });

  it('versions: DeepSpeed refusing a key fails, a deprecation warns, an old DeepSpeed and defaults that changed', async () => {
    const plan = checkPlan(await loadPreset('qwen-image-lora-lowvram'), { cwd: '/w' });
    const opts = { dynamoBackend: 'no', moeLayerClsNames: '' };
    expect(judgeVersions(plan, probe({}), opts).status).toBe('pass');
    const bad = judgeVersions(
      plan,
      probe({
        deepspeed: {
          zeroConfig: {
            errors: [
              'ValidationError: 1 validation error for DeepSpeedZeroConfig\ngrad_hooks\n  Extra inputs are not permitted',
            ],
            warnings: [],
            unavailable: null,
          },
        },
      }),
      opts,
    );
    expect(bad.status).toBe('fail');
    expect(bad.measured).toContain('grad_hooks Extra inputs are not permitted');
    const dep = judgeVersions(
      plan,
      probe({
        deepspeed: {
          zeroConfig: {
            errors: [],
            warnings: ['Config parameter cpu_offload is deprecated use offload_optimizer instead'],
            unavailable: null,
          },
        },
      }),
      opts,
    );
    expect(dep.status).toBe('warn');
    expect(judgeVersions(plan, probe({ dsVersion: '0.9.2' }), opts).status).toBe('fail');
    // pin_memory left to DeepSpeed: before 0.19.5 it means false.
    const noPin = { ...plan, dsConfig: structuredClone(plan.dsConfig) };
    delete (noPin.dsConfig.zero_optimization as Record<string, Record<string, unknown>>).offload_optimizer!.pin_memory;
    const pin = judgeVersions(noPin, probe({ dsVersion: '0.19.4' }), opts);
    expect(pin.status).toBe('warn');
    expect(pin.measured).toContain('offload_optimizer.pin_memory');
    expect(judgeVersions(noPin, probe({ dsVersion: '0.19.5' }), opts).status).toBe('pass');
    const multi = { ...plan, numMachines: 2, launcher: 'nossh' };
    const nossh = judgeVersions(multi, probe({ accVersion: '1.5.2', dsVersion: '0.14.4' }), opts);
    expect(nossh.status).toBe('fail');
    expect(nossh.measured).toContain('no nossh launcher');
    expect(nossh.measured).toContain('DeepSpeed 0.14.5');
  });
});

describe('the host', () => {
  it('shm: 64 MiB for 8 processes fails, 768 MiB warns, one process without workers needs none', async () => {
    const plan = checkPlan(await preset('zero3'), { cwd: '/w' });
    const small = judgeShm(plan, { ok: true, sizeBytes: 64 * MiB, freeBytes: 64 * MiB });
    expect(small.status).toBe('fail');
    expect(small.measured).toContain('64 MiB');
    expect(small.fix).toContain('--shm-size');
    expect(judgeShm(plan, { ok: true, sizeBytes: 768 * MiB, freeBytes: 768 * MiB }).status).toBe('warn');
    expect(judgeShm(plan, { ok: true, sizeBytes: 16 * GiB, freeBytes: 16 * GiB }).status).toBe('pass');
    const one = checkPlan(await preset('zero3', { num_processes: 1 }), { cwd: '/w' });
    expect(judgeShm(one, { ok: true, sizeBytes: 64 * MiB, freeBytes: 64 * MiB }).status).toBe('pass');
  });

  it('reads the tightest cgroup limit, v1 and v2, up the tree, in a namespaced mount', () => {
    const files: Record<string, string> = {
      '/proc/self/cgroup': '4:memory:/slurm/uid_0/job_12/step_0\n0::/\n',
      '/proc/self/mountinfo':
        '30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n',
      '/sys/fs/cgroup/memory/slurm/uid_0/job_12/step_0/memory.limit_in_bytes': '9223372036854771712\n',
      '/sys/fs/cgroup/memory/slurm/uid_0/job_12/memory.limit_in_bytes': `${64 * GiB}\n`,
      '/sys/fs/cgroup/memory/slurm/uid_0/job_12/memory.usage_in_bytes': `${10 * GiB}\n`,
      '/sys/fs/cgroup/memory/slurm/uid_0/job_12/memory.stat': `cache 1\ntotal_inactive_file ${2 * GiB}\n`,
      '/sys/fs/cgroup/memory/slurm/memory.limit_in_bytes': `${512 * GiB}\n`,
    };
    const read = (p: string) => files[p] ?? null;
    expect(measureCgroup(read)).toEqual({
      version: 1,
      path: '/sys/fs/cgroup/memory/slurm/uid_0/job_12',
      limitBytes: 64 * GiB,
      usageBytes: 10 * GiB,
      inactiveFileBytes: 2 * GiB,
    });
    const v2: Record<string, string> = {
      '/proc/self/cgroup': '0::/kubepods/pod1/ctr\n',
      '/proc/self/mountinfo': '40 30 0:35 /kubepods/pod1/ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n',
      '/sys/fs/cgroup/memory.max': `${16 * GiB}\n`,
    };
    expect(measureCgroup((p) => v2[p] ?? null)).toMatchObject({
      version: 2,
      path: '/sys/fs/cgroup',
      limitBytes: 16 * GiB,
    });
    expect(measureCgroup((p) => ({ ...v2, '/sys/fs/cgroup/memory.max': 'max\n' })[p] ?? null)).toBeNull();
  });

  it('host-memory: the estimate over the cgroup limit fails and says how much to ask for', async () => {
    const plan = checkPlan(await loadPreset('qwen-image-lora-lowvram'), { cwd: '/w' });
    const need = plan.estimate!.cpuBytesPerNode;
    const mem = (limit: number | null): MemoryInfo => ({
      totalBytes: 512 * GiB,
      availableBytes: 500 * GiB,
      cgroup:
        limit === null
          ? null
          : { version: 2, path: '/sys/fs/cgroup', limitBytes: limit, usageBytes: GiB, inactiveFileBytes: 0 },
    });
    const f = judgeHostMemory(plan, mem(16 * GiB), null);
    expect(f.status).toBe('fail');
    expect(f.measured).toContain('cgroup v2 limit 16 GiB');
    expect(f.fix).toContain(`raise the memory limit to ${Math.ceil(need / 0.9 / GiB)}G`);
    expect(judgeHostMemory(plan, mem(null), null).status).toBe('pass');
    expect(judgeHostMemory(plan, mem(need / 0.95), null).status).toBe('warn');
    const noModel = checkPlan(await preset('zero3'), { cwd: '/w' });
    expect(judgeHostMemory(noModel, mem(null), null).status).toBe('warn');
  });

  it('port: taken on one machine warns with accelerate 1.8+, fails before and on the main node of several', async () => {
    const plan = checkPlan(await preset('zero3'), { cwd: '/w' });
    const taken = { port: 29500, free: false, code: 'EADDRINUSE', holder: { pid: 4242, command: 'python3' } };
    const fix = (p: number) => `--main_process_port ${p}`;
    const one = judgePort(plan, taken, '1.15.0', 40001, fix);
    expect(one.status).toBe('warn');
    expect(one.measured).toContain('pid 4242 (python3) listens on it');
    expect(one.fix).toContain('kill 4242');
    expect(one.fix).toContain('--main_process_port 40001');
    expect(judgePort(plan, taken, '1.7.0', 40001, fix).status).toBe('fail');
    expect(judgePort({ ...plan, numMachines: 2 }, taken, '1.15.0', 40001, fix).status).toBe('fail');
    expect(judgePort({ ...plan, numMachines: 2, machineRank: 1 }, taken, '1.15.0', 40001, fix).status).toBe('pass');
    expect(judgePort(plan, { port: 29500, free: true, code: null, holder: null }, null, null, fix).status).toBe('pass');
  });

  it('finds a listening socket in /proc/net/tcp', () => {
    const tcp = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 00000000:7532 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 100 0 0 10 0',
      '   1: 0100007F:7532 0100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 100 0 0 10 0',
    ].join('\n');
    expect(listeningInode([tcp], 0x7532)).toBe('123456');
    expect(listeningInode([tcp], 29500)).toBeNull();
  });
});

describe('storage', () => {
  const nvmePlan = async (params: number | null = 7e9) =>
    checkPlan(
      await preset('zero3-nvme', {
        nvme_path: '/nv',
        model_params: params,
        largest_layer_params: params === null ? null : 2e8,
      }),
      {
        cwd: '/w',
      },
    );
  const nv = (over: Partial<NvmeInfo>): NvmeInfo => ({
    at: '/nv',
    exists: true,
    isDir: true,
    freeBytes: 4 * 2 ** 40,
    dev: 1,
    fsType: 'ext4',
    writable: true,
    oDirect: true,
    error: null,
    ...over,
  });

  it('nvme: missing, not writable, no O_DIRECT, no room, tmpfs', async () => {
    const plan = await nvmePlan();
    expect(judgeNvme(plan, nv({})).status).toBe('pass');
    const missing = judgeNvme(plan, nv({ exists: false, at: '/', fsType: 'ext4' }));
    expect(missing.status).toBe('fail');
    expect(missing.measured).toContain('/nv does not exist (the nearest folder is /');
    expect(judgeNvme(plan, nv({ writable: false, error: 'EACCES' })).fix).toContain('chown');
    expect(judgeNvme(plan, nv({ oDirect: false, error: 'EINVAL', fsType: 'overlay' })).measured).toContain(
      'refuses O_DIRECT',
    );
    const room = judgeNvme(plan, nv({ freeBytes: 16 * MiB }));
    expect(room.status).toBe('fail');
    expect(room.need).toContain(`free for the ZeRO-3 offload NVMe states`);
    expect(judgeNvme(plan, nv({ fsType: 'tmpfs' })).status).toBe('warn');
    expect(judgeNvme(await nvmePlan(null), nv({})).status).toBe('warn');
    expect(judgeNvme(checkPlan(await preset('zero3'), { cwd: '/w' }), null).status).toBe('pass');
  });

  it('nvme-speed: slower than the 2 GB/s the estimate assumes warns with the time per step, far slower fails', async () => {
    const plan = await nvmePlan();
    const s = (w: number, r: number) => ({ ok: true as const, bytes: 256 * MiB, writeBytesPerS: w, readBytesPerS: r });
    expect(judgeNvmeSpeed(plan, nv({}), s(3e9, 3.2e9)).status).toBe('pass');
    const slow = judgeNvmeSpeed(plan, nv({}), s(0.9e9, 1.5e9));
    expect(slow.status).toBe('warn');
    expect(slow.measured).toMatch(/write 0\.90 GB\/s, read 1\.50 GB\/s.*takes about [\d.]+ s instead of [\d.]+ s/);
    expect(slow.fix).toContain('ds_nvme_tune --nvme_dir /nv');
    expect(judgeNvmeSpeed(plan, nv({}), s(0.1e9, 0.1e9)).status).toBe('fail');
    expect(judgeNvmeSpeed(plan, nv({ oDirect: false }), null).status).toBe('skip');
  });

  it('disk: outputs on one disk add up; too little room fails, little to spare warns, a read-only folder fails', async () => {
    const plan = checkPlan(await loadPreset('qwen-image-lora-lowvram'), { cwd: '/w' });
    const need = plan.steps[1]!.outputs[0]!.bytes!;
    const t = (path: string, free: number, writable = true) => ({
      path,
      fs: { at: '/w', exists: false, isDir: true, freeBytes: free, dev: 7, fsType: 'ext4' },
      writable,
    });
    const paths = [
      '/w/models/train/Qwen-Image_lora-splited-cache',
      '/w/models/train/Qwen-Image_lora',
      '/w/.zerowiz/runs',
    ];
    expect(
      judgeDisk(
        plan,
        paths.map((p) => t(p, 500 * GiB)),
      ).status,
    ).toBe('pass');
    const short = judgeDisk(
      plan,
      paths.map((p) => t(p, need / 2)),
    );
    expect(short.status).toBe('fail');
    expect(short.fix).toContain('free');
    expect(
      judgeDisk(
        plan,
        paths.map((p) => t(p, need + 100 * MiB)),
      ).status,
    ).toBe('warn');
    expect(
      judgeDisk(
        plan,
        paths.map((p) => t(p, 500 * GiB, false)),
      ).status,
    ).toBe('fail');
  });
});

describe('inputs and models', () => {
  it('reads CSV with quoted commas and newlines', () => {
    expect(parseCsv('image,prompt\na.jpg,"a cat, sitting"\nb.jpg,"two\nlines"\n', 10)).toEqual([
      ['image', 'prompt'],
      ['a.jpg', 'a cat, sitting'],
      ['b.jpg', 'two\nlines'],
    ]);
  });

  it("globs as Python's glob does (no hidden files for *, per segment)", () => {
    const d = mkdtempSync(join(tmpdir(), 'zw-glob-'));
    mkdirSync(join(d, 'text_encoder'));
    for (const f of [
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
      '.model-tmp.safetensors',
      'config.json',
    ])
      writeFileSync(join(d, 'text_encoder', f), 'x');
    expect(globFiles(d, 'text_encoder/model*.safetensors').sort()).toEqual([
      'text_encoder/model-00001-of-00002.safetensors',
      'text_encoder/model-00002-of-00002.safetensors',
    ]);
    expect(globFiles(d, 'vae/diffusion_pytorch_model.safetensors')).toEqual([]);
    expect(diffSynthPattern('text_encoder/')).toBe('text_encoder/*');
    expect(diffSynthPattern('')).toBe('*');
  });

  it('inputs: the dataset, its metadata columns and the files the first rows name; cache files for a pass without metadata', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'zw-in-'));
    const seed = await loadPreset('qwen-image-lora-lowvram');
    mkdirSync(join(cwd, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(cwd, 'examples/qwen_image/model_training/train.py'), '');
    mkdirSync(join(cwd, 'data/example_image_dataset'), { recursive: true });
    writeFileSync(
      join(cwd, 'data/example_image_dataset/metadata.csv'),
      'image,prompt\n1.jpg,"a dog"\n2.jpg,"a cat, grey"\n',
    );
    writeFileSync(join(cwd, 'data/example_image_dataset/1.jpg'), 'x');
    const plan = checkPlan(seed, { cwd });
    const r = judgeInputs(plan);
    expect(r.status).toBe('fail');
    expect(r.measured).toContain('1 of the first 2 row(s)');
    expect(r.measured).toContain('2.jpg');
    writeFileSync(join(cwd, 'data/example_image_dataset/2.jpg'), 'x');
    expect(judgeInputs(plan).status).toBe('pass');
    writeFileSync(join(cwd, 'data/example_image_dataset/metadata.csv'), 'file,text\n1.jpg,x\n');
    expect(judgeInputs(plan).measured).toContain('DiffSynth loads the files named in image or video');
    // The training pass alone, without the data pass before it: its cache must be there.
    const train = checkPlan(seed, { cwd, filter: { kind: 'one', index: 1 } });
    expect(judgeInputs(train).measured).toContain('does not exist');
    mkdirSync(join(cwd, 'models/train/Qwen-Image_lora-splited-cache/0'), { recursive: true });
    expect(judgeInputs(train).measured).toContain('there are none (run the data pass first)');
    writeFileSync(join(cwd, 'models/train/Qwen-Image_lora-splited-cache/0/0.pth'), 'x');
    expect(judgeInputs(train).status).toBe('pass');
  });

  it('models: present under ./models/<id>, to be downloaded, or refused when downloads are off', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'zw-models-'));
    const plan = checkPlan(await loadPreset('qwen-image-lora-lowvram'), { cwd });
    expect(judgeModels(plan, {}).status).toBe('warn');
    expect(judgeModels(plan, {}).measured).toContain(`from ModelScope into ${join(cwd, 'models')}`);
    expect(judgeModels(plan, { DIFFSYNTH_SKIP_DOWNLOAD: 'true' }).status).toBe('fail');
    const root = join(cwd, 'models/Qwen/Qwen-Image');
    for (const f of [
      'text_encoder/model-00001.safetensors',
      'vae/diffusion_pytorch_model.safetensors',
      'transformer/diffusion_pytorch_model-00001.safetensors',
    ]) {
      mkdirSync(join(root, f, '..'), { recursive: true });
      writeFileSync(join(root, f), Buffer.alloc(1000));
    }
    const ok = judgeModels(plan, {});
    expect(ok.status).toBe('pass');
    expect(ok.measured).toContain('1 file(s), 1000 B');
    const elsewhere = mkdtempSync(join(tmpdir(), 'zw-base-'));
    expect(judgeModels(plan, { DIFFSYNTH_MODEL_BASE_PATH: elsewhere }).status).toBe('warn');
  });
});

describe('the verdict and its forms', () => {
  it('orders by the fix order, counts failures, and keeps the JSON shape', () => {
    const rs = [failed('port', 'm', 'n', 'f'), passed('python', 'm', 'n'), failed('shm', 'm', 'n', 'f')];
    expect(inFixOrder(rs).map((r) => r.id)).toEqual(['python', 'shm', 'port']);
    expect(failures(rs).map((r) => r.id)).toEqual(['shm', 'port']);
    const j = checksJson(rs);
    expect(Object.keys(j.checks[0]!)).toEqual(['id', 'status', 'title', 'measured', 'need', 'fix']);
    expect(j.failed).toEqual(['shm', 'port']);
    expect(CHECK_IDS).toEqual(
      expect.arrayContaining([
        'python',
        'versions',
        'deepspeed-ops',
        'cuda-driver',
        'shm',
        'port',
        'host-memory',
        'nvme',
        'disk',
        'inputs',
        'models',
      ]),
    );
  });

  it("a node's lines parse back (the pane reads them from the pass log)", () => {
    const r = failed('shm', '/dev/shm is 64 MiB | odd', 'at least 512 MiB', 'docker run --shm-size=16g');
    const line = nodeCheckLine('gpu01', r);
    expect(line).toBe(
      'zerowiz-check gpu01 FAIL shm: /dev/shm is 64 MiB | odd | need: at least 512 MiB | fix: docker run --shm-size=16g',
    );
    expect(parseNodeCheckLine(line)).toEqual({
      kind: 'check',
      host: 'gpu01',
      id: 'shm',
      status: 'fail',
      measured: '/dev/shm is 64 MiB | odd',
      need: 'at least 512 MiB',
      fix: 'docker run --shm-size=16g',
    });
    expect(parseNodeCheckLine(nodeDoneLine('gpu01', [r]))).toEqual({ kind: 'done', host: 'gpu01', counts: '1 FAIL' });
    expect(parseNodeCheckLine('zerowiz-step 1 start 123')).toBeNull();
  });

  it('the report escapes control characters from measured text', async () => {
    const plan = checkPlan(await loadPreset('zero3'), { cwd: '/w' });
    const lines = reportLines(plan, [failed('inputs', 'a \u001b[31mred\u001b[0m name', 'n', 'f')]);
    expect(lines.join('\n')).not.toContain('\u001b');
    expect(findPreset('zero3').name).toBe('zero3');
  });
});

describe("the probe's remembered answer", () => {
  const req = { ops: [{ name: 'cpu_adam', builder: 'CPUAdamBuilder', cuda: false }], zero: {}, deepspeed: true };
  const clean = () =>
    probe({ deepspeed: { ops: { cpu_adam: { installed: false, compatible: true, log: '', cudaProblem: null } } } });

  it('keeps only an answer with nothing to fix', () => {
    expect(cleanAnswer(clean(), req)).toBe(true);
    expect(
      cleanAnswer(
        probe({
          torch: { ninja: false },
          deepspeed: { ops: { cpu_adam: { installed: false, compatible: true, log: '', cudaProblem: null } } },
        }),
        req,
      ),
    ).toBe(false);
    expect(cleanAnswer(probe({ deepspeed: { ops: {} } }), req)).toBe(false);
    expect(cleanAnswer(probe({ deepspeed: null }), req)).toBe(false);
  });

  it('is used while the interpreter and the package folders are unchanged, at most a day, and written privately', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-cache-'));
    const venv = mkdtempSync(join(tmpdir(), 'zw-venv-'));
    const python = join(venv, 'python');
    writeFileSync(python, '');
    const site = join(venv, 'site-packages');
    mkdirSync(join(site, 'torch'), { recursive: true });
    const result = clean();
    result.packages.torch.path = join(site, 'torch');
    const key = probeCacheKey(python, req, { PATH: '/bin' });
    expect(probeCacheKey(python, req, { PATH: '/bin', LDFLAGS: '-L/x' })).not.toBe(key);
    expect(probeCacheKey(python, req, { PATH: '/bin', HOME: '/elsewhere' })).toBe(key);
    // A link planted at the target is replaced, never written through.
    const victim = join(venv, 'victim');
    writeFileSync(victim, 'keep');
    symlinkSync(victim, join(dir, `${key}.json`));
    saveProbe(dir, key, python, result, 1000);
    expect(readFileSync(victim, 'utf8')).toBe('keep');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(loadProbe(dir, key, 2000)?.at).toBe(1000);
    expect(loadProbe(dir, key, 1000 + PROBE_CACHE_MAX_AGE_MS + 1)).toBeNull();
    // pip installs something next to torch: site-packages' mtime moves, the answer is asked again.
    writeFileSync(join(site, 'new_pkg.pth'), '');
    utimesSync(site, new Date(), new Date(Date.now() + 5000));
    expect(loadProbe(dir, key, 2000)).toBeNull();
  });
});

describe('the gate of a local pass (the run supervisor calls it before each pass)', () => {
  it('checks that one pass: lines for its log that raise check-failed, the reason, and whether it may start', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'zw-gate-'));
    const seed = await loadPreset('qwen-image-lora-lowvram');
    const skip = skipChecks(['python,cuda-driver,gpus,deepspeed-ops,versions,host-memory', 'models'], false);
    const gate = await checkBeforePass(seed, 1, { cwd, skip, env: { PATH: barePath() }, host: 'box' });
    expect(gate.start).toBe(false);
    expect(gate.reason).toMatch(
      /^check inputs failed before the pass: in \/.*train: the script examples\/qwen_image\/model_training\/train\.py does not exist.*; fix: run zerowiz in the folder/,
    );
    expect(gate.logLines.map((l) => parseNodeCheckLine(l)?.host)).toEqual(Array(gate.logLines.length).fill('box'));
    const fail = gate.logLines.find((l) => l.startsWith('zerowiz-check box FAIL inputs: '))!;
    expect(new AlertEngine().line(1, fail)[0]).toMatchObject({ id: 'check-failed', step: 1 });
    // Only the train pass: the data pass's inputs are not its business.
    expect(fail).not.toContain('data_process:');
    mkdirSync(join(cwd, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(cwd, 'examples/qwen_image/model_training/train.py'), '');
    mkdirSync(join(cwd, 'models/train/Qwen-Image_lora-splited-cache'), { recursive: true });
    writeFileSync(join(cwd, 'models/train/Qwen-Image_lora-splited-cache/0.pth'), '');
    const ok = await checkBeforePass(seed, 1, { cwd, skip, env: { PATH: barePath() }, host: 'box' });
    expect(ok).toMatchObject({ start: true, reason: null });
    expect(ok.results.filter((r) => r.status === 'skip').map((r) => r.id)).toContain('nvme-speed');
  });

  it('--skip-check ids are checked once, for every verb', () => {
    expect([...skipChecks(['shm', 'port,disk'])]).toEqual(['shm', 'port', 'disk']);
    expect(() => skipChecks(['nope'])).toThrow("--skip-check: there is no check 'nope'");
  });
});
