/**
 * POSIX shell quoting for commands that can be pasted (the dry run, commands.sh, generate's and the
 * wizard's summaries): the one definition. Not the shell-quote package: it backslash-escapes every
 * `:`, `,` and `*` (`sft\:train`, `model\*.safetensors\,...`), which makes the seed's long commands hard
 * to read; single quotes only where the shell would misread a word keep them as the user wrote them.
 */

const SAFE_RE = /^[A-Za-z0-9_\-./=:,+@%^]+$/;

/** One word, quoted only when it needs to be (`'it'\''s'` style). */
export function shellWord(word: string): string {
  if (word !== '' && SAFE_RE.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A command line from an argument array. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}
