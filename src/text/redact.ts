/**
 * Secrets given on a step's command line: the one definition of what is a secret and how zerowiz keeps it
 * out of everything it prints or records while the step still gets it.
 *
 * - A secret is the value of an argument (`--hf_token V`, `--wandb_key=V`) or of a `NAME=V` word whose name
 *   says token, key, secret or password (isSecretName): `hf_token`, `wandb_key`, `WANDB_API_KEY`,
 *   `db_password`, `client_secret`; not a tokenizer's or a dataset's (`pad_token`, `max_new_tokens`,
 *   `data_file_keys`, `caption_key`), a path to one (`hf_token_path`), a switch (`use_auth_token`) or a
 *   yes/no value.
 * - Its environment variable is the name in capitals (`--hf_token` -> HF_TOKEN, `wandb.api_key` ->
 *   WANDB_API_KEY). A printed command (quote.ts shellJoin: the dry run, stream mode, commands.sh, the job
 *   scripts, the wizard's preview) names the variable instead of the value: `--hf_token "$HF_TOKEN"`, which a
 *   shell that has the variable runs as the step ran. commands.sh and the job scripts stop with one line
 *   when it is not set (secretGuards); `launch --slurm` hands the value to sbatch in the job's environment
 *   (secretEnv), never in a file.
 * - A record (run.json's steps and setup) holds SECRET_MARK in its place (redactArgv, redactSetup,
 *   redactRunJson); `launch --last` takes the value back from that variable or refuses with one line and a
 *   hint (restoreSecrets).
 */
import { createHash } from 'node:crypto';
import { UsageError } from './errors.js';

/** What a record holds in place of a secret. */
export const SECRET_MARK = '<redacted>';

/** Words that, last in a name, make it a secret's. */
const SECRET_LAST = new Set([
  'token',
  'key',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'apikey',
  'credential',
  'credentials',
]);
/** Words that make a name a secret's wherever they are, unless a last word says the value is not the secret. */
const SECRET_ANYWHERE = new Set(['secret', 'password', 'passwd', 'passphrase', 'apikey']);
/** Last words that name something about a secret, not the secret (`hf_token_path`, `secret_name`). */
const NOT_THE_VALUE = new Set([
  'file',
  'path',
  'dir',
  'name',
  'env',
  'var',
  'id',
  'ids',
  'len',
  'length',
  'type',
  'count',
]);
/** A word before `token` that makes it a tokenizer's (`pad_token`, `image_token`), not a credential. */
const TOKENIZER_WORDS = new Set([
  'pad',
  'bos',
  'eos',
  'unk',
  'sep',
  'cls',
  'mask',
  'special',
  'start',
  'end',
  'image',
  'video',
  'audio',
  'vision',
  'boi',
  'eoi',
  'placeholder',
]);
/** A word before `key` that makes it a data key (`caption_key`, `sort_key`), not a credential. */
const DATA_KEY_WORDS = new Set([
  'caption',
  'text',
  'image',
  'video',
  'audio',
  'prompt',
  'label',
  'column',
  'sort',
  'data',
  'dataset',
  'metadata',
  'input',
  'output',
  'target',
  'cache',
  'dict',
  'json',
  'group',
  'partition',
  'hash',
  'lookup',
  'index',
  'frame',
  'primary',
]);
/** First words of a switch (`--use_auth_token`, `--no-token`): its value, if any, is not the secret. */
const SWITCH_WORDS = new Set(['use', 'no', 'enable', 'disable', 'with', 'without']);
/** Values that are a yes or a no, never a secret. */
const YES_NO_RE = /^(?:true|false|yes|no|on|off|0|1|none|null)$/i;

/** The words of a name: split at `-`, `_`, `.` and lower-to-upper case changes, lower-cased. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[-_.]+/)
    .filter((w) => w !== '');
}

/** Whether an argument or `NAME=value` name (without its dashes) names a secret. */
export function isSecretName(name: string): boolean {
  const w = words(name);
  const last = w.at(-1);
  if (last === undefined || SWITCH_WORDS.has(w[0]!)) return false;
  if (NOT_THE_VALUE.has(last)) return false;
  if (SECRET_LAST.has(last)) {
    const before = w.at(-2);
    if (last === 'token' && before !== undefined && TOKENIZER_WORDS.has(before)) return false;
    if (last === 'key' && before !== undefined && DATA_KEY_WORDS.has(before)) return false;
    return true;
  }
  return w.some((x) => SECRET_ANYWHERE.has(x));
}

/** The environment variable a secret is passed by: its name in capitals, `_` for anything else. */
export function secretEnvName(name: string): string {
  const v = name
    .replace(/^-+/, '')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();
  return /^[0-9]/.test(v) ? `_${v}` : v;
}

/** Where a secret sits in an argv: the word index, its form, the name (without dashes) and its variable. */
export interface SecretAt {
  index: number;
  /** `--name V` (the value is the next word), `--name=V`, or `NAME=V`. */
  form: 'next' | 'flag=' | 'name=';
  name: string;
  env: string;
  value: string;
}

const NAME_ASSIGN_RE = /^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$/s;

/** The secrets of an argv, in order (see isSecretName); a value that is empty or a yes/no is none. */
export function secretsIn(argv: readonly string[]): SecretAt[] {
  const out: SecretAt[] = [];
  const keep = (s: Omit<SecretAt, 'env'>) => {
    if (s.value === '' || YES_NO_RE.test(s.value)) return;
    out.push({ ...s, env: secretEnvName(s.name) });
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--') || (a.startsWith('-') && a.length > 2 && a.includes('='))) {
      const eq = a.indexOf('=');
      const name = (eq === -1 ? a : a.slice(0, eq)).replace(/^-+/, '');
      if (!isSecretName(name)) continue;
      if (eq !== -1) keep({ index: i, form: 'flag=', name, value: a.slice(eq + 1) });
      else {
        const next = argv[i + 1];
        if (next !== undefined && !next.startsWith('-')) {
          keep({ index: i + 1, form: 'next', name, value: next });
          i++;
        }
      }
      continue;
    }
    const m = NAME_ASSIGN_RE.exec(a);
    if (m && isSecretName(m[1]!)) keep({ index: i, form: 'name=', name: m[1]!, value: m[2]! });
  }
  return out;
}

/** The word that stands for a secret in a record: SECRET_MARK in the value's place. */
function markedWord(argv: readonly string[], s: SecretAt): string {
  if (s.form === 'next') return SECRET_MARK;
  const a = argv[s.index]!;
  return `${a.slice(0, a.indexOf('=') + 1)}${SECRET_MARK}`;
}

/** An argv with every secret's value replaced by SECRET_MARK (for a record). */
export function redactArgv(argv: readonly string[]): string[] {
  const out = [...argv];
  for (const s of secretsIn(argv)) out[s.index] = markedWord(argv, s);
  return out;
}

/** The shell words of an argv's secrets, by word index: `"$NAME"`, `"--flag=$NAME"`, `"NAME=$NAME"`. */
export function secretShellWords(argv: readonly string[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const s of secretsIn(argv)) {
    const a = argv[s.index]!;
    const before = s.form === 'next' ? '' : a.slice(0, a.indexOf('=') + 1);
    // `before` is a name and `=`: no character in it is special inside double quotes.
    out.set(s.index, `"${before}$${s.env}"`);
  }
  return out;
}

/**
 * The lines that make a script stop, with one line naming the variable, when a secret it passes by name is
 * not in its environment (`: "${HF_TOKEN:?...}"`), one per variable; [] without secrets.
 */
export function secretGuards(argvs: readonly (readonly string[])[]): string[] {
  const seen = new Map<string, string>();
  for (const argv of argvs) for (const s of secretsIn(argv)) if (!seen.has(s.env)) seen.set(s.env, s.name);
  return [...seen].map(
    ([env, name]) => `: "\${${env}:?zerowiz records no secret: export ${env} (the value of ${name}) first}"`,
  );
}

/**
 * The variables a job needs in its environment for the secrets its steps pass by name, with their values
 * (SECRET_MARK values, from a record, are left to the environment). Throws UsageError when one variable
 * would need two values.
 */
export function secretEnv(argvs: readonly (readonly string[])[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const argv of argvs)
    for (const s of secretsIn(argv)) {
      if (s.value === SECRET_MARK) continue;
      if (out[s.env] !== undefined && out[s.env] !== s.value)
        throw new UsageError(
          `the steps give the secret ${s.name} different values, and zerowiz passes (and reruns) a secret by one variable, ${s.env}: only one of them could be used`,
          'give it one value wherever it is passed (--hf_token, --hf-token= and HF_TOKEN= are one secret), or rename the argument where it means another',
        );
      out[s.env] = s.value;
    }
  return out;
}

/**
 * What secrets are looked for in: a setup's steps (config/setup.ts's Setup has this shape; it is not imported,
 * since the setup's own launch lines are quoted by quote.ts, which asks this module what is secret).
 */
interface WithSteps {
  steps: readonly { name: string; args: string[] }[];
}

/** A setup whose steps' arguments hold SECRET_MARK in place of every secret (for a record). */
export function redactSetup<T extends WithSteps>(setup: T): T {
  return { ...setup, steps: setup.steps.map((s) => ({ ...s, args: redactArgv(s.args) })) };
}

/** run.json's shape as far as secrets go: the steps' argv and the setup's steps. */
interface RecordWithSecrets {
  steps: { argv: string[] }[];
  setup: unknown;
}

/**
 * A copy of a run record's JSON with no secret: each step's argv and the setup's step arguments redacted
 * (the `command` texts are shellJoin's, which never hold one). For run.json's writer.
 */
export function redactRunJson<T extends RecordWithSecrets>(json: T): T {
  const setup = json.setup as WithSteps | null;
  return {
    ...json,
    steps: json.steps.map((s) => ({ ...s, argv: redactArgv(s.argv) })),
    setup: setup && Array.isArray(setup.steps) ? redactSetup(setup) : json.setup,
  };
}

/**
 * The setup of a redacted record, ready to run again: each SECRET_MARK takes the value of its variable in
 * `env`. Throws UsageError (one line naming the argument, the step and the variable; the hint says how to
 * give it) when one is not set. `run` names the record in the message.
 */
export function restoreSecrets<T extends WithSteps>(setup: T, env: NodeJS.ProcessEnv, run: string): T {
  return {
    ...setup,
    steps: setup.steps.map((step) => {
      const args = [...step.args];
      for (const s of secretsIn(step.args)) {
        if (s.value !== SECRET_MARK) continue;
        const v = env[s.env];
        if (v === undefined || v === '')
          throw new UsageError(
            `run ${run} passed a secret as ${s.form === 'name=' ? s.name : `--${s.name}`} (step ${step.name}), which zerowiz does not record`,
            `export ${s.env}=... (the value it had) and run it again, or launch the preset again`,
          );
        const a = args[s.index]!;
        args[s.index] = s.form === 'next' ? v : `${a.slice(0, a.indexOf('=') + 1)}${v}`;
      }
      return { ...step, args };
    }),
  };
}

/**
 * A URL as it may be shown or recorded: its scheme, host and port, `/…` in place of any path, query or
 * fragment, never its user or password, and a 4-hex fingerprint of the whole URL so two targets on one host
 * can be told apart (`https://hooks.slack.com/… [3fa2]`). Webhook URLs carry their secret in the path (Slack's
 * `/services/T/B/X`, Discord's `/api/webhooks/ID/TOKEN`, an ntfy topic) or the query, so all of it goes.
 * Text that is no URL gives `a URL [xxxx]`.
 */
export function redactUrl(url: string): string {
  const print = secretPrint(url);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `a URL [${print}]`;
  }
  const more = u.pathname.replace(/^\/$/, '') !== '' || u.search !== '' || u.hash !== '' ? '/…' : '';
  return `${u.protocol}//${u.host}${more} [${print}]`;
}

/** A 4-hex fingerprint of a secret (its SHA-256's first two bytes): tells two apart, says nothing of either. */
export function secretPrint(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 4);
}
