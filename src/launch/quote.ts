/** POSIX shell quoting for showing commands that can be pasted (and for commands.sh). */

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
