/**
 * Every screen reads right to a newcomer (issue 22), in a real terminal at 80x24 and 160x45: the review's
 * highlighted finding reads whole with its fix, a question's help lists its findings whole, the steps screen's
 * `?` says what each key does, PgDn moves the preview a page, and at 160 columns the questions use the width.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, KEYS, ROOT, type PtySession } from '../helpers/pty.js';
import { at, marked, moveTo, settled, startWizard, still } from '../helpers/wizard-pty.js';

beforeAll(() => {
  if (!existsSync(BIN)) spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

/** The seed preset from the start screen, to its review (its scripts are not here: the review has findings). */
async function seedReview(s: PtySession) {
  await s.waitFor('H100');
  await at(s, 'New setup', KEYS.down);
  await at(s, /❯ Start from a preset \([1-9]/);
  await at(s, /❯ qwen-image-lora-lowvram/);
  await s.waitFor('Review:');
}

/** Columns of the questions' side: where the preview's tab line starts when it is beside them, else the width. */
function mainColumns(s: PtySession): number {
  const tabs = s.lines().find((l) => l.includes(' YAML  JSON  commands')) ?? '';
  const at = tabs.indexOf(' YAML ');
  return at > 0 ? at : Number.POSITIVE_INFINITY;
}

/** The questions' column as one line of words (at 160 columns the preview's text is cut off each row). */
function mainText(s: PtySession): string {
  const w = mainColumns(s);
  return s
    .lines()
    .map((l) => l.slice(0, w))
    .join(' ')
    .replace(/\s+/g, ' ');
}

/** The preview's position `a-b/n` on its tab line; null on a screen caught mid-repaint (no tab line yet). */
function positionOf(screen: string): [number, number, number] | null {
  const m = / (\d+)-(\d+)\/(\d+) /.exec(screen);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** The preview's position on a screen that must show it. */
function position(screen: string): [number, number, number] {
  const p = positionOf(screen);
  if (!p) throw new Error(`no preview position on:\n${screen}`);
  return p;
}

describe.each([
  [80, 24],
  [160, 45],
])('at %ix%i', (cols, rows) => {
  it("the review notes the seed's 1 process on this 8-GPU machine", async () => {
    const { s } = startWizard({ cols, rows });
    await seedReview(s);
    await settled(s, 'Review:');
    expect(mainText(s)).toContain(
      'num_processes 1 starts 1 process per machine, and this machine has 8 GPUs: 7 of them stay idle',
    );
  });

  it('the review shows the highlighted finding whole, with its fix', async () => {
    const { s } = startWizard({ cols, rows });
    await seedReview(s);
    // On Finish, the rows under the list say how to read the findings.
    expect(await settled(s, 'highlight one to read it whole')).toMatch(/\d+ findings above/);
    await moveTo(s, /^❯ ✗ \[→ steps\] step data_process: the script/);
    const screen = await still(s);
    const lines = s.lines();
    const first = lines.findIndex((l) => l.startsWith('✗ step data_process: the script'));
    expect(first, screen).toBeGreaterThan(lines.indexOf(marked(s)));
    // Its message to the end, then its fix: nothing cut.
    const detail = lines.slice(first, first + 8).join(' ');
    expect(detail).toMatch(/does not exist/);
    expect(detail).toMatch(/ {2}fix: /);
    expect(lines.slice(first, first + 8).every((l) => !l.endsWith('…'))).toBe(true);
  });

  it("a question's help lists the findings that point at it, whole", async () => {
    const { s } = startWizard({ cols, rows });
    await seedReview(s);
    await moveTo(s, /^❯ mixed_precision +auto/);
    s.write(KEYS.enter);
    await settled(s, 'Mixed precision');
    s.write('?');
    const help = (await settled(s, 'Default:')).replace(/\s+/g, ' ');
    expect(help).toMatch(/! fp16\/bf16 are "auto" and no step passes --mixed_precision/);
    expect(help).toMatch(
      /fix: answer bf16 or fp16 to the mixed precision question .*, or pass --mixed_precision bf16 to accelerate launch/,
    );
  });

  it("the steps screen's ? says what each key does, not the hint row again, and where the steps run", async () => {
    const { s } = startWizard({ cols, rows });
    await seedReview(s);
    await moveTo(s, /^❯ steps +data_process, train/);
    s.write(KEYS.enter);
    await settled(s, 'Steps (the accelerate launch passes');
    s.write('?');
    const help = (await settled(s, 'Keys of the steps screen')).replace(/\s+/g, ' ');
    expect(help).toContain('add an argument after the highlighted one');
    expect(help).toContain('delete the highlighted argument');
    expect(help).toContain("start zerowiz in your trainer's checkout");
  });

  it('PgDn and PgUp move the preview a page of its text, one line staying in view', async () => {
    const { s } = startWizard({ cols, rows });
    await seedReview(s);
    await settled(s, 'Review:');
    s.write(KEYS.tab); // the JSON (its first line is `{`): longer than the preview at both sizes
    await s.waitFor(/\{$/m);
    const [a, b, n] = position(await still(s));
    const shown = b - a + 1;
    expect(a).toBe(1);
    expect(n).toBeGreaterThan(shown);
    s.write(KEYS.pageDown);
    await s.waitFor((x) => (positionOf(x)?.[0] ?? 1) !== 1);
    // A page is the rows shown less one (the last stays in view), never past the end.
    expect(position(await still(s))[0]).toBe(Math.min(a + Math.max(1, shown - 1), n - shown + 1));
    s.write(KEYS.pageUp);
    await s.waitFor((x) => positionOf(x)?.[0] === 1);
  });
});

describe.each([
  [80, 24],
  [160, 45],
])('fields at %ix%i', (cols, rows) => {
  it("the preset name starts as a suggestion that typing replaces (it appended to 'qwen-image-lora-lowvram')", async () => {
    const { s } = startWizard({ cols, rows });
    await seedReview(s);
    await at(s, /❯ → Finish/);
    // The finish screen first: a key sent while the review still shows lands on the next screen unseen.
    await settled(s, 'Write to a directory');
    await moveTo(s, /^❯ Save the answers and steps as a user preset/);
    s.write(KEYS.enter);
    await settled(s, 'Name of the user preset');
    expect(s.screen()).toContain('(type to replace)');
    s.write('mine');
    await s.waitFor(/❯ mine(\s|$)/m);
    s.write(KEYS.enter);
    await s.waitFor('saved preset mine');
  });

  it('a long step value scrolls with the cursor; ^U erases to its start', async () => {
    const { s } = startWizard({ cols, rows });
    await seedReview(s);
    await moveTo(s, /^❯ steps +data_process, train/);
    s.write(KEYS.enter);
    await settled(s, 'Steps (the accelerate launch passes');
    await moveTo(s, /^❯ --model_id_with_orig/);
    s.write(KEYS.enter); // edit the value: the cursor at its end, the end in view
    // The questions' column only (at 160 columns the preview's text follows on the same row).
    const row = () => (s.lines().find((l) => l.startsWith('❯ --model_id_with_orig')) ?? '').slice(0, mainColumns(s));
    await s.waitFor(() => /diffusion_pytorch_model\.safetensors\s*$/.test(row()));
    expect(row().length).toBeLessThanOrEqual(cols);
    s.write('\x15'); // ^U
    await s.waitFor(() => !row().includes('safetensors'));
    s.write('Qwen/Qwen-Image:vae/x.safetensors');
    s.write(KEYS.enter);
    await s.waitFor(() => /^❯ --model_id_with_orig\S* +Qwen\/Qwen-Image:vae\/x\.safetensors\s*$/.test(row()));
  });
});

describe('at 160x45', () => {
  it('the questions take the width the preview does not need', async () => {
    const { s } = startWizard({ cols: 160, rows: 45 });
    await s.waitFor('H100');
    await at(s, 'New setup');
    const screen = await settled(s, 'How many machines');
    // The preview's tab line starts after the questions' column: 98 columns of 160 (86 before).
    const tabs = s.lines().find((l) => l.includes(' YAML  JSON  commands'))!;
    expect(tabs.indexOf(' YAML '), screen).toBeGreaterThanOrEqual(98);
  });
});

describe.each([
  [80, 24],
  [160, 45],
])('where the steps run, at %ix%i', (cols, rows) => {
  it("started outside the trainer's checkout: the steps say where they run, the dataset is a finding, L moves them", async () => {
    const { s, cwd, dir } = startWizard({ cols, rows });
    // DiffSynth-Studio's checkout, with the seed's script and dataset, beside the directory zerowiz started in.
    const checkout = join(dir, 'DiffSynth-Studio');
    for (const f of ['examples/qwen_image/model_training/train.py', 'data/example_image_dataset/metadata.csv']) {
      mkdirSync(dirname(join(checkout, f)), { recursive: true });
      writeFileSync(join(checkout, f), '');
    }
    await seedReview(s);
    const review = (await settled(s, 'Review:')).replace(/\s+/g, ' ');
    expect(review).toMatch(/! \[→ steps\] step data_process: --dataset_base_path data\/example_image_dataset/);
    await moveTo(s, /^❯ steps +data_process, train/);
    s.write(KEYS.enter);
    await settled(s, /runs in \S+ \(L: change\)/);
    s.write('L');
    await settled(s, 'Where do the steps run?');
    s.write('../DiffSynth-Studio');
    s.write(KEYS.enter);
    const moved = (await settled(s, `the steps run in ${checkout}`)).replace(/\s+/g, ' ');
    expect(moved).toMatch(/runs in \S*\/DiffSynth-Studio \(L: change\)/);
    // The script and the dataset are found there: no finding about them is left.
    expect(moved).not.toMatch(/does not exist/);
    s.write('r');
    const after = (await settled(s, 'Review:')).replace(/\s+/g, ' ');
    expect(after).not.toMatch(/dataset_base_path data\/example_image_dataset does/);
    expect(after).not.toMatch(/the script examples\/qwen_image\/model_training\/train\.py does not exist/);
    // And what zerowiz writes there is relative to it: the directory '.' is the checkout.
    await moveTo(s, /^❯ → Finish/, KEYS.up);
    s.write(KEYS.enter);
    await at(s, /❯ Write to a directory/);
    await at(s, 'Directory for accelerate_config.yaml');
    await s.waitFor('Done: exit');
    expect(existsSync(join(checkout, 'accelerate_config.yaml'))).toBe(true);
    expect(existsSync(join(cwd, 'accelerate_config.yaml'))).toBe(false);
  });
});
