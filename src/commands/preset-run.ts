/** `zerowiz preset ...`'s work, loaded only when the command runs. */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathFlag, readUserFile } from '../fs/index.js';
import { argValue, DEFAULT_FILES, withDefaults, type Answers, type LaunchStep, type Setup } from '../config/index.js';
import {
  renderStepsYaml,
  scriptSteps,
  stepModelRepos,
  stepsForSetup,
  stepTuning,
  templatesOrNone,
} from '../setups/index.js';
import { lookupModel, modelCatalogOrNone } from '../estimate/index.js';
import { MODE_INFO } from '../config/index.js';
import {
  deletePreset,
  findPreset,
  listPresets,
  presetFileFor,
  presetName,
  renderPresetFile,
  savePresetFile,
} from '../setups/index.js';
import { printable, printableLines } from '../text/index.js';
import type { QuestionId } from '../config/index.js';
import { formatCount } from '../text/index.js';
import { noStepsNote } from '../config/index.js';
import { answerFindings, fileFindings, stepModelFindings, validate } from '../rules/index.js';
import { formatFinding } from '../config/index.js';
import { UsageError } from '../text/index.js';
import { setupFromOptions } from './setup-from-flags.js';
import { reportFindings, reportImportNotes } from './report.js';
import * as output from './output.js';

/** `preset list`. */
export function presetList(opts: { json?: boolean }): void {
  const { presets, problems } = listPresets();
  if (opts.json) {
    output.json({
      presets: presets.map((p) => ({
        name: p.name,
        source: p.source,
        path: p.path,
        description: p.description,
        mode: p.setup.answers.mode,
        numProcesses: p.setup.answers.num_processes,
        steps: p.setup.steps.map((s) => s.name),
      })),
      problems,
    });
    return;
  }
  const nameWidth = Math.max(4, ...presets.map((p) => p.name.length));
  const rows = [`${'NAME'.padEnd(nameWidth)}  SOURCE   MODE            GPUS  DESCRIPTION`];
  for (const p of presets) {
    const a = p.setup.answers;
    const left = `${p.name.padEnd(nameWidth)}  ${p.source.padEnd(7)}  ${MODE_INFO[a.mode].label.padEnd(14)}  ${String(a.num_processes).padStart(4)}  `;
    // On a terminal the description is cut to its width; a pipe gets it whole.
    rows.push(left + output.fit(printable(p.description), left.length));
  }
  output.lines(rows);
  for (const pr of problems)
    output.say(`skipped ${pr.path}: ${pr.key ? `${pr.key}: ` : ''}${pr.problem} (the file was left as it is)`);
}

/** `preset show NAME`. */
export function presetShow(name: string, opts: { json?: boolean }): void {
  const p = findPreset(name);
  const findings = [
    ...validate(p.setup),
    ...answerFindings(p.setup.answers, Object.keys(p.given) as QuestionId[], 'answer'),
  ];
  if (opts.json) {
    output.json({
      name: p.name,
      source: p.source,
      path: p.path,
      description: p.description,
      answers: p.setup.answers,
      files: p.setup.files,
      steps: p.setup.steps,
      findings,
    });
    return;
  }
  const a = p.setup.answers;
  // The preset's text comes from a file: printed with its control characters escaped.
  output.data(printableLines(`# ${p.name} (${p.source}: ${p.path})\n`));
  output.data(
    `# ${MODE_INFO[a.mode].label}, ${a.num_processes} GPU(s) on ${a.num_machines} machine(s)${a.model_params ? `, model ${formatCount(a.model_params)} params` : ''}\n`,
  );
  output.data(printableLines(renderPresetFile(presetFileFor(p.setup, p.description, p.given))));
  // The findings are part of what `show` shows: on stdout, under the file.
  output.lines(findings.map((f) => `zerowiz: ${printableLines(formatFinding(f))}`));
}

/** `preset save NAME [flags]`. */
export async function presetSave(name: string, opts: Record<string, unknown>): Promise<void> {
  presetName(name);
  const { setup, given, flagged, importNotes, importFindings } = setupFromOptions(opts);
  const findings = [
    ...importFindings,
    ...validate(setup),
    ...answerFindings(setup.answers, flagged, 'flag'),
    ...fileFindings(setup, 'flag'),
  ];
  const firstError = findings.find((f) => f.level === 'error');
  if (firstError) throw new UsageError(firstError.message, firstError.fix);
  reportImportNotes(importNotes);
  reportFindings(findings);
  const description =
    typeof opts.description === 'string'
      ? opts.description
      : typeof opts.preset === 'string'
        ? `based on ${opts.preset}`
        : '';
  // A preset saved from another keeps where its runs' notifications go.
  // From another preset, its list; otherwise a preset replaced keeps its own (savePresetFile).
  const notify = typeof opts.preset === 'string' ? findPreset(opts.preset).notify : undefined;
  const saved = await savePresetFile(name, { ...setup, name }, description, given, process.env, notify);
  const how =
    saved.status === 'unchanged'
      ? 'unchanged'
      : saved.backup
        ? `replaced (the previous one is kept as ${saved.backup})`
        : 'saved';
  output.lines([`${how} ${saved.path}`]);
  if (saved.shadows)
    output.lines([
      `note: this user preset hides the built-in '${name}' of the same name (delete it to get the built-in back)`,
    ]);
  const noSteps = noStepsNote(setup, name);
  if (noSteps) output.lines([`note: ${noSteps}`]);
}

/** `preset delete NAME`. */
export async function presetDelete(name: string): Promise<void> {
  const backup = await deletePreset(name);
  output.lines([`deleted preset ${name} (kept as ${backup})`]);
}

/** The script's text: FILE (read as every user file is: no link followed, size bounded) or stdin for `-`. */
function scriptText(file: string): string {
  if (file === '-') return readFileSync(0, 'utf8');
  return readUserFile(pathFlag('FILE', file), 'the script');
}

/**
 * The answers a script's steps imply where the user gave none: the catalog model its training steps load
 * (DiffSynth's --model_id_with_origin_paths), LoRA or full, the LoRA's rank and targets.
 */
function impliedAnswers(steps: readonly LaunchStep[]): { answers: Partial<Answers>; modelId: string | null } {
  const train = steps.filter((s) => s.usesConfig);
  const map = templatesOrNone().models;
  const models = modelCatalogOrNone();
  const ids = [...new Set(train.flatMap((s) => stepModelRepos(s).map((r) => map[r])))].filter((x) => x !== undefined);
  const model = ids.length === 1 ? lookupModel(ids[0]!, models) : null;
  const tuning = train.map(stepTuning).find((t) => t !== null) ?? null;
  const rank = train.map((s) => argValue(s.args, '--lora_rank')).find((v) => typeof v === 'string');
  const targets = train.map((s) => argValue(s.args, '--lora_target_modules')).find((v) => typeof v === 'string');
  const answers: Partial<Answers> = {
    ...(model
      ? {
          model_name: model.name,
          model_params: model.params,
          largest_layer_params: model.largestLayer,
          model_kind: model.kind === 'lm' ? 'lm' : model.kind === 'video' ? 'video' : 'dit',
        }
      : {}),
    ...(tuning ? { fine_tuning: tuning } : {}),
    ...(tuning === 'lora' && rank && /^\d+$/.test(rank) ? { lora_rank: Number(rank) } : {}),
    ...(tuning === 'lora' && targets ? { lora_targets: targets } : {}),
  };
  return { answers, modelId: model?.id ?? null };
}

/** The setup the steps go into: --preset/--from and flags, else the user preset NAME as it is, else the defaults. */
function importBase(
  name: string,
  opts: Record<string, unknown>,
): { setup: Setup; given: Partial<Answers>; flagged: QuestionId[] } {
  const fromFlags = setupFromOptions(opts);
  if (typeof opts.preset === 'string' || typeof opts.from === 'string' || fromFlags.flagged.length > 0)
    return fromFlags;
  try {
    const p = findPreset(name);
    if (p.source === 'user') return { setup: p.setup, given: p.given, flagged: [] };
  } catch {
    // a new preset
  }
  return fromFlags;
}

/** `preset import-steps FILE [NAME]`: the steps of a script, printed or saved into a user preset. */
export async function presetImportSteps(
  file: string,
  name: string | undefined,
  opts: Record<string, unknown>,
): Promise<void> {
  const read = scriptSteps(scriptText(file), process.env);
  if (read.steps.length === 0)
    throw new UsageError(
      `${file === '-' ? 'stdin' : file} has no \`accelerate launch\` line`,
      'the steps are its `accelerate launch SCRIPT --flags...` commands, as in a DiffSynth-Studio example .sh',
    );
  for (const n of read.notes) output.note(`line ${n.line}: ${n.text}`);
  if (name === undefined) {
    const steps = stepsForSetup(read.steps, { files: DEFAULT_FILES });
    output.data(renderStepsYaml(steps));
    return;
  }
  presetName(name);
  const base = importBase(name, opts);
  const implied = impliedAnswers(read.steps);
  const kept = Object.keys(base.given);
  const fill = Object.fromEntries(Object.entries(implied.answers).filter(([k]) => !kept.includes(k)));
  const given = { ...base.given, ...fill };
  const setup: Setup = {
    ...base.setup,
    name,
    answers: withDefaults(given),
    steps: stepsForSetup(read.steps, base.setup),
  };
  if ('model_name' in fill) output.note(`from the steps: the model is ${implied.modelId} (${fill.model_name})`);
  if ('fine_tuning' in fill)
    output.note(
      `from the steps: ${fill.fine_tuning === 'lora' ? `LoRA${fill.lora_rank ? ` of rank ${fill.lora_rank}` : ''}` : 'full fine-tuning'}`,
    );
  const firstError = reportFindings([...validate(setup), ...stepModelFindings(setup)]);
  if (firstError) throw new UsageError(firstError.message, firstError.fix);
  const description =
    typeof opts.description === 'string' ? opts.description : `steps from ${file === '-' ? 'stdin' : basename(file)}`;
  const saved = await savePresetFile(name, setup, description, given);
  output.lines([
    `${saved.backup ? `replaced (the previous one is kept as ${saved.backup})` : saved.status === 'unchanged' ? 'unchanged' : 'saved'} ${saved.path} with ${setup.steps.length === 1 ? 'one step' : `${setup.steps.length} steps`} (${setup.steps.map((s) => s.name).join(', ')})`,
  ]);
}
