/**
 * `zerowiz export weights RUN [--step N] --out DIR` through the built bin: the consolidated weights of a run's
 * last good checkpoint, a DiffSynth LoRA in the key layout ComfyUI and diffusers load, zero_to_fp32 (the DeepSpeed
 * stand-in's, through the Python of the record's accelerate) when only ZeRO shards exist.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSafetensorsHeader } from '../../src/checkpoints/safetensors.js';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';
import { writeDeepSpeedTag } from '../helpers/deepspeed-ckpt.js';
import { ROOT } from '../helpers/paths.js';
import { writeRunRecord } from '../helpers/run-record.js';
import { diffsynthLora, writeSafetensors } from '../helpers/safetensors.js';

const PYTHON3 = spawnSync('python3', ['--version']).status === 0;
const SHIM = join(ROOT, '__tests__', 'fixtures', 'bin-python', 'python');
const SCRIPT = 'examples/qwen_image/model_training/train.py';
const RUN = '20261201-101010-qwen';
/** A rank-2 LoRA on Qwen-Image's to_q (the catalog's shape, 60 blocks), as DiffSynth saves it. */
const LORA = diffsynthLora(2, { to_q: [3072, 3072, 60] });

/** A DiffSynth run that saved epoch-0 and epoch-1 under its --output_path. */
function diffsynthRun(files: Record<string, Parameters<typeof writeSafetensors>[1]>) {
  const box = sandbox();
  writeRunRecord(box.cwd, {
    id: RUN,
    name: 'qwen',
    answers: { model_name: 'qwen-image', fine_tuning: 'lora', lora_rank: 2, lora_targets: 'to_q' },
    steps: [
      { name: 'train', usesConfig: true, args: [SCRIPT, '--output_path', './models/out', '--task', 'sft:train'] },
    ],
  });
  for (const [name, tensors] of Object.entries(files)) writeSafetensors(join(box.cwd, 'models/out', name), tensors);
  return box;
}

const keysOf = (path: string) => {
  const h = readSafetensorsHeader(path);
  if (!h.ok) throw new Error(h.problem);
  return h.header.tensors.map((t) => t.name);
};
const dataOf = (path: string) => {
  const h = readSafetensorsHeader(path);
  if (!h.ok) throw new Error(h.problem);
  return readFileSync(path).subarray(h.header.dataStart);
};

describe('zerowiz export weights: a DiffSynth LoRA', () => {
  it("writes the last checkpoint in ComfyUI's key layout, the same tensors byte for byte, and says which layout", () => {
    const box = diffsynthRun({ 'epoch-0.safetensors': LORA, 'epoch-1.safetensors': LORA });
    const r = runCli(['export', 'weights', RUN, '--out', 'exported'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const out = join(box.cwd, 'exported', 'epoch-1.safetensors');
    const keys = keysOf(out);
    expect(keys).toHaveLength(120);
    expect(keys.every((k) => /^diffusion_model\.transformer_blocks\.\d+\.attn\.to_q\.lora_[AB]\.weight$/.test(k))).toBe(
      true,
    );
    expect(keys).toContain('diffusion_model.transformer_blocks.0.attn.to_q.lora_A.weight');
    expect(dataOf(out).equals(dataOf(join(box.cwd, 'models/out/epoch-1.safetensors')))).toBe(true);
    expect(r.stdout).toMatch(/wrote exported\/epoch-1\.safetensors/);
    expect(r.stdout).toMatch(/ComfyUI layout: diffusion_model\.<module>\.lora_A\.weight/);
    expect(r.stdout).toMatch(/from models\/out\/epoch-1\.safetensors \(ok:/);
  });

  it('--step picks a checkpoint; --layout diffusers and diffsynth write those keys', () => {
    const box = diffsynthRun({ 'epoch-0.safetensors': LORA, 'epoch-1.safetensors': LORA });
    const a = runCli(['export', 'weights', RUN, '--step', '0', '--layout', 'diffusers', '--out', 'd'], {
      cwd: box.cwd,
      env: box.env,
    });
    expect(a.code, a.stderr).toBe(0);
    expect(keysOf(join(box.cwd, 'd', 'epoch-0.safetensors'))).toContain(
      'transformer.transformer_blocks.0.attn.to_q.lora_A.weight',
    );
    expect(a.stdout).toMatch(/diffusers layout/);
    const b = runCli(['export', 'weights', RUN, '--layout', 'diffsynth', '--out', 's'], { cwd: box.cwd, env: box.env });
    expect(keysOf(join(box.cwd, 's', 'epoch-1.safetensors'))).toContain(
      'transformer_blocks.0.attn.to_q.lora_A.default.weight',
    );
    expect(b.code).toBe(0);
    expectOneLineError(
      runCli(['export', 'weights', RUN, '--step', '7', '--out', 'x'], { cwd: box.cwd, env: box.env }),
      /no checkpoint of step 7 in run 20261201-101010-qwen/,
    );
  });

  it('skips a bad newest checkpoint for the last good one, and says why', () => {
    const box = diffsynthRun({
      'epoch-0.safetensors': LORA,
      'epoch-1.safetensors': LORA.map((t) => ({ ...t, shape: [0] })),
    });
    const r = runCli(['export', 'weights', RUN, '--out', 'exported'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(box.cwd, 'exported', 'epoch-0.safetensors'))).toBe(true);
    expect(r.stderr).toMatch(/warning: models\/out\/epoch-1\.safetensors is bad \(120 of 120 tensors are empty/);
  });

  it('bad input: no --out, an unknown run, a run without checkpoints, --step for another kind, a link in the way', () => {
    const box = diffsynthRun({ 'epoch-0.safetensors': LORA });
    const cli = (args: string[]) => runCli(args, { cwd: box.cwd, env: box.env });
    expectOneLineError(cli(['export', 'weights', RUN]), /export weights needs --out DIR/);
    expectOneLineError(cli(['export', 'weights', 'nosuchrun', '--out', 'x']), /no run 'nosuchrun'/);
    expectOneLineError(
      cli(['export', 'slurm', 'zero3', '--step', '3', '--out', 'x']),
      /--step is for `export weights`/,
    );
    writeRunRecord(box.cwd, {
      id: '20261201-111111-empty',
      steps: [{ name: 'train', usesConfig: true, args: ['train.py', '--output_dir', 'nothing-here'] }],
    });
    expectOneLineError(
      cli(['export', 'weights', 'empty', '--out', 'x']),
      /run 20261201-111111-empty saved no checkpoint/,
    );
    mkdirSync(join(box.cwd, 'linked'));
    writeFileSync(join(box.cwd, 'elsewhere'), 'mine');
    symlinkSync(join(box.cwd, 'elsewhere'), join(box.cwd, 'linked', 'epoch-0.safetensors'));
    expectOneLineError(cli(['export', 'weights', RUN, '--out', 'linked']), /symbolic link/);
    expect(readFileSync(join(box.cwd, 'elsewhere'), 'utf8')).toBe('mine');
  });

  it('keeps an existing different file as a backup', () => {
    const box = diffsynthRun({ 'epoch-0.safetensors': LORA });
    mkdirSync(join(box.cwd, 'out'));
    writeFileSync(join(box.cwd, 'out', 'epoch-0.safetensors'), 'older');
    const r = runCli(['export', 'weights', RUN, '--out', 'out'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const names = readdirSync(join(box.cwd, 'out'));
    const backup = names.find((n) => n.startsWith('epoch-0.safetensors.bak-'));
    expect(backup).toBeDefined();
    expect(readFileSync(join(box.cwd, 'out', backup!), 'utf8')).toBe('older');
    expect(names.filter((n) => n.includes('.tmp'))).toEqual([]);
  });
});

describe.skipIf(!PYTHON3)('zerowiz export weights: only ZeRO shards, so zero_to_fp32 runs', () => {
  /** An HF run whose checkpoint-10 holds DeepSpeed states only (ZeRO-3 without the gather). */
  function hfRun(worldSize: number, skipRanks: number[] = [], savedWorldSize = worldSize) {
    const box = sandbox();
    const bin = join(box.home, 'venv', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'accelerate'), `#!${SHIM}\nimport sys\n`);
    chmodSync(join(bin, 'accelerate'), 0o755);
    writeRunRecord(box.cwd, {
      id: '20261201-121212-hf',
      name: 'hf',
      accelerate: join(bin, 'accelerate'),
      answers: { mode: '3', num_processes: worldSize, model_params: 6 },
      steps: [{ name: 'train', usesConfig: true, args: ['train.py', '--output_dir', 'out'] }],
    });
    const ck = join(box.cwd, 'out', 'checkpoint-10');
    const tag = writeDeepSpeedTag(ck, { stage: 3, worldSize, bf16: true, skipRanks });
    writeFileSync(
      join(tag, 'zerowiz_fp32.json'),
      JSON.stringify({
        world_size: savedWorldSize,
        tensors: [{ name: 'w', shape: [2, 3], values: [1, 2, 3, 4, 5, 6] }],
      }),
    );
    writeFileSync(join(ck, 'trainer_state.json'), '{}');
    return { box, record: join(box.home, 'ds-tools.jsonl'), ck };
  }

  it("runs zero_to_fp32 from the record's Python on the checkpoint, and exports model.safetensors", () => {
    const { box, record, ck } = hfRun(2);
    const r = runCli(['export', 'weights', 'hf', '--out', 'w'], {
      cwd: box.cwd,
      env: { ...box.env, ZEROWIZ_DS_TOOL_RECORD: record },
    });
    expect(r.code, r.stderr).toBe(0);
    const calls = readFileSync(record, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tool: string; argv: string[] });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.tool).toBe('zero_to_fp32');
    expect(calls[0]!.argv.slice(0, 1)).toEqual([ck]);
    expect(calls[0]!.argv.slice(2)).toEqual(['--safe_serialization', '--tag', 'global_step10']);
    expect(keysOf(join(box.cwd, 'w', 'model.safetensors'))).toEqual(['w']);
    expect(r.stdout).toMatch(/zero_to_fp32/);
    expect(readdirSync(join(box.cwd, 'w')).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('a checkpoint whose rank is missing is not offered: the verdict says why', () => {
    const { box } = hfRun(2, [1]);
    const r = runCli(['export', 'weights', 'hf', '--out', 'w'], { cwd: box.cwd, env: box.env });
    expectOneLineError(r, /no good checkpoint in run 20261201-121212-hf/);
    expect(r.stderr).toMatch(/hint: out\/checkpoint-10: global_step10 lacks the states of rank 1 of 2/);
  });

  it("zero_to_fp32's own refusal is shown as it is, exit 1, and nothing is left in DIR", () => {
    const { box } = hfRun(2, [], 3);
    const r = runCli(['export', 'weights', 'hf', '--out', 'w'], { cwd: box.cwd, env: box.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /zerowiz: zero_to_fp32 failed on out\/checkpoint-10 \(tag global_step10, exit 1\): .*Expected 3 of '\*_optim_states\.pt'/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(join(box.cwd, 'w'))).toEqual([]);
  });

  it('--python names another interpreter; a missing one is one line', () => {
    const { box } = hfRun(1);
    expectOneLineError(
      runCli(['export', 'weights', 'hf', '--out', 'w', '--python', '/nonexistent/python'], {
        cwd: box.cwd,
        env: box.env,
      }),
      /cannot run \/nonexistent\/python/,
    );
  });
});
if (!PYTHON3) console.log('skipped the zero_to_fp32 export tests: no python3 on PATH');

describe('zerowiz export weights: a DiffSynth FLUX.1-dev LoRA', () => {
  const R = 2;
  /** FLUX.1-dev's 19 double-stream and 38 single-stream blocks. */
  const DOUBLE = [...Array(19).keys()];
  const SINGLE = [...Array(38).keys()];
  /** A whole LoRA of three of the example's targets, in DiffSynth's FLUX DiT names, as the run saves it. */
  const FLUX_LORA = [
    ...DOUBLE.flatMap((b) => [
      { name: `blocks.${b}.attn.a_to_qkv.lora_A.default.weight`, dtype: 'BF16' as const, shape: [R, 3072] },
      { name: `blocks.${b}.attn.a_to_qkv.lora_B.default.weight`, dtype: 'BF16' as const, shape: [9216, R] },
      { name: `blocks.${b}.ff_b.2.lora_A.default.weight`, dtype: 'BF16' as const, shape: [R, 12288] },
      { name: `blocks.${b}.ff_b.2.lora_B.default.weight`, dtype: 'BF16' as const, shape: [3072, R] },
    ]),
    ...SINGLE.flatMap((b) => [
      { name: `single_blocks.${b}.to_qkv_mlp.lora_A.default.weight`, dtype: 'BF16' as const, shape: [R, 3072] },
      { name: `single_blocks.${b}.to_qkv_mlp.lora_B.default.weight`, dtype: 'BF16' as const, shape: [21504, R] },
    ]),
  ];

  function fluxRun(tensors: Parameters<typeof writeSafetensors>[1], targets = 'a_to_qkv,ff_b.2,to_qkv_mlp') {
    const box = sandbox();
    writeRunRecord(box.cwd, {
      id: RUN,
      name: 'flux',
      answers: {
        model_name: 'flux.1-dev',
        fine_tuning: 'lora',
        lora_rank: R,
        lora_targets: targets,
      },
      steps: [
        {
          name: 'train',
          usesConfig: true,
          args: ['examples/flux/model_training/train.py', '--output_path', './models/out', '--lora_rank', String(R)],
        },
      ],
    });
    writeSafetensors(join(box.cwd, 'models/out', 'epoch-0.safetensors'), tensors);
    return box;
  }

  it("ComfyUI layout: the open-source names DiffSynth's --align_to_opensource_format writes, an alpha of the rank per module", () => {
    const box = fluxRun(FLUX_LORA);
    const r = runCli(['export', 'weights', RUN, '--out', 'w'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const out = join(box.cwd, 'w', 'epoch-0.safetensors');
    const h = readSafetensorsHeader(out);
    if (!h.ok) throw new Error(h.problem);
    const names = h.header.tensors.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        ...DOUBLE.flatMap((b) => [
          `lora_unet_double_blocks_${b}_img_attn_qkv.alpha`,
          `lora_unet_double_blocks_${b}_img_attn_qkv.lora_down.weight`,
          `lora_unet_double_blocks_${b}_img_attn_qkv.lora_up.weight`,
          `lora_unet_double_blocks_${b}_txt_mlp_2.alpha`,
          `lora_unet_double_blocks_${b}_txt_mlp_2.lora_down.weight`,
          `lora_unet_double_blocks_${b}_txt_mlp_2.lora_up.weight`,
        ]),
        ...SINGLE.flatMap((b) => [
          `lora_unet_single_blocks_${b}_linear1.alpha`,
          `lora_unet_single_blocks_${b}_linear1.lora_down.weight`,
          `lora_unet_single_blocks_${b}_linear1.lora_up.weight`,
        ]),
      ].sort(),
    );
    const up = h.header.tensors.find((t) => t.name === 'lora_unet_double_blocks_0_img_attn_qkv.lora_up.weight')!;
    expect([up.dtype, up.shape]).toEqual(['BF16', [9216, R]]);
    const alpha = h.header.tensors.find((t) => t.name === 'lora_unet_single_blocks_0_linear1.alpha')!;
    expect([alpha.dtype, alpha.shape]).toEqual(['F32', []]);
    expect(readFileSync(out).readFloatLE(h.header.dataStart + alpha.begin)).toBe(R);
    // The LoRA tensors' bytes as saved.
    const src = join(box.cwd, 'models/out/epoch-0.safetensors');
    expect(dataOf(out).subarray(0, dataOf(src).length).equals(dataOf(src))).toBe(true);
    expect(r.stdout).toMatch(/ComfyUI layout for FLUX: the open-source names lora_unet_/);
  });

  it('a LoRA missing a block is no good checkpoint: the catalog knows each DiffSynth FLUX module and how many there are', () => {
    const box = fluxRun(FLUX_LORA.filter((t) => !t.name.startsWith('single_blocks.37.')));
    const r = runCli(['export', 'weights', RUN, '--out', 'w'], { cwd: box.cwd, env: box.env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no good checkpoint/);
    expect(r.stderr).toMatch(/to_qkv_mlp has 37 lora_A and 37 lora_B of 38/);
    expect(existsSync(join(box.cwd, 'w'))).toBe(false);
  });

  it('a module with no open-source name, or the diffusers layout: refused in one line, nothing written', () => {
    // norm_q is a target the catalog has no shape for: the file is not checked against shapes, and exported as it is.
    const box = fluxRun(
      [
        ...FLUX_LORA,
        { name: 'blocks.0.attn.norm_q.lora_A.default.weight', dtype: 'BF16', shape: [R, 128] },
        { name: 'blocks.0.attn.norm_q.lora_B.default.weight', dtype: 'BF16', shape: [128, R] },
      ],
      'a_to_qkv,ff_b.2,to_qkv_mlp,norm_q',
    );
    const r = runCli(['export', 'weights', RUN, '--out', 'w'], { cwd: box.cwd, env: box.env });
    expectOneLineError(
      r,
      /cannot write models\/out\/epoch-0\.safetensors in the comfyui layout: blocks\.0\.attn\.norm_q\.lora_A\.default\.weight is a module of DiffSynth's FLUX DiT with no open-source name/,
    );
    expect(existsSync(join(box.cwd, 'w'))).toBe(false);
    const d = runCli(['export', 'weights', RUN, '--layout', 'diffusers', '--out', 'w'], { cwd: box.cwd, env: box.env });
    expectOneLineError(d, /in the diffusers layout: DiffSynth's FLUX module names are not diffusers'/);
    const s = runCli(['export', 'weights', RUN, '--layout', 'diffsynth', '--out', 'w'], { cwd: box.cwd, env: box.env });
    expect(s.code, s.stderr).toBe(0);
  });
});
