/** The command-line surface (commander). Each subcommand lives in src/commands/. */
import { Option } from 'commander';
import { pathFlag } from './fs/index.js';
import { UsageError } from './text/index.js';
import type { UiLoaders } from './commands/index.js';
import type { CommandContext } from './commands/index.js';
import { registerGenerate } from './commands/index.js';
import { registerPreset } from './commands/index.js';
import { registerEstimate } from './commands/index.js';
import { registerLaunch } from './commands/index.js';
import { registerAttach } from './commands/index.js';
import { registerExport } from './commands/index.js';
import { registerExplain } from './commands/index.js';
import { registerCheck } from './commands/index.js';
import { registerNotify } from './commands/index.js';
import { registerReport } from './commands/index.js';
import { ZerowizCommand } from './commands/index.js';
import { configureOutput } from './commands/index.js';

declare const ZEROWIZ_VERSION: string | undefined;
export const VERSION = typeof ZEROWIZ_VERSION === 'string' ? ZEROWIZ_VERSION : '0.0.0-dev';

/** The program, with the exit code its action chose. */
export type Program = ZerowizCommand & { exitCodeFromAction?: number };

/** Builds the whole CLI. Usage errors print one line and a hint, and exit 2. */
export function buildProgram(ui: UiLoaders): Program {
  const program = new ZerowizCommand('zerowiz') as Program;
  const ctx: CommandContext = {
    ui,
    setExitCode(code) {
      program.exitCodeFromAction = code;
    },
  };
  program
    .description(
      'A terminal wizard for accelerate + DeepSpeed ZeRO: the questions of `accelerate config`, the cost of each ZeRO mode, the YAML and JSON, and the launch.\n\nRun without a command to open the interactive wizard.',
    )
    .version(VERSION, '-v, --version')
    .addOption(new Option('--config <file>', 'an accelerate config YAML to import into the wizard'))
    .addOption(
      new Option('-q, --quiet', 'leave out the notes and hints on stderr (never the data, warnings or errors)'),
    )
    .exitOverride()
    .usage('[options] [command]')
    .hook('preAction', (root) => {
      // How every command's output looks, once: colour, width, quiet (src/commands/output.ts).
      configureOutput({ quiet: root.opts().quiet === true });
    })
    .hook('preSubcommand', (root, sub) => {
      if (root.opts().config !== undefined)
        throw new UsageError(
          `--config opens the wizard; it cannot be given with \`${sub.name()}\``,
          sub.name() === 'generate' || sub.name() === 'preset'
            ? `to start from that file, use \`zerowiz ${sub.name()} ${sub.name() === 'preset' ? 'save NAME ' : ''}--from FILE\``
            : 'give --config alone to open the wizard',
        );
    })
    .argument('[command]')
    .action(async (command: string | undefined, opts: { config?: string }) => {
      if (command !== undefined) program.refuseCommand(command);
      if (!process.stdin.isTTY || !process.stdout.isTTY) {
        throw new UsageError(
          'the wizard needs an interactive terminal',
          'run it in a terminal, or use `zerowiz generate --help` to write the files from flags',
        );
      }
      let configPath: string | undefined;
      // As a shell would read it: `~`, `$VAR`, relative to the launch directory.
      if (opts.config !== undefined) configPath = pathFlag('--config', opts.config);
      ctx.setExitCode(await ui.runWizard({ configPath }));
    });
  for (const register of [
    registerGenerate,
    registerEstimate,
    registerPreset,
    registerLaunch,
    registerAttach,
    registerExport,
    registerExplain,
    registerCheck,
    registerReport,
    registerNotify,
  ])
    register(program, ctx);
  return program;
}
