/**
 * Typos get the near miss: one "did you mean" rule (src/text/suggest.ts) for commands, flags, preset names, step
 * names, models and choices, said on the hint line with the command line that works; commander's own error
 * text never reaches the user. The built bin, as a user types it.
 */
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';

/** The hint line of an error (its second line), without the `  hint: ` prefix. */
function hintOf(stderr: string): string {
  const line = stderr
    .trim()
    .split('\n')
    .find((l) => l.startsWith('  hint: '));
  return line?.slice('  hint: '.length) ?? '';
}

const run = (args: string[]) => {
  const box = sandbox();
  return runCli(args, { env: box.env, cwd: box.cwd });
};

describe('did you mean', () => {
  const cases: [string[], RegExp, string][] = [
    [['lanch', 'zero3'], /unknown command 'lanch'/, 'did you mean `zerowiz launch zero3`?'],
    [['lauch', 'zero3', '--dry-run'], /unknown command 'lauch'/, 'did you mean `zerowiz launch zero3 --dry-run`?'],
    [['launch', 'zero_3', '--dry-run'], /no preset named 'zero_3'/, 'did you mean `zerowiz launch zero3 --dry-run`?'],
    [['launch', 'zero3', '--dryrun'], /unknown option '--dryrun'/, 'did you mean `zerowiz launch zero3 --dry-run`?'],
    [['launch', 'zero3', '--dry_run'], /unknown option '--dry_run'/, 'did you mean `zerowiz launch zero3 --dry-run`?'],
    [
      ['estimate', '--params', '7B', '--gpus', '8'],
      /unknown option '--gpus'/,
      'did you mean `zerowiz estimate --params 7B --gpus-per-node 8`?',
    ],
    [
      ['export', 'slurmm', 'zero3', '--out', 'd'],
      /'slurmm' is not a kind of export/,
      'did you mean `zerowiz export slurm zero3 --out d`?',
    ],
    [
      ['generate', '--print', 'yml', '--mode', '2'],
      /--print 'yml' is not one of yaml, json/,
      'did you mean `zerowiz generate --print yaml --mode 2`?',
    ],
    [
      ['generate', '--print', 'yaml', '--mixed-precision', 'bf61'],
      /--mixed-precision: 'bf61' is not one of/,
      'did you mean `zerowiz generate --print yaml --mixed-precision bf16`?',
    ],
    [['preset', 'shwo', 'zero3'], /unknown command 'preset shwo'/, 'did you mean `zerowiz preset show zero3`?'],
    [
      ['estimate', '--model', 'qwen_image'],
      /unknown model 'qwen_image'/,
      'did you mean `zerowiz estimate --model qwen-image`?',
    ],
    [
      ['estimate', '--params', '7B', '--optimizer', 'adam'],
      /--optimizer 'adam' is not one of/,
      'did you mean `zerowiz estimate --params 7B --optimizer adamw`?',
    ],
    [
      ['launch', 'qwen-image-lora-lowvram', '--pin-step', 'dataprocess', '--dry-run'],
      /has no step of that name/,
      'did you mean `zerowiz launch qwen-image-lora-lowvram --pin-step data_process --dry-run`?',
    ],
    [['explain', 'zero_3'], /no preset named 'zero_3'/, 'did you mean `zerowiz explain zero3`?'],
  ];
  it.each(cases)('zerowiz %j', (args, message, hint) => {
    const r = run(args);
    expectOneLineError(r, message);
    expect(hintOf(r.stderr)).toBe(hint);
  });

  it('nothing near: the hint says where the names are, and guesses nothing', () => {
    const r = run(['frobnicate']);
    expectOneLineError(r, /unknown command 'frobnicate'/);
    expect(hintOf(r.stderr)).toMatch(/^the commands are: generate, estimate, preset, launch, .*\(zerowiz --help\)$/);
    const p = run(['launch', 'totally-other', '--dry-run']);
    expectOneLineError(p, /no preset named 'totally-other'/);
    expect(hintOf(p.stderr)).not.toMatch(/did you mean/);
  });

  it('a name near several gets them all, without a command line', () => {
    const r = run(['launch', 'zero2-ofload', '--dry-run']);
    expectOneLineError(r, /no preset named 'zero2-ofload'/);
    expect(hintOf(r.stderr)).toBe('did you mean `zerowiz launch zero2-offload --dry-run`?');
    const two = run(['launch', 'zero', '--dry-run']);
    expectOneLineError(two, /no preset named 'zero'/);
    expect(hintOf(two.stderr)).toMatch(/^did you mean zero1, zero2 or zero3\? /);
  });
});

describe("commander's own text never reaches the user", () => {
  const bad: string[][] = [
    ['runs', 'extra'],
    ['generate', '--out'],
    ['explain'],
    ['export', 'slurm'],
    ['export', 'nope', 'zero3', '--out', 'd'],
    ['generate', '--print', 'xml'],
    ['explain', 'zero3', '--script-mixed-precision', 'fp17'],
    ['--bogus'],
    ['preset'],
    ['preset', 'frob'],
  ];
  it.each(bad)('zerowiz %j: one zerowiz line and a hint, exit 2', (...args) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(
      /error:|Allowed choices|command-argument value|Expected \d+ argument|argument missing/,
    );
    expect(r.stderr).toMatch(/^zerowiz: .+\n {2}hint: .+\n$/);
  });
});
