/**
 * What a run's checkpoints should hold, from what it ran with: the LoRA's rank and targets (the step's own
 * DiffSynth flags first, the setup's answers otherwise) with their module shapes from the catalog
 * (presets/models.yaml), the model's parameter count, the world size and the stage the DeepSpeed states
 * are sharded over. Anything unknown is null and its check is skipped (and the verdict says so).
 */
import { lookupModel, type ModelEntry } from '../estimate/index.js';
import { loraParams } from '../estimate/index.js';
import type { Setup } from '../config/index.js';
import { argValue } from '../config/index.js';
import { placementOf } from '../config/index.js';

/** One LoRA target: its name, the Linear's shape, and how many Linears the name matches. */
export interface LoraTarget {
  name: string;
  in: number;
  out: number;
  count: number;
}

/** The adapter a LoRA run saves: A is [rank, in], B is [out, rank] for each match of each target. */
export interface LoraExpectation {
  rank: number;
  targets: LoraTarget[];
  /** The catalog model the shapes come from. */
  model: string;
}

/** What the verifier compares a checkpoint with; null fields are not checked. */
export interface Expectation {
  lora: LoraExpectation | null;
  /** Why the LoRA shapes cannot be checked (targets not in the catalog, no model named), or null. */
  loraUnknown: string | null;
  /** Parameters of the base model (a full save holds about this many). */
  modelParams: number | null;
  /** Trainable parameters (the optimizer states hold 12 bytes of each). */
  trainableParams: number | null;
  /** Data-parallel ranks that write optimizer states (the run's process count). */
  worldSize: number | null;
  /** The ZeRO stage of the step's config. */
  stage: number | null;
}

/** Nothing known: every check that needs an expectation is skipped. */
export const NO_EXPECTATION: Expectation = {
  lora: null,
  loraUnknown: null,
  modelParams: null,
  trainableParams: null,
  worldSize: null,
  stage: null,
};

/** The expected adapter of rank `rank` on `targets` of a catalog model, or why it cannot be said. */
export function loraExpectation(
  rank: number,
  targets: readonly string[],
  model: ModelEntry | null,
): { lora: LoraExpectation } | { unknown: string } {
  if (!model) return { unknown: 'the model is not in the catalog, so the LoRA shapes are not known' };
  const names = targets.length > 0 ? targets : model.loraTargets;
  if (names.length === 0) return { unknown: `the catalog names no LoRA targets for ${model.id}` };
  const missing = names.filter((t) => model.modules[t] === undefined);
  if (missing.length > 0)
    return {
      unknown: `the LoRA targets ${missing.join(', ')} are not modules of ${model.id} in the catalog, so their shapes are not known`,
    };
  return {
    lora: {
      rank,
      model: model.id,
      targets: names.map((t) => {
        const [inF, outF, count] = model.modules[t]!;
        return { name: t, in: inF, out: outF, count };
      }),
    },
  };
}

/** Trainable parameters of an expected adapter (rank x (in + out) per match). */
export function loraParamCount(l: LoraExpectation): number {
  return loraParams(
    l.rank,
    l.targets.map((t) => [t.in, t.out, t.count] as const),
  );
}

/**
 * What step `index` of `setup` should save. DiffSynth's `--lora_rank` / `--lora_target_modules` win over the
 * setup's answers (they are what the script really built).
 */
export function expectationOf(setup: Setup, index: number, models: readonly ModelEntry[]): Expectation {
  const a = setup.answers;
  const step = setup.steps[index];
  const args = step?.args ?? [];
  const model = a.model_name ? lookupModel(a.model_name, models) : null;
  const rankArg = argValue(args, '--lora_rank');
  const targetsArg = argValue(args, '--lora_target_modules');
  const isLora = a.fine_tuning === 'lora' || typeof rankArg === 'string' || typeof targetsArg === 'string';
  let lora: LoraExpectation | null = null;
  let loraUnknown: string | null = null;
  if (isLora) {
    const rank = typeof rankArg === 'string' && /^\d+$/.test(rankArg) ? Number(rankArg) : a.lora_rank;
    const targets = (typeof targetsArg === 'string' ? targetsArg : a.lora_targets)
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    const e = loraExpectation(rank, targets, model);
    if ('lora' in e) lora = e.lora;
    else loraUnknown = e.unknown;
  }
  const modelParams = a.model_params ?? model?.params ?? null;
  const trainableParams = lora
    ? loraParamCount(lora)
    : isLora
      ? (a.trainable_params ?? null)
      : (a.trainable_params ?? modelParams);
  const usesSetup = step?.usesConfig ?? true;
  return {
    lora,
    loraUnknown,
    modelParams,
    trainableParams,
    worldSize: usesSetup ? a.num_processes : null,
    stage: usesSetup ? placementOf(a.mode, a.offload_device).stage : null,
  };
}
