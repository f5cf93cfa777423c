/**
 * Steps from a pasted `accelerate launch ...` line or an example script (DiffSynth-Studio's
 * `examples/<model>/model_training/lora/<Model>.sh`): the words of each command as a shell splits them
 * (shell-quote's parse: quotes, escapes, `$VARS`), one step per `accelerate launch`, and a note for every line
 * that is not one (`modelscope download ...`: run it yourself first) and for what a step cannot keep (its own
 * `--config_file`: the setup's config takes its place).
 *
 * A script is first cut into commands as a shell reads it: a backslash before a newline joins the lines, a
 * newline, `;`, `&&`, `||` or `|` ends a command (outside quotes), `#` at the start of a word starts a comment.
 */
import { parse } from 'shell-quote';
import { argValue, flattenArgs, groupArgs, isDataPass, withStepConfig } from '../config/index.js';
import { noDeepSpeedConfigPath } from '../config/index.js';
import { SAFE_NAME_RE, type LaunchStep, type Setup } from '../config/index.js';

/** One command of a script: its text (continuations joined) and the line it starts on (1-based). */
export interface ScriptCommand {
  text: string;
  line: number;
}

/** Something the import says about a line or a step. */
export interface ScriptNote {
  line: number;
  text: string;
}

/** Steps read from a script. */
export interface ScriptSteps {
  steps: LaunchStep[];
  /** For each step, the `--config_file` the example ran with (null: accelerate's default). */
  exampleConfigs: (string | null)[];
  notes: ScriptNote[];
}

type Quote = "'" | '"' | null;

/** The commands of a script, as a shell would cut it (see the module comment). */
export function splitCommands(text: string): ScriptCommand[] {
  const out: ScriptCommand[] = [];
  let cur = '';
  let line = 1;
  let start = 1;
  let quote: Quote = null;
  const end = () => {
    if (cur.trim() !== '') out.push({ text: cur.trim(), line: start });
    cur = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const next = text[i + 1];
    if (cur.trim() === '') start = line;
    if (ch === '\n') line++;
    if (quote === "'") {
      cur += ch;
      if (ch === "'") quote = null;
      continue;
    }
    if (ch === '\\' && (next === '\n' || (next === '\r' && text[i + 2] === '\n'))) {
      i += next === '\r' ? 2 : 1;
      line++;
      continue;
    }
    if (ch === '\\' && next !== undefined) {
      cur += ch + next;
      i++;
      continue;
    }
    if (quote === '"') {
      cur += ch;
      if (ch === '"') quote = null;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      cur += ch;
      continue;
    }
    if (ch === '#' && (cur === '' || /\s$/.test(cur))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
      continue;
    }
    if (ch === '\n' || ch === '\r' || ch === ';' || ch === '|' || (ch === '&' && next === '&')) {
      if ((ch === '|' && next === '|') || ch === '&') i++;
      end();
      continue;
    }
    cur += ch;
  }
  end();
  return out;
}

/** The words of one command as a shell splits them; `$VARS` from `env` (an unset one is kept as written, and named). */
export function commandWords(
  text: string,
  env: Record<string, string | undefined>,
): { words: string[]; unset: string[]; unsupported: string[] } {
  const unset: string[] = [];
  const unsupported: string[] = [];
  const entries = parse(text, (name: string) => {
    const v = env[name];
    if (v !== undefined) return v;
    if (!unset.includes(name)) unset.push(name);
    return `$${name}`;
  });
  const words: string[] = [];
  for (const e of entries) {
    if (typeof e === 'string') words.push(e);
    else if ('pattern' in e) words.push(e.pattern);
    else if ('op' in e) unsupported.push(e.op);
  }
  return { words, unset, unsupported };
}

/** The words after `accelerate launch` (after leading `VAR=value` words), or null for another command. */
function launchArgs(words: readonly string[]): { args: string[]; assigned: string[] } | null {
  let i = 0;
  const assigned: string[] = [];
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) assigned.push(words[i++]!);
  const w = words.slice(i);
  if (/(^|\/)accelerate$/.test(w[0] ?? '') && w[1] === 'launch') return { args: w.slice(2), assigned };
  if (/(^|\/)accelerate-launch$/.test(w[0] ?? '')) return { args: w.slice(1), assigned };
  if (/(^|\/)python3?$/.test(w[0] ?? '') && w[1] === '-m' && w[2] === 'accelerate.commands.launch')
    return { args: w.slice(3), assigned };
  return null;
}

/** A step's name: its DiffSynth task's last part (`sft:data_process` -> data_process), else `train`; unique. */
function stepName(args: readonly string[], taken: readonly string[]): string {
  const task = groupArgs(args).find((g) => g.flag === '--task')?.value ?? '';
  const part = task.split(':').at(-1) ?? '';
  const base = SAFE_NAME_RE.test(part) && part !== 'sft' ? part : 'train';
  if (!taken.includes(base)) return base;
  for (let n = 2; ; n++) if (!taken.includes(`${base}_${n}`)) return `${base}_${n}`;
}

/** A launch's words as a step: its own --config_file taken out (and returned), the setup's config in its place. */
function toStep(args: readonly string[], taken: readonly string[]): { step: LaunchStep; config: string | null } {
  const groups = groupArgs(args);
  const config = groups.find((g) => g.role === 'launch' && g.flag === '--config_file')?.value ?? null;
  const kept = flattenArgs(groups.filter((g) => !(g.role === 'launch' && g.flag === '--config_file')));
  return { step: { name: stepName(kept, taken), usesConfig: !isDataPass(kept), args: kept }, config };
}

/** What a step keeps of the example, said once per step. */
function stepNotes(step: LaunchStep, config: string | null, assigned: readonly string[]): string[] {
  const notes: string[] = [];
  if (config !== null && step.usesConfig)
    notes.push(`step ${step.name}: the example ran it with --config_file ${config}; it runs with this setup's config`);
  if (!step.usesConfig)
    notes.push(
      `step ${step.name} processes data (--task ${argValue(step.args, '--task')}): it runs without DeepSpeed, pinned to this setup's config without it`,
    );
  if (assigned.length > 0)
    notes.push(
      `step ${step.name}: the example sets ${assigned.join(' ')} for it; zerowiz runs steps without a shell: export it before launching`,
    );
  return notes;
}

/**
 * The steps of a pasted command or script. `env` expands its `$VARS` as the shell would have (an unset one is
 * kept as written and named in a note).
 */
export function scriptSteps(text: string, env: Record<string, string | undefined> = {}): ScriptSteps {
  const steps: LaunchStep[] = [];
  const exampleConfigs: (string | null)[] = [];
  const notes: ScriptNote[] = [];
  for (const c of splitCommands(text)) {
    const { words, unset, unsupported } = commandWords(c.text, env);
    const launch = launchArgs(words);
    if (!launch) {
      if (words.length > 0)
        notes.push({
          line: c.line,
          text: `not an accelerate launch, so not a step (run it yourself first): ${c.text}`,
        });
      continue;
    }
    const { step, config } = toStep(
      launch.args,
      steps.map((s) => s.name),
    );
    steps.push(step);
    exampleConfigs.push(config);
    for (const t of stepNotes(step, config, launch.assigned)) notes.push({ line: c.line, text: t });
    if (unset.length > 0)
      notes.push({
        line: c.line,
        text: `step ${step.name} uses ${unset.map((v) => `$${v}`).join(', ')}, not set here: kept as written`,
      });
    if (unsupported.length > 0)
      notes.push({
        line: c.line,
        text: `step ${step.name}: the shell's ${unsupported.join(' ')} is left out (a step is one command)`,
      });
  }
  return { steps, exampleConfigs, notes };
}

/**
 * Steps made for a setup: a data pass (which must not run under DeepSpeed, DiffSynth-Studio#1107) pinned to the
 * setup's config without DeepSpeed, so no default config can change how it runs; the others as they are.
 */
export function stepsForSetup(steps: readonly LaunchStep[], setup: Pick<Setup, 'files'>): LaunchStep[] {
  return steps.map((s) =>
    !s.usesConfig && isDataPass(s.args) ? withStepConfig(s, { kind: 'pinned', path: noDeepSpeedConfigPath(setup) }) : s,
  );
}
