/**
 * The model catalog of 2026 (Wan2.2's A14B experts and TI2V-5B, FLUX.2 dev and klein, Z-Image,
 * Qwen-Image-Edit) and every image or video model's frozen models (text encoders, VAE) at the bytes they are
 * loaded in: what "the text encoder and VAE run on the GPU every step" adds, for every catalog model.
 */
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/config/questions.js';
import { findPreset } from '../../src/setups/presets.js';
import { estimateInputFromSetup } from '../../src/estimate/input.js';
import { estimateModes } from '../../src/estimate/estimate.js';
import { loadModelCatalog } from '../../src/estimate/models.js';
import { setupSchedule } from '../../src/rules/eta.js';

const models = loadModelCatalog();
const byId = (id: string) => models.find((m) => m.id === id);
const GiB = 2 ** 30;

describe('the 2026 models', () => {
  it('are in the catalog, each with its source', () => {
    for (const id of [
      'wan2.2-t2v-a14b',
      'wan2.2-ti2v-5b',
      'flux.2-dev',
      'flux.2-klein-4b',
      'z-image',
      'qwen-image-edit',
    ]) {
      const m = byId(id);
      expect(m, id).toBeDefined();
      expect(m!.source.length, id).toBeGreaterThan(80);
    }
  });

  it('count their parameters from their configs (derivations in the source)', () => {
    // Wan2.2-TI2V-5B: dim 3072, ffn 14336, 30 layers, 48 latent channels: the 14B entry's formula.
    expect(byId('wan2.2-ti2v-5b')!.params).toBe(4_999_787_712);
    // One A14B expert is a Wan2.1-T2V-14B: each pass trains one.
    expect(byId('wan2.2-t2v-a14b')!.params).toBe(byId('wan2.1-14b')!.params);
    // FLUX.2 dev: 8 double + 48 single blocks at 6144, SwiGLU x3, no biases.
    expect(byId('flux.2-dev')!.params).toBe(32_223_281_152);
    expect(byId('flux.2-dev')!.largestLayer).toBe(339_738_624);
    // Wan2.2-TI2V-5B's VAE compresses 16x16 and patches 2x2: 1024 pixels a token.
    expect(byId('wan2.2-ti2v-5b')!.pixelsPerToken).toBe(1024);
  });

  it('Qwen-Image-Edit attends to the edit image: twice the image tokens of Qwen-Image at the same size', () => {
    const tokens = (id: string) => {
      const m = byId(id)!;
      const a = withDefaults({
        model_name: m.id,
        model_params: m.params,
        largest_layer_params: m.largestLayer,
        model_kind: 'dit',
      });
      return estimateInputFromSetup(a, { models }).input!.activation!.tokens;
    };
    expect(tokens('qwen-image-edit') - 512).toBe(2 * (tokens('qwen-image') - 512));
  });
});

describe('every image and video model knows its frozen models', () => {
  it('text encoders and VAE with their dtype and a source', () => {
    for (const m of models.filter((x) => x.kind !== 'lm')) {
      expect(m.encoders, m.id).not.toBeNull();
      expect(m.encoders!.parts.length, m.id).toBeGreaterThanOrEqual(2);
      for (const p of m.encoders!.parts) {
        expect(p.params, `${m.id} ${p.name}`).toBeGreaterThan(1e6);
        expect(['fp32', 'bf16', 'fp16', 'fp8', 'nf4'], `${m.id} ${p.name}`).toContain(p.dtype);
      }
      expect(m.encoders!.source.length, m.id).toBeGreaterThan(40);
    }
  });

  it('on the GPU they add their weights at their bytes; loaded in fp8 (DiffSynth --fp8_models) half of that', () => {
    const peak = (id: string, extra: Record<string, unknown>) => {
      const m = byId(id)!;
      const a = withDefaults({
        model_name: m.id,
        model_params: m.params,
        largest_layer_params: m.largestLayer,
        model_kind: m.kind === 'video' ? 'video' : 'dit',
        fine_tuning: 'lora',
        gpu_memory: 80 * GiB,
        ...extra,
      } as never);
      const s = estimateInputFromSetup(a, { models });
      return estimateModes(s.input!).modes.find((r) => r.mode === '2')!.peak.items.extraModels;
    };
    for (const id of ['flux.1-dev', 'wan2.1-14b']) {
      const m = byId(id)!;
      expect(peak(id, {}), id).toBe(0);
      const on = peak(id, { encoders_on_gpu: true });
      expect(on, id).toBe(m.encoders!.bytes);
      expect(on, id).toBeGreaterThan(9 * 1e9);
      expect(peak(id, { encoders_on_gpu: true, fp8_models: 'encoders' }), id).toBe(Math.ceil(m.encoders!.bytes / 2));
    }
  });
});

describe("Wan2.2-A14B's two experts, a built-in preset", () => {
  it('trains the high-noise expert, then the low-noise one, split at DiffSynth boundary 0.875', () => {
    const p = findPreset('wan2.2-t2v-a14b-lora');
    const train = p.setup.steps.filter((s) => s.usesConfig);
    expect(train).toHaveLength(2);
    expect(train[0]!.args.join(' ')).toMatch(
      /high_noise_model.*--max_timestep_boundary 1 --min_timestep_boundary 0.875/,
    );
    expect(train[1]!.args.join(' ')).toMatch(
      /low_noise_model.*--max_timestep_boundary 0.875 --min_timestep_boundary 0/,
    );
    expect(p.setup.answers.model_name).toBe('wan2.2-t2v-a14b');
    expect(p.setup.answers.max_pixels).toBe(480 * 832);
  });

  it('its run counts both passes', () => {
    const p = findPreset('wan2.2-t2v-a14b-lora');
    const rows = `video,prompt\n${Array.from({ length: 10 }, (_, i) => `${i}.mp4,a cat`).join('\n')}`;
    const s = setupSchedule(p.setup, '/nowhere', () => rows);
    expect(s.count).toEqual({ epochs: 5, datasetSize: 1000, passes: 2 });
    expect(s.why).toMatch(/^2 passes \(one per expert[^)]*\) of 5 epochs of 10 samples x 100/);
  });
});
