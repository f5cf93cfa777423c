/**
 * The one "did you mean" rule, for every name a user types: commands, flags, preset names, step names, models,
 * the choices of a flag. A name is near a candidate when, lower-cased and with `-`, `_`, `.` and spaces left out,
 * they are equal (`zero_3` for `zero3`, `--dry_run` for `--dry-run`), a few edits apart (a letter missing, added,
 * changed or two swapped: `lanch`, `slurmm`, `shwo`, `yml`), or it starts the candidate (`--gpus` for
 * `--gpus-per-node`; its first whole words win over a typo of a shorter name, `--gpu`). The nearest win; `NearMiss` carries them to the CLI, which says them on the hint line with
 * the command line that works (src/main.ts).
 */
import { UsageError } from './errors.js';

/** At most this many near names are offered. */
export const MAX_SUGGESTIONS = 3;
/** A typed name this short is never guessed at by edits (`4` is not a typo of `3`). */
const MIN_EDIT_CHARS = 3;
/** A prefix shorter than this starts too many names to mean one. */
const MIN_PREFIX_CHARS = 3;

/** The form two names are compared in: lower case, without leading dashes, `-`, `_`, `.` or spaces. */
function key(name: string): string {
  return name
    .toLowerCase()
    .replace(/^-+/, '')
    .replace(/[-_.\s]/g, '');
}

/** Edits from `a` to `b`: a character inserted, deleted, changed, or two neighbours swapped (optimal string alignment). */
function edits(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/** How many edits a typed name of `n` characters may be from a name it means. */
function allowedEdits(n: number): number {
  return n < MIN_EDIT_CHARS ? 0 : Math.max(1, Math.floor(n / 4));
}

/**
 * The candidates `word` is nearest to by the rule above, best first, at most MAX_SUGGESTIONS; empty when none
 * is near (or `word` is one of them as typed).
 */
export function nearest(word: string, candidates: readonly string[]): string[] {
  const w = key(word);
  if (w === '' || candidates.includes(word)) return [];
  const limit = allowedEdits(w.length);
  const ranked: { name: string; rank: number }[] = [];
  const typed = word.toLowerCase().replace(/^-+/, '');
  for (const name of new Set(candidates)) {
    const c = key(name);
    if (c === '') continue;
    if (c === w) ranked.push({ name, rank: 0 });
    // The typed name is the candidate's first words (`--gpus` of `--gpus-per-node`): nearer than a typo
    // of a shorter name (`--gpu`).
    else if (
      typed.length >= MIN_PREFIX_CHARS &&
      /^[-_.]/.test(name.toLowerCase().replace(/^-+/, '').slice(typed.length)) &&
      name.toLowerCase().replace(/^-+/, '').startsWith(typed)
    )
      ranked.push({ name, rank: 0.5 });
    else {
      const d = Math.abs(c.length - w.length) > limit ? Infinity : edits(w, c);
      if (d <= limit) ranked.push({ name, rank: d });
      else if (w.length >= MIN_PREFIX_CHARS && c.startsWith(w)) ranked.push({ name, rank: limit + 1 });
    }
  }
  if (ranked.length === 0) return [];
  const best = Math.min(...ranked.map((x) => x.rank));
  return ranked
    .filter((x) => x.rank === best)
    .map((x) => x.name)
    .slice(0, MAX_SUGGESTIONS);
}

/** `a`, `a or b`, `a, b or c`. */
export function orList(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * Bad input whose word is near a name zerowiz knows: the CLI's hint says `did you mean ...?`, with the whole
 * command line corrected when there is one candidate, else the candidates, then `hint` (where the names are).
 */
export class NearMiss extends UsageError {
  /** The word as typed (as it stands in the command line). */
  readonly word: string;
  /** The names it is nearest to, best first; empty when none is near (then only `hint` is said). */
  readonly near: string[];
  /** The flag the word is the value of (`--print` for `yml`), so only that value is corrected. */
  readonly flag: string | undefined;
  constructor(message: string, word: string, candidates: readonly string[], hint?: string, flag?: string) {
    super(message, hint);
    this.name = 'NearMiss';
    this.word = word;
    this.near = nearest(word, candidates);
    this.flag = flag;
  }
}

/**
 * The hint of a NearMiss for a command line `argv` (what followed `zerowiz`): the command line with the word
 * replaced when one name is near and the word is in it (`did you mean \`zerowiz launch zero3 --dry-run\`?`), else
 * the names (`did you mean zero1, zero2 or zero2-offload? ...`), else the error's own hint. `quote` makes a word
 * pasteable (src/text/quote.ts shellWord).
 */
export function nearMissHint(e: NearMiss, argv: readonly string[] | null, quote: (word: string) => string): string {
  const rest = e.hint ?? '';
  if (e.near.length === 0) return rest;
  const at = argv ? wordAt(argv, e) : null;
  if (e.near.length === 1 && argv && at) {
    const fixed = [...argv];
    fixed[at.index] = at.prefix + e.near[0]! + argv[at.index]!.slice(at.prefix.length + e.word.length);
    return `did you mean \`${['zerowiz', ...fixed].map(quote).join(' ')}\`?`;
  }
  return `did you mean ${orList(e.near)}?${rest ? ` (${rest})` : ''}`;
}

/** Where a NearMiss's word stands in `argv`: its index and what precedes it in that argument (`--print=`). */
function wordAt(argv: readonly string[], e: NearMiss): { index: number; prefix: string } | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (e.flag === undefined) {
      if (a === e.word || a.startsWith(`${e.word}=`)) return { index: i, prefix: '' };
    } else if (a === `${e.flag}=${e.word}`) return { index: i, prefix: `${e.flag}=` };
    else if (a === e.word && argv[i - 1] === e.flag) return { index: i, prefix: '' };
  }
  return null;
}
