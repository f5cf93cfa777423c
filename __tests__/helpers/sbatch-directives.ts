/**
 * How sbatch reads a batch script's `#SBATCH` lines, for tests that check what a script means to Slurm
 * without a cluster. Faithful to Slurm 22.05 (Debian's 22.05.8, measured against the real sbatch and
 * slurmd in e2e/slurm-hostile.test.ts; src/sbatch/opt.c reads each argument the same way): directives are
 * read from the top until the first line that is neither blank nor a comment; within a directive an
 * argument ends at white space outside quotes, `'` and `"` quote, a backslash takes the next character
 * literally even inside quotes (but cannot keep white space in an argument), and an unquoted `#` ends the
 * line. In a file name pattern (--output), slurmd reads `%%` as `%` and `%j` as the job id.
 */

/** The arguments of every `#SBATCH` line sbatch reads, in order. */
export function sbatchArgs(script: string): string[] {
  const out: string[] = [];
  const lines = script.split('\n');
  for (const [i, line] of lines.entries()) {
    if (i === 0 && line.startsWith('#!')) continue;
    if (line.startsWith('#SBATCH')) {
      out.push(...lineArgs(line.slice('#SBATCH'.length)));
      continue;
    }
    if (line.trim() === '' || line.startsWith('#')) continue;
    break;
  }
  return out;
}

function lineArgs(text: string): string[] {
  const args: string[] = [];
  let i = 0;
  const space = (c: string | undefined) => c !== undefined && /\s/.test(c);
  for (;;) {
    while (space(text[i])) i++;
    if (i >= text.length) return args;
    let arg = '';
    let quoted = false;
    let q = '';
    let escaped = false;
    while (i < text.length && (quoted || !space(text[i])) && text[i] !== '\n') {
      const c = text[i]!;
      if (escaped) {
        escaped = false;
      } else if (c === '\\') {
        escaped = true;
        i++;
        continue;
      } else if (quoted) {
        if (c === q) {
          quoted = false;
          i++;
          continue;
        }
      } else if (c === '"' || c === "'") {
        quoted = true;
        q = c;
        i++;
        continue;
      } else if (c === '#') {
        if (arg !== '') args.push(arg);
        return args;
      }
      arg += c;
      i++;
    }
    args.push(arg);
  }
}

/** The value of `--name=value` among the arguments (the last one wins, as for sbatch), or undefined. */
export function sbatchOption(args: string[], name: string): string | undefined {
  let v: string | undefined;
  for (const a of args) if (a.startsWith(`--${name}=`)) v = a.slice(name.length + 3);
  return v;
}

/** A file name pattern as slurmd expands it for a job: `%%` is `%`, `%j` the job id. */
export function expandPattern(pattern: string, jobId: string): string {
  return pattern.replace(/%(%|j)/g, (_m, c: string) => (c === '%' ? '%' : jobId));
}
