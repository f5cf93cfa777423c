/**
 * The checks' Python side against the real interpreter of the real accelerate 1.15.0 (the tier's venv), with
 * the DeepSpeed stand-in's op_builder and zero_optimization model: one Python process for every Python
 * check; deepspeed missing; async_io without libaio and with a libaio found through LDFLAGS; ops prebuilt
 * for another torch; the config's keys through DeepSpeed's own model; a CPU torch against an old driver.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadPreset } from '../../src/setups/presets.js';
import type { Setup } from '../../src/config/setup.js';
import { runChecks } from '../../src/checks/run.js';
import type { CheckId, CheckResult } from '../../src/checks/types.js';
import { ROOT } from '../helpers/paths.js';
import { BIN } from '../helpers/pty.js';
import { PYTHON, STANDIN, VENV_BIN, realEnv, tempDir } from './real.js';
import { barePath } from '../helpers/seal.js';

const ACCELERATE = join(VENV_BIN, 'accelerate');
const NVIDIA_BIN = join(ROOT, '__tests__', 'fixtures', 'bin-nvidia');
/** Checks that do not need Python, left out where a test is about the Python side. */
const NOT_PYTHON: CheckId[] = ['host-memory', 'shm', 'nvme', 'nvme-speed', 'disk', 'inputs', 'models', 'gpus'];

function get(results: CheckResult[], id: CheckId): CheckResult {
  const r = results.find((x) => x.id === id);
  if (!r) throw new Error(`no ${id}`);
  return r;
}

async function run(setup: Setup, env: NodeJS.ProcessEnv, skip: CheckId[] = NOT_PYTHON) {
  return (await runChecks(setup, { cwd: tempDir(), env, accelerate: ACCELERATE, skip: new Set(skip) })).results;
}

/** Whether this machine links a program calling io_submit with -laio (libaio-dev installed). */
function libaioLinks(): boolean {
  const d = tempDir('zw-aio-probe-');
  writeFileSync(join(d, 't.c'), 'void io_submit(void); int main(void) { io_submit(); return 0; }');
  return spawnSync('cc', [join(d, 't.c'), '-o', join(d, 'a.out'), '-laio']).status === 0;
}

beforeAll(() => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
});

describe('the Python checks ask the real interpreter of accelerate, once', () => {
  it("python, deepspeed-ops and versions pass through ONE Python process started from accelerate's #! line", async () => {
    // A sitecustomize on PYTHONPATH logs every interpreter that starts.
    const site = tempDir('zw-site-');
    const log = join(site, 'starts.log');
    writeFileSync(
      join(site, 'sitecustomize.py'),
      `import os\nopen(${JSON.stringify(log)}, "a").write(f"{os.getpid()}\\n")\n`,
    );
    const env = realEnv({ PYTHONPATH: `${site}:${STANDIN}`, PATH: `${VENV_BIN}:${barePath()}` });
    const results = await run(await loadPreset('qwen-image-lora-lowvram'), env);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
    const py = get(results, 'python');
    expect(py.status).toBe('pass');
    expect(py.measured).toContain(`at ${PYTHON}`);
    expect(py.measured).toContain(`from ${ACCELERATE} (#!${PYTHON})`);
    expect(py.measured).toMatch(
      /torch 2\.\d+\.\d+\+cpu \(import [\d.]+ s\); accelerate 1\.15\.0 .*; deepspeed 0\.19\.6/,
    );
    const ops = get(results, 'deepspeed-ops');
    // cpu_adam is never prebuilt by pip; DeepSpeed compiles it at the first step (ninja and c++ are asked).
    expect(ops.measured).toContain('cpu_adam is not prebuilt');
    expect(get(results, 'versions')).toMatchObject({ status: 'pass' });
    expect(get(results, 'versions').measured).toContain('DeepSpeed accepts the zero_optimization block');
  });

  it('a CPU torch against the stand-in nvidia-smi of an old driver: the wheel and the driver, and which torch to install', async () => {
    const env = realEnv({
      PYTHONPATH: STANDIN,
      PATH: `${NVIDIA_BIN}:${VENV_BIN}:${barePath()}`,
      ZW_FAKE_NVIDIA_SMI: 'old',
    });
    const r = get(await run(await loadPreset('zero2'), env), 'cuda-driver');
    expect(r.status).toBe('fail');
    expect(r.measured).toMatch(
      /^torch 2\.\d+\.\d+\+cpu is a CPU-only build \(torch\.version\.cuda is None\); driver 470\.57\.02, which supports CUDA up to 11\.4$/,
    );
    expect(r.fix).toBe(
      `${PYTHON} -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu118`,
    );
  });

  it('deepspeed not installed: python fails with the pip line for that interpreter; ops and versions wait for it', async () => {
    const env = realEnv({ PATH: `${VENV_BIN}:${barePath()}` });
    delete env.PYTHONPATH;
    const results = await run(await loadPreset('zero3-offload'), env);
    const py = get(results, 'python');
    expect(py.status).toBe('fail');
    expect(py.measured).toContain("deepspeed: not importable (ModuleNotFoundError: No module named 'deepspeed')");
    expect(py.fix).toBe(`${PYTHON} -m pip install deepspeed`);
    expect(get(results, 'deepspeed-ops').status).toBe('skip');
    expect(get(results, 'versions').status).toBe('skip');
  });
});

describe("the probe's answer, remembered", () => {
  it('a second check reuses a clean answer (no interpreter starts); an install next to deepspeed asks again', async () => {
    const copy = tempDir('zw-ds-');
    cpSync(STANDIN, copy, { recursive: true });
    const site = tempDir('zw-site-');
    const log = join(site, 'starts.log');
    writeFileSync(
      join(site, 'sitecustomize.py'),
      `import os\nopen(${JSON.stringify(log)}, "a").write(f"{os.getpid()}\\n")\n`,
    );
    const env = realEnv({
      PYTHONPATH: `${site}:${copy}`,
      PATH: `${VENV_BIN}:${barePath()}`,
      XDG_CACHE_HOME: tempDir('zw-cache-'),
    });
    const setup = await loadPreset('zero3-offload');
    const first = await runChecks(setup, { cwd: tempDir(), env, accelerate: ACCELERATE, skip: new Set(NOT_PYTHON) });
    expect(get(first.results, 'python').status).toBe('pass');
    const second = await runChecks(setup, { cwd: tempDir(), env, accelerate: ACCELERATE, skip: new Set(NOT_PYTHON) });
    expect(get(second.results, 'python').measured).toContain('nothing installed since; --fresh asks again');
    expect(get(second.results, 'deepspeed-ops').status).toBe(get(first.results, 'deepspeed-ops').status);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
    console.log(
      `probe: ${get(first.results, 'python').ms} ms asked, ${get(second.results, 'python').ms} ms remembered`,
    );
    // "pip install" beside the deepspeed package: the folder holding it changes, the interpreter is asked again.
    mkdirSync(join(copy, 'newpkg-1.0.dist-info'));
    const third = await runChecks(setup, { cwd: tempDir(), env, accelerate: ACCELERATE, skip: new Set(NOT_PYTHON) });
    expect(get(third.results, 'python').measured).not.toContain('nothing installed since');
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});

describe("DeepSpeed's ops, as op_builder answers", () => {
  it("async_io: not buildable without libaio (with DeepSpeed's reasons), buildable once LDFLAGS finds a libaio", async () => {
    const nvme = tempDir('zw-nvme-');
    const setup = { ...(await loadPreset('zero3-nvme')) };
    setup.answers = { ...setup.answers, nvme_path: nvme };
    const base = { PYTHONPATH: STANDIN, PATH: `${VENV_BIN}:${barePath()}` };
    const without = get(await run(setup, realEnv(base)), 'deepspeed-ops');
    if (libaioLinks()) {
      console.log('libaio-dev is installed here: the not-buildable case is covered by checks.test.ts only');
    } else {
      expect(without.status).toBe('fail');
      expect(without.measured).toContain('async_io is not prebuilt and op_builder says it cannot be built here');
      expect(without.measured).toContain(
        'async_io requires the dev libaio .so object and headers but these were not found.',
      );
      expect(without.fix).toMatch(/libaio-dev|libaio-devel|CFLAGS and LDFLAGS/);
    }
    // A libaio.so with io_submit, found through LDFLAGS as DeepSpeed's message suggests.
    const lib = tempDir('zw-libaio-');
    writeFileSync(join(lib, 'aio.c'), 'void io_submit(void) {}\n');
    const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', join(lib, 'libaio.so'), join(lib, 'aio.c')], {
      encoding: 'utf8',
    });
    expect(cc.status, cc.stderr).toBe(0);
    const withLib = get(await run(setup, realEnv({ ...base, LDFLAGS: `-L${lib}` })), 'deepspeed-ops');
    expect(withLib.measured).not.toContain('cannot be built here');
    expect(withLib.measured).toContain('async_io is not prebuilt');
  });

  it('ops prebuilt for another torch fail: DeepSpeed would raise "PyTorch version mismatch" at load', async () => {
    const env = realEnv({
      PYTHONPATH: STANDIN,
      PATH: `${VENV_BIN}:${barePath()}`,
      ZW_FAKE_DS_INSTALLED_OPS: 'cpu_adam',
      ZW_FAKE_DS_TORCH_INFO: '2.4',
    });
    const r = get(await run(await loadPreset('zero3-offload'), env), 'deepspeed-ops');
    expect(r.status).toBe('fail');
    expect(r.measured).toMatch(/cpu_adam is prebuilt, for torch 2\.4; torch here is 2\.\d+/);
    expect(r.fix).toContain('DS_BUILD_CPU_ADAM=1');
    const ok = get(
      await run(await loadPreset('zero3-offload'), { ...env, ZW_FAKE_DS_TORCH_INFO: '' }),
      'deepspeed-ops',
    );
    expect(ok).toMatchObject({ status: 'pass', measured: 'cpu_adam prebuilt (installed_ops)' });
  });

  it("the config's zero_optimization through DeepSpeed's own model: an unknown key fails, a deprecated one warns", async () => {
    const env = realEnv({ PYTHONPATH: STANDIN, PATH: `${VENV_BIN}:${barePath()}` });
    const zero3 = await loadPreset('zero3');
    const bad = get(
      await run({ ...zero3, extra: { json: { zero_optimization: { grad_hooks: true } } } }, env),
      'versions',
    );
    expect(bad.status).toBe('fail');
    expect(bad.measured).toContain('rejects the zero_optimization block');
    expect(bad.measured).toContain('grad_hooks Extra inputs are not permitted');
    const dep = get(
      await run({ ...zero3, extra: { json: { zero_optimization: { cpu_offload_param: true } } } }, env),
      'versions',
    );
    expect(dep.status).toBe('warn');
    expect(dep.measured).toContain('Config parameter cpu_offload_param is deprecated use offload_param instead');
  });
});

describe('the command', () => {
  it('`zerowiz check` with the real accelerate prints the report and times the probe', () => {
    const cwd = tempDir('zw-cli-');
    mkdirSync(join(cwd, 'x'), { recursive: true });
    const r = spawnSync(
      process.execPath,
      [BIN, 'check', 'zero3-offload', '--accelerate', ACCELERATE, '--skip-check', 'inputs'],
      {
        cwd,
        env: { ...realEnv({ PYTHONPATH: STANDIN, PATH: `${VENV_BIN}:${barePath()}` }), NO_COLOR: '1' },
        encoding: 'utf8',
      },
    );
    expect(r.stdout).toMatch(/^PASS python +\(\d+ ms\)$/m);
    expect(r.stdout).toMatch(/^FAIL cuda-driver/m);
    expect(r.stderr).toMatch(/^zerowiz: \d check\(s\) failed: cuda-driver/m);
  });
});
