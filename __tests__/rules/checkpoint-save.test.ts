import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAccelerateConfigSummary, type AccelerateConfigSummary } from '../../src/config/accelerate-config.js';
import { checkpointSaveFindings } from '../../src/rules/checkpoint-save.js';
import { loadPreset } from '../../src/setups/presets.js';
import { withDefaults } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import type { StepCheckContext } from '../../src/rules/step-finding.js';
import { stepFindings } from '../../src/rules/step-findings.js';
import { SEED_DIR } from '../helpers/paths.js';

const SCRIPT = 'examples/qwen_image/model_training/train.py';
const presetEnv = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-cs-presets-')) };
const seed = () => loadPreset('qwen-image-lora-lowvram', presetEnv);

function dir(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-cs-'));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(d, p)), { recursive: true });
    writeFileSync(join(d, p), text);
  }
  return d;
}
const ctx = (d: string, defaultConfig?: AccelerateConfigSummary): StepCheckContext => ({
  cwd: d,
  defaultConfig: defaultConfig ?? readAccelerateConfigSummary(join(d, 'none.yaml'), d),
  gpuCount: 8,
});
const own = (args: string[], answers: Parameters<typeof withDefaults>[0]): Setup => ({
  name: 'mine',
  answers: withDefaults({ num_processes: 8, ...answers }),
  files: { ...DEFAULT_FILES },
  steps: [{ name: 'train', usesConfig: true, args }],
});

describe('the save path against the stage: ZeRO-3 without the 16-bit gather while the script saves with get_state_dict', () => {
  it('the seed (DiffSynth, ZeRO-3 offload, gather on) is fine; with the gather off its training pass is an error', async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '' });
    expect(checkpointSaveFindings(s, ctx(d))).toEqual([]);
    const off = { ...s, answers: { ...s.answers, zero3_save_16bit_model: false } };
    const f = checkpointSaveFindings(off, ctx(d));
    expect(f).toHaveLength(1); // the data pass saves no weights
    expect(f[0]).toMatchObject({
      level: 'error',
      rule: 'step-zero3-save-without-gather',
      step: 1,
      stepName: 'train',
      questions: ['zero3_save_16bit_model'],
    });
    expect(f[0]!.message).toMatch(
      /DiffSynth-Studio saves through accelerator\.get_state_dict .* "Cannot get 16bit model weights/,
    );
    expect(f[0]!.fix).toMatch(/--zero3-save-16bit-model yes/);
    expect(f[0]!.fix).toMatch(/each save gathers the 16-bit weights: .* of host memory on rank 0's node/);
    // It is among the step findings the wizard shows.
    expect(stepFindings(off, ctx(d)).map((x) => x.rule)).toContain('step-zero3-save-without-gather');
  });

  it('a script that calls get_state_dict or accelerator.save_model is an error; a Trainer falling back to shards a warning', () => {
    const d = dir({
      'a.py': 'sd = accelerator.get_state_dict(model)\n',
      'b.py': 'self.accelerator.save_model(model, out)\n',
      'c.py': 'trainer.train()\ntrainer.save_model(out)\n',
      'd.py': '# accelerator.get_state_dict(model) is what we used to do\nprint(1)\n',
    });
    const at3 = (script: string) =>
      checkpointSaveFindings(own([script], { mode: '3', zero3_save_16bit_model: false }), ctx(d));
    expect(at3('a.py').map((f) => [f.level, f.rule])).toEqual([['error', 'step-zero3-save-without-gather']]);
    expect(at3('a.py')[0]!.message).toMatch(/a\.py calls get_state_dict/);
    expect(at3('b.py').map((f) => f.level)).toEqual(['error']);
    const c = at3('c.py');
    expect(c.map((f) => [f.level, f.rule])).toEqual([['warning', 'step-zero3-trainer-saves-shards']]);
    expect(c[0]!.message).toMatch(/zero_to_fp32/);
    expect(at3('d.py')).toEqual([]); // a comment is not a call
  });

  it('nothing below stage 3, nor with the gather on, nor for a script that cannot be read', () => {
    const d = dir({ 'a.py': 'accelerator.get_state_dict(model)\n' });
    expect(checkpointSaveFindings(own(['a.py'], { mode: '2', zero3_save_16bit_model: false }), ctx(d))).toEqual([]);
    expect(checkpointSaveFindings(own(['a.py'], { mode: '3', zero3_save_16bit_model: true }), ctx(d))).toEqual([]);
    expect(checkpointSaveFindings(own(['missing.py'], { mode: '3', zero3_save_16bit_model: false }), ctx(d))).toEqual(
      [],
    );
  });

  it("a step on accelerate's default config at ZeRO-3 whose JSON leaves the gather off: an error naming that JSON", async () => {
    const s = await seed();
    const d = dir({ [SCRIPT]: '' });
    const json = JSON.parse(readFileSync(join(SEED_DIR, 'ds_z3_cpuoffload.json'), 'utf8')) as {
      zero_optimization: Record<string, unknown>;
    };
    json.zero_optimization.stage3_gather_16bit_weights_on_model_save = false;
    const dsPath = 'examples/qwen_image/model_training/special/low_vram_training/ds_z3_cpuoffload.json';
    mkdirSync(dirname(join(d, dsPath)), { recursive: true });
    writeFileSync(join(d, dsPath), JSON.stringify(json));
    writeFileSync(join(d, 'default.yaml'), readFileSync(join(SEED_DIR, 'deepspeed_zero3_cpuoffload.yaml')));
    const def = readAccelerateConfigSummary(join(d, 'default.yaml'), d);
    expect(def.deepspeed?.gather16bitOnSave).toBe(false);
    const onDefault: Setup = { ...s, steps: s.steps.map((x) => ({ ...x, usesConfig: false })) };
    const f = checkpointSaveFindings(onDefault, ctx(d, def));
    expect(f.map((x) => [x.level, x.stepName])).toEqual([['error', 'train']]);
    expect(f[0]!.fix).toContain(`stage3_gather_16bit_weights_on_model_save: true in ${dsPath}`);
  });
});
