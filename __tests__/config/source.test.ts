/**
 * What a launch ran is a type (src/config/source.ts), no longer a string sniffed with `startsWith('--last')`: the
 * record keeps its text as before, and a fix names a preset only when the run came from one. A `--last` run's
 * out-of-memory fix told `zerowiz preset save ... --preset '--last (RUN)'`, a command that cannot run.
 */
import { describe, expect, it } from 'vitest';
import { type LaunchSource, sourceOfRecord, sourcePreset, sourceText } from '../../src/config/source.js';
import { withDefaults } from '../../src/config/questions.js';
import { launchEstimate } from '../../src/rules/fit.js';

const GiB = 2 ** 30;
const OOM = { gpu: 0, triedBytes: null, totalBytes: 24 * GiB, freeBytes: null, reservedUnallocatedBytes: null };

describe('a launch source', () => {
  const cases: [LaunchSource, string, string | null][] = [
    [{ kind: 'preset', ref: 'qwen-8' }, 'qwen-8', 'qwen-8'],
    [{ kind: 'preset', ref: './p.yaml' }, './p.yaml', './p.yaml'],
    [{ kind: 'last', runId: '20261203-101010-qwen' }, '--last (20261203-101010-qwen)', null],
    [{ kind: 'wizard', preset: null }, 'wizard', null],
    [{ kind: 'wizard', preset: 'mine' }, 'mine', 'mine'],
  ];
  it('is kept in the record as the text it always was, and read back from it', () => {
    for (const [source, text] of cases) {
      expect(sourceText(source)).toBe(text);
      expect(sourceText(sourceOfRecord(text))).toBe(text);
    }
  });
  it('names a preset for a fix only when the run came from one', () => {
    for (const [source, , preset] of cases) expect(sourcePreset(source)).toBe(preset);
  });
  it("a run that came from no preset gets the flags to set in words, not `--preset '--last (RUN)'`", () => {
    const setup = {
      name: 'big',
      answers: withDefaults({
        model_params: 20e9,
        num_processes: 8,
        gpu_memory: 24 * GiB,
        cpu_memory: 1024 * GiB,
        mode: '1',
      }),
      files: { accelerateConfig: 'a.yaml', dsConfig: 'd.json' },
      steps: [],
    };
    const last = launchEstimate(setup, undefined, sourcePreset({ kind: 'last', runId: 'r1' }))!.whatFits(OOM)!;
    expect(last).toMatch(/: --mode [0-9a-z-]+ in a preset of your own$/);
    expect(last).not.toContain('--last');
    const named = launchEstimate(setup, undefined, sourcePreset({ kind: 'preset', ref: 'big' }))!.whatFits(OOM)!;
    expect(named).toMatch(/zerowiz preset save big-zero\S+ --preset big --mode /);
  });
});
