/**
 * The wizard with broken files around it, in a real pseudo-terminal: a dangling link, a huge file and a
 * hostile description in the presets folder, and `--config` naming a YAML whose DeepSpeed JSON is missing.
 */
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandbox } from '../helpers/cli.js';
import { KEYS, spawnPty, type PtySession } from '../helpers/pty.js';
import { removeWorkDirs } from '../helpers/proc.js';

const sessions: PtySession[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  await removeWorkDirs(dirs.splice(0));
});

/** Starts the wizard in a wide terminal inside a sandbox prepared by `prepare`. */
function start(prepare: (box: ReturnType<typeof sandbox>) => string[] = () => []) {
  const box = sandbox();
  dirs.push(box.home);
  const args = prepare(box);
  const s = spawnPty({
    args,
    cwd: box.cwd,
    cols: 200,
    rows: 30,
    env: { ...box.env, HF_HOME: undefined, NO_COLOR: '1' },
  });
  sessions.push(s);
  return s;
}

describe('the wizard and broken files', () => {
  it('starts with a dangling link, a huge file and a hostile description among the presets, and reports them', async () => {
    const s = start((box) => {
      mkdirSync(box.presets, { recursive: true });
      symlinkSync(join(box.home, 'gone.yaml'), join(box.presets, 'dangling.yaml'));
      writeFileSync(join(box.presets, 'huge.yaml'), '');
      truncateSync(join(box.presets, 'huge.yaml'), 100 * 2 ** 20);
      writeFileSync(join(box.presets, 'evil.yaml'), 'description: "title\\e]0;pwned\\a"\n');
      writeFileSync(join(box.presets, 'tagged.yaml'), 'description: !mytag hello\n');
      return [];
    });
    await s.waitFor('Start from a preset');
    await s.waitFor(/Start from a preset \(\d+ found\)/);
    s.write(KEYS.down);
    s.write(KEYS.enter);
    const screen = await s.waitFor(/skipped .*dangling\.yaml/);
    expect(screen).toMatch(/skipped .*huge\.yaml.*larger than/);
    expect(screen).toContain('evil');
    expect(s.raw()).not.toContain('\x1b]0;pwned');
    expect(s.raw()).not.toMatch(/YAMLWarning|Unresolved tag/);
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
  });

  it('--config with a YAML whose deepspeed_config_file is missing: says so, naming the file', async () => {
    const w = start((box) => {
      const yaml = join(box.cwd, 'acc.yaml');
      writeFileSync(
        yaml,
        'distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: /gone/ds_z3.json\n',
      );
      return ['--config', yaml];
    });
    const screen = await w.waitFor(/cannot import/);
    expect(screen).toContain('/gone/ds_z3.json');
    expect(screen).not.toMatch(/ZeRO-2/);
    w.write(KEYS.ctrlC);
    expect(await w.exited).toBe(130);
  });
});
