import type { Command } from 'commander';
import type { CommandContext } from '../cli.js';

/** Registers `zerowiz launch` (placeholder until its issue lands). */
export function registerLaunch(program: Command, _ctx: CommandContext): void {
  program.command('launch').description('(not yet available)');
}
