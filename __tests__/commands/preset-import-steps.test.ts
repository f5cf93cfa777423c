/**
 * `zerowiz preset import-steps FILE [NAME]` through the built bin: the steps of DiffSynth-Studio's own example
 * scripts (and of a pasted line on stdin), printed as a preset's `steps:` block or saved into a user preset with
 * the answers the steps imply; a step that trains another model than the preset's answers is a warning.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadTemplates } from '../../src/setups/templates.js';
import { expectOneLineError, runCli, sandbox } from '../helpers/cli.js';

const script = (id: string) => loadTemplates().templates.find((t) => t.id === id)!.script;

/** A sandbox with the example script `id` written to `name`. */
function withScript(id: string, name: string) {
  const box = sandbox();
  writeFileSync(join(box.cwd, name), script(id));
  return box;
}

describe('zerowiz preset import-steps', () => {
  it("prints the example's steps as a preset's steps: block, and notes the line to run first", () => {
    const box = withScript('flux.1-dev-lora', 'FLUX.1-dev.sh');
    const r = runCli(['preset', 'import-steps', 'FLUX.1-dev.sh'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const { steps } = parseYaml(r.stdout) as { steps: { name: string; uses_config: boolean; args: string[] }[] };
    expect(steps.map((s) => [s.name, s.uses_config])).toEqual([['train', true]]);
    expect(steps[0]!.args.slice(0, 3)).toEqual([
      'examples/flux/model_training/train.py',
      '--dataset_base_path',
      'data/diffsynth_example_dataset/flux/FLUX.1-dev',
    ]);
    expect(steps[0]!.args).toContain(
      'black-forest-labs/FLUX.1-dev:flux1-dev.safetensors,black-forest-labs/FLUX.1-dev:text_encoder/model.safetensors,black-forest-labs/FLUX.1-dev:text_encoder_2/*.safetensors,black-forest-labs/FLUX.1-dev:ae.safetensors',
    );
    expect(r.stderr).toMatch(
      /^zerowiz: note: line 1: not an accelerate launch, so not a step \(run it yourself first\): modelscope download/m,
    );
  });

  it('saves a split example into a new preset: the data pass pinned, the answers its steps imply', () => {
    const box = withScript('qwen-image-lora-split', 'split.sh');
    const r = runCli(['preset', 'import-steps', 'split.sh', 'qwen-split'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^saved \S+qwen-split\.yaml with 2 steps \(data_process, train\)$/m);
    expect(r.stderr).toContain('zerowiz: note: from the steps: the model is qwen-image');
    const show = runCli(['preset', 'show', 'qwen-split', '--json'], { cwd: box.cwd, env: box.env });
    const p = JSON.parse(show.stdout) as {
      answers: Record<string, unknown>;
      steps: { name: string; usesConfig: boolean; args: string[] }[];
    };
    expect(p.steps.map((s) => [s.name, s.usesConfig])).toEqual([
      ['data_process', false],
      ['train', true],
    ]);
    expect(p.steps[0]!.args.slice(0, 2)).toEqual(['--config_file', 'accelerate_no_deepspeed.yaml']);
    expect(p.answers).toMatchObject({
      model_name: 'Qwen-Image DiT (QwenImageTransformer2DModel)',
      fine_tuning: 'lora',
      lora_rank: 32,
    });
  });

  it('a FLUX example into a preset whose answers are for Qwen-Image: saved, with the warning that it trains another model', () => {
    const box = withScript('flux.1-dev-lora', 'flux.sh');
    const r = runCli(['preset', 'import-steps', 'flux.sh', 'mixed', '--preset', 'qwen-image-lora-lowvram'], {
      cwd: box.cwd,
      env: box.env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/zerowiz: warning: step train trains FLUX\.1-dev .*but the answers are for Qwen-Image/);
  });

  it('reads a pasted line from stdin (-): words split as a shell would', () => {
    const box = sandbox();
    const line = `accelerate launch --config_file cfg.yaml train.py --prompt 'a "cat" on $HOME' --out "$OUT/x y" --lr 1e-4\n`;
    const r = runCli(['preset', 'import-steps', '-'], { cwd: box.cwd, env: { ...box.env, OUT: '/data' }, input: line });
    expect(r.code, r.stderr).toBe(0);
    const { steps } = parseYaml(r.stdout) as { steps: { args: string[] }[] };
    expect(steps[0]!.args).toEqual(['train.py', '--prompt', 'a "cat" on $HOME', '--out', '/data/x y', '--lr', '1e-4']);
    expect(r.stderr).toContain("the example ran it with --config_file cfg.yaml; it runs with this setup's config");
  });

  it('bad input: a script without accelerate launch, a missing file, a bad name: one line and a hint', () => {
    const box = sandbox();
    writeFileSync(join(box.cwd, 'x.sh'), 'python train.py\n');
    expectOneLineError(
      runCli(['preset', 'import-steps', 'x.sh'], { cwd: box.cwd, env: box.env }),
      /x\.sh has no `accelerate launch` line/,
    );
    expectOneLineError(runCli(['preset', 'import-steps', 'nope.sh'], { cwd: box.cwd, env: box.env }), /nope\.sh/);
    writeFileSync(join(box.cwd, 'ok.sh'), 'accelerate launch train.py\n');
    expectOneLineError(
      runCli(['preset', 'import-steps', 'ok.sh', 'bad name'], { cwd: box.cwd, env: box.env }),
      /bad name/,
    );
  });
});
