import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CSV_LOG_FLAG,
  csvLogOffer,
  diffSynthOutputPath,
  isDiffSynthStep,
  planCsvLog,
  withCsvLog,
} from '../../src/config/diffsynth.js';
import { readPresetFile } from '../../src/setups/presets.js';
import { tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

const seed = readPresetFile(join(ROOT, 'presets', 'qwen-image-lora-lowvram.yaml'), 'builtin').setup;
const [dataProcess, train] = seed.steps;

/** A DiffSynth-Studio checkout whose parsers.py does (or does not) declare --enable_csv_log. */
function checkout(withFlag: boolean): string {
  const dir = tempDir('zw-diffsynth-');
  mkdirSync(join(dir, 'diffsynth', 'diffusion'), { recursive: true });
  writeFileSync(
    join(dir, 'diffsynth', 'diffusion', 'parsers.py'),
    `def add_logger_config(parser):\n    parser.add_argument("--enable_tensorboard_log", default=False, action="store_true")\n${
      withFlag
        ? '    parser.add_argument("--enable_csv_log", default=False, action="store_true", help="Enable CSV loss logging.")\n'
        : ''
    }    return parser\n`,
  );
  return dir;
}

describe("DiffSynth's CSV loss log", () => {
  it('offers --enable_csv_log for the seed training step, with loss.csv under its --output_path', () => {
    const cwd = checkout(true);
    const plan = planCsvLog(train!.args, cwd);
    expect(plan).toEqual({
      kind: 'offer',
      args: [...train!.args, CSV_LOG_FLAG],
      csvPath: join(cwd, 'models', 'train', 'Qwen-Image_lora', 'loss.csv'),
      outputPath: './models/train/Qwen-Image_lora',
      certain: true,
    });
    expect(train!.args).not.toContain(CSV_LOG_FLAG); // the preset's args are not changed
  });

  it('has nothing to offer for the data_process pass, which trains nothing', () => {
    expect(planCsvLog(dataProcess!.args, checkout(true))).toEqual({ kind: 'not-training', task: 'sft:data_process' });
    expect(isDiffSynthStep(dataProcess!.args)).toBe(true);
  });

  it('follows the file when the step already passes the flag, and knows --output_path=... and the default', () => {
    const cwd = checkout(true);
    const script = 'examples/flux/model_training/train.py';
    expect(planCsvLog([script, '--output_path=/runs/x', CSV_LOG_FLAG], cwd)).toEqual({
      kind: 'enabled',
      csvPath: '/runs/x/loss.csv',
      outputPath: '/runs/x',
    });
    expect(planCsvLog([script, '--task', 'sft'], cwd)).toMatchObject({
      kind: 'offer',
      csvPath: join(cwd, 'models', 'loss.csv'),
    });
    expect(diffSynthOutputPath([script])).toBe('./models');
    // accelerate's own options before the script are not the script's.
    expect(diffSynthOutputPath(['--num_processes', '8', script, '--output_path', 'out'])).toBe('out');
  });

  it('refuses to add a flag an older checkout does not know (argparse would stop the step)', () => {
    const plan = planCsvLog(train!.args, checkout(false));
    expect(plan.kind).toBe('unsupported');
    expect(plan.kind === 'unsupported' && plan.reason).toContain('git pull');
    // Without a checkout to read (an installed package), the offer says it is not sure.
    expect(planCsvLog(train!.args, tempDir('zw-nocheckout-'))).toMatchObject({ kind: 'offer', certain: false });
  });

  it('leaves other scripts alone', () => {
    expect(planCsvLog(['train.py', '--output_path', 'x'], checkout(true))).toEqual({ kind: 'not-diffsynth' });
    expect(planCsvLog(['-m', 'examples.flux.model_training.train'], checkout(true))).toEqual({ kind: 'not-diffsynth' });
    expect(isDiffSynthStep(['scripts/examples/flux/train.py'])).toBe(false);
  });
});

describe("the wizard's loss-log offer for a whole setup", () => {
  it('offers the training step only; on by default where the checkout knows the flag, never changing the setup', () => {
    const known = csvLogOffer(seed.steps, checkout(true));
    expect(known.steps.map((x) => [x.name, x.certain])).toEqual([['train', true]]);
    expect(known.note).toBeNull();
    const run = withCsvLog(seed, known, 'auto');
    expect(run.steps[1]!.args.at(-1)).toBe(CSV_LOG_FLAG);
    expect(run.steps[0]!.args).toEqual(seed.steps[0]!.args);
    expect(seed.steps[1]!.args).not.toContain(CSV_LOG_FLAG); // the setup (and a preset of it) is left as it is
    expect(withCsvLog(seed, known, false)).toBe(seed);
  });

  it('waits for a yes where the checkout cannot be read (an older DiffSynth stops on the flag); says why where it lacks it', () => {
    const unsure = csvLogOffer(seed.steps, tempDir('zw-no-checkout-'));
    expect(unsure.steps.map((x) => [x.name, x.certain])).toEqual([['train', false]]);
    expect(withCsvLog(seed, unsure, 'auto')).toBe(seed);
    expect(withCsvLog(seed, unsure, true).steps[1]!.args.at(-1)).toBe(CSV_LOG_FLAG);
    const old = csvLogOffer(seed.steps, checkout(false));
    expect(old.steps).toEqual([]);
    expect(old.note).toMatch(/^step train: this DiffSynth-Studio checkout has no --enable_csv_log/);
  });
});
