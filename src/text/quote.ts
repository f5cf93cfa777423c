/**
 * POSIX shell quoting for commands that can be pasted (the dry run, commands.sh, generate's and the
 * wizard's summaries): the one definition. The lines must mean the same in bash, dash and zsh (zsh's
 * defaults and its common options EXTENDED_GLOB and MAGIC_EQUAL_SUBST included). Not the shell-quote package:
 * it backslash-escapes every `:`, `,` and `*` (`sft\:train`, `model\*.safetensors\,...`), which makes the
 * seed's long commands hard to read; single quotes only where a shell would misread a word keep them as the
 * user wrote them. A secret (./redact.ts: `--hf_token V`) is never printed: its word names the variable that
 * holds it (`--hf_token "$HF_TOKEN"`), so the line means, in a shell that has the variable, what ran.
 */
import { secretShellWords } from './redact.js';

/**
 * Characters no shell reads specially anywhere in a word. `=` is safe inside a word but not at its start
 * (zsh's `=cmd` expansion) nor in a command's first word (sh reads `X=1/acc` as an assignment); `^` is a
 * glob operator under zsh's EXTENDED_GLOB, `~` a tilde expansion, so both are quoted.
 */
const SAFE_RE = /^[A-Za-z0-9_\-./=:,+@%]+$/;

/** A word in single quotes (`'it'\''s'` style): literal in every POSIX shell. */
function singleQuoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** One word, quoted only when it needs to be. */
export function shellWord(word: string): string {
  return word !== '' && SAFE_RE.test(word) && !word.startsWith('=') ? word : singleQuoted(word);
}

/**
 * The shell words of an argument array, each quoted only when it needs to be, a secret's as its variable
 * (`"$HF_TOKEN"`, `"--wandb_key=$WANDB_KEY"`).
 */
export function shellArgs(argv: readonly string[]): string[] {
  const secret = secretShellWords(argv);
  return argv.map((w, i) => secret.get(i) ?? shellWord(w));
}

/**
 * A command line from an argument array (see shellArgs: no secret's value); a first word holding `=` is
 * quoted so it is not an assignment.
 */
export function shellJoin(argv: readonly string[]): string {
  const words = shellArgs(argv);
  const first = argv[0];
  if (first?.includes('=') && words[0] === shellWord(first)) words[0] = singleQuoted(first);
  return words.join(' ');
}
