/**
 * The save path against the stage: under ZeRO-3 each rank holds only a slice of every parameter, so
 * a script that saves with accelerate's `get_state_dict` (or `save_model`, which calls it) needs
 * `stage3_gather_16bit_weights_on_model_save`: without it accelerate raises "Cannot get 16bit model weights
 * because `stage3_gather_16bit_weights_on_model_save` in DeepSpeed config is False" at the first save
 * (accelerate 1.15.0 accelerator.py Accelerator.get_state_dict), after the first epoch's hours of training.
 * DiffSynth-Studio's ModelLogger.save_model calls it at every save (diffsynth/diffusion/logger.py), so its
 * training passes always need it. HF's Trainer instead catches that error and saves DeepSpeed's shards only
 * ("deepspeed.save_16bit_model didn't save the model, since stage3_gather_16bit_weights_on_model_save=false.
 * Saving the full checkpoint instead, use zero_to_fp32.py to recover weights": transformers trainer.py
 * save_model): a warning.
 *
 * A step finding (step-findings.ts adds these to its list); reads the step's script (at most 1 MiB) to see how
 * it saves.
 */
import { isAbsolute, resolve } from 'node:path';
import { saveCostOfSetup, saveCostText } from '../estimate/index.js';
import { modelCatalogOrNone } from '../estimate/index.js';
import { trainingScript } from '../config/index.js';
import { isDiffSynthStep } from '../config/index.js';
import { readUserFile } from '../fs/index.js';
import { compileSetup, isPlainObject } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { isDataPass, stepConfig } from '../config/index.js';
import type { StepCheckContext, StepFinding } from './step-finding.js';

/** How a script saves its weights, as far as its text says. */
export type SaveCall = 'get_state_dict' | 'accelerator.save_model' | 'trainer.save_model' | null;

const GET_STATE_DICT_RE = /\bget_state_dict\s*\(/;
const ACCELERATOR_SAVE_RE = /\baccelerator\s*\.\s*save_model\s*\(/;
const TRAINER_SAVE_RE = /\btrainer\s*\.\s*save_model\s*\(/i;

/** The save call a Python script makes (comments left out), or null. */
export function saveCallOf(source: string): SaveCall {
  const code = source
    .split('\n')
    .map((l) => l.replace(/#.*$/, ''))
    .join('\n');
  if (GET_STATE_DICT_RE.test(code)) return 'get_state_dict';
  if (ACCELERATOR_SAVE_RE.test(code)) return 'accelerator.save_model';
  if (TRAINER_SAVE_RE.test(code)) return 'trainer.save_model';
  return null;
}

/** The setup's own JSON's stage and gather flag (the JSON the steps with `usesConfig` run with). */
function setupGather(setup: Setup): { stage: unknown; gather: boolean } {
  const j = compileSetup(setup).deepSpeedJson;
  const zero = isPlainObject(j.zero_optimization) ? j.zero_optimization : {};
  const g = zero.stage3_gather_16bit_weights_on_model_save ?? zero.gather_16bit_weights_on_model_save;
  return { stage: zero.stage, gather: g === true };
}

/** ZeRO-3 and the gather flag as the step runs them, or null when the step runs without DeepSpeed or unknown. */
function stepGather(
  setup: Setup,
  i: number,
  ctx: StepCheckContext,
  own: () => { stage: unknown; gather: boolean },
): { gather: boolean; where: string } | null {
  const c = stepConfig(setup.steps[i]!);
  if (c.kind === 'setup') {
    const { stage, gather } = own();
    return stage === 3 ? { gather, where: setup.files.dsConfig } : null;
  }
  if (c.kind === 'default') {
    const ds = ctx.defaultConfig.deepspeed;
    if (ds?.stage !== 3 || ds.gather16bitOnSave === undefined) return null;
    return {
      gather: ds.gather16bitOnSave,
      where: ds.configFile ?? `accelerate's default config ${ctx.defaultConfig.path}`,
    };
  }
  return null;
}

/** How step `i` saves: DiffSynth's training passes always through get_state_dict; else what its script calls. */
function saveCallOfStep(setup: Setup, i: number, cwd: string): { call: SaveCall; who: string } {
  const args = setup.steps[i]!.args;
  if (isDiffSynthStep(args) && !isDataPass(args))
    return { call: 'get_state_dict', who: 'DiffSynth-Studio saves through accelerator.get_state_dict at every save' };
  const script = trainingScript(args);
  if (script === null) return { call: null, who: '' };
  let text: string;
  try {
    text = readUserFile(isAbsolute(script) ? script : resolve(cwd, script), 'the training script');
  } catch {
    return { call: null, who: '' };
  }
  const call = saveCallOf(text);
  return { call, who: `${script} calls ${call === 'accelerator.save_model' ? 'accelerator.save_model' : call}` };
}

/** The findings of the rule, in step order. */
export function checkpointSaveFindings(setup: Setup, ctx: StepCheckContext): StepFinding[] {
  const out: StepFinding[] = [];
  let own: { stage: unknown; gather: boolean } | undefined;
  const ownOnce = () => {
    own ??= setupGather(setup);
    return own;
  };
  setup.steps.forEach((s, i) => {
    const g = stepGather(setup, i, ctx, ownOnce);
    if (!g || g.gather) return;
    const { call, who } = saveCallOfStep(setup, i, ctx.cwd);
    if (call === null) return;
    const onSetup = stepConfig(s).kind === 'setup';
    if (call === 'trainer.save_model') {
      out.push({
        level: 'warning',
        rule: 'step-zero3-trainer-saves-shards',
        message: `step ${s.name}: ${who} under ZeRO-3 without stage3_gather_16bit_weights_on_model_save (${g.where}): the Trainer then saves only DeepSpeed's shards, and no tool loads the weights until zero_to_fp32 has consolidated them (zerowiz export weights RUN does it)`,
        fix: onSetup
          ? 'answer yes to saving 16-bit weights at ZeRO-3 (--zero3-save-16bit-model yes), so each save writes weights a tool can load'
          : `set stage3_gather_16bit_weights_on_model_save: true in ${g.where}`,
        step: i,
        stepName: s.name,
        ...(onSetup ? { questions: ['zero3_save_16bit_model' as const] } : {}),
      });
      return;
    }
    const cost = onSetup
      ? saveCostOfSetup({ ...setup.answers, zero3_save_16bit_model: true }, modelCatalogOrNone())
      : null;
    out.push({
      level: 'error',
      rule: 'step-zero3-save-without-gather',
      message: `step ${s.name}: ${who}, and under ZeRO-3 that needs stage3_gather_16bit_weights_on_model_save, which ${g.where} leaves off: the first save stops the run with "Cannot get 16bit model weights because stage3_gather_16bit_weights_on_model_save in DeepSpeed config is False", after the first epoch's training`,
      fix: onSetup
        ? `answer yes to saving 16-bit weights at ZeRO-3 (--zero3-save-16bit-model yes)${cost ? `; ${saveCostText(cost)}` : ''}`
        : `set stage3_gather_16bit_weights_on_model_save: true in ${g.where}, or pin ${s.name} to this setup's config`,
      step: i,
      stepName: s.name,
      ...(onSetup ? { questions: ['zero3_save_16bit_model' as const] } : {}),
    });
  });
  return out;
}
