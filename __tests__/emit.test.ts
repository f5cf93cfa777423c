import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPreset } from '../src/presets.js';
import { toAccelerateYaml, toDeepSpeedJson } from '../src/emit.js';
import { SEED_DIR } from './helpers/paths.js';

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
