/**
 * Answer flags: one `--kebab-case` option per question id, so `zerowiz generate` and
 * `zerowiz preset save` take exactly what the wizard asks. Values go through the question's own parser.
 * The question catalog loads when one of those commands runs (or shows its help), not when zerowiz starts: the
 * wizard's first frame and every other command do without it.
 */
import { Option, type Command } from 'commander';
import type { Question } from '../config/index.js';

/** The options of every question, added to `cmd`. */
async function addQuestionOptions(cmd: Command): Promise<void> {
  const { QUESTIONS, flagName } = await import('../config/questions.js');
  for (const x of QUESTIONS as readonly Question[]) {
    const flag = `--${flagName(x.id)}`;
    const choices = x.choices ? ` (${x.choices.map((c) => String(c.value)).join('|')})` : '';
    if (x.kind === 'boolean') {
      cmd.addOption(new Option(`${flag} [yes|no]`, `${x.prompt}`.replace(/\?.*$/, '?')));
      cmd.addOption(new Option(`--no-${flagName(x.id)}`).hideHelp());
    } else {
      cmd.addOption(new Option(`${flag} <value>`, `${x.prompt}${choices}`));
    }
  }
}

/**
 * Adds --preset and --from to a command, and every answer flag once the command is dispatched (before it parses
 * its own options: commander runs its parent's preSubcommand hooks first).
 */
export function addAnswerOptions(cmd: Command): Command {
  cmd.addOption(new Option('--preset <name|file>', 'start from a preset (flags override its answers)'));
  cmd.addOption(
    new Option('--from <accelerate.yaml>', 'start from an existing accelerate config (and the JSON it names)'),
  );
  cmd.parent?.hook('preSubcommand', async (_parent, sub) => {
    if (sub === cmd) await addQuestionOptions(cmd);
  });
  return cmd;
}
