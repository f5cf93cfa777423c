/**
 * A step that trains another model, or another kind of training, than the answers describe: the estimate, the
 * picture and the checkpoint checks are the answers', so a template of FLUX.1-dev under answers for Qwen-Image,
 * or a full fine-tune under answers that say LoRA, would be judged on the wrong numbers. Read from the step's
 * DiffSynth flags: the models it loads (--model_id_with_origin_paths, mapped to catalog models by
 * presets/templates.yaml) and what it trains (--lora_base_model / --lora_rank, or --trainable_models).
 */
import { isDataPass, type Setup } from '../config/index.js';
import { stepModelRepos, stepTuning, templatesOrNone } from '../setups/index.js';
import { lookupModel, modelCatalogOrNone, type ModelEntry } from '../estimate/index.js';
import type { StepFinding } from './step-finding.js';

/** The catalog models a step loads, from its model repositories. */
function stepModels(
  repos: readonly string[],
  map: Record<string, string>,
  models: readonly ModelEntry[],
): ModelEntry[] {
  const ids = [...new Set(repos.map((r) => map[r]).filter((x): x is string => x !== undefined))];
  return ids.map((id) => lookupModel(id, models)).filter((m): m is ModelEntry => m !== null);
}

/** What the answers train, in words. */
const TUNING_WORDS = { lora: 'a LoRA', full: 'every parameter' } as const;

/** The findings of every training step of `setup` against its answers' model and fine-tuning. */
export function stepModelFindings(setup: Setup): StepFinding[] {
  const a = setup.answers;
  const models = modelCatalogOrNone();
  const answered = a.model_name ? lookupModel(a.model_name, models) : null;
  const map = templatesOrNone().models;
  const out: StepFinding[] = [];
  setup.steps.forEach((step, i) => {
    if (isDataPass(step.args)) return;
    const at = { step: i, stepName: step.name };
    const repos = stepModelRepos(step);
    const trains = stepModels(repos, map, models);
    if (answered && trains.length > 0 && !trains.some((m) => m.id === answered.id)) {
      const names = trains.map((m) => m.name).join(' or ');
      out.push({
        level: 'warning',
        rule: 'step-other-model',
        message: `step ${step.name} trains ${names} (it loads ${repos.join(', ')}), but the answers are for ${answered.name}: the estimate, the picture and the checkpoint checks describe another model than this step trains`,
        fix: `choose ${trains[0]!.id} in the model question (--model-name ${trains[0]!.id}), or a template of ${answered.id} on the steps screen`,
        questions: ['model_name'],
        ...at,
      });
    }
    const tuning = stepTuning(step);
    if (tuning !== null && a.model_name && tuning !== a.fine_tuning) {
      out.push({
        level: 'warning',
        rule: 'step-other-tuning',
        message: `step ${step.name} trains ${TUNING_WORDS[tuning]} (${tuning === 'lora' ? '--lora_base_model/--lora_rank' : '--trainable_models'}), but the answers say ${a.fine_tuning === 'lora' ? 'LoRA' : 'full fine-tuning'}: the estimate counts the optimizer states of ${TUNING_WORDS[a.fine_tuning]}${tuning === 'full' ? ', far below what this step needs' : ''}`,
        fix: `answer ${tuning} in the "Train every parameter, or LoRA" question (--fine-tuning ${tuning}), or a ${a.fine_tuning === 'lora' ? 'LoRA' : 'full'} template on the steps screen`,
        questions: ['fine_tuning'],
        ...at,
      });
    }
  });
  return out;
}
