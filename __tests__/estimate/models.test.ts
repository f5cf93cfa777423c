import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/text/errors.js';
import { findModel, loadModelCatalog, lookupModel, parseModelCatalog } from '../../src/estimate/models.js';
import { presetsDir } from '../../src/fs/paths.js';
import { loadTemplates } from '../../src/setups/templates.js';
import { modelEntry } from '../helpers/fixtures.js';

const linear = (i: number, o: number) => i * o + o;

describe('the built-in model catalog (presets/models.yaml)', () => {
  const models = loadModelCatalog();
  it("lives in presetsDir() and has the five models issue 12 names, issue 23's video DiTs and issue 27's of 2026", () => {
    expect(existsSync(join(presetsDir(), 'models.yaml'))).toBe(true);
    expect(models.map((m) => m.id)).toEqual([
      'qwen-image',
      'flux.1-dev',
      'wan2.1-14b',
      'wan2.1-1.3b',
      'ltx-video',
      'cogvideox-5b',
      'sdxl-unet',
      'wan2.2-t2v-a14b',
      'wan2.2-ti2v-5b',
      'flux.2-dev',
      'flux.2-klein-4b',
      'z-image',
      'qwen-image-edit',
      'llama-3.1-8b',
    ]);
  });
  it('every entry has a source that says where its figures come from', () => {
    for (const m of models) {
      expect(m.source.length).toBeGreaterThan(80);
      expect(m.largestLayer).toBeLessThanOrEqual(m.params);
    }
  });
  it('largest layers re-derive from the published architecture dimensions', () => {
    // Qwen-Image: img_mod Linear(3072, 6*3072). FLUX.1: single-block Linear(3072, 3*3072 + 4*3072).
    // Wan2.1 14B: time_projection Linear(5120, 6*5120). SDXL: Conv2d(2560, 1280, 3x3). Llama-3.1-8B: 128256 x 4096 embedding.
    expect(findModel('qwen-image', models).largestLayer).toBe(linear(3072, 6 * 3072));
    expect(findModel('flux.1-dev', models).largestLayer).toBe(linear(3072, 7 * 3072));
    expect(findModel('wan2.1-14b', models).largestLayer).toBe(linear(5120, 6 * 5120));
    expect(findModel('sdxl-unet', models).largestLayer).toBe(2560 * 1280 * 9 + 1280);
    expect(findModel('llama-3.1-8b', models).largestLayer).toBe(128256 * 4096);
  });
  it('parameter counts match the model cards to their rounding (20B/20.4B, 12B, 14B, 2.6B, 8B)', () => {
    const billions = (id: string) => findModel(id, models).params / 1e9;
    expect(billions('qwen-image')).toBeCloseTo(20.4, 1);
    expect(Math.round(billions('flux.1-dev'))).toBe(12);
    expect(Math.round(billions('wan2.1-14b'))).toBe(14);
    expect(billions('sdxl-unet')).toBeCloseTo(2.6, 1);
    expect(Math.round(billions('llama-3.1-8b'))).toBe(8);
  });
  it('Qwen-Image total re-derives from its block structure', () => {
    const block =
      2 * linear(3072, 18432) + 8 * linear(3072, 3072) + 4 * 128 + 2 * (linear(3072, 12288) + linear(12288, 3072));
    const rest =
      linear(64, 3072) +
      3584 +
      linear(3584, 3072) +
      linear(256, 3072) +
      linear(3072, 3072) +
      linear(3072, 6144) +
      linear(3072, 64);
    expect(findModel('qwen-image', models).params).toBe(60 * block + rest);
  });
  it('finds by id or name, case-insensitively, and lists the ids otherwise', () => {
    expect(findModel('LLAMA-3.1-8B', models).id).toBe('llama-3.1-8b');
    expect(findModel('Stable Diffusion XL base 1.0 UNet', models).id).toBe('sdxl-unet');
    expect(() => findModel('gpt-5', models)).toThrow(UsageError);
    try {
      findModel('gpt-5', models);
    } catch (err) {
      expect((err as UsageError).hint).toContain('qwen-image');
    }
  });
});

describe('the shapes the peak model needs', () => {
  const models = loadModelCatalog();
  it('every transformer entry has its block, FFN and (image models) tokens; LoRA targets have shapes', () => {
    for (const m of models) {
      if (m.kind === 'unet') continue;
      expect(
        [m.block, m.layers, m.hidden, m.heads, m.ffn].every((v) => v !== null),
        m.id,
      ).toBe(true);
      if (m.kind === 'dit' || m.kind === 'video')
        expect(
          [m.pixelsPerToken, m.textTokens].every((v) => v !== null),
          m.id,
        ).toBe(true);
      else expect(m.vocab, m.id).not.toBeNull();
      // A video model says how its VAE compresses time; an image model does not.
      expect(m.temporalFactor !== null, m.id).toBe(m.kind === 'video');
      expect(m.loraTargets.length, m.id).toBeGreaterThan(0);
    }
  });
  it("Qwen-Image's LoRA modules re-derive from its blocks (60 of each), and its image tokens from VAE 8x and patch 2", () => {
    const q = findModel('qwen-image', models);
    expect(q.modules['img_mod.1']).toEqual([3072, 18432, 60]);
    expect(q.modules['img_mlp.net.2']).toEqual([12288, 3072, 60]);
    expect(q.pixelsPerToken).toBe((8 * 2) ** 2);
    // A module's Linears are counted in the model: 8 attention projections + 2 modulations + 4 MLP Linears per block.
    const inBlocks = Object.values(q.modules).reduce((s, [i, o, c]) => s + (i * o + o) * c, 0);
    expect(inBlocks).toBeLessThan(q.params);
  });
  it("every built-in template's --lora_target_modules are modules of its model (DiffSynth's FLUX names included)", () => {
    const catalog = loadTemplates();
    const checked: string[] = [];
    for (const t of catalog.templates) {
      const m = /--lora_target_modules "([^"]+)"/.exec(t.script);
      if (!m) continue;
      const known = findModel(t.model, models).modules;
      expect(
        m[1]!.split(',').filter((x) => !(x in known)),
        t.id,
      ).toEqual([]);
      checked.push(t.id);
    }
    expect(checked).toContain('flux.1-dev-lora');
    // DiffSynth's FLUX double blocks' fused qkv and the single blocks' fused qkv+MLP, counted in the model.
    const f = findModel('flux.1-dev', models);
    expect([f.modules.a_to_qkv, f.modules.to_qkv_mlp]).toEqual([
      [3072, 9216, 19],
      [3072, 21504, 38],
    ]);
  });
  it("Llama's grouped-query attention: 8 KV heads, so k_proj and v_proj are 4096 -> 1024", () => {
    const l = findModel('llama-3.1-8b', models);
    expect([l.kvHeads, l.modules.k_proj]).toEqual([8, [4096, 1024, 32]]);
  });
  it('looks a model up by its name without the class in parentheses (how presets name it)', () => {
    expect(lookupModel('Qwen-Image DiT', models)?.id).toBe('qwen-image');
    expect(lookupModel('qwen-image', models)?.id).toBe('qwen-image');
    expect(lookupModel('', models)).toBeNull();
    expect(lookupModel('Qwen', models)).toBeNull();
  });
});

describe('parseModelCatalog validation', () => {
  const good = 'models:\n  - id: a\n    name: A\n    params: 100\n    largest_layer: 10\n    source: here\n';
  it('accepts a minimal entry', () => {
    expect(parseModelCatalog(good)).toEqual([
      modelEntry({ id: 'a', name: 'A', params: 100, largestLayer: 10, source: 'here' }),
    ]);
  });
  it.each([
    ['a negative count', good.replace('params: 100', 'params: -1'), /models\.0\.params/],
    ['a string count', good.replace('params: 100', 'params: 20B'), /models\.0\.params/],
    ['an unknown key', `${good}    colour: red\n`, /colour|unrecognized/i],
    ['a missing source', good.replace('    source: here\n', ''), /source/],
    [
      'a largest layer above params',
      good.replace('largest_layer: 10', 'largest_layer: 1000'),
      /largest_layer cannot exceed params/,
    ],
    ['a duplicate id', `${good}${good.replace('models:\n', '')}`, /duplicate model id 'a'/],
    [
      'a LoRA target without a module shape',
      `${good}    lora_targets: [q]\n`,
      /lora_targets entry must be a key of modules/,
    ],
    ['a module shape that is not three counts', `${good}    modules:\n      q: [1, 2]\n`, /modules/],
    ['an unknown kind', `${good}    kind: rnn\n`, /kind/],
    ['bad YAML', 'models: [', /not valid YAML/],
  ])('rejects %s', (_what, text, message) => {
    expect(() => parseModelCatalog(text)).toThrow(message);
  });
});
