import { Option, type Command } from 'commander';
import type { CommandContext } from './context.js';
import { addAnswerOptions } from './answer-flags.js';

const load = () => import('./preset-run.js');

/** Registers `zerowiz preset list | show NAME | save NAME [flags] | import-steps FILE [NAME] | delete NAME`. */
export function registerPreset(program: Command, _ctx: CommandContext): void {
  const preset = program.command('preset').description('list, show, save and delete presets (built-in and yours)');
  preset
    .command('list')
    .description('list built-in and user presets; broken user presets are reported and skipped')
    .option(
      '--json',
      'print JSON: {"presets": [{name, source, path, description, mode, numProcesses, steps}], "problems": [{path, key, problem}]}',
    )
    .action(async (opts: { json?: boolean }) => (await load()).presetList(opts));
  preset
    .command('show')
    .argument('<name>', 'a preset name or a preset file')
    .description('print a preset file and what it sets')
    .option('--json', 'print JSON: {name, source, path, description, answers, files, steps, findings}')
    .action(async (name: string, opts: { json?: boolean }) => (await load()).presetShow(name, opts));
  const save = preset
    .command('save')
    .argument('<name>', 'the new preset name (letters, digits, . _ -)')
    .description('save answers (flags, on top of --preset or --from) as a user preset')
    .addOption(new Option('--description <text>', 'one line saying what the preset is for'));
  addAnswerOptions(save);
  save.action(async (name: string, opts: Record<string, unknown>) => (await load()).presetSave(name, opts));
  const importSteps = preset
    .command('import-steps')
    .argument('<file>', 'a script with `accelerate launch ...` lines (a DiffSynth-Studio example .sh), or - for stdin')
    .argument('[name]', 'save the steps in this user preset (without it: print them)')
    .description(
      'read the steps of an `accelerate launch` line or an example .sh (words split as a shell would); print them, or save them in preset NAME',
    )
    .addOption(new Option('--description <text>', 'one line saying what the preset is for'));
  addAnswerOptions(importSteps);
  importSteps.action(async (file: string, name: string | undefined, opts: Record<string, unknown>) =>
    (await load()).presetImportSteps(file, name, opts),
  );
  preset
    .command('delete')
    .argument('<name>', 'a user preset name')
    .description('delete a user preset (it is renamed to NAME.yaml.deleted-<time>, not erased)')
    .action(async (name: string) => (await load()).presetDelete(name));
}
