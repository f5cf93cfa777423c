/**
 * Each optimizer zerowiz asks about, with and without an offloaded optimizer, and the master weights both ways,
 * through the real accelerate 1.15.0 in ONE Python process (harness.py: Accelerator(), prepare() and a training
 * step of probe.py with the script's optimizer). With an offloaded optimizer, the real accelerate replaces the
 * script's optimizer itself (map_pytorch_optim_to_deepspeed): what it builds is recorded by the DeepSpeed stand-in
 * (its DeepSpeedCPUAdam keeps the arguments), which checks the master-weight keys as DeepSpeed 0.19.5 does (its
 * messages, from runtime/config.py and base_optimizer.py). DeepSpeed itself has no wheel on these machines: the
 * optimizer's step is the stand-in's, in plain torch.
 *
 * For every case, zerowiz's verdict (src/rules/validate.ts, src/config/accept.ts: refused or not) must be what the
 * real run says (it failed or it trained), and an offloaded optimizer is what the rules say it is.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { withDefaults, type Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import { validate } from '../../src/rules/validate.js';
import { runHarness, tempDir, writeSetup, type HarnessCase, type HarnessResult } from './real.js';

const OPTIMIZERS = ['adamw', 'adafactor', 'sgd'] as const;
const MODES = ['2', '2-offload', '3-offload'] as const;
const MASTER = ['fp32', 'none'] as const;

interface Case {
  id: string;
  setup: Setup;
  optimizer: (typeof OPTIMIZERS)[number];
  offloaded: boolean;
}

const cases: Case[] = [];
for (const optimizer of OPTIMIZERS)
  for (const mode of MODES)
    for (const master of MASTER) {
      const given: Partial<Answers> = {
        mode,
        num_processes: 1,
        mixed_precision: 'bf16',
        master_weights: master,
        optimizer,
        model_params: 1e6,
        ...(mode !== '2' ? { offload_device: 'cpu' as const } : {}),
      };
      cases.push({
        id: `${optimizer}, mode ${mode}, master weights ${master}`,
        setup: { name: 'optim', answers: withDefaults(given), files: { ...DEFAULT_FILES }, steps: [] },
        optimizer,
        offloaded: mode !== '2',
      });
    }

let results = new Map<string, HarnessResult>();

beforeAll(async () => {
  const root = tempDir('zw-real-optim-');
  const harness: HarnessCase[] = [];
  for (const [i, c] of cases.entries()) {
    const dir = join(root, String(i));
    const placed = await writeSetup(c.setup, dir);
    harness.push({
      id: c.id,
      yaml: placed.files.accelerateConfig,
      prepare: true,
      record: join(dir, 'record'),
      probe_env: { ZEROWIZ_PROBE_OPTIMIZER: c.optimizer },
    });
  }
  results = runHarness(harness);
}, 600_000);

describe('each optimizer, with and without offload, master weights both ways: zerowiz says what the real code does', () => {
  for (const c of cases) {
    it(c.id, () => {
      const r = results.get(c.id)!;
      expect(r.load_error ?? r.launch_error ?? null).toBeNull();
      const refusedByZerowiz = validate(c.setup).filter((f) => f.level === 'error');
      const failed = r.prepare_error !== undefined;
      expect(
        failed,
        `zerowiz: ${refusedByZerowiz.map((f) => f.rule).join(', ') || 'accepted'}; the real run: ${r.prepare_error ?? 'trained'}`,
      ).toBe(refusedByZerowiz.length > 0);
      if (!failed) {
        expect(r.probe?.steps).toBeGreaterThan(0);
        expect(r.probe?.losses_finite).toBe(true);
      }
      const rec = r.record;
      if (!rec) return;
      if (c.offloaded) {
        // accelerate replaced the script's optimizer: a CPU Adam, AdamW mode only for torch's AdamW, fp32 moments.
        expect(rec.optimizer).toBe('DeepSpeedCPUAdam');
        expect(rec.optimizer_args).toMatchObject({ adamw_mode: c.optimizer === 'adamw', fp32_optimizer_states: true });
      } else expect(rec.optimizer).toBe({ adamw: 'AdamW', adafactor: 'Adafactor', sgd: 'SGD' }[c.optimizer]);
      if (c.setup.answers.master_weights === 'none')
        expect(rec.config.bf16).toMatchObject({ bf16_master_weights_and_grads: true, bf16_optimizer_states: true });
    });
  }

  it('the refusals are the ones the rules name, and both kinds happen', () => {
    const rules = new Set(
      cases.flatMap((c) =>
        validate(c.setup)
          .filter((f) => f.level === 'error')
          .map((f) => f.rule),
      ),
    );
    expect([...rules].sort()).toEqual(['ds-bf16-states-offload', 'offload-adafactor']);
    const failures = cases.map((c) => results.get(c.id)!.prepare_error).filter(Boolean);
    expect(failures.some((e) => /bf16_optimizer_states with ZeRO-Offload requires DeepSpeedCPUAdam/.test(e!))).toBe(
      true,
    );
    // Adafactor's parameter groups (lr None, eps a pair) under DeepSpeedCPUAdam: the first step fails.
    expect(
      failures.some((e) => /TypeError/.test(e!)),
      failures.join('\n'),
    ).toBe(true);
  });
});
