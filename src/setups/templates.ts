/**
 * The step templates from DiffSynth-Studio's example scripts (presets/templates.yaml, data): for each catalog
 * model and kind of training (LoRA or full; one pass, split, or one pass per expert) the example's own text,
 * made into steps by the same reader as a pasted command (./shell-script.ts). Also the map from the model
 * repositories DiffSynth loads to the catalog model whose shape they have, for the finding that a step trains
 * another model than the answers say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { parseDataFile, presetsDir } from '../fs/index.js';
import { UsageError } from '../text/index.js';
import { scriptSteps, type ScriptSteps } from './shell-script.js';
import { argValue } from '../config/index.js';
import type { LaunchStep } from '../config/index.js';

/** The kind of training a template does. */
export type TemplateTuning = 'lora' | 'full';

/** One template from DiffSynth-Studio's examples. */
export interface DiffSynthTemplate {
  id: string;
  /** The catalog model (presets/models.yaml id) it trains. */
  model: string;
  tuning: TemplateTuning;
  /** `one`, `split` (the data pass caches the encoders' outputs first) or `two experts`. */
  passes: string;
  label: string;
  /** The example's file in DiffSynth-Studio. */
  source: string;
  /** The example's text. */
  script: string;
}

/** The templates file. */
export interface TemplateCatalog {
  repository: string;
  commit: string;
  /** Model repository -> catalog model id. */
  models: Record<string, string>;
  templates: DiffSynthTemplate[];
}

const fileSchema = z.object({
  source_repository: z.string(),
  source_commit: z.string(),
  models: z.record(z.string(), z.string()),
  templates: z.array(
    z.object({
      id: z.string(),
      model: z.string(),
      tuning: z.enum(['lora', 'full']),
      passes: z.string(),
      label: z.string(),
      source: z.string(),
      script: z.string(),
    }),
  ),
});

let cached: TemplateCatalog | null = null;

/** The built-in templates (read once); UsageError when the file cannot be read. */
export function loadTemplates(file: string = join(presetsDir(), 'templates.yaml')): TemplateCatalog {
  const builtIn = file === join(presetsDir(), 'templates.yaml');
  if (builtIn && cached) return cached;
  let raw: unknown;
  try {
    raw = parseDataFile(file, readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`the step templates ${file} cannot be read: ${(e as Error).message}`, 'reinstall zerowiz');
  }
  const r = z.safeParse(fileSchema, raw);
  if (!r.success)
    throw new UsageError(`the step templates ${file} are damaged: ${r.error.message}`, 'reinstall zerowiz');
  const catalog: TemplateCatalog = {
    repository: r.data.source_repository,
    commit: r.data.source_commit,
    models: r.data.models,
    templates: r.data.templates,
  };
  if (builtIn) cached = catalog;
  return catalog;
}

/** The built-in templates, or none when the file cannot be read (the wizard offers the others). */
export function templatesOrNone(): TemplateCatalog {
  try {
    return loadTemplates();
  } catch {
    return { repository: '', commit: '', models: {}, templates: [] };
  }
}

/** A template's steps (and what the reading said about its lines). */
export function templateScriptSteps(t: DiffSynthTemplate): ScriptSteps {
  return scriptSteps(t.script);
}

/** The model repositories a DiffSynth step loads (`--model_id_with_origin_paths repo:pattern,...`). */
export function stepModelRepos(step: LaunchStep): string[] {
  const v = argValue(step.args, '--model_id_with_origin_paths');
  if (typeof v !== 'string') return [];
  const repos = v
    .split(',')
    .map((part) => part.split(':')[0]!.trim())
    .filter((r) => r !== '');
  return [...new Set(repos)];
}

/** What a DiffSynth step trains: LoRA (--lora_base_model / --lora_rank), full (--trainable_models), or unknown. */
export function stepTuning(step: LaunchStep): TemplateTuning | null {
  if (argValue(step.args, '--lora_base_model') !== undefined || argValue(step.args, '--lora_rank') !== undefined)
    return 'lora';
  if (argValue(step.args, '--trainable_models') !== undefined) return 'full';
  return null;
}
