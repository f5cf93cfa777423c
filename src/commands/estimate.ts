import type { Command } from 'commander';
import type { CommandContext } from '../cli.js';

/** Registers `zerowiz estimate` (placeholder until its issue lands). */
export function registerEstimate(program: Command, _ctx: CommandContext): void {
  program.command('estimate').description('(not yet available)');
}
