import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deletePreset, findPreset, listPresets, loadPreset, savePreset } from '../../src/setups/presets.js';
import { withDefaults } from '../../src/config/questions.js';
import { UsageError } from '../../src/text/errors.js';
import { userPresetsDir } from '../../src/fs/paths.js';
import { toAccelerateYaml, toDeepSpeedJson } from '../../src/config/emit.js';
import { SEED_DIR } from '../helpers/paths.js';

const env = () => ({ XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-presets-')) });

describe('built-in presets', () => {
  it("leave gradient accumulation to the script ('auto'): a number would override Accelerator(gradient_accumulation_steps=N)", () => {
    for (const p of listPresets({ XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-')) }).presets) {
      expect([p.name, p.setup.answers.gradient_accumulation_steps]).toEqual([p.name, 'auto']);
      expect([p.name, JSON.parse(toDeepSpeedJson(p.setup)).gradient_accumulation_steps]).toEqual([p.name, 'auto']);
    }
  });

  it('has the seed preset and one per mode', () => {
    const names = listPresets(env()).presets.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'qwen-image-lora-lowvram',
        'zero1',
        'zero2',
        'zero2-offload',
        'zero3',
        'zero3-offload',
        'zero3-nvme',
      ]),
    );
  });

  it('the seed preset has both passes with every argument of the seed document', async () => {
    const setup = await loadPreset('qwen-image-lora-lowvram', env());
    const doc = readFileSync(join(SEED_DIR, '000_727647c9fffbab57.txt'), 'utf8');
    // The two `accelerate launch` commands of the document, as argv (quotes removed, line continuations joined).
    const commands = doc
      .split('accelerate launch')
      .slice(1)
      .map((c) =>
        c
          .split('\n\n')[0]!
          .replace(/\\\n/g, ' ')
          .trim()
          .split(/\s+/)
          .map((w) => w.replace(/^"(.*)"$/, '$1')),
      );
    expect(commands).toHaveLength(2);
    expect(setup.steps.map((s) => s.usesConfig)).toEqual([false, true]);
    expect(setup.steps[0]!.args).toEqual(commands[0]);
    expect(['--config_file', setup.files.accelerateConfig, ...setup.steps[1]!.args]).toEqual(commands[1]);
  });
});

describe('user presets', () => {
  it('save, list, show and delete round-trip through $XDG_CONFIG_HOME/zerowiz/presets', async () => {
    const e = env();
    const setup = { ...(await loadPreset('zero3', e)), name: 'mine' };
    setup.answers = withDefaults({
      ...setup.answers,
      num_processes: 16,
      num_machines: 2,
      main_process_ip: '10.1.1.1',
      hostfile: '/etc/hosts.ds',
    });
    const path = await savePreset('mine', setup, 'two nodes', undefined, e);
    expect(path).toBe(join(userPresetsDir(e), 'mine.yaml'));
    const again = findPreset('mine', e);
    expect(again.source).toBe('user');
    expect(again.description).toBe('two nodes');
    expect(toAccelerateYaml(again.setup)).toBe(toAccelerateYaml(setup));
    expect(toDeepSpeedJson(again.setup)).toBe(toDeepSpeedJson(setup));
    const backup = await deletePreset('mine', e);
    expect(existsSync(path)).toBe(false);
    expect(existsSync(backup)).toBe(true);
    expect(() => findPreset('mine', e)).toThrow(UsageError);
  });

  it('saving over a different preset keeps the old one as a backup', async () => {
    const e = env();
    const a = await loadPreset('zero2', e);
    await savePreset('p', a, 'first', undefined, e);
    await savePreset('p', await loadPreset('zero3', e), 'second', undefined, e);
    const files = readdirSync(userPresetsDir(e));
    expect(files.filter((f) => f.startsWith('p.yaml.bak-'))).toHaveLength(1);
    expect(findPreset('p', e).description).toBe('second');
  });

  it('a broken user preset is reported with file, key and problem, skipped, and left untouched', () => {
    const e = env();
    const dir = userPresetsDir(e);
    mkdirSync(dir, { recursive: true });
    const bad = 'answers:\n  mode: 5\n';
    writeFileSync(join(dir, 'bad.yaml'), bad);
    writeFileSync(join(dir, 'worse.yaml'), 'answers: [1, 2\n');
    writeFileSync(join(dir, 'odd.yaml'), 'answers:\n  colour: red\n');
    const { presets, problems } = listPresets(e);
    expect(presets.map((p) => p.name)).not.toContain('bad');
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: join(dir, 'bad.yaml'),
          key: 'answers.mode',
          problem: expect.stringContaining("'5' is not a ZeRO mode"),
        }),
        expect.objectContaining({ path: join(dir, 'worse.yaml'), problem: expect.stringContaining('not valid YAML') }),
        expect.objectContaining({
          path: join(dir, 'odd.yaml'),
          key: 'answers.colour',
          problem: expect.stringContaining('unknown answer'),
        }),
      ]),
    );
    expect(readFileSync(join(dir, 'bad.yaml'), 'utf8')).toBe(bad);
    expect(() => findPreset('bad', e)).toThrow(/answers\.mode/);
  });

  it('a user preset is known by its file name, whatever its name: field says', () => {
    const e = env();
    const dir = userPresetsDir(e);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'namemismatch.yaml'), 'name: other\nanswers:\n  mode: 2\n');
    const listed = listPresets(e).presets.map((p) => p.name);
    expect(listed).toContain('namemismatch');
    expect(listed).not.toContain('other');
    expect(findPreset('namemismatch', e).setup.answers.mode).toBe('2');
  });

  it('refuses bad names and cannot delete built-ins', async () => {
    const e = env();
    await expect(savePreset('../evil', await loadPreset('zero2', e), '', undefined, e)).rejects.toThrow(UsageError);
    await expect(deletePreset('zero2', e)).rejects.toThrow(/built-in/);
  });
});

describe('every answer survives a save and reload unchanged', () => {
  it('memory sizes, parameter counts and every other answer (detected 79.65 GiB stays 79.65 GiB)', async () => {
    const e = env();
    const base = await loadPreset('zero3-nvme', e);
    const answers = withDefaults({
      ...base.answers,
      model_params: 20430401088,
      largest_layer_params: 56641536,
      gpu_memory: 81559 * 2 ** 20,
      cpu_memory: 1.5 * 2 ** 40,
      num_machines: 2,
      num_processes: 16,
      main_process_ip: '10.0.0.1',
      main_process_port: 29501,
      hostfile: '/h',
      reduce_bucket_size: 'auto',
      gradient_clipping: 0.5,
      gradient_accumulation_steps: 4,
      mixed_precision: 'fp16',
    });
    await savePreset('roundtrip', { ...base, answers }, '', undefined, e);
    expect(findPreset('roundtrip', e).setup.answers).toEqual(answers);
  });
});
