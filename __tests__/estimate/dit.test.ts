/**
 * Issue 23: the estimate for the seed's family of jobs, through `zerowiz estimate` as a user runs it: the
 * optimizer's precision, DiT/MMDiT/UNet/LLM blocks with their shapes, video frames, frozen encoders that run
 * every step, the Wan2.1-14B full fine-tune that ran out of memory, and the words of the recommendation.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

const GiB = 2 ** 30;

interface Mode {
  mode: string;
  offloadDevice: string | null;
  fits: boolean | null;
  commBytesPerStep: number;
  peak: { gpuBytes: number; items: Record<string, number> };
  measured?: { text: string; oom: boolean } | null;
  measuredStep?: { seconds: number; text: string } | null;
}
interface Doc {
  input: Record<string, unknown> & { activation: Record<string, unknown> | null; trainableParams: number };
  modes: Mode[];
  recommended: string | null;
  reason: string;
  notes: string[];
}

function estimate(args: string[], cwd?: string): Doc {
  const r = runCli(['estimate', ...args, '--json'], cwd ? { cwd } : {});
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Doc;
}
const row = (d: Doc, mode: string, device: string | null = null) =>
  d.modes.find((m) => m.mode === mode && m.offloadDevice === (mode.endsWith('offload') ? (device ?? 'cpu') : null))!;

describe('optimizer precision: --optimizer and --master-weights give the bytes per trained parameter', () => {
  const base = ['--params', '7B', '--largest-layer', '500M', '--gpus-per-node', '8', '--gpu-memory', '80GiB'];
  it('DeepSpeed keeps fp32 master weights, fp32 moments and fp32 gradients: 16 bytes per trained parameter / N', () => {
    const d = estimate(base);
    expect(d.input).toMatchObject({ optimizer: 'adamw', masterWeights: 'fp32' });
    expect(row(d, '2').peak.items.optimizer).toBe(Math.ceil((7e9 / 8) * 4) * 4);
  });
  it('none (bf16_master_weights_and_grads + bf16_optimizer_states) halves them; 8-bit AdamW keeps 1-byte moments', () => {
    const none = estimate([...base, '--master-weights', 'none']);
    expect(none.input.masterWeights).toBe('none');
    expect(row(none, '2').peak.items.optimizer).toBe(Math.ceil((7e9 / 8) * 2) * 4);
    const eight = estimate([...base, '--optimizer', 'adamw-8bit']);
    expect(eight.input.optimizer).toBe('adamw-8bit');
    // fp32 master 4 + two 1-byte moments + fp32 gradients 4.
    expect(row(eight, '2').peak.items.optimizer).toBe(Math.ceil((7e9 / 8) * 4) * 2 + Math.ceil(7e9 / 8) * 2);
    const sgd = estimate([...base, '--optimizer', 'sgd']);
    expect(row(sgd, '2').peak.items.optimizer).toBe(Math.ceil((7e9 / 8) * 4) * 2);
  });
  it("torch's AdamW copies a moment during its step; an 8-bit optimizer updates in place", () => {
    const d = estimate([...base, '--seq-len', '256', '--layers', '32', '--hidden-size', '4096', '--heads', '32']);
    expect(row(d, '2').peak.items.optimizerStep).toBeGreaterThan(0);
    const eight = estimate([
      ...base,
      '--optimizer',
      'adamw-8bit',
      '--seq-len',
      '256',
      '--layers',
      '32',
      '--hidden-size',
      '4096',
      '--heads',
      '32',
    ]);
    expect(row(eight, '2').peak.items.optimizerStep).toBe(0);
  });
  it('an offloaded optimizer is DeepSpeed CPU Adam whatever the script builds, and a note says so', () => {
    const d = estimate([...base, '--optimizer', 'adamw-8bit', '--cpu-memory', '2TiB']);
    const plain = estimate([...base, '--cpu-memory', '2TiB']);
    expect(row(d, '2-offload').peak.gpuBytes).toBe(row(plain, '2-offload').peak.gpuBytes);
    expect(d.notes.join(' ')).toMatch(
      /offload rows count DeepSpeedCPUAdam: with the optimizer offloaded, accelerate swaps the adamw-8bit for it/,
    );
  });
  it('bad values exit 2 with a hint', () => {
    const r = runCli(['estimate', '--params', '7B', '--optimizer', 'lion']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--optimizer 'lion' is not one of adamw, adamw-8bit, adafactor, sgd\n {2}hint: /);
  });
});

describe('blocks: a DiT without a catalog entry is not an LLM', () => {
  // Wan2.1 1.3B's shape given by hand: 30 blocks of 1536, 12 heads, FFN 8960.
  const shape = ['--params', '1.42B', '--layers', '30', '--hidden-size', '1536', '--heads', '12', '--ffn-size', '8960'];
  it('--block dit with --frames and --temporal-factor: latent frames x tokens per frame, the text by cross-attention', () => {
    const d = estimate([
      ...shape,
      '--block',
      'dit',
      '--max-pixels',
      '832x480',
      '--frames',
      '81',
      '--temporal-factor',
      '4',
      '--text-tokens',
      '512',
    ]);
    expect(d.input.activation).toMatchObject({ block: 'dit', tokens: 21 * 1560, crossTokens: 512, vocab: 0 });
    expect(d.input.frames).toBe(81);
  });
  it('--block mmdit puts the text tokens in the sequence; --block llm is the language-model block', () => {
    const mm = estimate([...shape, '--block', 'mmdit', '--max-pixels', '1024x1024', '--text-tokens', '512']);
    expect(mm.input.activation).toMatchObject({ block: 'mmdit', tokens: 4096 + 512 });
    const llm = estimate([...shape, '--block', 'llm', '--seq-len', '4096']);
    expect(llm.input.activation).toMatchObject({ block: 'llama', tokens: 4096 });
  });
  it('--frames needs a video model or a temporal factor; an image model has none', () => {
    const r = runCli(['estimate', ...shape, '--block', 'dit', '--max-pixels', '512x512', '--frames', '49']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/temporal compression[^\n]*\n {2}hint: give --temporal-factor N/);
    const img = runCli(['estimate', '--model', 'qwen-image', '--frames', '49']);
    expect(img.code).toBe(2);
    expect(img.stderr).toMatch(/not a video model|not one/);
  });
  it("catalog video models take the VAE's temporal factor: Wan 81 frames -> 21 latent frames, LTX 49 -> 7", () => {
    const wan = estimate(['--model', 'wan2.1-14b', '--frames', '81', '--max-pixels', '832x480']);
    expect(wan.input.activation).toMatchObject({ tokens: 21 * 1560, crossTokens: 512, residualBytes: 4 });
    const ltx = estimate(['--model', 'ltx-video', '--frames', '49', '--max-pixels', '768x512']);
    expect(ltx.input.activation).toMatchObject({ tokens: 7 * 384, crossTokens: 128 });
  });
  it("SDXL's UNet gets activations (its levels from the catalog), not a note that they are left out", () => {
    const d = estimate(['--model', 'sdxl-unet', '--max-pixels', '1024x1024']);
    expect(d.input.activation).toMatchObject({ block: 'unet', tokens: 128 * 128 });
    expect(d.input.activationBytes as number).toBeGreaterThan(GiB);
    expect(d.notes.join(' ')).not.toMatch(/activations not estimated/);
    const ckpt = estimate(['--model', 'sdxl-unet', '--max-pixels', '1024x1024', '--gradient-checkpointing']);
    expect(ckpt.input.activationBytes as number).toBeLessThan(d.input.activationBytes as number);
  });
  it('frozen encoders that run every step: their weights on each GPU and the VAE encoding at full resolution', () => {
    const args = ['--model', 'ltx-video', '--lora-rank', '128', '--frames', '49', '--max-pixels', '768x512'];
    const cached = estimate(args);
    const live = estimate([...args, '--encoders-on-gpu']);
    expect(cached.input.encoderTransientBytes).toBe(0);
    // The catalog's frozen models at their bytes (T5 v1.1 XXL and the VAE, bf16): 2 x 5,193,310,656.
    expect(live.input.frozenGpuBytes).toBe(2 * 5_193_310_656);
    expect(live.input.encoderTransientBytes).toBe(3 * 128 * 768 * 512 * 49 * 2);
    expect(row(live, '2').peak.gpuBytes - row(cached, '2').peak.gpuBytes).toBeGreaterThan(5_193_310_656 * 2);
  });
});

describe('the Wan2.1-14B full fine-tune that ran out of memory (aigc-apps/VideoX-Fun#148)', () => {
  it('ZeRO-3 on 8 x 80 GB at 81 frames of 480x832 with checkpointing does not fit', () => {
    // The report: ZeRO-3, bf16, batch 1, 81 frames 480x832, full fine-tuning, 8 x A800 80GB: CUDA OOM.
    const d = estimate([
      '--model',
      'wan2.1-14b',
      '--gpus-per-node',
      '8',
      '--gpu-memory',
      '80GB',
      '--frames',
      '81',
      '--max-pixels',
      '832x480',
      '--gradient-checkpointing',
    ]);
    const z3 = row(d, '3');
    expect(z3.fits).toBe(false);
    expect(z3.peak.gpuBytes).toBeGreaterThan((80e9 / GiB) * 0.9 * GiB);
  });
});

describe('the recommendation, word for word', () => {
  it("the ZeRO-3 sentence gives the table's multiple of DDP: LoRA gathers every parameter, 88.1x, not 1.5x", () => {
    const d = estimate([
      '--model',
      'qwen-image',
      '--lora-rank',
      '32',
      '--gradient-checkpointing',
      '--gpus-per-node',
      '8',
      '--gpu-memory',
      '24GiB',
      '--cpu-memory',
      '1TiB',
    ]);
    expect(d.recommended).toBe('3');
    const ddp = row(d, '1').commBytesPerStep;
    const multiple = `${Number((row(d, '3').commBytesPerStep / ddp).toFixed(2))}x`;
    expect(multiple).not.toBe('1.5x');
    expect(d.reason).toContain(`moves ${multiple} the communication of DDP`);
    expect(d.reason).not.toContain('1.5x');
  });
  it('--params alone says the largest layer is not given, not "largest layer 0"', () => {
    const r = runCli(['estimate', '--params', '7B', '--gpus-per-node', '8']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('largest layer not given');
    expect(r.stdout).not.toMatch(/largest layer 0\b/);
  });
  it("says why DeepSpeed's estimator differs where it is shown: every parameter trained, model states only", () => {
    const r = runCli(['estimate', '--model', 'qwen-image', '--lora-rank', '32', '--gpu-memory', '24GiB']);
    expect(r.stdout).toMatch(
      /DeepSpeed's estimators \([^)]*every parameter trained, model states only: it counts all 20.67B parameters as trained, where 235.93M are\)/,
    );
  });
});

describe('measured beats modelled: estimate --preset NAME', () => {
  /** A preset in the user's config and one local run record of it that measured `peakGiB` (or ran out of memory). */
  function withRun(peakGiB: number, oom = false, ratePerS: number | null = null): { cwd: string; home: string } {
    const home = tempDir('zw-home-');
    const cwd = tempDir('zw-cwd-');
    const dir = join(home, '.config', 'zerowiz', 'presets');
    mkdirSync(dir, { recursive: true });
    const answers = {
      model_name: 'Llama-3.1-8B',
      model_params: 8030261248,
      largest_layer_params: 525336576,
      num_processes: 8,
      gpu_memory: '80GiB',
      mode: '2',
      seq_len: 4096,
      gradient_checkpointing: true,
    };
    writeFileSync(
      join(dir, 'llama.yaml'),
      `name: llama\nanswers:\n${Object.entries(answers)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n')}\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py]\n`,
    );
    const rec = join(cwd, '.zerowiz', 'runs', '20261201-101500-llama');
    mkdirSync(rec, { recursive: true });
    const step = {
      name: 'train',
      argv: ['launch', 'train.py'],
      usesConfig: true,
      command: 'accelerate launch train.py',
      log: '01-train.log',
      status: oom ? 'failed' : 'done',
      exitCode: oom ? 1 : 0,
      signal: null,
      startedAt: '2026-12-01T10:15:00.000Z',
      endedAt: '2026-12-01T11:15:00.000Z',
      durationMs: 3600000,
      live: {
        metrics: {
          lossSource: null,
          lastLoss: null,
          minLoss: null,
          lossCount: 0,
          nonFiniteLosses: 0,
          learningRate: null,
          ratePerS,
          skippedSteps: 0,
          lossScale: null,
          dsPeakAllocatedBytes: null,
        },
        gpu: {
          telemetry: 'ok',
          reason: null,
          peaks: [
            { index: 3, usedBytes: Math.round(peakGiB * GiB), totalBytes: 85520809984, at: '2026-12-01T10:30:00.000Z' },
          ],
        },
        alerts: oom
          ? [
              {
                id: 'cuda-oom',
                step: 1,
                line: 'torch.OutOfMemoryError: CUDA out of memory.',
                at: '2026-12-01T10:31:00.000Z',
                title: 'CUDA out of memory',
                fix: '...',
                fatal: true,
              },
            ]
          : [],
      },
    };
    writeFileSync(
      join(rec, 'run.json'),
      JSON.stringify({
        version: 1,
        id: '20261201-101500-llama',
        name: 'llama',
        source: 'llama',
        cwd,
        accelerate: { path: '/usr/bin/accelerate', display: 'accelerate' },
        startedAt: '2026-12-01T10:15:00.000Z',
        endedAt: '2026-12-01T11:15:00.000Z',
        ended: oom ? 'failed' : 'succeeded',
        exitCode: oom ? 1 : 0,
        configFiles: [],
        steps: [step],
        setup: {
          name: 'llama',
          answers,
          files: { accelerateConfig: 'accelerate_config.yaml', dsConfig: 'ds_config.json' },
          steps: [{ name: 'train', args: ['train.py'], usesConfig: true }],
        },
      }),
    );
    return { cwd, home };
  }
  const run = (cwd: string, home: string, args: string[]) =>
    runCli(['estimate', '--preset', 'llama', ...args], {
      cwd,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config') },
    });

  it('shows the last measured peak of the same setup beside the estimate, and in --json', () => {
    const { cwd, home } = withRun(61.2);
    const r = run(cwd, home, []);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      /ZeRO-2: measured 61\.2 GiB on 2026-12-01, [+-]\d+% (over|under) the estimate \(run 20261201-101500-llama\)/,
    );
    const j = JSON.parse(run(cwd, home, ['--json']).stdout) as Doc;
    expect(j.input.preset).toBe('llama');
    expect(j.modes.find((m) => m.mode === '2')!.measured!.text).toMatch(/^measured 61\.2 GiB on 2026-12-01/);
    expect(j.modes.find((m) => m.mode === '1')!.measured).toBeNull();
  });
  it('shows the last measured step time of the same setup beside the model, and in --json', () => {
    // The Trainer's bar counted 0.25 optimizer steps a second: 4 s a step.
    const { cwd, home } = withRun(61.2, false, 0.25);
    const r = run(cwd, home, []);
    expect(r.stdout).toMatch(
      /ZeRO-2: measured 61\.2 GiB on 2026-12-01, [^;]*; measured 4\.0 s\/step on 2026-12-01, [+-]\d+% (over|under) the estimate \(run 20261201-101500-llama\)/,
    );
    const j = JSON.parse(run(cwd, home, ['--json']).stdout) as Doc;
    expect(j.modes.find((m) => m.mode === '2')!.measuredStep!.seconds).toBe(4);
    expect(j.modes.find((m) => m.mode === '3')!.measuredStep).toBeNull();
  });
  it('a recommendation the measurement contradicts says so', () => {
    const { cwd, home } = withRun(79.6, true);
    const r = run(cwd, home, ['--micro-batch', '1']);
    expect(r.stdout).toMatch(
      /Recommended: ZeRO-2\..* But ZeRO-2 ran out of GPU memory here on 2026-12-01: the measurement says it does not fit\./,
    );
  });
  it('flags that would contradict the preset exit 2 with a hint', () => {
    const { cwd, home } = withRun(61.2);
    const r = run(cwd, home, ['--params', '7B']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--preset takes the model and machine from the preset; --params would contradict it\n {2}hint: /,
    );
  });
});
