/**
 * The wizard's pipeline and its dialogs in a real terminal: a step without --config_file under a ZeRO-3
 * default config (the finding, its fix, the pinned config written with the setup and used by the launch);
 * the keys of a step's argument field; the one quit dialog; an import typed with `~` whose JSON is missing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BIN, KEYS, ROOT, type PtySession } from '../helpers/pty.js';
import { at, moveTo, settled, startWizard } from '../helpers/wizard-pty.js';
import { removeWorkDirs } from '../helpers/proc.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const SCRIPT = 'examples/qwen_image/model_training/train.py';

const hfDirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(hfDirs.splice(0));
});

beforeAll(() => {
  if (!existsSync(BIN)) spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

/** The seed preset from the start screen, to its review. */
async function seedReview(s: PtySession) {
  await s.waitFor('H100');
  await at(s, 'New setup', KEYS.down);
  await at(s, /❯ Start from a preset \([1-9]/);
  await at(s, /❯ qwen-image-lora-lowvram/);
  await s.waitFor('Review:');
}

describe('a step without --config_file under a ZeRO-3 default config', () => {
  it('is an error on the review; choosing it pins the step; the pinned config is written with the setup and the launch uses it', async () => {
    // A ZeRO-3 offload default config where accelerate looks for it ($HF_HOME/accelerate/default_config.yaml).
    const hf = mkdtempSync(join(tmpdir(), 'zw-hf-'));
    hfDirs.push(hf);
    mkdirSync(join(hf, 'accelerate'), { recursive: true });
    writeFileSync(
      join(hf, 'accelerate', 'default_config.yaml'),
      'compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  offload_optimizer_device: cpu\n  offload_param_device: cpu\n  zero_stage: 3\ndistributed_type: DEEPSPEED\nnum_processes: 8\n',
    );
    const w = startWizard({ cols: 100, rows: 40, env: { HF_HOME: hf } });
    await seedReview(w.s);
    const review = w.s.screen();
    expect(review).toMatch(
      /✗ \[Enter fixes\] step data_process runs without --config_file, so accelerate launch uses its/,
    );
    await moveTo(w.s, /^❯ ✗ \[Enter fixes\] step data_process runs without --config_file/);
    w.s.write(KEYS.enter);
    await w.s.waitFor((x) => !x.includes('runs without --config_file'));
    await settled(w.s, /^❯ steps +data_process, train/m); // the cursor on the steps it changed
    await moveTo(w.s, /^❯ → Finish/, KEYS.up);
    await at(w.s, /^❯ → Finish/m);
    // The commands: the data pass pinned to the config without DeepSpeed, which is written with the setup.
    const commands = (await w.s.waitFor('Write to a directory')).replace(/\s+/g, '');
    // (beside the preset's own accelerate config until the files are written elsewhere)
    expect(commands).toContain(
      'acceleratelaunch--config_fileexamples/qwen_image/model_training/special/low_vram_training/accelerate_no_deepspeed.yamlexamples/qwen_image/model_training/train.py',
    );
    await at(w.s, /❯ Write to a directory/);
    await w.s.waitFor('Directory for accelerate_config.yaml');
    w.s.write(`${KEYS.backspace}cfg${KEYS.enter}`);
    await w.s.waitFor('Done: exit');
    const written = parseYaml(readFileSync(join(w.cwd, 'cfg', 'accelerate_no_deepspeed.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(written).toMatchObject({ distributed_type: 'NO', num_processes: 1, mixed_precision: 'no' });
    await at(w.s, /❯ Done: exit/, KEYS.down);
    await at(w.s, /❯ Save these answers and steps/);
    await w.s.waitFor('Name of the user preset');
    w.s.write(`${KEYS.backspace.repeat(40)}pinned${KEYS.enter}`);
    await w.s.waitFor('saved preset pinned');
    // The highlight stays where it was (on the entry just used): Done is one row up.
    await at(w.s, /❯ Save these answers and steps/, KEYS.up);
    await at(w.s, /❯ Done: exit/);
    expect(await w.s.exited).toBe(0);

    // The launch of that preset runs the data pass with the pinned config it wrote.
    mkdirSync(join(w.cwd, 'examples', 'qwen_image', 'model_training'), { recursive: true });
    writeFileSync(join(w.cwd, SCRIPT), '# stand-in\n');
    const log = join(w.cwd, 'argv.jsonl');
    const childEnv: Record<string, string> = { ...(process.env as Record<string, string>) };
    for (const [k, v] of Object.entries({ ...w.env, HF_HOME: hf })) {
      if (v === undefined) delete childEnv[k];
      else childEnv[k] = v;
    }
    delete childEnv.CI;
    const run = spawnSync(process.execPath, [BIN, 'launch', 'pinned', '--no-tui', '--accelerate', FAKE], {
      cwd: w.cwd,
      env: { ...childEnv, FAKE_ACCELERATE_LOG: log, FAKE_ACCELERATE_STEPS: '2', FAKE_ACCELERATE_STEP_MS: '0' },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const first = JSON.parse(readFileSync(log, 'utf8').split('\n')[0]!) as { argv: string[] };
    expect(first.argv.slice(0, 3)).toEqual([
      'launch',
      '--config_file',
      join(w.cwd, 'cfg', 'accelerate_no_deepspeed.yaml'),
    ]);
  });
});

describe("a step's argument field", () => {
  it('takes q, r and ← as text; Esc cancels the edit and leaves the value as it was; ~ is expanded on Enter', async () => {
    const { s, env } = startWizard({ cols: 100, rows: 40 });
    await seedReview(s);
    await moveTo(s, /^❯ steps +data_process, train/);
    await at(s, /^❯ steps +data_process, train/m);
    await s.waitFor('Steps (the accelerate launch passes');
    await moveTo(s, /^❯ --dataset_repeat +1$/);
    await at(s, /^❯ --dataset_repeat +1$/m);
    await s.waitFor('Enter accept · Esc cancel');
    s.write('qr');
    s.write(KEYS.left);
    s.write('x');
    await s.waitFor(/❯ --dataset_repeat +1qxr/);
    expect(s.screen()).toContain('Steps (the accelerate launch passes'); // neither quit nor the review
    s.write(KEYS.esc);
    await s.waitFor(/❯ --dataset_repeat +1 *$/m);
    expect(s.screen()).not.toContain('1qxr');
    // `~` in a value is expanded when it is accepted (the steps run without a shell).
    await moveTo(s, /^❯ --dataset_base_path +data\/example_image_dataset$/, KEYS.up);
    await at(s, /^❯ --dataset_base_path +data/m);
    await s.waitFor('Enter accept · Esc cancel');
    s.write(`${KEYS.backspace.repeat(30)}~/data${KEYS.enter}`);
    await s.waitFor('Change it everywhere?'); // the metadata path under it follows, if wanted
    s.write('n');
    await s.waitFor(new RegExp(`❯ --dataset_base_path +${join(env.HOME!, 'data')}`));
  });
});

describe('the one quit dialog', () => {
  it('q with changes asks: n stays, and the finish menu asks the same; y quits, writing nothing', async () => {
    const { s, cwd } = startWizard({ cols: 100, rows: 40 });
    await s.waitFor('H100');
    await at(s, 'New setup');
    await at(s, 'How many machines');
    await at(s, 'Check distributed operations', '2'); // debug: yes (a change)
    await at(s, 'torch dynamo', 'r');
    await at(s, 'Review:', 'q');
    await s.waitFor('Quit without writing? Your answers changed and will be lost.');
    s.write('n');
    await s.waitFor((x) => !x.includes('Quit without writing?') && x.includes('Review:'));
    // From the finish menu: the same dialog.
    await at(s, /❯ → Finish/);
    await s.waitFor('Write to a directory');
    await moveTo(s, /^❯ Quit without writing/, KEYS.up);
    await at(s, /^❯ Quit without writing/m);
    await s.waitFor('Quit without writing? Your answers changed and will be lost.');
    s.write('y');
    expect(await s.exited).toBe(0);
    await s.waitFor('zerowiz: quit without writing.');
    expect(existsSync(join(cwd, 'accelerate_config.yaml'))).toBe(false);
  });
});

describe('an import typed with ~', () => {
  it('expands it, and a YAML whose DeepSpeed JSON is missing is one error naming the JSON', async () => {
    const { s, env } = startWizard({ cols: 100, rows: 30 });
    mkdirSync(env.HOME!, { recursive: true });
    writeFileSync(
      join(env.HOME!, 'acc.yaml'),
      'distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: /gone/ds_z3.json\n',
    );
    await s.waitFor('H100');
    await at(s, 'New setup', KEYS.up);
    await at(s, /❯ Quit/, KEYS.up);
    await at(s, /❯ Import another accelerate config file/);
    await s.waitFor('Path of an accelerate config YAML to import');
    s.write(`~/acc.yaml${KEYS.enter}`);
    // The title bar says "cannot import: …" clipped before the message below is drawn: wait for the message's end.
    const screen = await s.waitFor('/gone/ds_z3.json');
    expect(screen.replace(/\s+/g, ' ')).toContain(
      `${join(env.HOME!, 'acc.yaml')} names deepspeed_config_file /gone/ds_z3.json`,
    );
    expect(screen).not.toMatch(/ZeRO-2/);
  });
});
