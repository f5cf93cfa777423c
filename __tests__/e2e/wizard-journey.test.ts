/**
 * The whole journey in a real terminal, as a researcher on a new 8-GPU box takes it: a new setup, Qwen-Image,
 * ZeRO-3 offload (with a look at the picture), the seed's two passes from the template with the cache path
 * edited once (both passes follow), the review (human units, the cursor kept on the edited row), the files
 * written to `~/cfg` (expanded, never a directory named `~`), a preset saved, and then `zerowiz launch NAME`
 * with the stand-in accelerate running both passes with exactly the seed's argv.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BIN, KEYS, ROOT } from '../helpers/pty.js';
import { seedCommands } from '../helpers/seed.js';
import { at, moveTo, settled, startWizard } from '../helpers/wizard-pty.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const SEED_CACHE = './models/train/Qwen-Image_lora-splited-cache';
const NEW_CACHE = './cache/qwen-image';
const SCRIPT = 'examples/qwen_image/model_training/train.py';

beforeAll(() => {
  if (!existsSync(BIN)) spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

describe('the journey: from a new setup to both passes running', () => {
  it('new setup -> Qwen-Image -> ZeRO-3 offload -> picture -> seed steps, cache path edited once -> ~/cfg -> preset -> zerowiz launch', async () => {
    const { s, cwd, env } = startWizard({ cols: 100, rows: 40 });
    const home = env.HOME;
    await s.waitFor('H100');
    await at(s, 'New setup');
    for (const q of [
      'How many machines',
      'Check distributed operations',
      'torch dynamo',
      'How many parameters', // Qwen-Image, the catalog's first model
      'largest single layer',
      'Memory of one GPU',
      'CPU memory (RAM)',
      'Train every parameter, or LoRA',
      'Micro-batch per GPU',
      'Largest image in pixels',
    ])
      await at(s, q);
    // The seed trains with gradient checkpointing: under ZeRO-3 offload it needs DeepSpeed's block (yes).
    await at(s, 'gradient checkpointing', '2');
    // The optimizer (issue 23): AdamW, DiffSynth-Studio's.
    await at(s, 'Which optimizer');
    await s.waitFor('Which ZeRO mode');
    await moveTo(s, /^❯ ZeRO-3 offload +\d/);
    // The picture of the highlighted mode: the 8 GPUs and the CPU, with its numbers.
    s.write('p');
    const picture = await s.waitFor('ZeRO-3 offload · 8 GPUs (1 node x 8)');
    expect(picture.split('\n').filter((l) => /^GPU \d +│/.test(l))).toHaveLength(8);
    expect(picture).toMatch(/^per node .*\d+(\.\d)? GiB/m);
    expect(picture).toMatch(/params CPU→GPU [\d.]+ GiB/);
    s.write(KEYS.esc);
    await s.waitFor((x) => x.includes('Which ZeRO mode') && !x.includes('per GPU and per node'));
    await at(s, /^❯ ZeRO-3 offload +\d/m);
    for (const q of [
      'Gradient accumulation steps',
      'Gradient clipping value',
      'Save 16-bit model weights',
      'Enable deepspeed.zero.Init',
      'Mixture-of-Experts',
      'How many GPUs in total',
      'Mixed precision',
    ])
      await at(s, q);

    // The steps: the seed recipe, then its cache path edited once; the training pass follows.
    await at(s, /❯ DiffSynth-Studio Qwen-Image LoRA/);
    await s.waitFor('Steps (the accelerate launch passes, in order): [data_process] ▸ train');
    await moveTo(s, /^❯ --output_path +\.\/models/);
    await at(s, /^❯ --output_path +\.\/models/m);
    await s.waitFor('Enter accept · Esc cancel');
    s.write(KEYS.backspace.repeat(SEED_CACHE.length) + NEW_CACHE);
    await s.waitFor(NEW_CACHE);
    s.write(KEYS.enter);
    const offer = await s.waitFor('Change it everywhere?');
    expect(offer).toContain(`train --dataset_base_path: ${SEED_CACHE} → ${NEW_CACHE}`);
    s.write('y');
    await s.waitFor('changed in 2 places');
    // The commands below follow: the new path in both passes, the old one in neither.
    const commands = s.screen().replace(/\s+/g, '');
    expect(commands).toContain(`--output_path${NEW_CACHE}`);
    expect(commands).not.toContain('splited-cache');

    // The review: human units; an edit brings the cursor back to its row.
    await at(s, 'Steps (the accelerate launch passes', 'r');
    const review = await s.waitFor('Review:');
    expect(review).toMatch(/model_params +20\.43B/);
    expect(review).toMatch(/largest_layer_params +56\.64M/);
    await moveTo(s, /^❯ micro_batch /);
    await at(s, /^❯ micro_batch /m);
    await at(s, 'Micro-batch per GPU');
    await s.waitFor('Review:');
    await settled(s, /^❯ micro_batch /m);

    // Written to ~/cfg: the home's cfg, never a directory named `~` here.
    await moveTo(s, /^❯ → Finish/, KEYS.up);
    await at(s, /^❯ → Finish/m);
    await at(s, /❯ Write to a directory/);
    await s.waitFor('Directory for accelerate_config.yaml');
    s.write(`${KEYS.backspace}~/cfg`);
    await s.waitFor('❯ ~/cfg');
    s.write(KEYS.enter);
    await s.waitFor('Done: exit');
    expect(existsSync(join(cwd, '~'))).toBe(false);
    const yaml = parseYaml(readFileSync(join(home!, 'cfg', 'accelerate_config.yaml'), 'utf8')) as {
      deepspeed_config: { deepspeed_config_file: string };
      num_processes: number;
    };
    expect(yaml.deepspeed_config.deepspeed_config_file).toBe(join(home!, 'cfg', 'ds_config.json'));
    expect(yaml.num_processes).toBe(8);

    // Saved as a preset: the answers and the steps.
    await at(s, /❯ Done: exit/, KEYS.down);
    await at(s, /❯ Save these answers and steps/);
    await s.waitFor('Name of the user preset');
    s.write(`${KEYS.backspace.repeat(20)}qwen8${KEYS.enter}`);
    await s.waitFor('saved preset qwen8');
    await at(s, /❯ Save these answers and steps/, KEYS.up);
    await at(s, /❯ Done: exit/);
    expect(await s.exited).toBe(0);
    const saved = parseYaml(readFileSync(join(env.XDG_CONFIG_HOME!, 'zerowiz', 'presets', 'qwen8.yaml'), 'utf8')) as {
      steps: { name: string }[];
    };
    expect(saved.steps.map((x) => x.name)).toEqual(['data_process', 'train']);

    // `zerowiz launch qwen8`: both passes, exactly the seed's argv with the edited path and the written config.
    mkdirSync(join(cwd, 'examples', 'qwen_image', 'model_training'), { recursive: true });
    writeFileSync(join(cwd, SCRIPT), '# stand-in\n');
    const log = join(cwd, 'argv.jsonl');
    const childEnv: Record<string, string> = { ...(process.env as Record<string, string>) };
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete childEnv[k];
      else childEnv[k] = v;
    }
    const run = spawnSync(process.execPath, [BIN, 'launch', 'qwen8', '--no-tui', '--accelerate', FAKE], {
      cwd,
      env: { ...childEnv, FAKE_ACCELERATE_LOG: log, FAKE_ACCELERATE_STEPS: '3', FAKE_ACCELERATE_STEP_MS: '0' },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const argvs = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { argv: string[] }).argv);
    const [pass1, pass2] = seedCommands().map((argv) => argv.map((a) => (a === SEED_CACHE ? NEW_CACHE : a)));
    pass2![2] = join(home!, 'cfg', 'accelerate_config.yaml');
    expect(argvs).toEqual([pass1, pass2]);
    expect(readdirSync(join(cwd, '.zerowiz', 'runs'))).toHaveLength(1);
  });
});
