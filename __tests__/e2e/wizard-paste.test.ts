/**
 * Starting from DiffSynth-Studio's own example, in a real terminal at 80x24: the steps screen's templates are
 * DiffSynth's example scripts (the answers' model first, a list that says it scrolls), a template of another model
 * is a finding on the review, and a whole example script pasted into the steps screen (P, then ^D) becomes its
 * steps, words split as a shell would.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTemplates } from '../../src/setups/templates.js';
import { BIN, KEYS, ROOT, type PtySession } from '../helpers/pty.js';
import { at, moveTo, settled, startWizard } from '../helpers/wizard-pty.js';

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

/** The seed preset (Qwen-Image LoRA answers) from the start screen to its steps screen. */
async function seedSteps(s: PtySession) {
  await s.waitFor('H100');
  await at(s, 'New setup', KEYS.down);
  await at(s, /❯ Start from a preset \([1-9]/);
  await at(s, /❯ qwen-image-lora-lowvram/);
  await settled(s, 'Review:');
  await moveTo(s, /^❯ steps +data_process, train/);
  s.write(KEYS.enter);
  await settled(s, 'Steps (the accelerate launch passes');
}

const flat = (screen: string) => screen.replace(/\s+/g, ' ');

describe("the steps screen at 80x24: DiffSynth-Studio's examples", () => {
  it("offers the answers' model's examples first, says the list goes on, and a FLUX template is a finding here", async () => {
    const { s } = startWizard({ cols: 80, rows: 24 });
    await seedSteps(s);
    s.write('t');
    const list = await settled(s, 'What does this setup run?');
    const rows = list.split('\n').filter((l) => /^[❯ ] (DiffSynth|One training|No steps)/.test(l));
    expect(rows.slice(0, 3)).toEqual([
      '❯ DiffSynth-Studio Qwen-Image LoRA (two passes)',
      '  DiffSynth-Studio Qwen-Image LoRA',
      '  DiffSynth-Studio Qwen-Image LoRA, split: cache the encoders first',
    ]);
    expect(list).toMatch(/^ {2}↓ \d+ more \(↑↓ scroll\)$/m);
    await moveTo(s, /^❯ DiffSynth-Studio FLUX\.1-dev LoRA$/);
    expect(flat(s.screen())).toContain('examples/flux/model_training/lora/FLUX.1-dev.sh');
    s.write(KEYS.enter);
    const steps = await settled(s, /step 1\/1/);
    expect(steps).toMatch(/script +examples\/flux\/model_training\/train\.py/);
    expect(flat(steps)).toContain('--dataset_base_path data/diffsynth_example_dataset/flux/FLUX.1-dev');
    s.write('r');
    const review = flat(await settled(s, 'Review:'));
    expect(review).toMatch(/step train trains FLUX\.1-dev/);
  });

  it('a pasted example script becomes its steps: one per accelerate launch, the download named as a line to run first', async () => {
    const { s } = startWizard({ cols: 80, rows: 24 });
    await seedSteps(s);
    s.write('P');
    await settled(s, /Paste an `accelerate launch \.\.\.` line/);
    const wan = loadTemplates().templates.find((t) => t.id === 'wan2.1-14b-lora')!.script;
    // A terminal sends a pasted newline as a carriage return.
    s.write(wan.replace(/\n/g, '\r'));
    await s.waitFor(/\d+ line\(s\), \d+ characters/);
    await s.waitFor(`${wan.split('\n').length} line(s)`);
    s.write('\x04'); // ^D
    const read = flat(await settled(s, 'Read from the paste'));
    expect(read).toContain('read one step (train); they replace the steps');
    expect(read).toMatch(
      /line 1: not an accelerate launch, so not a step \(run it yourself first\): modelscope download/,
    );
    s.write(KEYS.enter);
    const steps = await settled(s, /step 1\/1/);
    expect(steps).toMatch(/Steps \(the accelerate launch passes, in order\): \[train\]/);
    expect(steps).toMatch(/script +examples\/wanvideo\/model_training\/train\.py/);
  });

  it('a paste without an accelerate launch says so and keeps the text; Esc leaves the steps as they were', async () => {
    const { s } = startWizard({ cols: 80, rows: 24 });
    await seedSteps(s);
    s.write('P');
    await settled(s, /Paste an `accelerate launch/);
    s.write('python train.py --lr 1e-4');
    await s.waitFor('python train.py --lr 1e-4');
    s.write('\x04');
    const said = flat(await settled(s, 'no `accelerate launch` in what was pasted'));
    expect(said).toContain('python train.py --lr 1e-4');
    s.write(KEYS.esc);
    const back = await settled(s, 'Steps (the accelerate launch passes');
    expect(back).toContain('[data_process] ▸ train');
  });
});
