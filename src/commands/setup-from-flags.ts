/** Turns --preset / --from and answer flags into a setup (loaded lazily: it needs yaml and zod). */
import { UsageError } from '../text/index.js';
import * as output from './output.js';
import { NearMiss } from '../text/index.js';
import { expandPathAnswer, pathFlag, processContext, type ExpandContext } from '../fs/index.js';
import { findPreset } from '../setups/index.js';
import {
  QUESTIONS,
  flagName,
  parseAnswers,
  question,
  withDefaults,
  type Answers,
  type DetectedEnv,
  type Question,
  type QuestionId,
} from '../config/index.js';
import { IMPORT_REPAIRS, importAccelerateConfig } from '../setups/index.js';
import type { Finding } from '../config/index.js';
import { DEFAULT_FILES, dropKeptFor, UNNAMED_SETUP, type Setup } from '../config/index.js';

/**
 * Builds the setup from --preset / --from plus answer flags. Throws UsageError with the flag's name. Path
 * flags (--from and the path answers) expand `~` and `$VAR` and resolve against the launch directory; `env`
 * is what detection found (the defaults of the answers not given, as in the wizard).
 */
export function setupFromOptions(
  opts: Record<string, unknown>,
  env?: DetectedEnv,
  ctx: ExpandContext = processContext(),
): {
  setup: Setup;
  given: Partial<Answers>;
  /** The answers given as flags (for the findings about flags that do not apply). */
  flagged: QuestionId[];
  /** What an import (--from) changed or kept in a way the files do not say (src/setups/import.ts notes). */
  importNotes: string[];
  /**
   * What accelerate and DeepSpeed say of the --from files themselves (src/config/accept.ts, the rules `explain`
   * uses too), but for what a flag given beside --from answers anew.
   */
  importFindings: Finding[];
} {
  let base: Setup | null = null;
  let baseGiven: Partial<Answers> = {};
  let importNotes: string[] = [];
  let fileFindings: Finding[] = [];
  if (typeof opts.preset === 'string' && typeof opts.from === 'string')
    throw new UsageError('--preset and --from cannot be used together', 'pick one starting point');
  if (typeof opts.preset === 'string') {
    const p = findPreset(opts.preset);
    base = p.setup;
    baseGiven = p.given;
  } else if (typeof opts.from === 'string') {
    const r = importAccelerateConfig(pathFlag('--from', opts.from, ctx), ctx.cwd);
    base = r.setup;
    baseGiven = r.given;
    importNotes = r.notes;
    fileFindings = r.findings.filter((f) => f.rule !== 'import-note' && !IMPORT_REPAIRS.has(f.rule));
  }
  const raw = answersFromOptions(opts);
  for (const id of Object.keys(raw) as QuestionId[]) {
    if (!(question(id) as Question).path || typeof raw[id] !== 'string') continue;
    const x = expandPathAnswer(raw[id] as string, ctx);
    if (!x.ok) throw new UsageError(`--${flagName(id)}: ${x.error}`, x.hint);
    raw[id] = x.value;
  }
  let given: Partial<Answers>;
  try {
    given = parseAnswers(raw, baseGiven);
  } catch (e) {
    const key = (e as { key?: QuestionId }).key;
    const name = key ? `--${flagName(key)}` : 'an answer flag';
    const hint = key ? hintFor(key) : 'see --help';
    const choices = key ? (question(key) as Question).choices : undefined;
    const typed = key ? raw[key] : undefined;
    // A choice mistyped gets the near one (`--mixed-precision bf61`: bf16).
    if (key && choices && typeof typed === 'string')
      throw new NearMiss(
        `${name}: ${(e as Error).message}`,
        typed,
        choices.map((c) => String(c.value)),
        hint,
        name,
      );
    throw new UsageError(`${name}: ${(e as Error).message}`, hint);
  }
  const answers = withDefaults(given, env);
  // A size in decimal units reads as the user may not expect (`--gpu-memory 80GB` is 74.51 GiB): said once.
  for (const [id, text] of Object.entries(raw)) {
    if (typeof text !== 'string') continue;
    const parsed = (question(id as QuestionId) as Question).parse(text, answers) as { note?: string };
    if (parsed.note) output.note(`--${flagName(id as QuestionId)} ${parsed.note}`);
  }
  const setup: Setup = base
    ? { ...base, answers, extra: dropKeptFor(base.extra, Object.keys(raw) as QuestionId[]) }
    : { name: UNNAMED_SETUP, answers, files: { ...DEFAULT_FILES }, steps: [] };
  const flagged = Object.keys(raw) as QuestionId[];
  const importFindings = fileFindings.filter((f) => !(f.questions ?? []).some((q) => flagged.includes(q)));
  return { setup, given, flagged, importNotes, importFindings };
}

function hintFor(id: QuestionId): string {
  const x = question(id) as Question;
  if (x.kind === 'boolean') return `answer yes or no (or give --${flagName(id)} / --no-${flagName(id)} alone)`;
  if (x.choices) return `use one of: ${x.choices.map((c) => String(c.value)).join(', ')}`;
  return x.help;
}

/** commander's camelCase key of a question's flag (`num_processes` -> `numProcesses`). */
function optKey(id: QuestionId): string {
  return id.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** The raw answers given as flags (./answer-flags.ts), keyed by question id. */
function answersFromOptions(opts: Record<string, unknown>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const x of QUESTIONS) {
    const v = opts[optKey(x.id)];
    if (v === undefined) continue;
    raw[x.id] = v === true ? 'yes' : v === false ? 'no' : v;
  }
  return raw;
}
