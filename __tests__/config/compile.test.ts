/**
 * A setup is compiled once: the rules, the preview's texts, the file list, the effective config and `explain` read
 * one compiled value (src/config/compile.ts) instead of emitting the YAML and the JSON again each. Counted at the
 * emitter, across everything that reads a setup's output.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

const calls = vi.hoisted(() => ({}) as Record<string, number>);
vi.mock('../../src/config/emit.js', async (load) =>
  (await import('../helpers/count.js')).counting(
    await load(),
    ['accelerateConfigObject', 'deepSpeedConfigObject'],
    calls,
  ),
);

const { setupFiles, configTexts } = await import('../../src/config/files.js');
const { effectiveLines } = await import('../../src/explain/effective.js');
const { explainSetup } = await import('../../src/explain/explain.js');
const { loadPreset } = await import('../../src/setups/presets.js');
const { toAccelerateYaml, toDeepSpeedJson } = await import('../../src/config/emit.js');
const { readAccelerateConfigSummary } = await import('../../src/config/accelerate-config.js');
const { validate, stepFindings } = await import('../../src/rules/index.js');
const { previewOf } = await import('../../src/wizard/preview.js');

beforeEach(() => {
  for (const k of Object.keys(calls)) calls[k] = 0;
});

describe('compileSetup', () => {
  it("emits a setup's YAML and JSON once for every reader: rules, files, preview, effective config, explain", async () => {
    const base = await loadPreset('qwen-image-lora-lowvram');
    // A content no other test compiled: the count starts here.
    const setup = { ...base, name: `compile-once-${Date.now()}` };
    validate(setup);
    stepFindings(setup, {
      cwd: '/nonexistent',
      defaultConfig: readAccelerateConfigSummary('/nonexistent/default.yaml', '/'),
      gpuCount: null,
    });
    setupFiles(setup, '/w');
    configTexts(setup);
    effectiveLines(setup);
    previewOf({ ...setup });
    explainSetup(setup, {}, { kind: 'preset', name: setup.name, path: null }, {
      cwd: '/nonexistent',
      env: {},
      script: { batchSize: 1, accumulation: 1, mixedPrecision: null, hiddenSize: 'none', torchOptimizer: true },
    } as never);
    expect(calls).toEqual({ accelerateConfigObject: 1, deepSpeedConfigObject: 1 });
  });

  it("is the same value for equal setups, its texts the emitter's, its objects frozen", async () => {
    const { compileSetup } = await import('../../src/config/compile.js');
    const setup = await loadPreset('qwen-image-lora-lowvram');
    const c = compileSetup(setup);
    expect(compileSetup(structuredClone(setup))).toBe(c);
    expect(c.yaml).toBe(toAccelerateYaml(setup));
    expect(c.json).toBe(toDeepSpeedJson(setup));
    expect(JSON.parse(c.json)).toEqual(c.deepSpeedJson);
    expect(Object.isFrozen(c.deepSpeedJson)).toBe(true);
    expect(() => {
      (c.deepSpeedJson.zero_optimization as Record<string, unknown>).stage = 1;
    }).toThrow(TypeError);
    expect(compileSetup({ ...setup, answers: { ...setup.answers, mode: '2' } })).not.toBe(c);
  });
});
