/** `zerowiz preset ...`'s work, loaded only when the command runs. */
import { MODE_INFO } from '../config/index.js';
import {
  deletePreset,
  findPreset,
  listPresets,
  presetFileFor,
  presetName,
  renderPresetFile,
  savePresetFile,
} from '../config/index.js';
import { printable, printableLines } from '../text/index.js';
import type { QuestionId } from '../config/index.js';
import { formatCount } from '../text/index.js';
import { noStepsNote } from '../config/index.js';
import { answerFindings, fileFindings, validate } from '../rules/index.js';
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
  const saved = await savePresetFile(name, { ...setup, name }, description, given);
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
