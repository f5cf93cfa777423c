/** What every subcommand gets from the CLI; its own module so the commands never import src/cli.ts. */
import type { UiLoaders } from './ui.js';

/** What every subcommand gets: the lazily loaded views and a way to set the exit code. */
export interface CommandContext {
  ui: UiLoaders;
  setExitCode(code: number): void;
}
