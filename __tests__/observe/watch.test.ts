// The watch subscribed to the real pipeline runner, with stand-ins that print what the real trainers print:
// what phase 2 wires into the pane, stream mode and the record, checked end to end here.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alert, AlertId } from '../../src/observe/alerts.js';
import { planCsvLog } from '../../src/config/diffsynth.js';
import { parseLiveStep, peaksFromJson } from '../../src/observe/live.js';
import { formatPeakVsEstimate } from '../../src/observe/peaks.js';
import { Pipeline, type StepSpec } from '../../src/launch/runner.js';
import { GpuTelemetry } from '../../src/observe/telemetry.js';
import { RunWatch } from '../../src/observe/watch.js';
import { tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { barePath } from '../helpers/seal.js';

const FIXTURES = join(ROOT, '__tests__', 'fixtures');
const TRAINERS = join(FIXTURES, 'trainers');
const DIFFSYNTH = join(TRAINERS, 'accelerate-diffsynth');
const HF = join(TRAINERS, 'accelerate-hf');
const FAIL = join(TRAINERS, 'accelerate-fail');
const SCRIPT = 'examples/qwen_image/model_training/train.py';
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function spec(name: string, file: string, args: string[], cwd: string, env: Record<string, string> = {}): StepSpec {
  // Each step's output reaches the watch through its log, as in a run's supervisor.
  const logPath = join(cwd, `${name}-${Math.random().toString(36).slice(2)}.log`);
  return { name, file, args, logPath, cwd, env: { ...process.env, FAKE_TRAIN_STEP_MS: '1', ...env } };
}

async function run(specs: StepSpec[], watch: RunWatch, grace = { sigintMs: 10_000, sigtermMs: 5_000 }) {
  const pipeline = new Pipeline(specs, grace);
  pipeline.subscribe(watch);
  const outcome = await pipeline.run();
  await watch.settle();
  return { pipeline, outcome };
}

describe('DiffSynth: the loss comes only from loss.csv', () => {
  it('the seed pipeline (cache pass, then training with --enable_csv_log): sparkline, last and min loss from the file', async () => {
    const cwd = tempDir('zw-watch-');
    const out = 'models/train/Qwen-Image_lora';
    const dataArgs = ['launch', SCRIPT, '--output_path', './models/cache', '--task', 'sft:data_process'];
    const trainArgs = [
      'launch',
      '--config_file',
      'c.yaml',
      SCRIPT,
      '--output_path',
      out,
      '--task',
      'sft:train',
      '--enable_csv_log',
    ];
    const plan = planCsvLog(trainArgs.slice(3), cwd);
    expect(plan.kind).toBe('enabled');
    const watch = new RunWatch({
      steps: [{ name: 'data_process' }, { name: 'train', csvPath: plan.kind === 'enabled' ? plan.csvPath : null }],
      csvPollMs: 20,
    });
    const { outcome } = await run(
      [
        spec('data_process', DIFFSYNTH, dataArgs, cwd),
        spec('train', DIFFSYNTH, trainArgs, cwd, { FAKE_TRAIN_STEPS: '30' }),
      ],
      watch,
    );
    expect(outcome.outcome).toBe('succeeded');
    const [cache, train] = watch.steps;
    expect(cache!.metrics.lossSource).toBeNull();
    expect(cache!.metrics.ratePerS).toBeGreaterThan(0); // the bare tqdm still gives the throughput
    const m = train!.metrics;
    expect(m.lossSource).toBe('csv');
    expect(m.lossCount).toBe(30);
    expect(m.optimizerStep).toBe(30);
    // The stand-in's loss is float32(0.15 / sqrt(step) + 0.02), falling: the last is the min.
    expect(m.lastLoss).toBe(Math.fround(0.15 / Math.sqrt(30) + 0.02));
    expect(m.minLoss).toBe(m.lastLoss);
    expect(m.series.recent()[0]).toBe(Math.fround(0.17));
    expect(watch.alerts.alerts).toEqual([]);
  });

  it('without --enable_csv_log a DiffSynth run shows no loss at all (why zerowiz offers the flag)', async () => {
    const cwd = tempDir('zw-watch-');
    const watch = new RunWatch({ steps: [{ name: 'train' }] });
    await run([spec('train', DIFFSYNTH, ['launch', SCRIPT, '--output_path', 'out'], cwd)], watch);
    expect(watch.steps[0]!.metrics.lossSource).toBeNull();
    expect(watch.steps[0]!.metrics.series.total).toBe(0);
    expect(existsSync(join(cwd, 'out', 'loss.csv'))).toBe(false);
  });

  it('a NaN row in loss.csv raises one alert, and the record keeps "nan" (JSON has no NaN)', async () => {
    const cwd = tempDir('zw-watch-');
    const alerts: Alert[] = [];
    const watch = new RunWatch({
      steps: [{ name: 'train', csvPath: join(cwd, 'out', 'loss.csv') }],
      alertContext: { precision: 'fp16' },
      onAlert: (a) => alerts.push(a),
      csvPollMs: 20,
    });
    await run(
      [
        spec('train', DIFFSYNTH, ['launch', SCRIPT, '--output_path', 'out', '--enable_csv_log'], cwd, {
          FAKE_TRAIN_STEPS: '12',
          FAKE_TRAIN_NAN_AT: '9',
        }),
      ],
      watch,
    );
    expect(alerts.map((a) => [a.id, a.title, a.line])).toEqual([
      ['nan-loss', 'loss is NaN (loss.csv)', 'loss.csv: 9,loss,NaN'],
    ]);
    expect(alerts[0]!.fix).toContain('bf16');
    const live = parseLiveStep(JSON.parse(JSON.stringify(watch.stepJson(0))));
    expect(live?.metrics.lastLoss).toBe('nan');
    expect(live?.metrics.nonFiniteLosses).toBe(4);
    expect(live?.alerts[0]?.id).toBe('nan-loss');
  });
});

describe('HF Trainer under DeepSpeed: dict lines, DeepSpeed reports, overflow skips', () => {
  it('takes the loss from the dicts, lr and skipped steps from DeepSpeed, and alerts on a collapsing fp16 scale', async () => {
    const cwd = tempDir('zw-watch-');
    const alerts: Alert[] = [];
    const watch = new RunWatch({ steps: [{ name: 'train' }], onAlert: (a) => alerts.push(a) });
    await run(
      [
        spec('train', HF, ['launch', 'train.py'], cwd, {
          FAKE_TRAIN_STEPS: '20',
          FAKE_DS_MEMORY: '1',
          FAKE_FP16_OVERFLOW_STEPS: '9',
        }),
      ],
      watch,
    );
    const m = watch.steps[0]!.metrics;
    expect(m.lossSource).toBe('hf');
    expect(m.lossCount).toBe(4); // every logging_steps (5) of 20; the summary's train_loss is not one of them
    expect(m.trainLoss).toBe(0.5432);
    expect(m.gradNorm).toBeGreaterThan(1);
    expect(m.epoch).toBe(1);
    expect(m.skippedSteps).toBe(9);
    expect(m.optimizerStep).toBe(20);
    expect(m.lossScale).toBe(65536 / 2 ** 9);
    expect(m.dsPeakAllocatedBytes).toBe(Math.round(12.99 * 2 ** 30));
    expect(m.ratePerS).toBeGreaterThan(0);
    expect(alerts.map((a) => a.id)).toEqual(['loss-scale-collapse']);
    expect(alerts[0]!.title).toBe('8 fp16 overflow skips in a row, loss scale down to 256');
    expect(alerts[0]!.line).toContain(
      '[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 512, reducing to 256',
    );
  });
});

describe('failing steps: each real failure message gives its alert and the reason of the failure', () => {
  const cases: [string, AlertId, string][] = [
    ['cuda-oom', 'cuda-oom', 'CUDA out of memory on GPU 3 trying to allocate 1.5 GiB'],
    ['nccl-timeout', 'nccl-timeout', 'NCCL collective timed out (_ALLGATHER_BASE after 10 min)'],
    ['port-in-use', 'port-in-use', 'port 29500 is already in use (another run on this machine?)'],
    ['nccl-shm', 'shm-too-small', '/dev/shm is too small for NCCL (shared memory segment)'],
    ['dataloader-bus-error', 'shm-too-small', '/dev/shm is too small for the DataLoader workers'],
    ['cpu-adam-build', 'ds-op-build', 'DeepSpeed could not build its cpu_adam op'],
    ['async-io', 'ds-op-build', 'DeepSpeed could not build its async_io op'],
    ['zero3-16bit-save', 'zero3-16bit-save', 'ZeRO-3 cannot save 16-bit weights: 16-bit gathering is off'],
    [
      'auto-hidden-size',
      'auto-unfilled',
      'accelerate could not fill "auto" for zero_optimization.reduce_bucket_size, zero_optimization.stage3_prefetch_bucket_size, zero_optimization.stage3_param_persistence_threshold',
    ],
    ['auto-kwargs', 'auto-unfilled', 'accelerate could not fill "auto" for optimizer.params.lr'],
    ['loss-scale-minimum', 'loss-scale-collapse', 'fp16 loss scale at its minimum: DeepSpeed stops the run'],
    ['host-oom-elastic', 'host-oom', 'a worker was killed by SIGKILL: most likely out of host memory'],
    ['sigkill', 'host-oom', 'step killed by SIGKILL: most likely out of host memory'],
  ];

  it('every case, through the pipeline', async () => {
    const cwd = tempDir('zw-watch-');
    for (const [fail, id, title] of cases) {
      const watch = new RunWatch({ steps: [{ name: 'train' }], alertContext: { freePort: 41237 } });
      const { outcome } = await run([spec('train', FAIL, ['launch', SCRIPT], cwd, { FAKE_FAIL: fail })], watch);
      expect(outcome.outcome, fail).toBe('failed');
      const reason = watch.alerts.reason(0);
      expect([reason?.id, reason?.title], fail).toEqual([id, title]);
      // One alert per distinct cause: the whole failure output gives exactly this one.
      expect(
        watch.alerts.alerts.map((a) => a.id),
        fail,
      ).toEqual([id]);
    }
  });

  it('no host-OOM alert when zerowiz itself ends the step with SIGKILL', async () => {
    const cwd = tempDir('zw-watch-');
    const watch = new RunWatch({ steps: [{ name: 'train' }] });
    const pipeline = new Pipeline(
      [
        spec('train', join(FIXTURES, 'accelerate'), ['launch', 'train.py'], cwd, {
          FAKE_ACCELERATE_HANG: '1',
          FAKE_ACCELERATE_IGNORE_SIGINT: '1',
          FAKE_ACCELERATE_WORKER_IGNORE_SIGTERM: '1',
          FAKE_ACCELERATE_STEPS: '2',
        }),
      ],
      { sigintMs: 50, sigtermMs: 50 },
    );
    pipeline.subscribe(watch);
    pipeline.subscribe({ line: (_i, text) => text === 'waiting (hang)' && void pipeline.stop() });
    const outcome = await pipeline.run();
    expect(outcome.outcome).toBe('interrupted');
    expect(watch.alerts.alerts).toEqual([]);
  });
});

describe('GPU memory per step', () => {
  it('records each GPU’s peak during each step and the summary line from the record', async () => {
    const cwd = tempDir('zw-watch-');
    const telemetry = new GpuTelemetry({
      env: {
        PATH: `${join(FIXTURES, 'bin-nvidia')}:${barePath()}`,
        ZW_FAKE_GPU_USED_MIB: '2048,30000:30000:30000:62669:30000',
      },
      intervalMs: 20,
    });
    cleanups.push(() => telemetry.stop());
    telemetry.start();
    const go = join(cwd, 'go');
    const watch = new RunWatch({ steps: [{ name: 'train' }], telemetry });
    const pipeline = new Pipeline(
      [spec('train', DIFFSYNTH, ['launch', SCRIPT, '--output_path', 'out'], cwd, { FAKE_TRAIN_GO_FILE: go })],
      {
        sigintMs: 10_000,
        sigtermMs: 5_000,
      },
    );
    pipeline.subscribe(watch);
    const running = pipeline.run();
    // The step waits for the go file: let telemetry see the ramp while it runs.
    const end = Date.now() + 20_000;
    while (telemetry.peaksOf(0).find((p) => p.index === 3)?.usedBytes !== 62669 * 2 ** 20) {
      if (Date.now() > end) throw new Error('no samples during the step');
      await new Promise((r) => setTimeout(r, 10));
    }
    writeFileSync(go, '');
    await running;
    const live = parseLiveStep(JSON.parse(JSON.stringify(watch.stepJson(0))))!;
    expect(live.gpu.telemetry).toBe('ok');
    expect(live.gpu.peaks.length).toBe(8);
    expect(formatPeakVsEstimate(peaksFromJson(live), 58 * 2 ** 30)).toBe(
      'peak 61.2 GiB on GPU 3 vs estimated 58.0 GiB (+6%)',
    );
  });
});
