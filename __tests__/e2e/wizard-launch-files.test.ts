/**
 * The wizard's Launch says where it writes the setup's config files, and shows the overwrite diff before it
 * changes one that exists, as "Write as accelerate's default config" does (issue 22), at 80x24 and 160x45.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_ACCELERATE, TWO_STEP, closeWhenDone } from '../helpers/launch.js';
import { BIN, KEYS, ROOT, spawnPty, type PtySession } from '../helpers/pty.js';
import { at, launchFromFinish, settled } from '../helpers/wizard-pty.js';
import { removeWorkDirs } from '../helpers/proc.js';

const sessions: PtySession[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill('SIGKILL');
  await removeWorkDirs(dirs.splice(0));
});
beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

/** The wizard in a sandbox whose user presets hold the two-step fixture (its files: cfg/*). */
function start(cols: number, rows: number) {
  const dir = mkdtempSync(join(tmpdir(), 'zw-e2e-wlf-'));
  dirs.push(dir);
  const cwd = join(dir, 'work');
  mkdirSync(join(dir, 'config', 'zerowiz', 'presets'), { recursive: true });
  mkdirSync(cwd);
  copyFileSync(TWO_STEP, join(dir, 'config', 'zerowiz', 'presets', 'two-step.yaml'));
  writeFileSync(join(cwd, 'train.py'), '# stand-in\n');
  const s = spawnPty({
    cwd,
    cols,
    rows,
    env: {
      HOME: join(dir, 'home'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      NO_COLOR: '1',
      PATH: `${join(ROOT, '__tests__', 'fixtures', 'bin-empty')}:${process.env.PATH ?? ''}`,
      ZEROWIZ_ACCELERATE: FAKE_ACCELERATE,
      FAKE_ACCELERATE_STEP_MS: '0',
    },
  });
  sessions.push(s);
  return { s, cwd };
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

describe.each([
  [80, 24],
  [160, 45],
])('the Launch at %ix%i', (cols, rows) => {
  it('says where it writes the config files', async () => {
    const { s, cwd } = start(cols, rows);
    await toFinish(s);
    const screen = (await settled(s, 'Write to a directory')).replace(/\s+/g, ' ');
    expect(screen).toContain(`Launch writes cfg/accelerate_config.yaml and cfg/ds_config.json in ${cwd}`);
  });

  it('shows the diff of a config file it would change: n keeps the file, y writes it (backup kept) and launches', async () => {
    const { s, cwd } = start(cols, rows);
    mkdirSync(join(cwd, 'cfg'));
    const mine = '{"zero_optimization": {"stage": 2}}\n';
    writeFileSync(join(cwd, 'cfg', 'ds_config.json'), mine);
    await toFinish(s);
    await launchFromFinish(s);
    const diff = await settled(s, 'Overwrite?');
    expect(diff).toContain('The launch writes these files; they exist and would change');
    expect(diff).toMatch(/--- on disk: \S*ds_config\.json/);
    expect(diff).toContain('-{"zero_optimization": {"stage": 2}}');
    s.write('n');
    await settled(s, 'Write to a directory');
    expect(readFileSync(join(cwd, 'cfg', 'ds_config.json'), 'utf8')).toBe(mine);
    await launchFromFinish(s);
    await settled(s, 'Overwrite?');
    s.write('y');
    expect(await closeWhenDone(s)).toBe(0);
    const kept = readdirSync(join(cwd, 'cfg')).filter((f) => f.startsWith('ds_config.json.bak-'));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(cwd, 'cfg', kept[0]!), 'utf8')).toBe(mine);
    expect(readFileSync(join(cwd, 'cfg', 'ds_config.json'), 'utf8')).toContain('"stage": 3');
  });
});
