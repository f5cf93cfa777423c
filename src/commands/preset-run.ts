/** `zerowiz preset ...`'s work, loaded only when the command runs. */
import { MODE_INFO } from '../config/modes.js';
import {
  deletePreset,
  findPreset,
  listPresets,
  presetFileFor,
  presetName,
  renderPresetFile,
  savePresetFile,
} from '../config/presets.js';
import { printableLines } from '../printable.js';
import type { QuestionId } from '../config/questions.js';
import { formatCount } from '../units.js';
import { noStepsNote } from '../config/setup.js';
import { answerFindings, fileFindings, validate } from '../config/validate.js';
import { UsageError } from '../errors.js';
import { setupFromOptions } from './setup-from-flags.js';
import { reportFindings, reportImportNotes } from './report.js';

/** `preset list`. */
export function presetList(opts: { json?: boolean }): void {
  const { presets, problems } = listPresets();
  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
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
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  const nameWidth = Math.max(4, ...presets.map((p) => p.name.length));
  process.stdout.write(`${'NAME'.padEnd(nameWidth)}  SOURCE   MODE            GPUS  DESCRIPTION\n`);
  for (const p of presets) {
    const a = p.setup.answers;
    process.stdout.write(
      `${p.name.padEnd(nameWidth)}  ${p.source.padEnd(7)}  ${MODE_INFO[a.mode].label.padEnd(14)}  ${String(a.num_processes).padStart(4)}  ${p.description}\n`,
    );
  }
  for (const pr of problems)
    process.stderr.write(
      `zerowiz: skipped ${pr.path}: ${pr.key ? `${pr.key}: ` : ''}${pr.problem} (the file was left as it is)\n`,
    );
}

/** `preset show NAME`. */
export function presetShow(name: string, opts: { json?: boolean }): void {
  const p = findPreset(name);
  const findings = [
    ...validate(p.setup),
    ...answerFindings(p.setup.answers, Object.keys(p.given) as QuestionId[], 'answer'),
  ];
  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify({ name: p.name, source: p.source, path: p.path, description: p.description, answers: p.setup.answers, files: p.setup.files, steps: p.setup.steps, findings }, null, 2)}\n`,
    );
    return;
  }
  const a = p.setup.answers;
  // The preset's text comes from a file: printed with its control characters escaped.
  process.stdout.write(printableLines(`# ${p.name} (${p.source}: ${p.path})\n`));
  process.stdout.write(
    `# ${MODE_INFO[a.mode].label}, ${a.num_processes} GPU(s) on ${a.num_machines} machine(s)${a.model_params ? `, model ${formatCount(a.model_params)} params` : ''}\n`,
  );
  process.stdout.write(printableLines(renderPresetFile(presetFileFor(p.setup, p.description, p.given))));
  reportFindings(findings, process.stdout);
}

/** `preset save NAME [flags]`. */
export async function presetSave(name: string, opts: Record<string, unknown>): Promise<void> {
  presetName(name);
  const { setup, given, flagged, importNotes } = setupFromOptions(opts);
  reportImportNotes(importNotes);
  const firstError = reportFindings([
    ...validate(setup),
    ...answerFindings(setup.answers, flagged, 'flag'),
    ...fileFindings(setup, 'flag'),
  ]);
  if (firstError) throw new UsageError(firstError.message, firstError.fix);
  const description =
    typeof opts.description === 'string'
      ? opts.description
      : typeof opts.preset === 'string'
        ? `based on ${opts.preset}`
        : '';
  const saved = await savePresetFile(name, { ...setup, name }, description, given);
  const how =
    saved.status === 'unchanged'
      ? 'unchanged'
      : saved.backup
        ? `replaced (the previous one is kept as ${saved.backup})`
        : 'saved';
  process.stdout.write(`${how} ${saved.path}\n`);
  if (saved.shadows)
    process.stdout.write(
      `note: this user preset hides the built-in '${name}' of the same name (delete it to get the built-in back)\n`,
    );
  const noSteps = noStepsNote(setup, name);
  if (noSteps) process.stdout.write(`note: ${noSteps}\n`);
}

/** `preset delete NAME`. */
export async function presetDelete(name: string): Promise<void> {
  const backup = await deletePreset(name);
  process.stdout.write(`deleted preset ${name} (kept as ${backup})\n`);
}
