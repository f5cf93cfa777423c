import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPreset } from '../../src/setups/presets.js';
import type { LaunchStep } from '../../src/config/setup.js';
import { toLaunchCommands } from '../../src/config/setup.js';
import {
  argValue,
  flattenArgs,
  groupArgs,
  scriptIndex,
  stepConfig,
  withStepConfig,
} from '../../src/config/step-args.js';
import {
  STEP_TEMPLATES,
  initialStepsEditor,
  linkedChanges,
  stepRows,
  stepsReducer,
  templateSteps,
  type StepsAction,
  type StepsEditorState,
} from '../../src/wizard/steps.js';
import { seedCommands } from '../helpers/seed.js';

const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-steps-')) };
const presetSteps = (name: string) => findPreset(name, env).setup.steps;
const seedSteps = () => templateSteps('diffsynth-qwen-image-lora', presetSteps);
const run = (s: StepsEditorState, ...actions: StepsAction[]) => actions.reduce(stepsReducer, s);
/** The editor with the cursor on `flag` of step `step`. */
function at(s: StepsEditorState, step: number, flag: string | null, role?: 'script'): StepsEditorState {
  const rows = stepRows(s.steps[step]!);
  const row = rows.findIndex((r) => r.kind === 'arg' && (role ? r.arg.role === role : r.arg.flag === flag));
  expect(row).toBeGreaterThan(0);
  return { ...s, step, row };
}
const edit = (s: StepsEditorState, text: string) =>
  run(s, { type: 'startEdit' }, { type: 'editText', text }, { type: 'commitEdit' });

describe('step templates', () => {
  it('the DiffSynth-Studio template is the seed recipe: both passes with exactly the seed arguments', () => {
    const steps = seedSteps();
    const [pass1, pass2] = seedCommands();
    expect(steps.map((s) => [s.name, s.usesConfig])).toEqual([
      ['data_process', false],
      ['train', true],
    ]);
    const cmds = toLaunchCommands({
      name: 't',
      answers: {} as never,
      files: { accelerateConfig: pass2![2]!, dsConfig: 'ds.json' },
      steps,
    });
    expect(cmds.map((c) => c.argv)).toEqual([pass1, pass2]);
  });

  it('offers one training script and no steps, and returns copies', () => {
    expect(STEP_TEMPLATES.map((t) => t.id)).toEqual(['diffsynth-qwen-image-lora', 'one-script', 'empty']);
    const one = templateSteps('one-script', presetSteps);
    expect(one).toEqual([{ name: 'train', usesConfig: true, args: ['train.py'] }]);
    one[0]!.args.push('--x');
    expect(templateSteps('one-script', presetSteps)[0]!.args).toEqual(['train.py']);
    expect(templateSteps('empty', presetSteps)).toEqual([]);
  });
});

describe('arguments as the editor shows them', () => {
  it('groups the seed passes into the script and flag/value pairs, and flattens back exactly', () => {
    for (const s of seedSteps()) {
      const g = groupArgs(s.args);
      expect(flattenArgs(g)).toEqual(s.args);
      expect(g[0]).toMatchObject({ role: 'script', value: 'examples/qwen_image/model_training/train.py' });
    }
    const g = groupArgs(seedSteps()[0]!.args);
    expect(g.find((x) => x.flag === '--use_gradient_checkpointing')).toMatchObject({ value: null });
    expect(g.find((x) => x.flag === '--task')).toMatchObject({ value: 'sft:data_process' });
    expect(g.at(-1)).toMatchObject({ flag: '--find_unused_parameters', value: null });
  });

  it.each([
    [['--config_file', 'a.yaml', 'train.py', '--lr', '1e-4'], 2],
    [['--multi_gpu', 'train.py', '--x'], 1],
    [['--num_processes=8', 'train.py'], 1],
    [['--main_process_ip', 'train.py', 'train.py'], 2],
    [['-m', 'pkg.mod', '--x', '1'], -1],
    [[], -1],
  ])('finds the script in %j at %d and keeps the words', (args, index) => {
    expect(scriptIndex(args)).toBe(index);
    expect(flattenArgs(groupArgs(args))).toEqual(args);
  });

  it("knows accelerate's own options: --multi_gpu takes no value, --config_file takes one", () => {
    expect(groupArgs(['--multi_gpu', 'train.py'])[0]).toMatchObject({
      flag: '--multi_gpu',
      value: null,
      role: 'launch',
    });
    expect(groupArgs(['--config_file', 'c.yaml', 'train.py'])[0]).toMatchObject({ value: 'c.yaml', role: 'launch' });
    expect(groupArgs(['train.py', '--lr=3', '--n', '-1'])).toEqual([
      { flag: null, value: 'train.py', joined: false, role: 'script' },
      { flag: '--lr', value: '3', joined: true, role: 'arg' },
      { flag: '--n', value: '-1', joined: false, role: 'arg' },
    ]);
    expect(argValue(['train.py', '--task', 'sft:train'], '--task')).toBe('sft:train');
    expect(argValue(['train.py', '--flag'], '--flag')).toBeNull();
    expect(argValue(['train.py'], '--task')).toBeUndefined();
  });

  it('a step runs with the setup config, accelerate default, or a pinned --config_file', () => {
    const [pass1] = seedSteps();
    expect(stepConfig(pass1!)).toEqual({ kind: 'default' });
    const pinned = withStepConfig(pass1!, { kind: 'pinned', path: 'cfg/no_ds.yaml' });
    expect(pinned.args.slice(0, 3)).toEqual(['--config_file', 'cfg/no_ds.yaml', pass1!.args[0]]);
    expect(stepConfig(pinned)).toEqual({ kind: 'pinned', path: 'cfg/no_ds.yaml' });
    const back = withStepConfig(pinned, { kind: 'setup' });
    expect(back).toEqual({ ...pass1, usesConfig: true });
    expect(withStepConfig(back, { kind: 'default' })).toEqual(pass1);
  });
});

describe('the steps editor', () => {
  const seed = () => initialStepsEditor(seedSteps());

  it('opens on the template list when there are no steps, on the steps otherwise', () => {
    expect(initialStepsEditor([]).picking).toBe(true);
    expect(seed().picking).toBe(false);
    const s = run(initialStepsEditor([]), { type: 'template', steps: seedSteps() });
    expect(s.picking).toBe(false);
    expect(s.steps).toHaveLength(2);
  });

  it("editing the cache path offers the training pass's --dataset_base_path; accepting changes both", () => {
    let s = edit(at(seed(), 0, '--output_path'), '/scratch/qi-cache');
    expect(s.offer?.changes.map((c) => [c.stepName, c.what, c.before, c.after])).toEqual([
      ['train', '--dataset_base_path', './models/train/Qwen-Image_lora-splited-cache', '/scratch/qi-cache'],
    ]);
    expect(argValue(s.steps[1]!.args, '--dataset_base_path')).toBe('./models/train/Qwen-Image_lora-splited-cache');
    s = run(s, { type: 'acceptOffer' });
    expect(s.offer).toBeNull();
    expect(argValue(s.steps[0]!.args, '--output_path')).toBe('/scratch/qi-cache');
    expect(argValue(s.steps[1]!.args, '--dataset_base_path')).toBe('/scratch/qi-cache');
    expect(s.message).toBe('changed in 2 places');
  });

  it('declining keeps the other pass as it was', () => {
    const s = run(edit(at(seed(), 0, '--output_path'), '/scratch/c'), { type: 'declineOffer' });
    expect(argValue(s.steps[0]!.args, '--output_path')).toBe('/scratch/c');
    expect(argValue(s.steps[1]!.args, '--dataset_base_path')).toBe('./models/train/Qwen-Image_lora-splited-cache');
  });

  it('editing the training output path carries the cache path derived from it along, in both passes', () => {
    const s = run(edit(at(seed(), 1, '--output_path'), '/runs/qi'), { type: 'acceptOffer' });
    expect(argValue(s.steps[1]!.args, '--output_path')).toBe('/runs/qi');
    expect(argValue(s.steps[0]!.args, '--output_path')).toBe('/runs/qi-splited-cache');
    expect(argValue(s.steps[1]!.args, '--dataset_base_path')).toBe('/runs/qi-splited-cache');
  });

  it('the dataset path carries its metadata file along; LoRA options and the script follow in the other pass', () => {
    let s = run(edit(at(seed(), 0, '--dataset_base_path'), 'data/mine'), { type: 'acceptOffer' });
    expect(argValue(s.steps[0]!.args, '--dataset_metadata_path')).toBe('data/mine/metadata.csv');
    s = run(edit(at(s, 1, '--lora_rank'), '16'), { type: 'acceptOffer' });
    expect(s.steps.map((x) => argValue(x.args, '--lora_rank'))).toEqual(['16', '16']);
    s = run(edit(at(s, 0, null, 'script'), 'DiffSynth-Studio/examples/qwen_image/model_training/train.py'), {
      type: 'acceptOffer',
    });
    expect(s.steps.map((x) => x.args[0])).toEqual([
      'DiffSynth-Studio/examples/qwen_image/model_training/train.py',
      'DiffSynth-Studio/examples/qwen_image/model_training/train.py',
    ]);
  });

  it('renaming the model id in one pass offers the same id in the other, keeping each pass its own files', () => {
    const s = run(
      edit(
        at(seed(), 1, '--model_id_with_origin_paths'),
        'Qwen/Qwen-Image-2512:transformer/diffusion_pytorch_model*.safetensors',
      ),
      { type: 'acceptOffer' },
    );
    expect(argValue(s.steps[0]!.args, '--model_id_with_origin_paths')).toBe(
      'Qwen/Qwen-Image-2512:text_encoder/model*.safetensors,Qwen/Qwen-Image-2512:vae/diffusion_pytorch_model.safetensors',
    );
  });

  it('offers nothing for a value only one pass has, nor across flags for plain numbers', () => {
    expect(edit(at(seed(), 0, '--dataset_repeat'), '2').offer).toBeNull();
    // --dataset_repeat "1" of pass 1 is not linked to other flags that happen to hold "1".
    const steps: LaunchStep[] = [
      { name: 'a', usesConfig: true, args: ['t.py', '--epochs', '5'] },
      { name: 'b', usesConfig: true, args: ['t.py', '--workers', '5'] },
    ];
    expect(linkedChanges(steps, { step: 0, group: 1 }, '5', '6')).toEqual([]);
  });

  it('while an offer is open, nothing else happens', () => {
    const s = edit(at(seed(), 0, '--output_path'), '/x');
    expect(run(s, { type: 'move', delta: 1 }, { type: 'removeArg' }, { type: 'addStep' })).toBe(s);
  });

  it('adds an argument after the cursor (flag and value typed in one go, or the value asked next)', () => {
    let s = at(seed(), 1, '--lora_rank');
    s = run(s, { type: 'addArg' }, { type: 'editText', text: '--enable_csv_log' }, { type: 'commitEdit' });
    expect(s.edit).toMatchObject({ part: 'value', adding: true });
    s = run(s, { type: 'commitEdit' }); // empty: a bare flag
    const words = s.steps[1]!.args;
    expect(words[words.indexOf('32') + 1]).toBe('--enable_csv_log');
    s = run(s, { type: 'addArg' }, { type: 'editText', text: '--save_steps 500' }, { type: 'commitEdit' });
    expect(s.edit).toBeNull();
    expect(argValue(s.steps[1]!.args, '--save_steps')).toBe('500');
    const i = s.steps[1]!.args.indexOf('--save_steps');
    expect(s.steps[1]!.args[i - 1]).toBe('--enable_csv_log');
  });

  it('Esc cancels a new argument, at its flag or at its value', () => {
    const before = seed();
    const s1 = run(at(before, 1, '--lora_rank'), { type: 'addArg' }, { type: 'cancelEdit' });
    expect(s1.steps).toEqual(before.steps);
    const s2 = run(
      at(before, 1, '--lora_rank'),
      { type: 'addArg' },
      { type: 'editText', text: '--foo' },
      { type: 'commitEdit' },
      { type: 'cancelEdit' },
    );
    expect(s2.steps).toEqual(before.steps);
    expect(s2.edit).toBeNull();
  });

  it('removes and reorders arguments; the script stays', () => {
    let s = run(at(seed(), 1, '--initialize_model_on_cpu'), { type: 'removeArg' });
    expect(s.steps[1]!.args).not.toContain('--initialize_model_on_cpu');
    s = run(at(s, 1, '--max_pixels'), { type: 'moveArg', delta: -1 });
    expect(s.steps[1]!.args.slice(1, 5)).toEqual([
      '--max_pixels',
      '1048576',
      '--dataset_base_path',
      './models/train/Qwen-Image_lora-splited-cache',
    ]);
    s = run(s, { type: 'moveArg', delta: -1 }); // cannot pass the script
    expect(s.steps[1]!.args[0]).toBe('examples/qwen_image/model_training/train.py');
    const r = run(at(s, 1, null, 'script'), { type: 'removeArg' });
    expect(r.steps).toEqual(s.steps);
    expect(r.message).toMatch(/script cannot be removed/);
  });

  it('renames a step only to a free, valid name', () => {
    const s = seed();
    expect(edit(s, 'train').message).toMatch(/already a step named train/);
    expect(edit(s, 'cache pass').message).toMatch(/letters, digits/);
    expect(edit(s, 'cache').steps[0]!.name).toBe('cache');
  });

  it('adds, moves and removes steps; pins a step to another config', () => {
    let s = run(seed(), { type: 'addStep' });
    expect(s.steps.map((x) => x.name)).toEqual(['data_process', 'step', 'train']);
    expect(s.edit).toMatchObject({ part: 'name' });
    s = run(s, { type: 'editText', text: 'eval' }, { type: 'commitEdit' }, { type: 'moveStep', delta: 1 });
    expect(s.steps.map((x) => x.name)).toEqual(['data_process', 'train', 'eval']);
    s = run(s, { type: 'removeStep' });
    expect(s.steps.map((x) => x.name)).toEqual(['data_process', 'train']);
    s = run(s, { type: 'selectStep', index: 0 }, { type: 'setConfig', config: { kind: 'pinned', path: 'no_ds.yaml' } });
    expect(
      toLaunchCommands({
        name: 'x',
        answers: {} as never,
        files: { accelerateConfig: 'a.yaml', dsConfig: 'd.json' },
        steps: s.steps,
      })[0]!.argv.slice(0, 3),
    ).toEqual(['launch', '--config_file', 'no_ds.yaml']);
  });
});
