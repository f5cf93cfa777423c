/**
 * Words a newcomer reads: counts agree with their nouns ("1 of them stays idle", "1 step done", "ZeRO-1 on 2
 * GPUs"), a mode is named by its label, and a default is "not set by" whoever answered.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCRIPT, explainSetup } from '../../src/explain/explain.js';
import { findPreset } from '../../src/setups/presets.js';
import { idleGpusNote } from '../../src/rules/processes.js';
import { plural } from '../../src/text/format.js';
import { presetDescription } from '../../src/wizard/finish.js';

describe('words that agree with their numbers', () => {
  it('plural: one noun, many nouns, -es after s/x/ch/sh', () => {
    expect([
      plural(1, 'step'),
      plural(2, 'step'),
      plural(1, 'process'),
      plural(3, 'process'),
      plural(0, 'GPU'),
    ]).toEqual(['1 step', '2 steps', '1 process', '3 processes', '0 GPUs']);
  });

  it('idle GPUs: "1 of them stays idle", "7 of them stay idle"', () => {
    expect(idleGpusNote(7, 1, 8)).toBe(
      'num_processes 7 starts 7 processes per machine, and this machine has 8 GPUs: 1 of them stays idle',
    );
    expect(idleGpusNote(1, 1, 8)).toMatch(/starts 1 process per machine, .*: 7 of them stay idle$/);
  });

  it("a wizard preset's description names the mode by its label and counts GPUs in words", () => {
    const seed = findPreset('qwen-image-lora-lowvram').setup;
    const setup = { ...seed, answers: { ...seed.answers, mode: '1' as const, num_processes: 2 } };
    expect(presetDescription(setup)).toMatch(/^ZeRO-1 on 2 GPUs, /);
    expect(presetDescription({ ...setup, answers: { ...setup.answers, num_processes: 1 } })).toMatch(
      /^ZeRO-1 on 1 GPU, /,
    );
  });

  it('explain: a default is "not set by your answers", never "your answers does not set it"', () => {
    const seed = findPreset('qwen-image-lora-lowvram').setup;
    const text = JSON.stringify(
      explainSetup(
        seed,
        {},
        { kind: 'setup', name: 'x', path: null },
        { cwd: '/tmp', env: {}, script: DEFAULT_SCRIPT },
        'your answers',
      ),
    );
    expect(text).toContain('not set by your answers');
    expect(text).not.toContain('does not set it');
  });
});
