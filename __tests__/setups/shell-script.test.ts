/**
 * Steps from a pasted command or an example script (src/setups/shell-script.ts) and the templates from
 * DiffSynth-Studio's examples (presets/templates.yaml, src/setups/templates.ts): words split as the real bash
 * splits them, one step per `accelerate launch`, and every template training the model and the kind of
 * training it says (a step that does not, under the answers, is a finding: src/rules/step-model.ts).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findPreset } from '../../src/setups/presets.js';
import { scriptSteps, splitCommands, stepsForSetup } from '../../src/setups/shell-script.js';
import { loadTemplates, stepModelRepos, stepTuning, templateScriptSteps } from '../../src/setups/templates.js';
import { stepModelFindings } from '../../src/rules/step-model.js';

/** The words bash gives each `accelerate launch` of a script (a function stands in for accelerate). */
function bashWords(script: string, env: Record<string, string>): string[][] {
  const r = spawnSync(
    'bash',
    ['-c', `accelerate() { shift; printf '%s\\0' "$@"; printf '\\n--end--\\n'; }\nmodelscope() { :; }\n${script}`],
    { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .split('\n--end--\n')
    .filter((x) => x !== '')
    .map((x) => x.split('\0').slice(0, -1));
}

const TRICKY = [
  '# fine-tune on the cluster',
  'modelscope download --dataset DiffSynth-Studio/x --local_dir ./data',
  '',
  'CUDA_VISIBLE_DEVICES=0,1 accelerate launch --num_processes 2 --config_file my.yaml \\',
  '  examples/flux/model_training/train.py \\',
  '  --dataset_base_path "$DATA/with space" \\',
  '  --prompt \'a $literal "quote"\' --glob models/*.safetensors \\',
  '  --escaped a\\ b --empty "" # the end',
  'accelerate launch train.py --task "sft:data_process" --output_path ./cache && accelerate launch train.py --task sft:train --dataset_base_path ./cache',
].join('\n');

describe('a pasted script, split as a shell would', () => {
  it('gives the words bash gives, one step per accelerate launch', () => {
    const env = { DATA: '/srv/data' };
    const got = scriptSteps(TRICKY, env);
    const bash = bashWords(TRICKY, env).map((w) =>
      w.filter((_, i, all) => !(all[i - 1] === '--config_file' || w[i] === '--config_file')),
    );
    expect(got.steps.map((s) => s.args)).toEqual(bash);
    expect(got.steps.map((s) => [s.name, s.usesConfig])).toEqual([
      ['train', true],
      ['data_process', false],
      ['train_2', true],
    ]);
    expect(got.steps[0]!.args).toContain('/srv/data/with space');
    expect(got.steps[0]!.args).toContain('a $literal "quote"');
  });

  it('says what each line became: the download to run first, the example config replaced, the variable set for it', () => {
    const notes = scriptSteps(TRICKY, { DATA: '/d' }).notes.map((n) => `${n.line}: ${n.text}`);
    expect(notes).toEqual([
      '2: not an accelerate launch, so not a step (run it yourself first): modelscope download --dataset DiffSynth-Studio/x --local_dir ./data',
      "4: step train: the example ran it with --config_file my.yaml; it runs with this setup's config",
      '4: step train: the example sets CUDA_VISIBLE_DEVICES=0,1 for it; zerowiz runs steps without a shell: export it before launching',
      "9: step data_process processes data (--task sft:data_process): it runs without DeepSpeed, pinned to this setup's config without it",
    ]);
    const unset = scriptSteps('accelerate launch t.py --out $NOPE', {});
    expect(unset.steps[0]!.args).toEqual(['t.py', '--out', '$NOPE']);
    expect(unset.notes.map((n) => n.text)).toEqual(['step train uses $NOPE, not set here: kept as written']);
  });

  it('cuts commands where a shell does: continuations join, quotes keep newlines and ; inside', () => {
    expect(splitCommands("a 'x;\ny' \\\n b; c && d || e | f\n# c\ng # h").map((c) => c.text)).toEqual([
      "a 'x;\ny'  b",
      'c',
      'd',
      'e',
      'f',
      'g',
    ]);
  });

  it("a data pass is pinned to the setup's config without DeepSpeed", () => {
    const seed = findPreset('qwen-image-lora-lowvram').setup;
    const [data, train] = stepsForSetup(scriptSteps(TRICKY).steps.slice(1), seed);
    expect(data!.args.slice(0, 2)).toEqual([
      '--config_file',
      seed.files.accelerateConfig.replace(/[^/]*$/, 'accelerate_no_deepspeed.yaml'),
    ]);
    expect(train!.usesConfig).toBe(true);
  });
});

describe("the templates: DiffSynth-Studio's own examples", () => {
  const catalog = loadTemplates();

  it('cover FLUX.1-dev, Wan 2.1 (14B and 1.3B), Wan 2.2, Qwen-Image and SDXL, LoRA and full, one pass and split', () => {
    const by = (model: string) =>
      catalog.templates.filter((t) => t.model === model).map((t) => `${t.tuning}/${t.passes}`);
    expect(by('flux.1-dev')).toEqual(['lora/one', 'full/one']);
    expect(by('qwen-image')).toEqual(['lora/one', 'lora/split', 'full/one']);
    expect(by('wan2.1-14b')).toEqual(['lora/one', 'full/one', 'lora/two experts', 'full/two experts']);
    expect(by('wan2.1-1.3b')).toEqual(['lora/one', 'full/one']);
    expect(by('sdxl-unet')).toEqual(['full/one']);
    expect(catalog.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('each gives its passes: one step per accelerate launch, the split one a pinned data pass first', () => {
    for (const t of catalog.templates) {
      const { steps, notes } = templateScriptSteps(t);
      const want = t.passes === 'one' ? 1 : 2;
      expect(steps.length, t.id).toBe(want);
      expect(notes[0]?.text, t.id).toMatch(/^not an accelerate launch.*: modelscope download/);
      if (t.passes === 'split')
        expect(steps.map((s) => [s.name, s.usesConfig])).toEqual([
          ['data_process', false],
          ['train', true],
        ]);
    }
  });

  it('each trains the catalog model and the kind of training it says (a step that does not is a finding)', () => {
    for (const t of catalog.templates) {
      for (const step of templateScriptSteps(t).steps.filter((s) => s.usesConfig)) {
        expect(
          stepModelRepos(step).map((r) => catalog.models[r]),
          t.id,
        ).toContain(t.model);
        expect(stepTuning(step), t.id).toBe(t.tuning);
      }
    }
  });
});

describe('a step that trains another model, or LoRA where the answers say full, is a finding', () => {
  const seed = findPreset('qwen-image-lora-lowvram').setup;
  const template = (id: string) => templateScriptSteps(loadTemplates().templates.find((t) => t.id === id)!).steps;

  it('FLUX.1-dev steps under answers for Qwen-Image', () => {
    const setup = {
      ...seed,
      answers: { ...seed.answers, model_name: 'qwen-image' },
      steps: template('flux.1-dev-lora'),
    };
    const f = stepModelFindings(setup);
    expect(f.map((x) => x.rule)).toEqual(['step-other-model']);
    expect(f[0]!.message).toMatch(
      /^step train trains FLUX\.1-dev .* \(it loads black-forest-labs\/FLUX\.1-dev\), but the answers are for Qwen-Image/,
    );
    expect(f[0]!.fix).toMatch(/--model-name flux\.1-dev/);
  });

  it('a full template under answers that say LoRA, and a LoRA one under full', () => {
    const lora = { ...seed, answers: { ...seed.answers, model_name: 'qwen-image', fine_tuning: 'lora' as const } };
    expect(stepModelFindings({ ...lora, steps: template('qwen-image-full') }).map((x) => x.rule)).toEqual([
      'step-other-tuning',
    ]);
    expect(stepModelFindings({ ...lora, steps: template('qwen-image-full') })[0]!.message).toMatch(
      /trains every parameter \(--trainable_models\), but the answers say LoRA: .* far below what this step needs/,
    );
    const full = { ...lora, answers: { ...lora.answers, fine_tuning: 'full' as const } };
    expect(stepModelFindings({ ...full, steps: template('qwen-image-lora') }).map((x) => x.rule)).toEqual([
      'step-other-tuning',
    ]);
    expect(stepModelFindings({ ...lora, steps: template('qwen-image-lora-split') })).toEqual([]);
  });
});
