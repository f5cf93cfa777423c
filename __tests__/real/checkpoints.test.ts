/**
 * The checkpoint guard on real files: LoRA adapters written by the real torch + safetensors + peft as
 * DiffSynth-Studio writes them (at Qwen-Image's catalog shapes, and trained at a tiny scale), broken saves,
 * and a real `accelerate launch` whose `save_state()` writes DeepSpeed 0.19.6's checkpoint files (the stand-in
 * engine's save_checkpoint), verified, read for their topology, converted with the stand-in ds_to_universal and
 * consolidated by `zerowiz export weights` through the real accelerate entry point's Python.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import { loadModelCatalog, type ModelEntry } from '../../src/estimate/models.js';
import { AlertEngine } from '../../src/observe/alerts.js';
import { loraExpectation, NO_EXPECTATION, type Expectation } from '../../src/checkpoints/expect.js';
import { findCheckpoints, verifyFound } from '../../src/checkpoints/find.js';
import { layoutKey, writeRenamed } from '../../src/checkpoints/lora-layout.js';
import { readSafetensorsHeader } from '../../src/checkpoints/safetensors.js';
import {
  captureTopology,
  recordTopology,
  relaunchTopologyChecks,
  topologyOfSetup,
} from '../../src/checkpoints/topology.js';
import { verifyWeightsFile } from '../../src/checkpoints/verify.js';
import { CheckpointWatcher } from '../../src/checkpoints/watch.js';
import { readRunRecord } from '../../src/records/record.js';
import { runCli } from '../helpers/cli.js';
import { BIN } from '../helpers/pty.js';
import { ROOT } from '../helpers/paths.js';
import { writeRunRecord } from '../helpers/run-record.js';
import { PYTHON, STANDIN, VENV_BIN, realEnv, tempDir, writeSetup } from './real.js';

const FILES_PY = join(ROOT, '__tests__', 'real', 'checkpoint_files.py');
const SAVE_PROBE = join(ROOT, '__tests__', 'real', 'save_probe.py');
/** The seed's --lora_target_modules. */
const SEED_TARGETS = [
  'to_q',
  'to_k',
  'to_v',
  'add_q_proj',
  'add_k_proj',
  'add_v_proj',
  'to_out.0',
  'to_add_out',
  'img_mlp.net.2',
  'img_mod.1',
  'txt_mlp.net.2',
  'txt_mod.1',
];

function py(args: string[], env: Record<string, string> = {}): string {
  const r = spawnSync(PYTHON, args, { env: realEnv(env), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`python ${args.join(' ')} exited ${r.status}:\n${r.stderr.slice(-3000)}`);
  return r.stdout.trim().split('\n').at(-1) ?? '';
}

const expectLora = (rank: number, model: ModelEntry): Expectation => {
  const e = loraExpectation(rank, SEED_TARGETS, model);
  if (!('lora' in e)) throw new Error(e.unknown);
  return { ...NO_EXPECTATION, lora: e.lora };
};

/** The catalog entry of Qwen-Image's DiT at the tiny scale checkpoint_files.py trains (hidden 16, FFN 32, 2 blocks). */
const TINY: ModelEntry = {
  ...loadModelCatalog().find((m) => m.id === 'qwen-image')!,
  id: 'qwen-image-tiny',
  modules: Object.fromEntries(
    SEED_TARGETS.map((t) => [
      t,
      (t.endsWith('_mod.1') ? [16, 96, 2] : t.endsWith('mlp.net.2') ? [32, 16, 2] : [16, 16, 2]) as [
        number,
        number,
        number,
      ],
    ]),
  ),
};

describe('LoRA files written by the real torch + safetensors + peft', () => {
  let out: string;
  let report: { real: Record<string, number[]>; tiny: Record<string, number[]>; tiny_lora_b_nonzero: boolean };
  beforeAll(() => {
    out = tempDir('zw-real-ckpt-');
    report = JSON.parse(py([FILES_PY, 'write', out]));
  });

  it("an adapter at Qwen-Image's catalog shapes (60 blocks, the seed's 12 targets, rank 1) is ok, every shape checked", () => {
    const qwen = loadModelCatalog().find((m) => m.id === 'qwen-image')!;
    const v = verifyWeightsFile(join(out, 'real', 'epoch-0.safetensors'), expectLora(1, qwen));
    expect(v.verdict, v.reason).toBe('ok');
    expect(v.tensors).toBe(1440);
    expect(v.loraLayout).toBe('diffsynth');
    expect(Object.keys(report.real)).toHaveLength(1440);
    // The same adapter checked against rank 2 is caught, naming the tensor.
    expect(verifyWeightsFile(join(out, 'real', 'epoch-0.safetensors'), expectLora(2, qwen)).cause).toBe(
      'lora-mismatch',
    );
  });

  it('an adapter trained at a tiny scale is ok, and its lora_B has moved from zero', () => {
    const v = verifyWeightsFile(join(out, 'tiny', 'epoch-0.safetensors'), expectLora(4, TINY));
    expect(v.verdict, v.reason).toBe('ok');
    expect(report.tiny_lora_b_nonzero).toBe(true);
    expect(v.reason).not.toMatch(/lora_B is zero/);
  });

  it('broken saves are bad, each with its cause, and the watcher raises one alert per file', () => {
    const causes = Object.fromEntries(
      ['zero3', 'empty', 'truncated', 'nan'].map((n) => [
        n,
        verifyWeightsFile(join(out, 'broken', `${n}.safetensors`), expectLora(4, TINY)).cause,
      ]),
    );
    expect(causes).toEqual({ zero3: 'empty-tensors', empty: 'no-tensors', truncated: 'truncated', nan: 'non-finite' });
    const w = new CheckpointWatcher({
      steps: [{ index: 1, name: 'train', roots: [join(out, 'broken')], expect: expectLora(4, TINY) }],
      since: 0,
      fix: { setupRef: 'qwen-image-lora-lowvram', runId: null },
    });
    const engine = new AlertEngine();
    const fired = w.finish(1).flatMap((e) => (e.alert ? [engine.checkpoint(e.step, e.alert)] : []));
    expect(fired.map((a) => a?.id)).toEqual(Array(4).fill('checkpoint-bad'));
  });

  it('rewritten in the ComfyUI and diffusers layouts, safetensors loads every tensor, equal, under the new names', async () => {
    const src = join(out, 'real', 'epoch-0.safetensors');
    const h = readSafetensorsHeader(src);
    if (!h.ok) throw new Error(h.problem);
    const pairs: string[] = [];
    for (const layout of ['comfyui', 'diffusers'] as const) {
      const dst = join(out, `${layout}.safetensors`);
      await writeRenamed(src, dst, (k) => layoutKey(k, layout), { 'zerowiz.layout': layout });
      const map = Object.fromEntries(h.header.tensors.map((t) => [t.name, layoutKey(t.name, layout)]));
      writeFileSync(join(out, `${layout}.map.json`), JSON.stringify(map));
      pairs.push(dst, join(out, `${layout}.map.json`));
    }
    expect(JSON.parse(py([FILES_PY, 'compare', src, ...pairs]))).toEqual({
      same: true,
      metadata: [
        { format: 'pt', 'zerowiz.layout': 'comfyui' },
        { format: 'pt', 'zerowiz.layout': 'diffusers' },
      ],
    });
  });
});

describe('a real accelerate save_state under ZeRO-3 on 2 CPU processes (DeepSpeed 0.19.6 files from the stand-in)', () => {
  let cwd: string;
  let out: string;
  let setup: Setup;
  beforeAll(async () => {
    cwd = tempDir('zw-real-save-');
    out = join(cwd, 'out');
    setup = await writeSetup(
      {
        name: 'z3',
        answers: withDefaults({ mode: '3', num_processes: 2, mixed_precision: 'bf16', model_params: 289 }),
        files: { ...DEFAULT_FILES },
        steps: [{ name: 'train', usesConfig: true, args: [SAVE_PROBE, '--output_dir', out] }],
      },
      join(cwd, 'cfg'),
    );
    const r = spawnSync(
      join(VENV_BIN, 'accelerate'),
      [
        'launch',
        '--config_file',
        setup.files.accelerateConfig,
        '--num_processes',
        '2',
        '--main_process_port',
        '0',
        SAVE_PROBE,
        '--output_dir',
        out,
      ],
      { cwd, env: realEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (r.status !== 0) throw new Error(`accelerate launch exited ${r.status}:\n${r.stderr.slice(-4000)}`);
  });

  it('the checkpoint is found and ok, and its files say ZeRO-3, 2 processes, bf16', () => {
    const found = findCheckpoints(out);
    expect(found.map((c) => [c.name, c.kind])).toEqual([['checkpoint_0', 'accelerate-checkpoint']]);
    const v = verifyFound(found[0]!, { ...NO_EXPECTATION, worldSize: 2, trainableParams: 289 });
    expect(v.verdict, v.reason).toBe('ok');
    expect(v.deepspeed).toEqual({ tag: 'pytorch_model', stage: 3, worldSize: 2, bf16: true });
    expect(v.hasWeights).toBe(false);
  });

  it("the topology is captured with the versions the real accelerate entry point's Python reports", async () => {
    const t = await captureTopology(setup, join(VENV_BIN, 'accelerate'), realEnv());
    expect(t).toMatchObject({ stage: 3, worldSize: 2, nodes: 1, precision: 'bf16', versionsProblem: null });
    expect(t.versions).toMatchObject({ accelerate: '1.15.0', deepspeed: '0.19.6' });
    expect(t.versions?.torch).toMatch(/^\d+\.\d+/);
  });

  it('a relaunch on 1 process is warned about, and the universal conversion runs as the extra step', () => {
    const one: Setup = { ...setup, answers: { ...setup.answers, num_processes: 1 } };
    const now = { ...topologyOfSetup(one), versions: null, versionsProblem: null };
    const checks = relaunchTopologyChecks(one, cwd, now, PYTHON);
    expect(checks).toHaveLength(1);
    expect(checks[0]!.warning).toMatch(
      /was written with ZeRO-3, 2 processes, bf16 \(read from its files\); this launch runs ZeRO-3, 1 process on 1 node, bf16/,
    );
    expect(checks[0]!.warning).toMatch(/put the universal folder in its place/); // accelerate names its tag
    const record = join(cwd, 'tools.jsonl');
    const [prog, ...args] = checks[0]!.universal[0]!.argv;
    const r = spawnSync(prog!, args, { env: realEnv({ ZEROWIZ_DS_TOOL_RECORD: record }), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const tagDir = join(out, 'checkpoints', 'checkpoint_0');
    expect(readFileSync(join(tagDir, 'latest_universal'), 'utf8')).toBe('pytorch_model_universal');
    expect(existsSync(join(tagDir, 'pytorch_model_universal', 'zero'))).toBe(true);
    expect(JSON.parse(readFileSync(record, 'utf8')).argv).toEqual(args.slice(2));
  });

  it('the run record keeps the topology; a relaunch reads it from there', async () => {
    const dir = writeRunRecord(cwd, {
      id: '20261201-131313-z3',
      name: 'z3',
      accelerate: join(VENV_BIN, 'accelerate'),
      answers: setup.answers,
      steps: setup.steps,
      extra: { checkpoints: [{ path: join(out, 'checkpoints', 'checkpoint_0') }] },
    });
    const rec = readRunRecord(dir);
    if (!('record' in rec)) throw new Error(rec.damaged.problem);
    recordTopology(rec.record, await captureTopology(setup, join(VENV_BIN, 'accelerate'), realEnv()));
    const one: Setup = { ...setup, answers: { ...setup.answers, num_processes: 1 } };
    const checks = relaunchTopologyChecks(
      one,
      cwd,
      { ...topologyOfSetup(one), versions: null, versionsProblem: null },
      PYTHON,
      [rec.record],
    );
    expect(checks[0]!.warning).toMatch(
      /ZeRO-3, 2 processes on 1 node, bf16, DeepSpeed 0\.19\.6 \(zerowiz run record\)/,
    );
  });

  it("zerowiz export weights consolidates it with zero_to_fp32, run by the record's accelerate Python: the trained weights", () => {
    if (!existsSync(BIN)) spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
    writeRunRecord(cwd, {
      id: '20261201-141414-z3',
      name: 'z3',
      accelerate: join(VENV_BIN, 'accelerate'),
      answers: setup.answers,
      steps: setup.steps,
    });
    const dest = join(cwd, 'weights');
    mkdirSync(dest);
    const r = runCli(['export', 'weights', '20261201-141414-z3', '--out', dest], {
      cwd,
      env: { PYTHONPATH: STANDIN, PATH: process.env.PATH },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/fp32 weights consolidated by zero_to_fp32/);
    const map = join(cwd, 'identity.json');
    writeFileSync(
      map,
      JSON.stringify({
        'inner.weight': 'inner.weight',
        'inner.bias': 'inner.bias',
        'head.weight': 'head.weight',
        'head.bias': 'head.bias',
      }),
    );
    expect(
      JSON.parse(py([FILES_PY, 'compare', join(cwd, 'final.safetensors'), join(dest, 'model.safetensors'), map])).same,
    ).toBe(true);
  });
});
