/**
 * Disk room for the checkpoints a run will write, for the pre-launch checks (`zerowiz check`):
 * `checkpointBytes(setup, cwd)` says, per training step, where it saves, what one save weighs and how many it
 * keeps; `checkpointRoom(space)` sets that against the free space of the file system each folder is on.
 *
 * What one save weighs (w: 2 bytes in bf16/fp16, 4 in fp32; P the model's parameters, T the trainable ones,
 * LoRA adapters added to P):
 * - DiffSynth-Studio (ModelLogger.save_model: export_trainable_state_dict): the trainable parameters, T x w;
 *   one `epoch-N.safetensors` per epoch (`--num_epochs`, default 1), or with `--save_steps` a `step-N` file
 *   every that many steps (how many, the data decides: unknown here);
 * - any other script, as HF's Trainer saves a `checkpoint-N`: the weights (T x w for an adapter, P x w) and,
 *   under DeepSpeed, its states: the 16-bit module (mp_rank_00_model_states.pt, P x w) at stages 1-2 or the
 *   frozen parameters at stage 3 ((P - T) x w), and the optimizer states, 12 bytes per trainable parameter
 *   (fp32 master weights, Adam's two moments); `--save_total_limit N` keeps N, else every save stays.
 */
import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { stepConfig, argValue } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { precisionOf } from '../estimate/index.js';
import { modelCatalogOrNone, type ModelEntry } from '../estimate/index.js';
import { weightBytes } from '../estimate/index.js';
import { placementOf } from '../config/index.js';
import { formatBytesShort } from '../text/index.js';
import { isDiffSynthStep } from '../config/index.js';
import { expectationOf } from './expect.js';
import { outputRoots } from './find.js';

/** What one step's checkpoints need. */
export interface StepCheckpointSpace {
  index: number;
  name: string;
  /** The absolute folder it saves into. */
  root: string;
  /** One save, in bytes; null when the model size is not known. */
  perSaveBytes: number | null;
  /** How many saves stay on disk; null when the run decides (save_steps, no save_total_limit). */
  saves: number | null;
  /** perSaveBytes x saves, when both are known. */
  totalBytes: number | null;
  /** What one save is, in words (`epoch-N.safetensors of the LoRA`). */
  what: string;
}

/** The checkpoints of a whole setup. */
export interface CheckpointSpace {
  steps: StepCheckpointSpace[];
  /** The sum of the steps' totals when every one is known, else null. */
  totalBytes: number | null;
  /** What is assumed or unknown, one sentence each. */
  notes: string[];
}

const positive = (v: string | null | undefined): number | null =>
  typeof v === 'string' && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : null;

/** Where the setup's training steps save, what one save weighs and how many stay (see the module comment). */
export function checkpointBytes(
  setup: Setup,
  cwd: string,
  models: readonly ModelEntry[] = modelCatalogOrNone(),
): CheckpointSpace {
  const notes: string[] = [];
  const steps: StepCheckpointSpace[] = [];
  const w = weightBytes(precisionOf(setup.answers.mixed_precision));
  setup.steps.forEach((s, index) => {
    const root = outputRoots(s.args, cwd)[0];
    if (root === undefined) return;
    const e = expectationOf(setup, index, models);
    const lora = e.lora !== null || (e.trainableParams !== null && e.trainableParams !== e.modelParams);
    const T = e.trainableParams;
    const P = e.modelParams === null ? null : e.modelParams + (e.lora !== null && T !== null ? T : 0);
    let perSaveBytes: number | null = null;
    let saves: number | null;
    let what: string;
    if (isDiffSynthStep(s.args)) {
      perSaveBytes = T === null ? null : T * w;
      const every = positive(argValue(s.args, '--save_steps'));
      if (every !== null) {
        saves = null;
        notes.push(
          `step ${s.name} has --save_steps ${every}: a step-N file every ${every} steps and one at the end, as many as the data makes`,
        );
      } else saves = positive(argValue(s.args, '--num_epochs')) ?? 1;
      what = `${every !== null ? 'step-N' : 'epoch-N'}.safetensors of the ${lora ? 'LoRA' : 'trainable weights'}`;
    } else {
      const cfg = stepConfig(s).kind === 'setup';
      const stage = cfg ? placementOf(setup.answers.mode, setup.answers.offload_device).stage : null;
      if (P !== null && T !== null) {
        const weights = (lora ? T : P) * w;
        const modelStates = stage === null ? 0 : (stage === 3 ? P - T : P) * w;
        const optimizer = stage === null ? 0 : 12 * T;
        perSaveBytes = weights + modelStates + optimizer;
      }
      saves = positive(argValue(s.args, '--save_total_limit'));
      if (saves === null)
        notes.push(
          `step ${s.name} keeps every checkpoint-N it saves (no --save_total_limit): the total grows with the run`,
        );
      what = `checkpoint-N: ${lora ? 'the adapter' : 'the weights'}${stage !== null ? ` and DeepSpeed's ZeRO-${stage} states` : ''}`;
    }
    if (perSaveBytes === null)
      notes.push(`step ${s.name}: no model size (or LoRA shapes) known, so the size of a save cannot be worked out`);
    steps.push({
      index,
      name: s.name,
      root,
      perSaveBytes,
      saves,
      totalBytes: perSaveBytes !== null && saves !== null ? perSaveBytes * saves : null,
      what,
    });
  });
  const known = steps.every((s) => s.totalBytes !== null);
  return {
    steps,
    totalBytes: steps.length > 0 && known ? steps.reduce((a, s) => a + s.totalBytes!, 0) : null,
    notes,
  };
}

/** Free bytes for an unprivileged writer on the file system `path` would be on (its nearest existing folder). */
export function freeBytesAt(path: string): number | null {
  let p = path;
  for (;;) {
    try {
      if (statSync(p).isDirectory()) {
        const fs = statfsSync(p);
        return Number(fs.bavail) * Number(fs.bsize);
      }
    } catch {}
    const up = dirname(p);
    if (up === p) return null;
    p = up;
  }
}

/** One step's room: what it needs (its total, or one save when the count is unknown) against what is free. */
export interface CheckpointRoom {
  index: number;
  name: string;
  root: string;
  needBytes: number;
  freeBytes: number | null;
  fits: boolean | null;
  message: string;
}

/** The steps' needs against the free space (steps whose save size is unknown are left out). */
export function checkpointRoom(
  space: CheckpointSpace,
  free: (path: string) => number | null = freeBytesAt,
): CheckpointRoom[] {
  return space.steps
    .filter((s) => s.perSaveBytes !== null)
    .map((s) => {
      const need = s.totalBytes ?? s.perSaveBytes!;
      const avail = free(s.root);
      const fits = avail === null ? null : need <= avail;
      const count = s.saves === null ? 'one save (more as the run goes)' : `${s.saves} save${s.saves > 1 ? 's' : ''}`;
      return {
        index: s.index,
        name: s.name,
        root: s.root,
        needBytes: need,
        freeBytes: avail,
        fits,
        message: `step ${s.name} saves into ${s.root}: needs ${formatBytesShort(need)} for ${count} (${s.what}, ${formatBytesShort(s.perSaveBytes!)} each), ${avail === null ? 'free space unknown' : `${formatBytesShort(avail)} free there`}`,
      };
    });
}
