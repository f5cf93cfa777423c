/**
 * The wizard's ways out after it wrote something: Ctrl+C says what was written, and its Launch action goes
 * through the same launch as `zerowiz launch` (the "wrote" lines, the run record, the summary).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, KEYS, ROOT, spawnPty, type PtySession } from '../helpers/pty.js';
import { closeWhenDone } from '../helpers/launch.js';
import { at as wizardAt, launchFromFinish, moveTo, settled, startWizard } from '../helpers/wizard-pty.js';
import { removeWorkDirs, until } from '../helpers/proc.js';
import { startSink, type HttpSink } from '../helpers/http-sink.js';
import { parse as parseYaml } from 'yaml';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const DIFFSYNTH = join(ROOT, '__tests__', 'fixtures', 'trainers', 'accelerate-diffsynth');
/** A one-step LoRA preset whose stand-in trainer saves empty weights (an unusable checkpoint: an alert with a fix). */
const LORA_PRESET = [
  'name: lora',
  'steps:',
  '  - { name: train, uses_config: true, args: [train.py, --task, "sft:train", --output_path, ./out, --lora_rank, "4"] }',
  'answers: { num_processes: 1, mode: "2", mixed_precision: bf16 }',
  'files: { accelerate_config: cfg/accelerate_config.yaml, ds_config: cfg/ds_config.json }',
  '',
].join('\n');
const TWO_STEP = join(ROOT, '__tests__', 'fixtures', 'launch', 'two-step.yaml');
/** Ink subscribes a new list's keys just after drawing it: a key is sent once the screen has settled. */
const SETTLE_MS = 60;

const sessions: PtySession[] = [];
const dirs: string[] = [];
const sinks: HttpSink[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill('SIGKILL');
  for (const k of sinks.splice(0)) await k.close();
  await removeWorkDirs(dirs.splice(0));
});
beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

/** The wizard in a sandbox whose user presets hold the two-step fixture (or `preset`, with its accelerate). */
function start(preset?: { yaml: string; accelerate: string; env: Record<string, string> }) {
  const dir = mkdtempSync(join(tmpdir(), 'zw-e2e-wl-'));
  dirs.push(dir);
  const cwd = join(dir, 'work');
  mkdirSync(join(dir, 'config', 'zerowiz', 'presets'), { recursive: true });
  mkdirSync(cwd);
  if (preset) writeFileSync(join(dir, 'config', 'zerowiz', 'presets', 'lora.yaml'), preset.yaml);
  else copyFileSync(TWO_STEP, join(dir, 'config', 'zerowiz', 'presets', 'two-step.yaml'));
  writeFileSync(join(cwd, 'train.py'), '# stand-in\n');
  const s = spawnPty({
    cwd,
    cols: 100,
    rows: 30,
    env: {
      HOME: join(dir, 'home'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      NO_COLOR: '1',
      PATH: `${join(ROOT, '__tests__', 'fixtures', 'bin-empty')}:${process.env.PATH ?? ''}`,
      ZEROWIZ_ACCELERATE: preset?.accelerate ?? FAKE,
      FAKE_ACCELERATE_STEP_MS: '0',
      ...preset?.env,
    },
  });
  sessions.push(s);
  return { s, cwd };
}

async function at(s: PtySession, text: string | RegExp, key: string = KEYS.enter) {
  let last = await s.waitFor(text);
  for (;;) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const now = await s.waitFor(text);
    if (now === last) break;
    last = now;
  }
  s.write(key);
}

/** Start screen → the two-step user preset → review → the finish menu. */
async function toFinish(s: PtySession) {
  await at(s, 'Start from a preset', KEYS.down);
  await at(s, /❯ Start from a preset/);
  await at(s, 'two-step (user)', KEYS.up); // the list wraps: the last entry is the user preset
  await at(s, /❯ two-step \(user\)/);
  await at(s, '→ Finish');
  await s.waitFor('Write to a directory');
}

describe('the wizard when its terminal closes', () => {
  it('ends by SIGHUP, as a program without a handler would, not by an abort on the dead terminal', async () => {
    const { s } = start();
    await at(s, 'Start from a preset', KEYS.down); // Ink is up and reading keys
    await s.waitFor(/❯ Start from a preset/);
    s.hangUp();
    expect(await s.exited).toBe(129);
  });
});

describe('the wizard after writing', () => {
  it('Ctrl+C after a successful write says what was written, not "nothing written"', async () => {
    const { s, cwd } = start();
    await toFinish(s);
    await at(s, /❯ Write to a directory/);
    await at(s, 'Directory for accelerate_config.yaml');
    await s.waitFor('Done: exit');
    expect(readdirSync(cwd).sort()).toEqual(['accelerate_config.yaml', 'ds_config.json', 'train.py']);
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
    await s.waitFor(/aborted; the files written stay:/);
    expect(s.screen()).not.toContain('nothing written');
    expect(s.screen()).toContain(join(cwd, 'accelerate_config.yaml'));
  });

  it("the Launch action runs the steps through the CLI's launch: the files it wrote, the record, the summary", async () => {
    const { s, cwd } = start();
    await toFinish(s);
    await settled(s, 'Launch the 2 step(s)');
    await launchFromFinish(s);
    expect(await closeWhenDone(s)).toBe(0);
    await s.waitFor(/all 2 steps done/);
    expect(s.screen()).toMatch(/zerowiz: wrote \S*cfg\/accelerate_config\.yaml/);
    expect(s.screen()).toMatch(/zerowiz: wrote \S*cfg\/ds_config\.json/);
    expect(readdirSync(join(cwd, '.zerowiz', 'runs'))).toHaveLength(1);
  });

  it("a wizard run's checkpoint fix names no preset it never saved (it named a preset called 'wizard')", async () => {
    const { s, cwd } = start({ yaml: LORA_PRESET, accelerate: DIFFSYNTH, env: { FAKE_TRAIN_SAVE: 'empty' } });
    await at(s, 'Start from a preset', KEYS.down);
    await at(s, /❯ Start from a preset/);
    await at(s, 'lora (user)', KEYS.up);
    await at(s, /❯ lora \(user\)/);
    await at(s, '→ Finish');
    await settled(s, 'Launch the 1 step(s)');
    await launchFromFinish(s);
    expect(await closeWhenDone(s)).toBe(0);
    const [id] = readdirSync(join(cwd, '.zerowiz', 'runs'));
    const run = JSON.parse(readFileSync(join(cwd, '.zerowiz', 'runs', id!, 'run.json'), 'utf8'));
    const alerts = run.steps[0].live.alerts as { id: string; fix: string }[];
    const fix = alerts.find((a) => a.id === 'checkpoint-bad')?.fix ?? '';
    expect(fix).toContain('answer yes to the wizard\'s "Save 16-bit model weights" question');
    expect(fix).not.toContain('--preset wizard');
  });

  it('a Launch the launch entry refuses comes back to the finish screen with the fix, the answers kept; fixed, it runs', async () => {
    const { s, cwd } = start();
    // The training script is missing: `zerowiz launch` would refuse this setup (exit 2).
    rmSync(join(cwd, 'train.py'));
    await toFinish(s);
    await settled(s, 'Launch the 2 step(s)');
    await launchFromFinish(s);
    const back = await s.waitFor(/cannot launch: step 'data_process': training script train\.py not found/);
    // Still the wizard, on its finish screen, with the fix, the highlight still on Launch.
    expect(back).toContain('Write to a directory');
    expect(back).toMatch(/fix: run zerowiz from the trainer's checkout/);
    expect(back).toMatch(/^❯ Launch the 2 step\(s\)/m);
    expect(existsSync(join(cwd, '.zerowiz'))).toBe(false);
    // The user fixes it and launches again from the same screen.
    writeFileSync(join(cwd, 'train.py'), '# stand-in\n');
    await launchFromFinish(s);
    expect(await closeWhenDone(s)).toBe(0);
    const [id] = readdirSync(join(cwd, '.zerowiz', 'runs'));
    expect(id).toMatch(/two-step/);
  });
});

describe("a preset's notify: list in the wizard", () => {
  it('goes with the setup: saved as another preset it is kept, and the Launch notifies it, as `zerowiz launch NAME` does', async () => {
    const sink = await startSink();
    sinks.push(sink);
    const yaml = [
      'name: lora',
      'steps: [{ name: train, uses_config: true, args: [train.py] }]',
      'answers: { num_processes: 1, mode: "2", mixed_precision: bf16 }',
      'files: { accelerate_config: cfg/accelerate_config.yaml, ds_config: cfg/ds_config.json }',
      `notify: ["${sink.url}/runs"]`,
      '',
    ].join('\n');
    const { s, cwd } = start({ yaml, accelerate: FAKE, env: {} });
    await at(s, 'Start from a preset', KEYS.down);
    await at(s, /❯ Start from a preset/);
    await at(s, 'lora (user)', KEYS.up);
    await at(s, /❯ lora \(user\)/);
    await at(s, '→ Finish');
    // Saved under another name: the copy keeps where its runs' notifications go.
    await moveTo(s, /^❯ Save (these|the) answers and steps as a user preset/);
    s.write(KEYS.enter);
    await settled(s, 'Name of the user preset');
    s.write('copy');
    await s.waitFor(/❯ copy(\s|$)/m);
    s.write(KEYS.enter);
    await s.waitFor('saved preset copy');
    const presets = join(cwd, '..', 'config', 'zerowiz', 'presets');
    expect(parseYaml(readFileSync(join(presets, 'copy.yaml'), 'utf8')).notify).toEqual([`${sink.url}/runs`]);
    await settled(s, 'Launch the 1 step(s)');
    await launchFromFinish(s);
    expect(await closeWhenDone(s)).toBe(0);
    // The label hides the URL's path (it may hold a secret).
    await s.waitFor(`notifications go to ${sink.url}/… [`);
    const got = (await sink.waitFor(2, 20_000)).map(
      (r) => JSON.parse(r.body) as { event: string; run: { id: string } },
    );
    expect(got[0]!.event).toBe('started');
    await until(
      () => sink.requests.some((r) => (JSON.parse(r.body) as { event: string }).event === 'end'),
      'the end event',
      20_000,
    );
    const [id] = readdirSync(join(cwd, '.zerowiz', 'runs'));
    expect(got[0]!.run.id).toBe(id);
  });
});

describe("the wizard's Launch on a machine that fails the first pass's checks, at 80x24", () => {
  it('stops before the pane: the refusal reads whole, with a way on the wizard has (not a CLI flag)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-e2e-wl-'));
    dirs.push(dir);
    const cwd = join(dir, 'work');
    mkdirSync(join(dir, 'config', 'zerowiz', 'presets'), { recursive: true });
    mkdirSync(cwd);
    copyFileSync(TWO_STEP, join(dir, 'config', 'zerowiz', 'presets', 'two-step.yaml'));
    writeFileSync(join(cwd, 'train.py'), '# stand-in\n');
    const s = spawnPty({
      cwd,
      cols: 80,
      rows: 24,
      env: {
        HOME: join(dir, 'home'),
        XDG_CONFIG_HOME: join(dir, 'config'),
        NO_COLOR: '1',
        ZEROWIZ_ACCELERATE: FAKE,
        // The checks on: the stand-in accelerate is a Node script, so the python check fails.
        ZEROWIZ_SKIP_CHECKS: '',
      },
    });
    sessions.push(s);
    await toFinish(s);
    await settled(s, 'Launch the 2 step(s)');
    await launchFromFinish(s);
    const screen = await s.waitFor(/cannot launch: the checks of pass 1 \(data_process\) failed/, 30_000);
    // The note ends where the run's estimate (its step time, its ETA) or the preview begins.
    const note = screen
      .slice(screen.indexOf('cannot launch:'))
      .split(/────|\nRun: /)[0]!
      .replace(/\s+/g, ' ');
    expect(note).toMatch(/failed: python: \S+ is run by \S+, not by Python;/);
    expect(note).toMatch(
      /fix: fix (it|them) and choose Launch again .* start zerowiz with ZEROWIZ_SKIP_CHECKS=python\S* to go on without $/,
    );
    expect(note).not.toMatch(/--skip-check|--accelerate/);
    // Nothing started: no run record, and the wizard still has its finish menu with the highlight on Launch.
    expect(existsSync(join(cwd, '.zerowiz'))).toBe(false);
    expect(screen).toMatch(/^❯ Launch the 2 step\(s\)/m);
  });
});

describe("the wizard's Launch without accelerate, at 80x24", () => {
  it('the refusal reads whole and its fix is one the wizard has: the environment it starts in, not --accelerate', async () => {
    const { s } = startWizard({ cols: 80, rows: 24 });
    await s.waitFor('H100');
    await wizardAt(s, 'New setup', KEYS.down);
    await wizardAt(s, /❯ Start from a preset \([1-9]/);
    await wizardAt(s, /❯ qwen-image-lora-lowvram/);
    await wizardAt(s, /❯ → Finish/);
    await settled(s, /^Finish/m);
    await launchFromFinish(s);
    const screen = await s.waitFor(/cannot launch: accelerate is not on PATH/, 30_000);
    // The note ends where the run's estimate (its step time, its ETA) or the preview begins.
    const note = screen
      .slice(screen.indexOf('cannot launch:'))
      .split(/────|\nRun: /)[0]!
      .replace(/\s+/g, ' ');
    expect(note).toMatch(
      /fix: quit, activate the Python environment .* or start it with ZEROWIZ_ACCELERATE=\/path\/to\/accelerate\s*$/,
    );
    expect(note).not.toContain('--accelerate');
  });
});
