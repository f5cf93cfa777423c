import type { Command } from 'commander';
import type { CommandContext } from '../cli.js';

/** Registers `zerowiz generate` (placeholder until its issue lands). */
export function registerGenerate(program: Command, _ctx: CommandContext): void {
  program.command('generate').description('(not yet available)');
}
