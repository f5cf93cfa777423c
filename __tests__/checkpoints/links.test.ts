/**
 * A checkpoint in a run's outputs that is a symbolic link (to a file outside the run, a neighbour's, anything) is
 * named as a link, never followed: `runs` lists it as bad with its target, and `export weights` does not export
 * it (it takes the last real checkpoint, or refuses when there is none). Through the built bin.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, sandbox, tempDir } from '../helpers/cli.js';
import { writeRunRecord } from '../helpers/run-record.js';
import { diffsynthLora, writeSafetensors } from '../helpers/safetensors.js';

const SCRIPT = 'examples/qwen_image/model_training/train.py';
const RUN = '20261201-101010-qwen';
const LORA = diffsynthLora(2, { to_q: [3072, 3072, 60] });

/** A DiffSynth run whose outputs hold a real epoch-0 and, as epoch-1, a link to a good file outside the run. */
function runWithLink(withReal: boolean) {
  const box = sandbox();
  writeRunRecord(box.cwd, {
    id: RUN,
    name: 'qwen',
    answers: { model_name: 'qwen-image', fine_tuning: 'lora', lora_rank: 2, lora_targets: 'to_q' },
    steps: [
      { name: 'train', usesConfig: true, args: [SCRIPT, '--output_path', './models/out', '--task', 'sft:train'] },
    ],
  });
  const out = join(box.cwd, 'models/out');
  mkdirSync(out, { recursive: true });
  if (withReal) writeSafetensors(join(out, 'epoch-0.safetensors'), LORA);
  const elsewhere = join(tempDir('zw-elsewhere-'), 'theirs.safetensors');
  writeSafetensors(elsewhere, LORA);
  symlinkSync(elsewhere, join(out, 'epoch-1.safetensors'));
  return { box, elsewhere };
}

describe('a checkpoint that is a link', () => {
  it('runs names it as a link to its target, bad, never verified through it', () => {
    const { box, elsewhere } = runWithLink(true);
    const r = runCli(['runs', '--json'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    const cps = JSON.parse(r.stdout)[0].checkpoints as { path: string; verdict: string; reason: string }[];
    const link = cps.find((c) => c.path.endsWith('epoch-1.safetensors'))!;
    expect(link.verdict).toBe('bad');
    expect(link.reason).toContain('symbolic link');
    expect(link.reason).toContain(elsewhere);
    expect(cps.find((c) => c.path.endsWith('epoch-0.safetensors'))!.verdict).toBe('ok');
  });

  it('export weights takes the last real checkpoint, never the link', () => {
    const { box } = runWithLink(true);
    const r = runCli(['export', 'weights', RUN, '--out', 'exported'], { cwd: box.cwd, env: box.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/from models\/out\/epoch-0\.safetensors/);
  });

  it('export weights --step of the link, or a run with only the link, is refused', () => {
    const { box } = runWithLink(false);
    const r = runCli(['export', 'weights', RUN, '--out', 'exported'], { cwd: box.cwd, env: box.env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/symbolic link/);
  });
});
