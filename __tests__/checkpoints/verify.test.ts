import { mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadModelCatalog } from '../../src/estimate/models.js';
import { isCompleteZip, readTag } from '../../src/checkpoints/deepspeed.js';
import { loraExpectation, NO_EXPECTATION, type Expectation } from '../../src/checkpoints/expect.js';
import { findCheckpoints, outputRoots, verifyFound } from '../../src/checkpoints/find.js';
import { readSafetensorsHeader } from '../../src/checkpoints/safetensors.js';
import {
  verifyCheckpointDir,
  verifyDeepSpeedTag,
  verifyWeightsFile,
  loraLayoutOf,
} from '../../src/checkpoints/verify.js';
import { ptBytes, writeDeepSpeedTag } from '../helpers/deepspeed-ckpt.js';
import { diffsynthLora, safetensorsBytes, writeSafetensors } from '../helpers/safetensors.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'zw-ckpt-'));
const qwen = loadModelCatalog().find((m) => m.id === 'qwen-image')!;

/** The seed's adapter at rank 2 on three of its targets (60 blocks each, the catalog's shapes). */
const TARGETS = ['to_q', 'img_mod.1', 'txt_mlp.net.2'];
const shapes = (rank: number) => {
  const e = loraExpectation(rank, TARGETS, qwen);
  if (!('lora' in e)) throw new Error(e.unknown);
  return e.lora;
};
const expectLora = (rank = 2): Expectation => ({ ...NO_EXPECTATION, lora: shapes(rank), modelParams: qwen.params });
const loraTensors = (rank = 2) =>
  diffsynthLora(rank, Object.fromEntries(shapes(rank).targets.map((t) => [t.name, [t.in, t.out, t.count]])));

describe('safetensors files: the header as the format defines it', () => {
  it('reads the tensors, their dtypes, shapes and offsets, and the metadata accelerate.save writes', () => {
    const f = join(tmp(), 'a.safetensors');
    writeSafetensors(f, [
      { name: 'w', dtype: 'BF16', shape: [2, 3] },
      { name: 'b', dtype: 'F32', shape: [3] },
    ]);
    const h = readSafetensorsHeader(f);
    expect(h.ok).toBe(true);
    if (!h.ok) return;
    expect(h.header.metadata).toEqual({ format: 'pt' });
    expect(h.header.tensors.map((t) => [t.name, t.dtype, t.shape, t.end - t.begin])).toEqual([
      ['w', 'BF16', [2, 3], 12],
      ['b', 'F32', [3], 12],
    ]);
  });

  it('says a file cut short is cut short, wherever the cut is', () => {
    const full = safetensorsBytes([{ name: 'w', dtype: 'F32', shape: [64, 64] }]);
    for (const keep of [0, 5, 20, full.length - 1]) {
      const f = join(tmp(), 'cut.safetensors');
      writeFileSync(f, full.subarray(0, keep));
      const h = readSafetensorsHeader(f);
      expect(h.ok, `kept ${keep}`).toBe(false);
      if (!h.ok) expect(h.truncated, `${keep}: ${h.problem}`).toBe(true);
    }
  });

  it('refuses a header that is not JSON, a huge header length, and bytes after the last tensor', () => {
    const d = tmp();
    const notJson = Buffer.concat([Buffer.from([8, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('not json')]);
    writeFileSync(join(d, 'a.safetensors'), notJson);
    const huge = Buffer.alloc(16);
    huge.writeBigUInt64LE(2n ** 40n);
    writeFileSync(join(d, 'b.safetensors'), huge);
    writeFileSync(
      join(d, 'c.safetensors'),
      Buffer.concat([safetensorsBytes([{ name: 'w', shape: [2] }]), Buffer.alloc(3)]),
    );
    for (const n of ['a', 'b', 'c']) {
      const h = readSafetensorsHeader(join(d, `${n}.safetensors`));
      expect(h.ok, n).toBe(false);
      if (!h.ok) expect(h.truncated, n).toBe(false);
    }
  });
});

describe('a DiffSynth LoRA file: what the run saved is what it trained', () => {
  it('ok for the expected count and every shape of rank r on the catalog targets, in DiffSynth key layout', () => {
    const f = join(tmp(), 'epoch-0.safetensors');
    writeSafetensors(f, loraTensors());
    const v = verifyWeightsFile(f, expectLora());
    expect(v.verdict, v.reason).toBe('ok');
    expect(v.loraLayout).toBe('diffsynth');
    expect(v.tensors).toBe(360);
    expect(v.reason).toMatch(/LoRA rank 2 on 3 targets of qwen-image: every shape as expected/);
  });

  it('bad for [0]-shaped tensors (the ZeRO-3 save without the 16-bit gather), naming the cause', () => {
    const f = join(tmp(), 'epoch-0.safetensors');
    writeSafetensors(
      f,
      loraTensors().map((t) => ({ ...t, shape: [0] })),
    );
    const v = verifyWeightsFile(f, expectLora());
    expect(v.verdict).toBe('bad');
    expect(v.cause).toBe('empty-tensors');
    expect(v.reason).toMatch(/360 of 360 tensors are empty .*shape \[0\].*stage3_gather_16bit_weights_on_model_save/);
  });

  it('bad for a file without tensors and for a zero-byte file', () => {
    const d = tmp();
    writeSafetensors(join(d, 'epoch-0.safetensors'), []);
    writeFileSync(join(d, 'epoch-1.safetensors'), '');
    expect(verifyWeightsFile(join(d, 'epoch-0.safetensors'), expectLora()).cause).toBe('no-tensors');
    expect(verifyWeightsFile(join(d, 'epoch-1.safetensors'), expectLora()).cause).toBe('truncated');
  });

  it('bad for a truncated file', () => {
    const f = join(tmp(), 'epoch-0.safetensors');
    writeSafetensors(f, loraTensors());
    const size = readFileSync(f).length;
    truncateSync(f, size - 1000);
    const v = verifyWeightsFile(f, expectLora());
    expect(v.cause).toBe('truncated');
    expect(v.reason).toMatch(/ends 1000 bytes early/);
  });

  it('bad for another rank than the run trained, naming the tensor and both shapes', () => {
    const f = join(tmp(), 'epoch-0.safetensors');
    writeSafetensors(f, loraTensors(4));
    const v = verifyWeightsFile(f, expectLora(2));
    expect(v.cause).toBe('lora-mismatch');
    expect(v.reason).toMatch(
      /lora_A\.default\.weight is \[4,3072\], not \[2, 3072\] \(lora_A of rank 2 on to_q: 3072 -> 3072\)/,
    );
  });

  it('bad when some matches are missing (a partial save), with the expected count', () => {
    const f = join(tmp(), 'epoch-0.safetensors');
    writeSafetensors(
      f,
      loraTensors().filter((t) => !(t.name.includes('txt_mlp') && t.name.includes('lora_B'))),
    );
    const v = verifyWeightsFile(f, expectLora());
    expect(v.cause).toBe('lora-mismatch');
    expect(v.reason).toMatch(/expected 360 LoRA tensors .* txt_mlp\.net\.2 has 60 lora_A and 0 lora_B of 60/);
  });

  it('bad for NaN or infinite values; ok but noted when every lora_B is still zero', () => {
    const d = tmp();
    writeSafetensors(
      join(d, 'nan.safetensors'),
      loraTensors().map((t, i) => (i === 7 ? { ...t, values: [0.5, Number.NaN] } : t)),
    );
    const nan = verifyWeightsFile(join(d, 'nan.safetensors'), expectLora());
    expect(nan.cause).toBe('non-finite');
    writeSafetensors(
      join(d, 'zero.safetensors'),
      loraTensors().map((t) => (t.name.includes('lora_B') ? { ...t, values: [0] } : t)),
    );
    const zero = verifyWeightsFile(join(d, 'zero.safetensors'), expectLora());
    expect(zero.verdict).toBe('ok');
    expect(zero.reason).toMatch(/every lora_B is zero/);
  });

  it('says when the shapes cannot be checked (targets the catalog does not know), and checks the rest', () => {
    const f = join(tmp(), 'epoch-0.safetensors');
    writeSafetensors(f, [
      { name: 'blocks.0.my_adapter_proj.lora_A.default.weight', shape: [2, 8] },
      { name: 'blocks.0.my_adapter_proj.lora_B.default.weight', shape: [24, 2] },
    ]);
    const e = loraExpectation(2, ['my_adapter_proj'], loadModelCatalog().find((m) => m.id === 'flux.1-dev')!);
    expect('unknown' in e).toBe(true);
    const v = verifyWeightsFile(f, { ...NO_EXPECTATION, loraUnknown: 'unknown' in e ? e.unknown : null });
    expect(v.verdict).toBe('ok');
    expect(v.reason).toMatch(
      /LoRA shapes not checked: the LoRA targets my_adapter_proj are not modules of flux\.1-dev/,
    );
  });

  it('bad for full weights holding less than half of the model', () => {
    const f = join(tmp(), 'model.safetensors');
    writeSafetensors(f, [{ name: 'w', shape: [1000] }]);
    const v = verifyWeightsFile(f, { ...NO_EXPECTATION, modelParams: 10_000 });
    expect(v.cause).toBe('too-small');
    expect(v.reason).toMatch(/holds 1K parameters where the model has 10K/);
  });

  it('tells the key layouts apart', () => {
    expect(loraLayoutOf(['a.to_q.lora_A.default.weight'])).toBe('diffsynth');
    expect(loraLayoutOf(['diffusion_model.a.to_q.lora_A.weight'])).toBe('comfyui');
    expect(loraLayoutOf(['transformer.a.to_q.lora_A.weight'])).toBe('diffusers');
    expect(loraLayoutOf(['base_model.model.a.to_q.lora_A.weight'])).toBe('peft');
    expect(loraLayoutOf(['a.weight'])).toBe(null);
  });
});

describe('DeepSpeed checkpoints in the layout DeepSpeed 0.19 writes', () => {
  it('reads the stage, the ranks and bf16 from the file names', () => {
    const d = tmp();
    const tag = writeDeepSpeedTag(d, { stage: 3, worldSize: 2, bf16: true });
    expect(readTag(tag, 'global_step10')).toMatchObject({
      stage: 3,
      optimRanks: [0, 1],
      modelRanks: [0, 1],
      bf16: true,
    });
    const d2 = tmp();
    const tag2 = writeDeepSpeedTag(d2, { stage: 2, worldSize: 4 });
    expect(readTag(tag2, 'global_step10')).toMatchObject({ stage: '1-2', optimRanks: [0, 1, 2, 3], bf16: false });
  });

  it('ok for every rank of the run present and whole', () => {
    const d = tmp();
    const tag = writeDeepSpeedTag(d, { stage: 3, worldSize: 2, bf16: true });
    const v = verifyDeepSpeedTag(tag, { ...NO_EXPECTATION, worldSize: 2 }, { saveDir: d });
    expect(v.verdict, v.reason).toBe('ok');
    expect(v.deepspeed).toEqual({ tag: 'global_step10', stage: 3, worldSize: 2, bf16: true });
    expect(v.hasWeights).toBe(false);
  });

  it('bad for a rank that wrote nothing, naming it', () => {
    const d = tmp();
    const tag = writeDeepSpeedTag(d, { stage: 3, worldSize: 4, skipRanks: [2] });
    const v = verifyDeepSpeedTag(tag, { ...NO_EXPECTATION, worldSize: 4 }, { saveDir: d });
    expect(v.cause).toBe('ds-missing-ranks');
    expect(v.reason).toMatch(/lacks the states of rank 2 of 4/);
    // Without knowing the world size, the last rank missing is invisible; a gap is not.
    const d2 = tmp();
    const tag2 = writeDeepSpeedTag(d2, { stage: 2, worldSize: 4, skipRanks: [1] });
    expect(verifyDeepSpeedTag(tag2, NO_EXPECTATION, { saveDir: d2 }).cause).toBe('ds-missing-ranks');
  });

  it('bad for a .pt cut short (not a complete zip archive) and for a missing `latest`', () => {
    expect(
      isCompleteZip(join(writeDeepSpeedTag(tmp(), { stage: 2, worldSize: 1 }), 'mp_rank_00_model_states.pt')),
    ).toBe(true);
    const d = tmp();
    const tag = writeDeepSpeedTag(d, { stage: 2, worldSize: 2, truncate: 'zero_pp_rank_1_mp_rank_00_optim_states.pt' });
    expect(verifyDeepSpeedTag(tag, NO_EXPECTATION, { saveDir: d }).cause).toBe('ds-truncated');
    const d2 = tmp();
    const tag2 = writeDeepSpeedTag(d2, { stage: 2, worldSize: 2, latest: false });
    const v = verifyDeepSpeedTag(tag2, NO_EXPECTATION, { saveDir: d2 });
    expect(v.cause).toBe('ds-unfinished');
    expect(v.reason).toMatch(/latest is missing/);
  });

  it('bad for optimizer states far smaller than 12 bytes per trainable parameter', () => {
    const d = tmp();
    const tag = writeDeepSpeedTag(d, { stage: 2, worldSize: 2, optimBytesPerRank: 1000 });
    const v = verifyDeepSpeedTag(tag, { ...NO_EXPECTATION, worldSize: 2, trainableParams: 10_000 }, { saveDir: d });
    expect(v.cause).toBe('ds-too-small');
  });
});

describe('checkpoint folders and what an output folder holds', () => {
  it("HF's checkpoint-N: weights, the DeepSpeed tag `latest` names, trainer_state.json written last", () => {
    const root = tmp();
    const ck = join(root, 'checkpoint-10');
    writeDeepSpeedTag(ck, { stage: 3, worldSize: 2, bf16: true });
    const v0 = verifyCheckpointDir(ck, 'hf-checkpoint', NO_EXPECTATION);
    expect(v0.cause).toBe('unfinished');
    writeFileSync(join(ck, 'trainer_state.json'), '{}');
    const v = verifyCheckpointDir(ck, 'hf-checkpoint', NO_EXPECTATION);
    expect(v.verdict, v.reason).toBe('ok');
    expect(v.hasWeights).toBe(false);
    expect(v.reason).toMatch(/only ZeRO shards/);
    writeSafetensors(join(ck, 'model.safetensors'), [{ name: 'w', shape: [4, 4] }]);
    const w = verifyCheckpointDir(ck, 'hf-checkpoint', NO_EXPECTATION);
    expect(w.hasWeights).toBe(true);
    expect(w.reason).toMatch(/weights: model\.safetensors/);
  });

  it("a checkpoint-N's weights must hold half the model, summed over its shards (DeepSpeed#6836: a 138 KB model)", () => {
    const ck = join(tmp(), 'checkpoint-5');
    mkdirSync(ck);
    writeFileSync(join(ck, 'trainer_state.json'), '{}');
    writeSafetensors(join(ck, 'model.safetensors'), [{ name: 'w', shape: [10] }]);
    const v = verifyCheckpointDir(ck, 'hf-checkpoint', { ...NO_EXPECTATION, modelParams: 1000 });
    expect(v.cause).toBe('too-small');
    expect(v.reason).toMatch(/holds 10 parameters where the model has 1K/);
    // Two shards of 300 each: 600 of 1000 is whole enough; each alone would not be.
    const sh = join(tmp(), 'checkpoint-6');
    mkdirSync(sh);
    writeFileSync(join(sh, 'trainer_state.json'), '{}');
    writeSafetensors(join(sh, 'model-00001-of-00002.safetensors'), [{ name: 'a', shape: [300] }]);
    writeSafetensors(join(sh, 'model-00002-of-00002.safetensors'), [{ name: 'b', shape: [300] }]);
    const ok = verifyCheckpointDir(sh, 'hf-checkpoint', { ...NO_EXPECTATION, modelParams: 1000 });
    expect(ok.verdict, ok.reason).toBe('ok');
  });

  it('a sharded index that names a missing shard is bad', () => {
    const ck = join(tmp(), 'checkpoint-5');
    mkdirSync(ck);
    writeSafetensors(join(ck, 'model-00001-of-00002.safetensors'), [{ name: 'a', shape: [2] }]);
    writeFileSync(
      join(ck, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' } }),
    );
    writeFileSync(join(ck, 'trainer_state.json'), '{}');
    const v = verifyCheckpointDir(ck, 'hf-checkpoint', NO_EXPECTATION);
    expect(v.cause).toBe('index-mismatch');
  });

  it('finds DiffSynth epoch files, HF and accelerate folders and DeepSpeed tags, in step order', () => {
    const root = tmp();
    writeSafetensors(join(root, 'epoch-1.safetensors'), [{ name: 'w', shape: [2] }]);
    writeSafetensors(join(root, 'epoch-0.safetensors'), [{ name: 'w', shape: [2] }]);
    writeFileSync(join(root, 'loss.csv'), 'step,key,value\n');
    mkdirSync(join(root, 'checkpoint-20'));
    mkdirSync(join(root, 'checkpoints', 'checkpoint_0'), { recursive: true });
    writeDeepSpeedTag(root, { tag: 'global_step30', stage: 2, worldSize: 1 });
    writeFileSync(join(root, '.hidden.safetensors'), '');
    const found = findCheckpoints(root).map((c) => [c.name, c.kind]);
    expect(found).toEqual([
      ['checkpoint_0', 'accelerate-checkpoint'],
      ['epoch-0.safetensors', 'weights'],
      ['epoch-1.safetensors', 'weights'],
      ['checkpoint-20', 'hf-checkpoint'],
      ['global_step30', 'deepspeed'],
    ]);
    const ds = findCheckpoints(root).find((c) => c.kind === 'deepspeed')!;
    expect(verifyFound(ds, NO_EXPECTATION).verdict).toBe('ok');
  });

  it('output folders: DiffSynth --output_path (default ./models), --output_dir; none for the data pass', () => {
    expect(outputRoots(['examples/qwen_image/model_training/train.py', '--task', 'sft:train'], '/w')).toEqual([
      '/w/models',
    ]);
    expect(outputRoots(['train.py', '--output_dir', 'out'], '/w')).toEqual(['/w/out']);
    expect(
      outputRoots(
        ['examples/qwen_image/model_training/train.py', '--task', 'sft:data_process', '--output_path', 'c'],
        '/w',
      ),
    ).toEqual([]);
  });

  it('the zip check sees a whole archive and a cut one', () => {
    const d = tmp();
    writeFileSync(join(d, 'a.pt'), ptBytes(100));
    writeFileSync(join(d, 'b.pt'), ptBytes(100).subarray(0, 150));
    expect(isCompleteZip(join(d, 'a.pt'))).toBe(true);
    expect(isCompleteZip(join(d, 'b.pt'))).toBe(false);
  });
});
