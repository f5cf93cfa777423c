import type { Command } from 'commander';
import type { CommandContext } from '../cli.js';

/** Registers `zerowiz preset` (placeholder until its issue lands). */
export function registerPreset(program: Command, _ctx: CommandContext): void {
  program.command('preset').description('(not yet available)');
}
