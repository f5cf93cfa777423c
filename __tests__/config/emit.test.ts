import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPreset } from '../../src/setups/presets.js';
import { toAccelerateYaml, toDeepSpeedJson } from '../../src/config/emit.js';
import { ROOT, SEED_DIR } from '../helpers/paths.js';

const seedYaml = readFileSync(join(SEED_DIR, 'deepspeed_zero3_cpuoffload.yaml'), 'utf8');
const seedJson = readFileSync(join(SEED_DIR, 'ds_z3_cpuoffload.json'), 'utf8');

describe('the seed preset (qwen-image-lora-lowvram)', () => {
  const { setup } = findPreset('qwen-image-lora-lowvram');

  it('emits the seed YAML byte for byte', () => {
    expect(toAccelerateYaml(setup)).toBe(seedYaml);
  });

  it('emits the seed JSON byte for byte (same keys, order, values and layout)', () => {
    expect(toDeepSpeedJson(setup)).toBe(seedJson);
  });

  it('emits JSON that parses to the same value as the seed', () => {
    expect(JSON.parse(toDeepSpeedJson(setup))).toEqual(JSON.parse(seedJson));
  });
});

describe('the fallback copy of the seed (used where ../shared is absent)', () => {
  const FALLBACK = join(ROOT, '__tests__', 'fixtures', 'seed');
  for (const name of ['deepspeed_zero3_cpuoffload.yaml', 'ds_z3_cpuoffload.json']) {
    it(`${name} is byte-identical to the seed it stands in for`, () => {
      expect(readFileSync(join(FALLBACK, name), 'utf8')).toBe(readFileSync(join(SEED_DIR, name), 'utf8'));
    });
  }
});
