import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset } from '../../src/setups/presets.js';
import { withDefaults } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import { checkpointBytes, checkpointRoom } from '../../src/checkpoints/disk.js';

const presetEnv = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'zw-cd-presets-')) };
const T = 235_929_600; // the seed's LoRA (rank 32 on its 12 targets), as `zerowiz estimate` shows (docs/estimate.md)

describe('disk room for the checkpoints a run will write (checkpointBytes, for the pre-launch checks)', () => {
  it("the seed: one LoRA file per epoch (DiffSynth's epoch-N) of the trainable parameters in 16-bit", async () => {
    const s = await loadPreset('qwen-image-lora-lowvram', presetEnv);
    const space = checkpointBytes(s, '/work');
    expect(space.steps).toEqual([
      expect.objectContaining({
        index: 1,
        name: 'train',
        root: '/work/models/train/Qwen-Image_lora',
        perSaveBytes: T * 2,
        saves: 5,
        totalBytes: 5 * T * 2,
      }),
    ]);
    expect(space.totalBytes).toBe(5 * T * 2);
    // --save_steps: step-N files too, as many as the data makes: the total is then unknown, and said.
    const stepped: Setup = {
      ...s,
      steps: s.steps.map((x, i) => (i === 1 ? { ...x, args: [...x.args, '--save_steps', '100'] } : x)),
    };
    const sp = checkpointBytes(stepped, '/work');
    expect(sp.steps[0]).toMatchObject({ perSaveBytes: T * 2, saves: null, totalBytes: null });
    expect(sp.notes.join(' ')).toMatch(/--save_steps 100: a step-N file every 100 steps/);
  });

  it("an HF Trainer step: weights plus DeepSpeed's states (16-bit model states and 12 bytes per trainable parameter), save_total_limit of them", () => {
    const setup: Setup = {
      name: 'hf',
      answers: withDefaults({ mode: '2', num_processes: 8, model_params: 1_000_000_000, mixed_precision: 'bf16' }),
      files: { ...DEFAULT_FILES },
      steps: [
        { name: 'train', usesConfig: true, args: ['train.py', '--output_dir', 'out', '--save_total_limit', '3'] },
      ],
    };
    const space = checkpointBytes(setup, '/w');
    const per = 1e9 * 2 + 1e9 * 2 + 12 * 1e9; // model.safetensors + mp_rank_00 model states + optimizer states
    expect(space.steps[0]).toMatchObject({ root: '/w/out', perSaveBytes: per, saves: 3, totalBytes: 3 * per });
    // At stage 3 the model states hold only the frozen parameters (none in a full fine-tune).
    const z3 = checkpointBytes({ ...setup, answers: { ...setup.answers, mode: '3' } }, '/w');
    expect(z3.steps[0]!.perSaveBytes).toBe(1e9 * 2 + 12 * 1e9);
  });

  it('without a model size there is nothing to compute, and it says so', () => {
    const setup: Setup = {
      name: 'x',
      answers: withDefaults({}),
      files: { ...DEFAULT_FILES },
      steps: [{ name: 'train', usesConfig: true, args: ['train.py', '--output_dir', 'out'] }],
    };
    const space = checkpointBytes(setup, '/w');
    expect(space.totalBytes).toBeNull();
    expect(space.notes.join(' ')).toMatch(/no model size/);
  });

  it('checkpointRoom compares with the free space of the file system each output folder is on (its nearest existing folder)', async () => {
    const s = await loadPreset('qwen-image-lora-lowvram', presetEnv);
    const cwd = mkdtempSync(join(tmpdir(), 'zw-cd-'));
    const room = checkpointRoom(checkpointBytes(s, cwd), () => 1024);
    expect(room).toEqual([
      expect.objectContaining({ root: join(cwd, 'models/train/Qwen-Image_lora'), freeBytes: 1024, fits: false }),
    ]);
    expect(room[0]!.message).toMatch(/needs 2\.2 GiB for 5 saves .* 1 KiB free/);
    const real = checkpointRoom(checkpointBytes(s, cwd));
    expect(real[0]!.freeBytes).toBeGreaterThan(0);
  });
});
