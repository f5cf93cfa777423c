/**
 * The one list of files a setup writes (setupFiles): the YAML, the JSON and, when a step is pinned to it,
 * the accelerate config without DeepSpeed, written together, moved together, planned (diffed) together.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { noDeepSpeedConfigPath, withFiles } from '../../src/config/accelerate-config.js';
import { withDefaults } from '../../src/config/questions.js';
import type { Setup } from '../../src/config/setup.js';
import { stepConfig } from '../../src/config/step-args.js';
import { planWrite, setupForTarget } from '../../src/wizard/finish.js';
import { launchConfigFiles, setupFiles, setupInDir } from '../../src/config/files.js';
import { writeConfigFiles, writeLaunchConfigFiles } from '../../src/config/write-files.js';
import { tempDir } from '../helpers/cli.js';

const setup = (pinned: boolean): Setup => ({
  name: 't',
  answers: withDefaults({ mode: '3-offload', num_processes: 8, mixed_precision: 'bf16' }),
  files: { accelerateConfig: 'cfg/accelerate_config.yaml', dsConfig: 'cfg/ds_config.json' },
  steps: [
    {
      name: 'data_process',
      usesConfig: false,
      args: pinned ? ['--config_file', 'cfg/accelerate_no_deepspeed.yaml', 'train.py'] : ['train.py'],
    },
    { name: 'train', usesConfig: true, args: ['train.py'] },
  ],
});

describe('the files a setup writes', () => {
  it('are the JSON and the YAML, plus the config without DeepSpeed exactly when a step is pinned to it', () => {
    expect(setupFiles(setup(false), '/w').map((f) => [f.role, f.path])).toEqual([
      ['deepspeed', '/w/cfg/ds_config.json'],
      ['accelerate', '/w/cfg/accelerate_config.yaml'],
    ]);
    const files = setupFiles(setup(true), '/w');
    expect(files.map((f) => [f.role, f.path])).toEqual([
      ['deepspeed', '/w/cfg/ds_config.json'],
      ['accelerate', '/w/cfg/accelerate_config.yaml'],
      ['noDeepSpeed', '/w/cfg/accelerate_no_deepspeed.yaml'],
    ]);
    expect(parseYaml(files[2]!.text)).toMatchObject({
      distributed_type: 'MULTI_GPU',
      num_processes: 8,
      mixed_precision: 'bf16',
    });
  });

  it('are written together, and a pinned step moves with the files into another directory', async () => {
    const dir = tempDir('zw-files-');
    const results = await writeConfigFiles(setup(true), dir);
    expect(results.map((r) => r.path)).toEqual([
      join(dir, 'cfg', 'accelerate_config.yaml'),
      join(dir, 'cfg', 'ds_config.json'),
      join(dir, 'cfg', 'accelerate_no_deepspeed.yaml'),
    ]);
    for (const r of results) expect(existsSync(r.path)).toBe(true);
    const moved = setupInDir(setup(true), join(dir, 'elsewhere'));
    expect(stepConfig(moved.steps[0]!)).toEqual({
      kind: 'pinned',
      path: join(dir, 'elsewhere', 'accelerate_no_deepspeed.yaml'),
    });
    expect(setupFiles(moved, dir).map((f) => f.path)).toContain(join(dir, 'elsewhere', 'accelerate_no_deepspeed.yaml'));
    // A step pinned to a config of its own is the user's: it stays where it points.
    const own: Setup = {
      ...setup(false),
      steps: [{ name: 'x', usesConfig: false, args: ['--config_file', 'mine.yaml', 'train.py'] }],
    };
    expect(withFiles(own, { accelerateConfig: '/o/a.yaml', dsConfig: '/o/d.json' }).steps).toEqual(own.steps);
    expect(noDeepSpeedConfigPath({ files: { accelerateConfig: 'a.yaml', dsConfig: 'd.json' } })).toBe(
      'accelerate_no_deepspeed.yaml',
    );
  });

  it('a launch writes all of them when a step uses the config, else only the pinned config (and then nothing else)', async () => {
    expect(launchConfigFiles(setup(true), '/w').map((f) => [f.role, f.named])).toEqual([
      ['deepspeed', 'cfg/ds_config.json'],
      ['accelerate', 'cfg/accelerate_config.yaml'],
      ['noDeepSpeed', 'cfg/accelerate_no_deepspeed.yaml'],
    ]);
    const pinnedOnly: Setup = { ...setup(true), steps: [setup(true).steps[0]!] };
    expect(launchConfigFiles(pinnedOnly, '/w').map((f) => f.path)).toEqual(['/w/cfg/accelerate_no_deepspeed.yaml']);
    expect(launchConfigFiles({ ...setup(false), steps: [setup(false).steps[0]!] }, '/w')).toEqual([]);
    const dir = tempDir('zw-files-');
    const results = await writeLaunchConfigFiles(pinnedOnly, dir);
    expect(results.map((r) => r.path)).toEqual([join(dir, 'cfg', 'accelerate_no_deepspeed.yaml')]);
    expect(existsSync(join(dir, 'cfg', 'ds_config.json'))).toBe(false);
    expect(await writeLaunchConfigFiles({ ...setup(false), steps: [setup(false).steps[0]!] }, dir)).toEqual([]);
  });

  it("the finish screen's plan diffs all of them; its directory is read as a shell would (~, $VAR)", () => {
    const dir = tempDir('zw-files-');
    const env = { HOME: join(dir, 'home'), OUT: join(dir, 'out') };
    const plan = planWrite(setup(true), { kind: 'dir', dir: '~/cfg' }, env, dir);
    expect(plan.files.map((f) => f.path)).toEqual([
      join(dir, 'home', 'cfg', 'accelerate_config.yaml'),
      join(dir, 'home', 'cfg', 'ds_config.json'),
      join(dir, 'home', 'cfg', 'accelerate_no_deepspeed.yaml'),
    ]);
    expect(setupForTarget(setup(false), { kind: 'dir', dir: '$OUT/x' }, env, dir).files.accelerateConfig).toBe(
      join(dir, 'out', 'x', 'accelerate_config.yaml'),
    );
    expect(() => setupForTarget(setup(false), { kind: 'dir', dir: '$NOPE/x' }, env, dir)).toThrow(/\$NOPE is not set/);
    const def = setupForTarget(setup(true), { kind: 'default' }, { HF_HOME: join(dir, 'hf') }, dir);
    expect(stepConfig(def.steps[0]!)).toEqual({
      kind: 'pinned',
      path: join(dir, 'hf', 'accelerate', 'accelerate_no_deepspeed.yaml'),
    });
  });
});
