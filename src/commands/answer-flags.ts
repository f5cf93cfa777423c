/**
 * Answer flags: one `--kebab-case` option per question id, so `zerowiz generate` and
 * `zerowiz preset save` take exactly what the wizard asks. Values go through the question's own parser.
 */
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { flagName, QUESTIONS, question, type Answers, type Question, type QuestionId } from '../questions.js';
import { findPreset, parseAnswers } from '../presets.js';
import { importAccelerateConfig } from '../import.js';
import { withDefaults } from '../questions.js';
import { DEFAULT_FILES, type Setup } from '../setup.js';

/** commander's camelCase key of a question's flag (`num_processes` -> `numProcesses`). */
function optKey(id: QuestionId): string {
  return id.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Adds every answer flag, plus --preset and --from, to a command. */
export function addAnswerOptions(cmd: Command): Command {
  cmd.addOption(new Option('--preset <name|file>', 'start from a preset (flags override its answers)'));
  cmd.addOption(new Option('--from <accelerate.yaml>', 'start from an existing accelerate config (and the JSON it names)'));
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

/** Builds the setup from --preset / --from plus answer flags. Throws UsageError with the flag's name. */
export function setupFromOptions(opts: Record<string, unknown>): { setup: Setup; given: Partial<Answers> } {
  let base: Setup | null = null;
  let baseGiven: Partial<Answers> = {};
  if (typeof opts.preset === 'string' && typeof opts.from === 'string') throw new UsageError('--preset and --from cannot be used together', 'pick one starting point');
  if (typeof opts.preset === 'string') {
    const p = findPreset(opts.preset);
    base = p.setup;
    baseGiven = p.given;
  } else if (typeof opts.from === 'string') {
    const r = importAccelerateConfig(opts.from);
    base = r.setup;
    baseGiven = { ...r.setup.answers };
  }
  const raw = answersFromOptions(opts);
  let given: Partial<Answers>;
  try {
    given = parseAnswers(raw, baseGiven);
  } catch (e) {
    const key = (e as { key?: QuestionId }).key;
    const name = key ? `--${flagName(key)}` : 'an answer flag';
    const hint = key ? hintFor(key) : 'see --help';
    throw new UsageError(`${name}: ${(e as Error).message}`, hint);
  }
  const answers = withDefaults(given);
  const setup: Setup = base ? { ...base, answers } : { name: 'custom', answers, files: { ...DEFAULT_FILES }, steps: [] };
  return { setup, given };
}

function hintFor(id: QuestionId): string {
  const x = question(id) as Question;
  if (x.choices) return `use one of: ${x.choices.map((c) => String(c.value)).join(', ')}`;
  return x.help;
}
