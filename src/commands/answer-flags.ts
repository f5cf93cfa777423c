/**
 * Answer flags: one `--kebab-case` option per question id, so `zerowiz generate` and
 * `zerowiz preset save` take exactly what the wizard asks. Values go through the question's own parser.
 */
import { Option, type Command } from 'commander';
import { flagName, QUESTIONS, type Question, type QuestionId } from '../config/index.js';

/** commander's camelCase key of a question's flag (`num_processes` -> `numProcesses`). */
function optKey(id: QuestionId): string {
  return id.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Adds every answer flag, plus --preset and --from, to a command. */
export function addAnswerOptions(cmd: Command): Command {
  cmd.addOption(new Option('--preset <name|file>', 'start from a preset (flags override its answers)'));
  cmd.addOption(
    new Option('--from <accelerate.yaml>', 'start from an existing accelerate config (and the JSON it names)'),
  );
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
  return cmd;
}

/** The raw answers given as flags, keyed by question id. */
export function answersFromOptions(opts: Record<string, unknown>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const x of QUESTIONS) {
    const v = opts[optKey(x.id)];
    if (v === undefined) continue;
    raw[x.id] = v === true ? 'yes' : v === false ? 'no' : v;
  }
  return raw;
}
