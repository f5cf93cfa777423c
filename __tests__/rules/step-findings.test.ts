import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  noDeepSpeedConfigPath,
  readAccelerateConfigSummary,
  type AccelerateConfigSummary,
} from '../../src/config/accelerate-config.js';
import { loadPreset } from '../../src/setups/presets.js';
import { noStepsNote, type Setup } from '../../src/config/setup.js';
import { withStepConfig } from '../../src/config/step-args.js';
import type { StepCheckContext } from '../../src/rules/step-finding.js';
import { stepFindings } from '../../src/rules/step-findings.js';
import { validate } from '../../src/rules/validate.js';
import { SEED_DIR } from '../helpers/paths.js';

const SCRIPT = 'examples/qwen_image/model_training/train.py';
const DS_JSON = 'examples/qwen_image/model_training/special/low_vram_training/ds_z3_cpuoffload.json';
/** The seed's dataset, relative to DiffSynth-Studio's checkout (downloaded there by its README's modelscope command). */
const DATA_CSV = 'data/example_image_dataset/metadata.csv';
const presetEnv = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-sf-presets-')) };
const seed = () => loadPreset('qwen-image-lora-lowvram', presetEnv);

/** A launch directory with the given files. */
function dir(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-sf-'));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(d, p)), { recursive: true });
    writeFileSync(join(d, p), text);
  }
  return d;
}
const noDefault = (d: string): AccelerateConfigSummary => readAccelerateConfigSummary(join(d, 'no-default.yaml'), d);
const ctx = (d: string, defaultConfig = noDefault(d), gpuCount: number | null = 8): StepCheckContext => ({
  cwd: d,
  defaultConfig,
  gpuCount,
});
const rules = (fs: { rule: string; stepName: string }[]) => fs.map((f) => `${f.rule}@${f.stepName}`);
const setStep = (s: Setup, i: number, args: string[]): Setup => ({
  ...s,
  steps: s.steps.map((x, j) => (j === i ? { ...x, args } : x)),
});
const replaceArg = (args: string[], flag: string, value: string) =>
  args.map((a, i) => (args[i - 1] === flag ? value : a));

/** A default config of ZeRO-3 CPU offload (the seed's files) under `d`, optionally without the checkpointing block. */
function deepSpeedDefault(d: string, withCheckpointing = true): AccelerateConfigSummary {
  const json = JSON.parse(readFileSync(join(SEED_DIR, 'ds_z3_cpuoffload.json'), 'utf8')) as Record<string, unknown>;
  if (!withCheckpointing) delete json.activation_checkpointing;
  mkdirSync(dirname(join(d, DS_JSON)), { recursive: true });
  writeFileSync(join(d, DS_JSON), JSON.stringify(json));
  const p = join(d, 'default_config.yaml');
  writeFileSync(p, readFileSync(join(SEED_DIR, 'deepspeed_zero3_cpuoffload.yaml')));
  return readAccelerateConfigSummary(p, d);
}

describe('step findings', () => {
  it('the seed recipe with its script and no default config: only the note on the first pass, with the pin offered', async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '', [DATA_CSV]: 'image,prompt\n' });
    const f = stepFindings(s, ctx(d));
    expect(rules(f)).toEqual(['step-default-config@data_process']);
    expect(f[0]).toMatchObject({
      level: 'warning',
      step: 0,
      fixAction: { kind: 'pinConfig', step: 0, path: noDeepSpeedConfigPath(s) },
    });
    expect(f[0]!.message).toMatch(
      /no default config \(.*no-default\.yaml\).*one process per GPU on this machine, every GPU it sees \(8 here\), without DeepSpeed/,
    );
    // Pinned: nothing left to say.
    const pinned = {
      ...s,
      steps: [withStepConfig(s.steps[0]!, { kind: 'pinned', path: noDeepSpeedConfigPath(s) }), s.steps[1]!],
    };
    expect(stepFindings(pinned, ctx(d))).toEqual([]);
  });

  it('a relative dataset path that is not where the steps run is a warning; the cache an earlier step writes is not', async () => {
    const s = await seed();
    // zerowiz started in its own checkout, or anywhere but DiffSynth-Studio's: the data pass's dataset is not there.
    const d = dir({ [SCRIPT]: '' });
    const f = stepFindings(s, ctx(d)).filter((x) => x.rule === 'step-path-missing');
    expect(rules(f)).toEqual(['step-path-missing@data_process', 'step-path-missing@data_process']);
    expect(f[0]).toMatchObject({ level: 'warning', step: 0 });
    expect(f[0]!.message).toBe(
      `step data_process: --dataset_base_path data/example_image_dataset does not exist in ${d} (a relative path is read from where the steps run)`,
    );
    expect(f[0]!.fix).toMatch(/start zerowiz in the checkout the paths are relative to/);
    // The training pass reads ./models/train/..-cache, which the data pass writes: nothing to say about it.
    expect(f.some((x) => x.stepName === 'train')).toBe(false);
    // An absolute path, a hub id, a number are not looked for.
    const other = setStep(s, 0, [
      SCRIPT,
      '--dataset_base_path',
      '/nowhere/x',
      '--model_id_with_origin_paths',
      'Qwen/Qwen-Image:vae/x.safetensors',
      '--dataset_num_workers',
      '8',
    ]);
    expect(stepFindings(other, ctx(d)).filter((x) => x.rule === 'step-path-missing' && x.step === 0)).toEqual([]);
  });

  it('a missing script is an error per step; a script an earlier step writes is not', async () => {
    const s = await seed();
    const d = dir({});
    expect(rules(stepFindings(s, ctx(d)).filter((f) => f.rule === 'step-script-missing'))).toEqual([
      'step-script-missing@data_process',
      'step-script-missing@train',
    ]);
    const out = join(d, 'gen');
    const made: Setup = {
      ...s,
      steps: [
        {
          name: 'make',
          usesConfig: false,
          args: ['--config_file', noDeepSpeedConfigPath(s), 'make.py', '--output_dir', out],
        },
        { name: 'run', usesConfig: true, args: [join(out, 'train.py')] },
      ],
    };
    writeFileSync(join(d, 'make.py'), '');
    expect(stepFindings(made, ctx(d))).toEqual([]);
  });

  it('the training pass must read the cache the data pass writes', async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '', [DATA_CSV]: '' });
    const moved = setStep(s, 1, replaceArg(s.steps[1]!.args, '--dataset_base_path', 'models/train/other-cache'));
    const f = stepFindings(moved, ctx(d)).find((x) => x.rule === 'step-cache-path-mismatch');
    expect(f).toMatchObject({
      level: 'error',
      stepName: 'train',
      fixAction: {
        kind: 'setArg',
        step: 1,
        flag: '--dataset_base_path',
        value: './models/train/Qwen-Image_lora-splited-cache',
      },
    });
    // The same directory written another way is the same path.
    const same = setStep(
      s,
      1,
      replaceArg(s.steps[1]!.args, '--dataset_base_path', join(d, 'models/train/Qwen-Image_lora-splited-cache/')),
    );
    expect(rules(stepFindings(same, ctx(d)))).not.toContain('step-cache-path-mismatch@train');
    const raw = setStep(s, 1, [...s.steps[1]!.args, '--dataset_metadata_path', 'data/meta.csv']);
    expect(stepFindings(raw, ctx(d)).find((x) => x.rule === 'step-cache-not-read')).toMatchObject({
      level: 'warning',
      fixAction: { kind: 'removeArg', step: 1, flag: '--dataset_metadata_path' },
    });
  });

  it('a DeepSpeed default config hijacks the data pass (DiffSynth-Studio#1107): an error, with the pin offered', async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '', [DATA_CSV]: '' });
    const f = stepFindings(s, ctx(d, deepSpeedDefault(d)));
    expect(rules(f)).toEqual(['step-default-config-deepspeed@data_process']);
    expect(f[0]!.level).toBe('error');
    expect(f[0]!.message).toContain('distributed_type DEEPSPEED, ZeRO-3, offload optimizer cpu + params cpu');
    expect(f[0]!.message).toContain('DiffSynth-Studio#1107');
    expect(f[0]!.fixAction).toEqual({ kind: 'pinConfig', step: 0, path: noDeepSpeedConfigPath(s) });
    // A step that is not a data pass gets a warning.
    const other = setStep(s, 0, replaceArg(s.steps[0]!.args, '--task', 'sft:train'));
    expect(stepFindings(other, ctx(d, deepSpeedDefault(d))).map((x) => x.level)).toEqual(['warning']);
  });

  it('gradient checkpointing under a ZeRO-3 offload default config without the block names the step', async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '', [DATA_CSV]: '' });
    const f = stepFindings(s, ctx(d, deepSpeedDefault(d, false)));
    expect(rules(f)).toEqual([
      'step-checkpointing-zero3-offload@data_process',
      'step-default-config-deepspeed@data_process',
    ]);
    expect(f[0]!.message).toMatch(
      /step data_process asks for gradient checkpointing under ZeRO-3 offload \(accelerate's default config/,
    );
  });

  it('for the setup config it adds nothing where validate already reports it, and covers an imported ZeRO-3 offload', async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '', [DATA_CSV]: '' });
    const off: Setup = { ...s, answers: { ...s.answers, gradient_checkpointing: false } };
    expect(validate(off).map((f) => f.rule)).toContain('zero3-offload-needs-activation-checkpointing');
    expect(rules(stepFindings(off, ctx(d)))).not.toContain('step-checkpointing-zero3-offload@train');
    // Mode 3 with the parameters on the GPUs by the answers, but kept JSON keys of an import that offload them:
    // validate's rule reads the answers and is silent, this reads the JSON and is not.
    const imported: Setup = {
      ...off,
      answers: { ...off.answers, mode: '3', offload_param_device: 'none' },
      extra: { json: { zero_optimization: { offload_param: { device: 'cpu', pin_memory: true } } } },
    };
    expect(validate(imported).map((f) => f.rule)).not.toContain('zero3-offload-needs-activation-checkpointing');
    expect(stepFindings(imported, ctx(d)).find((f) => f.stepName === 'train')).toMatchObject({
      rule: 'step-checkpointing-zero3-offload',
      level: 'error',
      questions: ['gradient_checkpointing'],
    });
  });

  it('a step pinned to a config file that does not exist is an error', async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '', [DATA_CSV]: '', 'mine.yaml': 'distributed_type: MULTI_GPU\n' });
    const pin = (p: string) => ({
      ...s,
      steps: [withStepConfig(s.steps[0]!, { kind: 'pinned', path: p }), s.steps[1]!],
    });
    expect(rules(stepFindings(pin('gone.yaml'), ctx(d)))).toEqual(['step-config-missing@data_process']);
    expect(stepFindings(pin('mine.yaml'), ctx(d))).toEqual([]);
  });

  it('a preset without steps says so when saved', async () => {
    expect(noStepsNote({ steps: [] }, 'mine')).toMatch(
      /preset mine has no steps: `zerowiz launch mine` will have nothing to run/,
    );
    expect(noStepsNote(await seed(), 'x')).toBeNull();
  });
});
