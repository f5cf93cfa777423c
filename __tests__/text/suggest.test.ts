/** The one "did you mean" rule (src/text/suggest.ts), alone: which names are near, and the hint it makes. */
import { describe, expect, it } from 'vitest';
import { NearMiss, nearMissHint, nearest } from '../../src/text/suggest.js';
import { shellWord } from '../../src/text/quote.js';

describe('nearest', () => {
  it('takes separators and case as the same name', () => {
    expect(nearest('zero_3', ['zero1', 'zero3', 'zero3-offload'])).toEqual(['zero3']);
    expect(nearest('--dry_run', ['--dry-run', '--no-tui'])).toEqual(['--dry-run']);
    expect(nearest('Qwen_Image', ['qwen-image', 'flux.1-dev'])).toEqual(['qwen-image']);
  });
  it('takes a letter missing, added, changed or two swapped', () => {
    expect(nearest('lanch', ['launch', 'runs'])).toEqual(['launch']);
    expect(nearest('slurmm', ['slurm', 'torchrun', 'hostfile'])).toEqual(['slurm']);
    expect(nearest('shwo', ['list', 'show', 'save', 'delete'])).toEqual(['show']);
    expect(nearest('yml', ['yaml', 'json'])).toEqual(['yaml']);
  });
  it('takes the start of a longer name, after any closer one', () => {
    expect(nearest('--gpus', ['--gpu-memory', '--gpus-per-node', '--nodes'])).toEqual(['--gpus-per-node']);
    expect(nearest('zero', ['zero1', 'zero2', 'zero2-offload', 'zero3'])).toEqual(['zero1', 'zero2', 'zero3']);
  });
  it('guesses nothing for short or far words, or a name that is there', () => {
    expect(nearest('4', ['1', '2', '3'])).toEqual([]);
    expect(nearest('frobnicate', ['launch', 'generate'])).toEqual([]);
    expect(nearest('zero3', ['zero3', 'zero3-offload'])).toEqual([]);
    expect(nearest('', ['a'])).toEqual([]);
  });
});

describe('nearMissHint', () => {
  it('corrects the command line when one name is near, the value of the flag it belongs to', () => {
    const e = new NearMiss("--print 'yml' is not one of yaml, json", 'yml', ['yaml', 'json'], 'use one of', '--print');
    expect(nearMissHint(e, ['generate', '--out', 'yml', '--print', 'yml'], shellWord)).toBe(
      'did you mean `zerowiz generate --out yml --print yaml`?',
    );
    expect(nearMissHint(e, ['generate', '--print=yml'], shellWord)).toBe(
      'did you mean `zerowiz generate --print=yaml`?',
    );
  });
  it('quotes what a shell would misread, and names several without a command line', () => {
    const one = new NearMiss('no preset', 'my_set', ['my-set'], 'see the list');
    expect(nearMissHint(one, ['launch', 'my_set', '--sbatch-arg', 'a b'], shellWord)).toBe(
      "did you mean `zerowiz launch my-set --sbatch-arg 'a b'`?",
    );
    const many = new NearMiss('no preset', 'zero', ['zero1', 'zero2'], 'see the list');
    expect(nearMissHint(many, ['launch', 'zero'], shellWord)).toBe('did you mean zero1 or zero2? (see the list)');
    const none = new NearMiss('no preset', 'zzz', ['zero1'], 'see the list');
    expect(nearMissHint(none, ['launch', 'zzz'], shellWord)).toBe('see the list');
  });
});
