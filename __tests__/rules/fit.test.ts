/**
 * Issue 23's launch-side items, through the API the launch calls (src/rules/fit.ts) and the commands a user
 * runs: one step-time topology for the wizard and the launch (the setup carries the links the wizard
 * detected), every printed fix a command that runs as printed, an NVMe path that does not exist is a
 * warning, and the run records read back as measurements.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/config/questions.js';
import type { Answers } from '../../src/config/questions.js';
import type { Setup } from '../../src/config/setup.js';
import { fileFindings, validate } from '../../src/rules/validate.js';
import { launchEstimate, measuredFindings } from '../../src/rules/fit.js';
import { loadMeasuredRuns } from '../../src/records/measured-runs.js';
import { tradeoffOf } from '../../src/wizard/tradeoff.js';
import { runCli, tempDir } from '../helpers/cli.js';

const GiB = 2 ** 30;
const setupOf = (over: Partial<Answers>, name = 'big'): Setup => ({
  name,
  answers: withDefaults({
    model_params: 20e9,
    largest_layer_params: 60e6,
    num_processes: 8,
    gpu_memory: 24 * GiB,
    cpu_memory: 1024 * GiB,
    mode: '3',
    ...over,
  }),
  files: { accelerateConfig: 'a.yaml', dsConfig: 'd.json' },
  steps: [],
});

describe('one step-time topology for the wizard and the launch', () => {
  it('the wizard fills gpu_links from nvidia-smi topo -m, and the launch estimates with the same links', () => {
    const env = {
      gpuCount: 8,
      gpuMemoryBytes: 80 * GiB,
      cpuMemoryBytes: 1024 * GiB,
      interconnect: { kind: 'nvlink' as const, nvlinks: 18 },
    };
    const a = withDefaults({ model_params: 20e9, largest_layer_params: 60e6, num_processes: 8, mode: '3' }, env);
    expect(a.gpu_links).toBe('nvlink:18');
    const wizard = tradeoffOf(a, undefined, { interconnect: env.interconnect });
    const launch = launchEstimate({ ...setupOf({}), answers: a })!;
    const z3 = wizard.rows.find((r) => r.key === '3')!;
    expect(launch.link).toBe('NVLink x18');
    expect(z3.estimate.time.link).toBe(launch.link);
    expect(launch.json!.gpuBytesPerGpu).toBe(z3.estimate.gpuNeedBytes);
  });
  it("without detected links the launch says it assumed the GPU's usual links", () => {
    expect(launchEstimate(setupOf({}))!.link).toBe('NVLink x12 (assumed)');
  });
});

describe('every printed fix is a command the user can run as printed', () => {
  it('after a CUDA OOM the fix is a preset with the new mode and its launch (zerowiz launch has no mode flags)', () => {
    const est = launchEstimate(setupOf({ mode: '1' }), undefined, 'big')!;
    const fix = est.whatFits({
      gpu: 0,
      triedBytes: null,
      totalBytes: 24 * GiB,
      freeBytes: null,
      reservedUnallocatedBytes: null,
    })!;
    expect(fix).toMatch(
      /: zerowiz preset save big-zero[0-9a-z-]+ --preset big --mode [0-9a-z-]+ && zerowiz launch big-zero[0-9a-z-]+$/,
    );
    expect(fix).not.toMatch(/\(--mode /);
    // The command runs: preset save accepts exactly these flags.
    const home = tempDir('zw-home-');
    const dir = join(home, '.config', 'zerowiz', 'presets');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'big.yaml'), 'answers:\n  num_processes: 8\n  mode: "1"\n');
    const save = /zerowiz (preset save [^&]+) &&/.exec(fix)![1]!.trim().split(' ');
    const r = runCli(save, { env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config') } });
    expect(r.stderr).not.toMatch(/unknown option|error:/);
    expect(r.code).toBe(0);
  });
  it('an NVMe mode is suggested only with a directory that exists here, never a made-up /nvme', () => {
    const cwd = tempDir('zw-cwd-');
    // 20B full fine-tune on 8 x 24 GiB with 200 GiB of RAM per node: after a host OOM under ZeRO-3 offload
    // only its NVMe variant needs less CPU memory.
    const tight = setupOf({ mode: '3-offload', offload_device: 'cpu', cpu_memory: 200 * GiB });
    const oom = { gpu: 0, triedBytes: null, totalBytes: 24 * GiB, freeBytes: null, reservedUnallocatedBytes: null };
    const without = launchEstimate(tight, undefined, 'big', cwd)!;
    expect(without.hostWhatFits()).toBeNull();
    expect(without.whatFits(oom) ?? '').not.toContain('nvme');
    const nvme = join(cwd, 'fast');
    mkdirSync(nvme);
    const withDir = launchEstimate(
      { ...tight, answers: { ...tight.answers, nvme_path: nvme } },
      undefined,
      'big',
      cwd,
    )!;
    expect(withDir.hostWhatFits()).toBe(
      `ZeRO-3 offload NVMe fits by the estimate on this host (163.9 GiB of CPU memory per node against 372.5 GiB for ZeRO-3 offload; 2.9 GiB per GPU): zerowiz preset save big-zero3-offload-nvme --preset big --mode 3-offload --offload-device nvme --nvme-path ${nvme} && zerowiz launch big-zero3-offload-nvme`,
    );
  });
  it("the host-memory fix names the mode the table says fits on this host's memory, or none", () => {
    const cwd = tempDir('zw-cwd-');
    const nvme = join(cwd, 'fast');
    mkdirSync(nvme);
    const s = setupOf({ mode: '3-offload', offload_device: 'cpu', cpu_memory: 200 * GiB, nvme_path: nvme });
    const est = launchEstimate(s, undefined, 'big', cwd)!;
    // 250 GiB here: the NVMe variant's 163.9 GiB fits (the table's yes), so it is named as fitting.
    expect(est.hostWhatFits(250 * GiB)).toMatch(
      /^ZeRO-3 offload NVMe fits by the estimate on this host \(163\.9 GiB of CPU memory per node against 372\.5 GiB for ZeRO-3 offload; [\d.]+ GiB per GPU\): zerowiz preset save /,
    );
    // 100 GiB: no mode's CPU memory fits; naming one the table says does not fit would be no fix.
    expect(est.hostWhatFits(100 * GiB)).toBeNull();
  });
  it('an NVMe offload whose nvme_path does not exist is a warning (the NVMe preset writes /nvme)', () => {
    const cwd = tempDir('zw-cwd-');
    const s = setupOf({ mode: '3-offload', offload_device: 'nvme', nvme_path: join(cwd, 'no-such-nvme') });
    expect(fileFindings(s, 'flag', cwd).map((f) => f.rule)).toContain('nvme-path-missing');
    mkdirSync(join(cwd, 'no-such-nvme'));
    expect(fileFindings(s, 'flag', cwd).map((f) => f.rule)).not.toContain('nvme-path-missing');
    const r = runCli(['generate', '--preset', 'zero3-nvme', '--nvme-path', join(cwd, 'gone'), '--print', 'json']);
    expect(r.stderr).toMatch(/--nvme-path .*gone does not exist on this machine/);
  });
});

describe('measured beats modelled: the run records and the fit findings', () => {
  it('loadMeasuredRuns reads local records (nothing when there are none); measuredFindings says what was measured', () => {
    const cwd = tempDir('zw-cwd-');
    expect(loadMeasuredRuns(cwd)).toEqual([]);
    const s = setupOf({ mode: '3', gpu_memory: 80 * GiB });
    const runs = [
      {
        id: 'r1',
        startedAt: '2026-12-01T10:00:00.000Z',
        answers: s.answers,
        steps: [{ peakBytes: Math.round(61.2 * GiB), gpu: 1, oom: false }],
      },
    ];
    const f = measuredFindings(s, runs);
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toMatch(
      /^ZeRO-3: measured 61\.2 GiB on 2026-12-01, [+-]\d+% (over|under) the estimate \(run r1\)$/,
    );
    const oom = measuredFindings(s, [{ ...runs[0]!, steps: [{ peakBytes: 79 * GiB, gpu: 0, oom: true }] }]);
    expect(oom[0]).toMatchObject({ rule: 'measured-does-not-fit' });
    expect(oom[0]!.message).toMatch(/but ZeRO-3 ran out of GPU memory here on 2026-12-01/);
    expect(measuredFindings(setupOf({ mode: '3', lora_rank: 8, fine_tuning: 'full', micro_batch: 2 }), runs)).toEqual(
      [],
    );
  });
});

describe('the fit findings follow the answers (issue 29)', () => {
  it('encoders on the GPU of a model whose encoders are unknown: a finding beside the answer', () => {
    const s = setupOf({ model_name: 'my-dit', model_kind: 'dit', encoders_on_gpu: true, gpu_memory: 80 * GiB });
    const f = validate(s).find((x) => x.rule === 'encoders-unknown');
    expect(f?.message).toMatch(/encoders on the GPU are not counted: my-dit is not in the catalog/);
    expect(f?.questions).toEqual(['extra_gpu_params', 'encoders_on_gpu']);
    const known = setupOf({ model_name: 'flux.1-dev', model_kind: 'dit', encoders_on_gpu: true, gpu_memory: 80 * GiB });
    expect(validate(known).some((x) => x.rule === 'encoders-unknown')).toBe(false);
  });
  it('a mode that does not fit: the hint never says what is already on', () => {
    const s = setupOf({
      mode: '1',
      gradient_checkpointing: true,
      micro_batch: 1,
      gpu_memory: 24 * GiB,
      num_processes: 1,
    });
    const f = validate(s).find((x) => x.rule === 'mode-does-not-fit')!;
    expect(f).toBeDefined();
    expect(f.fix).not.toMatch(/gradient checkpointing|micro-batch/);
  });
});
