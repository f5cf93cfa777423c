// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the messages quote shell syntax, ${NAME}, to the user.
/**
 * Paths as a shell would read them: `~`, `~user`, `$VAR`, `${VAR}` and `${VAR:-default}` expanded, then
 * a relative result resolved against the directory zerowiz was launched from. zerowiz never runs a shell,
 * so without this `~/configs` would become a directory literally named `~`.
 *
 * Where a shell would silently expand to something unintended (an unset variable becomes empty, so
 * `$OUT/cfg` turns into `/cfg`; an unknown `~nobody` stays literal), this says so instead.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../text/index.js';

/** What expansion reads: the environment, the launch directory, and how to find a user's home. */
export interface ExpandContext {
  env: NodeJS.ProcessEnv;
  /** The directory relative paths are resolved against (where zerowiz was launched). */
  cwd: string;
  /** The home of `~` when HOME is unset (the shell asks the password database; so does os.homedir). */
  home?: string;
  /** The home directory of another user (`~name`), or null if there is no such user. */
  homeOf?: (user: string) => string | null;
}

/** The outcome of expanding one path or word. */
export type Expanded = { ok: true; value: string; changed: boolean } | { ok: false; error: string; hint: string };

// POSIX portable user names and shell variable names.
const USER_RE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*/;

function fail(error: string, hint: string): Expanded {
  return { ok: false, error, hint };
}

/**
 * `~`, `~user`, `$VAR`, `${VAR}`, `${VAR:-word}` and `${VAR-word}` expanded as bash does for an unquoted
 * word, except that an unset (or, in `${VAR:-}`'s sense, empty) variable without a default and an
 * unknown user are errors. A `$` not followed by a name or `{` is kept. No relative resolution.
 */
export function expandWord(text: string, ctx: ExpandContext): Expanded {
  let rest = text;
  let out = '';
  if (rest.startsWith('~')) {
    const end = rest.indexOf('/');
    const user = end < 0 ? rest.slice(1) : rest.slice(1, end);
    if (user === '') {
      const home = ctx.env.HOME !== undefined && ctx.env.HOME !== '' ? ctx.env.HOME : (ctx.home ?? homedir());
      out = home;
    } else if (USER_RE.test(user)) {
      const home = (ctx.homeOf ?? homeFromPasswd)(user);
      if (home === null)
        return fail(`~${user}: there is no user '${user}'`, 'write the path in full, or ~/ for your home');
      out = home;
    } else {
      // `~+`, `~-` and other forms: kept as they are, like a word the shell does not expand.
      out = `~${user}`;
    }
    rest = end < 0 ? '' : rest.slice(end);
  }
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i]!;
    if (ch !== '$') {
      out += ch;
      continue;
    }
    const after = rest.slice(i + 1);
    if (after.startsWith('{')) {
      const close = after.indexOf('}');
      if (close < 0) return fail(`'${text}': \${ is not closed`, 'write ${NAME} or $NAME');
      const inner = after.slice(1, close);
      const name = NAME_RE.exec(inner)?.[0];
      if (!name) return fail(`'${text}': '\${${inner}}' is not a variable`, 'write ${NAME} or $NAME');
      const op = inner.slice(name.length);
      const value = ctx.env[name];
      if (op === '') {
        if (value === undefined) return unset(name, text);
        out += value;
      } else if (op.startsWith(':-')) out += value === undefined || value === '' ? op.slice(2) : value;
      else if (op.startsWith('-')) out += value === undefined ? op.slice(1) : value;
      else return fail(`'${text}': '\${${inner}}' is not supported here`, 'write ${NAME}, ${NAME:-default} or $NAME');
      i += close + 1;
      continue;
    }
    const name = NAME_RE.exec(after)?.[0];
    if (!name) {
      out += '$';
      continue;
    }
    const value = ctx.env[name];
    if (value === undefined) return unset(name, text);
    out += value;
    i += name.length;
  }
  return { ok: true, value: out, changed: out !== text };
}

function unset(name: string, text: string): Expanded {
  return fail(
    `'${text}': $${name} is not set (a shell would silently make it empty)`,
    `export ${name}=... before starting zerowiz, or write the path in full`,
  );
}

/**
 * A path field or path flag as the user meant it: `expandWord`, then resolved against `ctx.cwd` when
 * relative. The result is absolute and normalised; an empty path is an error (the caller decides what an
 * empty field means).
 */
export function expandPath(text: string, ctx: ExpandContext): Expanded {
  if (text.trim() === '') return fail('the path is empty', 'type a path, e.g. ./configs or ~/configs');
  const w = expandWord(text, ctx);
  if (!w.ok) return w;
  const abs = isAbsolute(w.value) ? resolve(w.value) : resolve(ctx.cwd, w.value);
  return { ok: true, value: abs, changed: abs !== text };
}

/** A path flag as the user meant it (`~`, `$VAR`, relative to the launch directory); UsageError naming the flag. */
export function pathFlag(flag: string, value: string, ctx: ExpandContext = processContext()): string {
  const x = expandPath(value, ctx);
  if (!x.ok) throw new UsageError(`${flag}: ${x.error}`, x.hint);
  return x.value;
}

/** The home directory of `user` from /etc/passwd (what `~user` reads), or null when there is none. */
export function homeFromPasswd(user: string, passwd = '/etc/passwd'): string | null {
  let text: string;
  try {
    text = readFileSync(passwd, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f[0] === user && f.length >= 7 && f[5]) return f[5];
  }
  return null;
}

/**
 * A typed answer to a path question (the catalog's `path: true`: the NVMe path, the hostfile, the JSON path
 * the YAML gives) as the user meant it: expanded and absolute. An empty answer stays empty (it means "none"
 * or "the default" to those questions).
 */
export function expandPathAnswer(text: string, ctx: ExpandContext): Expanded {
  if (text.trim() === '') return { ok: true, value: '', changed: text !== '' };
  return expandPath(text.trim(), ctx);
}

/** The context of this process: its environment and working directory. */
export function processContext(): ExpandContext {
  return { env: process.env, cwd: process.cwd() };
}
