/**
 * The live parts of a launch on their own: the estimate a run is compared with and the fixes it names, the
 * GPUs a run's bars show, and stream mode's spacing for a bar without a total (run.json's `estimate` and
 * `live` blocks read back: record-read.test.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { estimateModes } from '../../src/estimate/estimate.js';
import { launchEstimate } from '../../src/rules/fit.js';
import { parseProgress } from '../../src/observe/logparse.js';
import { createRunRecord } from '../../src/records/record.js';
import { prepareLaunch } from '../../src/launch/entry.js';
import { RunFollower } from '../../src/launch/follower.js';
import type { RunKind } from '../../src/launch/kind.js';
import type { PipelineOutcome } from '../../src/observe/events.js';
import { runGpus } from '../../src/launch/supervisor.js';
import { LaunchStops, openView, type LaunchSession, type StopAnswer } from '../../src/launch/viewer.js';
import { PROGRESS_UNKNOWN_TOTAL_MAX_INTERVAL_MS, StreamPrinter } from '../../src/launch/stream.js';
import { loadPreset } from '../../src/setups/presets.js';
import { ownModeEstimate } from '../../src/rules/validate.js';
import { ROOT } from '../helpers/paths.js';
import { presetSource } from '../../src/config/source.js';
import { removeWorkDirs } from '../helpers/proc.js';

const HF_EIGHT = join(ROOT, '__tests__', 'fixtures', 'launch', 'hf-eight.yaml');
const TWO_STEP = join(ROOT, '__tests__', 'fixtures', 'launch', 'two-step.yaml');
const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});
const GIB = 2 ** 30;

describe('the estimate a launch is compared with', () => {
  it("is the setup's own mode through the peak model; after an OOM it names the next mode that fits, on the GPU's real size", async () => {
    const setup = await loadPreset(HF_EIGHT);
    const est = launchEstimate(setup, undefined, HF_EIGHT)!;
    expect(est.json!.mode).toBe('1');
    expect(est.json!.gpuBytesPerGpu / GIB).toBeCloseTo(46.48, 1);
    expect(est.label).toBe('ZeRO-1');
    // An 80 GiB GPU: ZeRO-2 is the fastest mode with a lower peak that fits.
    const fix = est.whatFits({
      gpu: 3,
      triedBytes: 1.5 * GIB,
      totalBytes: 79.19 * GIB,
      freeBytes: null,
      reservedUnallocatedBytes: null,
    });
    // A command the user can run as printed: `zerowiz launch` has no mode flags, so a preset with the mode.
    expect(fix).toBe(
      `switch to ZeRO-2, which fits by the estimate (33.8 GiB per GPU against 46.5 GiB for ZeRO-1): zerowiz preset save hf-eight-zero2 --preset ${HF_EIGHT} --mode 2 && zerowiz launch hf-eight-zero2`,
    );
    // A 24 GiB GPU (the message says so, whatever the setup assumed): ZeRO-1, 2 and 3 do not fit, 2-offload does.
    const small = est.whatFits({
      gpu: 0,
      triedBytes: null,
      totalBytes: 24 * GIB,
      freeBytes: null,
      reservedUnallocatedBytes: null,
    });
    expect(small).toMatch(
      /^switch to ZeRO-2 offload, which fits by the estimate \(15\.5 GiB per GPU against 46\.5 GiB/,
    );
    // A 12 GiB GPU: only offloading fits.
    const tiny = est.whatFits({
      gpu: 0,
      triedBytes: null,
      totalBytes: 12 * GIB,
      freeBytes: null,
      reservedUnallocatedBytes: null,
    });
    expect(tiny).toMatch(/^switch to ZeRO-3 offload, which fits by the estimate \(2\.7 GiB per GPU/);
    expect(tiny).toContain('--mode 3-offload && zerowiz launch hf-eight-zero3-offload');
    // Host memory: ZeRO-1 loads the whole model on each node's CPU, as every mode does without zero.Init:
    // no mode needs less (the alert then gives the general advice) ...
    expect(est.hostWhatFits()).toBeNull();
    // ... while ZeRO-3 offload with zero.Init has one: ZeRO-3 keeps nothing on the CPU.
    const offload = launchEstimate(
      { ...setup, answers: { ...setup.answers, mode: '3-offload', zero3_init: true } },
      undefined,
      'hf-eight',
    )!;
    expect(offload.hostWhatFits()).toBe(
      'ZeRO-3 needs 0 B of CPU memory per node against 117.3 GiB for ZeRO-3 offload, and fits the GPU by the estimate: zerowiz preset save hf-eight-zero3 --preset hf-eight --mode 3 && zerowiz launch hf-eight-zero3',
    );
  });

  it("is the same row the fit check finds, read from an estimate of every mode when that holds the setup's placement", async () => {
    const setup = await loadPreset(HF_EIGHT);
    const own = ownModeEstimate(setup.answers)!;
    expect(launchEstimate(setup)!.json!.gpuBytesPerGpu).toBe(own.row.gpuNeedBytes);
    const report = estimateModes(own.input);
    expect(report.modes).toContain(own.rowIn(report));
    expect(own.rowIn(report)).toEqual(own.row);
    // ZeRO-3 offload with the parameters kept on the GPU is no row of the table: computed on its input.
    const kept = ownModeEstimate({ ...setup.answers, mode: '3-offload', offload_param_device: 'none' })!;
    const all = estimateModes(kept.input);
    expect(all.modes).not.toContain(kept.rowIn(all));
    expect(kept.rowIn(all)).toEqual(kept.row);
  });

  it('is absent without a model size, and never throws on answers it cannot estimate', async () => {
    const setup = await loadPreset(HF_EIGHT);
    expect(launchEstimate({ ...setup, answers: { ...setup.answers, model_params: null } })).toBeNull();
    // Nothing is computed until asked; then the estimate is null, never an exception.
    const lazy = launchEstimate({
      ...setup,
      answers: { ...setup.answers, fine_tuning: 'lora', lora_targets: 'no_such_module' },
    });
    expect(lazy!.json).toBeNull();
    expect(
      lazy!.whatFits({ gpu: 0, triedBytes: null, totalBytes: null, freeBytes: null, reservedUnallocatedBytes: null }),
    ).toBeNull();
  });
});

describe('the GPUs a run uses', () => {
  it('the first of CUDA_VISIBLE_DEVICES (or of all GPUs), one per process of the node', async () => {
    const setup = await loadPreset(HF_EIGHT);
    const withProcesses = (processes: number) => ({
      ...setup,
      answers: { ...setup.answers, num_processes: processes },
    });
    expect(runGpus(withProcesses(8), {})).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(runGpus(withProcesses(2), {})).toEqual([0, 1]);
    expect(runGpus(withProcesses(2), { CUDA_VISIBLE_DEVICES: '4,5,6,7' })).toEqual([4, 5]);
  });
});

describe('stream mode, a bar without a total', () => {
  it('prints once a second at first, then ever further apart, at most a minute: a multi-day run does not spam', () => {
    const t0 = 1_700_000_000_000;
    let now = t0;
    let out = '';
    const printer = new StreamPrinter({ write: (s) => (out += s) }, ['train'], { now: () => now });
    printer.stepStart(0);
    const bar = (n: number) => parseProgress(`Steps: ${n}it [00:01, 1.00it/s]`)!;
    // One update per second for three days.
    for (let t = 0; t <= 3 * 86_400; t++) {
      now = t0 + t * 1000;
      printer.progress(0, bar(t));
    }
    printer.flush();
    const lines = out.trimEnd().split('\n');
    // The first 100 s: every second.
    expect(lines.slice(0, 5).map((l) => /Steps: (\d+)it/.exec(l)?.[1])).toEqual(['0', '1', '2', '3', '4']);
    // Then 1% of the time so far, up to a minute: about 4,500 lines in three days instead of 259,200.
    expect(lines.length).toBeGreaterThan(3 * 1440);
    expect(lines.length).toBeLessThan(3 * 1440 + 400);
    const last = lines.slice(-2).map((l) => Number(/Steps: (\d+)it/.exec(l)?.[1]));
    expect((last[1]! - last[0]!) * 1000).toBe(PROGRESS_UNKNOWN_TOTAL_MAX_INTERVAL_MS);
  });
});

describe('the free port the port-in-use alert suggests', () => {
  it("is never looked for by a viewer: a Slurm job's steps run elsewhere, and a local run's supervisor raises its alerts", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'zw-free-port-'));
    dirs.push(cwd);
    writeFileSync(join(cwd, 'train.py'), '');
    const setup = await loadPreset(TWO_STEP);
    const prepared = prepareLaunch(setup, { source: presetSource('test'), cwd, dryRun: true, env: {} });
    const record = createRunRecord({
      cwd,
      setup,
      source: 'test',
      commands: prepared.commands,
      accelerate: { path: 'accelerate', display: 'accelerate' },
    });
    /** A follower that reports one step start and never ends. */
    class Started extends RunFollower {
      async stop() {}
      killNow() {}
      protected loop(): Promise<PipelineOutcome> {
        this.startStep(0, { at: Date.now(), pid: null });
        return new Promise(() => undefined);
      }
    }
    const control = new Started(prepared.commands.map((c) => ({ name: c.step, logPath: join(cwd, 'none.log') })));
    const kind = {
      name: 'elsewhere',
      runsHere: false,
      signalsStop: false,
      open: async () => null,
      follow: () => ({ control, telemetry: null, keepsRecord: false, alertsGiven: false, record: () => record }),
      panePrompt: () => '',
      streamQuestion: () => '',
      endLines: () => [],
    } satisfies RunKind;
    const session = openView(prepared, { record, writes: [] }, kind);
    void session.run();
    await vi.waitFor(() => expect(session.model.steps[0]!.status).toBe('running'));
    // Time enough for a look-up (one takes a few milliseconds).
    await new Promise((r) => setTimeout(r, 300));
    expect(session.watch.alerts.ctx.freePort).toBeNull();
  });
});

describe('Ctrl+C in stream mode for a run that outlives zerowiz', () => {
  it('LaunchStops reads the answer (y or yes stops, d leaves, anything else keeps following) and says what it did', () => {
    const stop = vi.fn(async () => undefined);
    const detach = vi.fn();
    const session = {
      kind: { signalsStop: false, streamQuestion: () => 'stop it?' },
      control: { stopping: false },
      record: { json: {} },
      detach,
      stop,
      killNow: vi.fn(),
    } as unknown as LaunchSession;
    const stops = new LaunchStops();
    try {
      stops.attach(session);
      let asked: ((line: string | null) => StopAnswer) | null = null;
      stops.asker = (question, answer) => {
        expect(question).toBe('stop it?');
        asked = answer;
        return () => undefined;
      };
      // Each Ctrl+C asks; the line is passed on as typed: the asker does not read it itself.
      const said = ['', 'maybe', 'D', ' Yes ', 'y'].map((line) => {
        asked = null;
        process.emit('SIGINT', 'SIGINT');
        return asked!(line);
      });
      expect(said).toEqual(['follow', 'follow', 'detach', 'stop', 'stop']);
      expect(detach).toHaveBeenCalledTimes(1);
      expect(stop).toHaveBeenCalledTimes(2);
    } finally {
      stops.close();
    }
  });
});
