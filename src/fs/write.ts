/**
 * Safe writes: nothing a user wrote is lost, and files that belong together are written together.
 *
 * - A set of files (the accelerate YAML and its DeepSpeed JSON) is one transaction: every target is checked
 *   first (a directory, a symbolic link or a special file in the way refuses before anything is written),
 *   every new text is staged in a temp file beside its target, then the targets are replaced by renames. A
 *   failure (a full disk, a read-only folder) rolls back what was done and says so.
 * - An existing file with other content is kept as `NAME.bak-<YYYYmmdd-HHMMSS>` (a hard link to the old
 *   content, so it costs no space and cannot be half written); backup names never collide.
 * - Symbolic links are never written through: a target that is a link is refused with its own error (the
 *   folder holding it may be a link).
 * - A lock file (`.zerowiz.lock`, created with O_EXCL) in each target folder serialises zerowiz processes, so
 *   parallel writers lose no reported write. It names its holder (pid, process start time, host); a lock whose
 *   holder is dead (kill -9) is broken by the next writer, which also finishes or undoes the dead one's
 *   transaction from its journal and removes its temp files. Waiting for a live holder ends after LOCK_WAIT_MS.
 * - The transaction itself is synchronous, with SIGINT/SIGTERM/SIGHUP held back until it ends (then raised
 *   again): Ctrl+C never lands between two renames. Only SIGKILL can, and the journal covers that.
 * - A folder another local user can write too (a 1777 scratch folder, a group project): every file zerowiz
 *   creates is new (O_EXCL | O_NOFOLLOW), nothing is read through a link, and a lock, journal or temporary
 *   file counts only when the user owns it: another user's journal or stale lock is refused with one line
 *   naming it and its owner, never finished, broken or removed (./safe-fs.ts). A journal's entries must
 *   each name a file and zerowiz's own temporary file beside it.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { UsageError, fileError, isOsError } from '../text/index.js';
import { printable } from '../text/index.js';
import {
  UntrustedPathError,
  foreignLinkOnPath,
  lstatOrNull,
  notYoursError,
  ownedByMe,
  readNoFollow,
  unlinkIfMine,
  userName,
} from './safe-fs.js';
import { MAX_USER_FILE_BYTES } from './read.js';
import { envNumber, timestamp } from '../text/index.js';

/** What happened to one file. */
export interface WriteResult {
  path: string;
  status: 'created' | 'updated' | 'unchanged';
  /** The backup of the previous content, when there was one that differed. */
  backup?: string;
}

/**
 * One file of a transaction. `guard` sees the current content and may throw to refuse replacing it. `mode`
 * sets the new file's permissions exactly (e.g. 0o600 in a run record); without it a file that exists keeps
 * its permissions and a new one gets 0644 less the umask.
 */
export interface FileToWrite {
  path: string;
  text: string;
  guard?: (old: string) => void;
  mode?: number;
}

/**
 * A file of a transaction whose content may be a function of the current one (null when there is none), called
 * with the folder's lock held: a save that keeps what it does not set reads it from the file it replaces, not
 * from a copy read before the lock.
 */
export interface FileToSave extends Omit<FileToWrite, 'text'> {
  text: string | ((old: string | null) => string);
}

/** The lock file's name in each folder zerowiz writes to. */
export const LOCK_FILE_NAME = '.zerowiz.lock';
/** How long a writer waits for a live zerowiz holding the lock before it gives up with a hint. */
export const LOCK_WAIT_MS = 30_000;

/** The wait, or ZEROWIZ_LOCK_WAIT_MS when set (scripts that would rather fail fast; the tests). */
function lockWaitMs(): number {
  return envNumber(process.env, 'ZEROWIZ_LOCK_WAIT_MS', LOCK_WAIT_MS);
}
/** A lock from another host cannot be checked; after this long it is taken as stale. */
export const FOREIGN_LOCK_STALE_MS = 10 * 60_000;
/** A lock file without readable content (its writer died while creating it) is stale after this long. */
const UNREADABLE_LOCK_STALE_MS = 2_000;
const LOCK_RETRY_MIN_MS = 5;
const LOCK_RETRY_MAX_MS = 100;

/** Temp files zerowiz leaves only while it runs: `.NAME.zerowiz-<pid>-<hex>.tmp`. */
const TEMP_RE = /^\..*\.zerowiz-(\d+)-[0-9a-f]+\.tmp$/;
/** Journals of a transaction in progress: `.zerowiz-<pid>-<hex>.journal`. */
const JOURNAL_RE = /^\.zerowiz-(\d+)-[0-9a-f]+\.journal$/;

// ---------------------------------------------------------------------------------------------
// Who holds a lock, and whether it still runs

/** The start time of a process (clock ticks since boot, /proc/PID/stat field 22); null where unknown. */
function processStart(pid: number): string | null | 'gone' {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      try {
        readdirSync('/proc/self');
        return 'gone';
      } catch {
        return null;
      }
    }
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return 'gone';
  return fields[19] ?? null;
}

let selfCache: { pid: number; host: string; start: string | null } | null = null;
/** This process as a lock names it (read on first use: `generate --print` never pays for it). */
function self(): { pid: number; host: string; start: string | null } {
  selfCache ??= { pid: process.pid, host: hostname(), start: processStart(process.pid) };
  return selfCache;
}

interface LockOwner {
  pid: number;
  host: string;
  start: string | null;
  nonce: string;
  time: number;
}

function alive(o: Pick<LockOwner, 'pid' | 'host' | 'start' | 'time'>): boolean {
  if (o.host !== self().host) return Date.now() - o.time < FOREIGN_LOCK_STALE_MS;
  if (o.pid === self().pid) return o.start === self().start;
  const start = processStart(o.pid);
  if (start === 'gone') return false;
  if (start !== null && o.start !== null) return start === o.start;
  try {
    process.kill(o.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function pidAlive(pid: number): boolean {
  return pid === self().pid || alive({ pid, host: self().host, start: null, time: Date.now() });
}

// ---------------------------------------------------------------------------------------------
// The folders of a write, pinned

/** Each folder a write holds, opened once (refcounted: writes of one process may overlap). */
const pins = new Map<string, { fd: number; count: number }>();
const PROC_FD_OK = (() => {
  try {
    return lstatSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();

/**
 * Opens `dir` (already checked: no link another user made on the way) and keeps it for the write: every
 * operation in it goes through /proc/self/fd/N (see v()), so a rename of the folder, or a link put in its
 * place, can no longer send a file of the write anywhere else. A folder another user owns (root aside) is
 * refused: they could swap what zerowiz writes there at any time.
 */
function pinDir(dir: string): void {
  const have = pins.get(dir);
  if (have) {
    have.count++;
    return;
  }
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (e) {
    throw fileError(e, dir, 'cannot write in');
  }
  const st = fstatSync(fd);
  if (!ownedByMe(st) && st.uid !== 0) {
    closeSync(fd);
    throw notYoursError(
      dir,
      st,
      "zerowiz writes your files only into folders of your own (or root's): another user could swap them",
      'write into a folder of your own (make one, e.g. a subfolder); nothing was written',
    );
  }
  // Opened what was checked: no link of another user's on the way now either, and the path still names
  // the folder opened (a swap between the check and the open is caught here; after it, the descriptor rules).
  let now: ReturnType<typeof statSync> | null = null;
  try {
    now = statSync(dir);
  } catch {}
  const foreign = foreignLinkOnPath(dir);
  if (foreign || !now || now.ino !== st.ino || now.dev !== st.dev) {
    closeSync(fd);
    throw new UntrustedPathError(
      dir,
      foreign
        ? `leads through a symbolic link of ${userName(foreign.uid)} (${foreign.link}); zerowiz never writes through a link another user made`
        : 'changed while zerowiz opened it (another process swapped it)',
      'look at what is there and write again, or write somewhere else; nothing was written',
    );
  }
  pins.set(dir, { fd, count: 1 });
}

function unpinDir(dir: string): void {
  const have = pins.get(dir);
  if (!have) return;
  if (--have.count > 0) return;
  closeSync(have.fd);
  pins.delete(dir);
}

/** The path zerowiz uses for `p`: through its folder's pinned descriptor while a write holds it. */
function v(p: string): string {
  if (!PROC_FD_OK) return p;
  const self = pins.get(p);
  if (self) return `/proc/self/fd/${self.fd}`;
  const parent = pins.get(dirname(p));
  return parent ? `/proc/self/fd/${parent.fd}/${basename(p)}` : p;
}

// ---------------------------------------------------------------------------------------------
// Small synchronous helpers

const hex = () => randomBytes(6).toString('hex');

function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path).slice(0, 100)}.zerowiz-${self().pid}-${hex()}.tmp`);
}

/**
 * Writes a new file that must not exist yet (O_EXCL | O_NOFOLLOW: a planted file or link makes it fail,
 * never written through); flushed to disk when `sync`. `mode` is exact when given, else 0644 less the umask.
 */
function writeNewFile(path: string, text: string, sync = true, mode?: number): void {
  const fd = openSync(
    v(path),
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode ?? 0o644,
  );
  try {
    if (mode !== undefined) fchmodSync(fd, mode);
    const buf = Buffer.from(text, 'utf8');
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
    if (sync) fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkQuietly(path);
    throw e;
  }
  closeSync(fd);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(v(path));
  } catch {
    // already gone
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(v(path));
    return true;
  } catch {
    return false;
  }
}

/**
 * Gives `path`'s content a second name `base`, `base-1`, `base-2`, ... (the first free one) without ever
 * replacing a file: a hard link where the file system has them, else a copy written with O_EXCL.
 */
function linkToFreeName(path: string, base: string): string {
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? base : `${base}-${i}`;
    try {
      linkSync(v(path), v(candidate));
      return candidate;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EMLINK') throw e;
      try {
        const { text, mode } = readWholeNoFollow(path);
        writeNewFile(candidate, text, true, mode);
        return candidate;
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw e2;
      }
    }
  }
}

/** A regular file's text and permissions, its last component never followed (O_NOFOLLOW). */
function readWholeNoFollow(path: string): { text: string; mode: number } {
  const fd = openSync(v(path), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${path}: not a regular file`), { code: 'EINVAL', path });
    return { text: readFileSync(fd, 'utf8'), mode: st.mode & 0o777 };
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// The lock

interface Held {
  dir: string;
  path: string;
  nonce: string;
}

/** One try at the lock of `dir`; null when another zerowiz holds it. */
function tryLock(dir: string): Held | null {
  const path = join(dir, LOCK_FILE_NAME);
  const owner: LockOwner = { ...self(), nonce: hex(), time: Date.now() };
  // The content is written first and the lock appears with it in one step (link fails if the lock exists).
  const temp = join(dir, `.${LOCK_FILE_NAME}.zerowiz-${self().pid}-${hex()}.tmp`);
  writeNewFile(temp, JSON.stringify(owner), false);
  try {
    linkSync(v(temp), v(path));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return null;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
    try {
      writeNewFile(path, JSON.stringify(owner), false);
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') return null;
      throw e2;
    }
  } finally {
    unlinkQuietly(temp);
  }
  return { dir, path, nonce: owner.nonce };
}

/** What is at a lock's path: its stats (never followed), its text when it is a regular file, its holder. */
interface SeenLock {
  st: Stats;
  text: string;
  owner: LockOwner | null;
  mtimeMs: number;
}

function readOwner(path: string): SeenLock | null {
  const st = lstatOrNull(v(path));
  if (!st) return null;
  const text = st.isFile() ? (readNoFollow(v(path)) ?? '') : '';
  try {
    const o = JSON.parse(text) as LockOwner;
    const valid = typeof o.pid === 'number' && typeof o.nonce === 'string' && typeof o.host === 'string';
    return { st, text, owner: valid ? o : null, mtimeMs: st.mtimeMs };
  } catch {
    return { st, text, owner: null, mtimeMs: st.mtimeMs };
  }
}

function stillMine(h: Held): boolean {
  return readOwner(h.path)?.owner?.nonce === h.nonce;
}

function unlock(h: Held): void {
  if (stillMine(h)) unlinkQuietly(h.path);
}

/**
 * Breaks the lock of `dir` if its holder is dead: moves it aside (atomic), checks it moved the lock it
 * examined (not one a live writer took meanwhile, which goes back), and deletes it. True when the lock is free.
 */
function breakStaleLock(dir: string): { free: boolean; holder: string } {
  const path = join(dir, LOCK_FILE_NAME);
  const seen = readOwner(path);
  if (!seen) return { free: true, holder: '' };
  const o = seen.owner;
  const holder = o ? `pid ${o.pid} on ${printable(o.host)}` : 'an unknown process';
  if (!seen.st.isFile())
    throw new UntrustedPathError(
      path,
      `is ${seen.st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'} of ${userName(seen.st.uid)}; zerowiz's lock is a plain file it makes itself`,
      `remove it if it is yours (it is no zerowiz lock), or write somewhere else; nothing was written`,
    );
  const stale = o ? !alive(o) : Date.now() - seen.mtimeMs > UNREADABLE_LOCK_STALE_MS;
  if (!stale) return { free: false, holder };
  // Another user's lock that names no running zerowiz: theirs to remove, never ours to break.
  if (!ownedByMe(seen.st))
    throw notYoursError(
      path,
      seen.st,
      'no zerowiz of theirs holds it any more, and zerowiz never breaks or removes a lock of another user',
      'ask them to remove it, or write somewhere else; nothing was written',
    );
  const aside = join(dir, `.${LOCK_FILE_NAME}.zerowiz-${self().pid}-${hex()}.tmp`);
  try {
    renameSync(v(path), v(aside));
  } catch {
    return { free: true, holder };
  }
  // Unreadable (null): it was the unreadable stale one.
  const moved = readNoFollow(v(aside)) ?? '';
  if (moved !== seen.text) {
    try {
      linkSync(v(aside), v(path));
    } catch {
      // another writer took the free slot; the moved holder finds its lock gone and rolls back
    }
  }
  unlinkQuietly(aside);
  return { free: true, holder };
}

// ---------------------------------------------------------------------------------------------
// Journals: finishing a transaction whose writer was killed

interface PlanEntry {
  path: string;
  temp: string;
  backup: string | null;
}

interface Journal {
  pid: number;
  entries: PlanEntry[];
}

/** The fix every refused journal names. */
const JOURNAL_FIX =
  'zerowiz finishes only journals it wrote itself: look at it, remove it, and write again; nothing was written';

/**
 * The entries of a dead writer's journal `jpath` (named for writer `pid`), checked before anything is done
 * with them: the journal is the user's own regular file, and each entry names an absolute file and, beside
 * it, that file's temporary file as this writer names them (`.NAME.zerowiz-<pid>-<hex>.tmp`), the user's
 * own where it exists, and a backup beside it (`NAME.bak-...`) or none. Throws UntrustedPathError (one
 * line naming the journal and what is wrong) otherwise; null for an empty or unreadable journal of the
 * user's own (it is only removed).
 */
function journalEntries(jpath: string, pid: number): PlanEntry[] | null {
  const st = lstatOrNull(v(jpath));
  if (!st) return null;
  if (!st.isFile())
    throw new UntrustedPathError(
      jpath,
      `is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'} of ${userName(st.uid)}, not a journal zerowiz wrote`,
      JOURNAL_FIX,
    );
  if (!ownedByMe(st))
    throw notYoursError(
      jpath,
      st,
      'zerowiz finishes only journals it wrote itself',
      'ask them to remove it, or write somewhere else; nothing was written',
    );
  const text = readNoFollow(v(jpath));
  let j: Partial<Journal> | null = null;
  try {
    j = text === null ? null : (JSON.parse(text) as Partial<Journal>);
  } catch {
    j = null;
  }
  if (!j || !Array.isArray(j.entries)) return null;
  const out: PlanEntry[] = [];
  for (const e of j.entries as unknown[]) {
    const entry = e as Partial<PlanEntry> | null;
    const path = entry?.path;
    const temp = entry?.temp;
    const backup = entry?.backup ?? null;
    const bad = (why: string) =>
      new UntrustedPathError(jpath, `${why}; zerowiz does not finish a journal it cannot trust`, JOURNAL_FIX);
    if (typeof path !== 'string' || typeof temp !== 'string' || !isAbsolute(path) || !isAbsolute(temp))
      throw bad('holds an entry that is not a file and its temporary file');
    const folder = dirname(path);
    const tempName = basename(temp);
    const expected = `.${basename(path).slice(0, 100)}.zerowiz-${pid}-`;
    if (
      dirname(temp) !== folder ||
      !tempName.startsWith(expected) ||
      !/^[0-9a-f]+\.tmp$/.test(tempName.slice(expected.length))
    )
      throw bad(
        `names ${printable(path)} with a temporary file outside that file's folder or not zerowiz's (${printable(temp)})`,
      );
    if (
      backup !== null &&
      (typeof backup !== 'string' ||
        dirname(backup) !== folder ||
        !basename(backup).startsWith(`${basename(path)}.bak-`))
    )
      throw bad(`names a backup of ${printable(path)} outside that file's folder`);
    const tst = lstatOrNull(v(temp));
    if (tst && (!tst.isFile() || !ownedByMe(tst)))
      throw bad(`names the temporary file ${printable(temp)}, which is not the user's own regular file`);
    out.push({ path, temp, backup });
  }
  return out;
}

/**
 * Cleans up after dead writers in `dir` (the lock is held): a journal whose writer died mid-commit is
 * finished (its remaining temp files renamed into place: the new set is whole); one that died before the
 * commit is undone (temps and unneeded backups removed); stray temp files of dead processes are removed.
 * Only the user's own journals and temp files are used (see journalEntries); another user's are refused
 * or, for stray temp files, left alone.
 */
function recoverDir(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(v(dir));
  } catch {
    return;
  }
  for (const name of names) {
    const m = JOURNAL_RE.exec(name);
    if (!m) continue;
    const jpath = join(dir, name);
    const jst = lstatOrNull(v(jpath));
    // A journal of the user's own whose writer still runs is that writer's; anything else is checked now.
    if (jst?.isFile() && ownedByMe(jst) && pidAlive(Number(m[1]))) continue;
    const entries = journalEntries(jpath, Number(m[1]));
    if (entries) {
      const started = entries.some((e) => !exists(e.temp));
      for (const e of entries) {
        if (!exists(e.temp)) continue;
        if (started) {
          try {
            renameSync(v(e.temp), v(e.path));
          } catch {
            unlinkIfMine(v(e.temp));
          }
        } else {
          unlinkIfMine(v(e.temp));
          if (e.backup && sameFile(e.backup, e.path)) unlinkIfMine(v(e.backup));
        }
      }
    }
    unlinkIfMine(v(jpath));
  }
  for (const name of names) {
    const m = TEMP_RE.exec(name);
    if (m && !pidAlive(Number(m[1]))) unlinkIfMine(v(join(dir, name)));
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    const x = lstatSync(v(a));
    const y = lstatSync(v(b));
    return x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Signals held back during the synchronous part

const HELD_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Runs `fn` with SIGINT/SIGTERM/SIGHUP held back; one that arrived is raised again afterwards. */
async function withSignalsHeld<T>(fn: () => T): Promise<T> {
  const got: NodeJS.Signals[] = [];
  const note = (s: NodeJS.Signals) => got.push(s);
  for (const s of HELD_SIGNALS) process.on(s, note);
  try {
    return fn();
  } finally {
    // A signal that came during fn is dispatched by the event loop's next turns: let it reach `note`.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    for (const s of HELD_SIGNALS) process.off(s, note);
    const first = got[0];
    // With nobody else listening, the signal's default action (exit by that signal) is what the user asked for.
    if (first && process.listenerCount(first) === 0) process.kill(process.pid, first);
  }
}

// ---------------------------------------------------------------------------------------------
// The transaction

/** Checks that `path` may be replaced: absent, or a regular file. Returns its content (null when absent). */
function currentContent(path: string): { old: string | null; big: boolean; oldMode?: number } {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(v(path));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { old: null, big: false };
    throw fileError(e, path, 'cannot write');
  }
  if (st.isSymbolicLink()) {
    let to = '';
    try {
      to = ` (to ${printable(readlinkSync(v(path)))})`;
    } catch {
      // unreadable link
    }
    throw new UsageError(
      `cannot write ${path}: it is a symbolic link${to}; zerowiz never writes through a link`,
      'remove the link (its target stays) or write somewhere else; nothing was written',
    );
  }
  if (st.isDirectory())
    throw new UsageError(
      `cannot write ${path}: it is a directory`,
      'move the directory out of the way or write somewhere else; nothing was written',
    );
  if (!st.isFile())
    throw new UsageError(
      `cannot write ${path}: it is not a regular file`,
      'move it out of the way or write somewhere else; nothing was written',
    );
  if (st.size > MAX_USER_FILE_BYTES) return { old: null, big: true, oldMode: st.mode & 0o777 };
  try {
    // Never through a link, even one swapped in since the lstat above.
    const { text, mode } = readWholeNoFollow(path);
    return { old: text, big: false, oldMode: mode };
  } catch (e) {
    throw fileError(e, path, 'cannot read');
  }
}

/** The synchronous part, run with the locks held: check, stage, back up, commit (or roll back). */
function transact(files: readonly FileToSave[], held: readonly Held[]): WriteResult[] {
  for (const h of held) recoverDir(h.dir);
  const checked = files.map((f) => {
    const current = currentContent(f.path);
    return { ...f, ...current, text: typeof f.text === 'function' ? f.text(current.old) : f.text };
  });
  for (const f of checked) if (f.old !== null && f.guard) f.guard(f.old);
  const results: WriteResult[] = checked.map((f) => ({
    path: f.path,
    status: f.old === f.text ? 'unchanged' : f.old === null && !f.big ? 'created' : 'updated',
  }));
  const todo = checked.filter((f) => f.old !== f.text);
  if (todo.length === 0) return results;
  const entries: Array<PlanEntry & { existed: boolean }> = [];
  let journal: string | null = null;
  let committed = 0;
  try {
    for (const f of todo) {
      const entry = {
        path: f.path,
        temp: tempPathFor(f.path),
        backup: null as string | null,
        existed: f.old !== null || f.big,
      };
      entries.push(entry);
      // The new file keeps the permissions the old one had (a 0600 config stays 0600), unless `mode` says.
      writeNewFile(entry.temp, f.text, true, f.mode ?? f.oldMode);
    }
    for (const e of entries) if (e.existed) e.backup = linkToFreeName(e.path, `${e.path}.bak-${timestamp()}`);
    // The journal lets the next writer finish this commit if zerowiz is killed in the middle of it.
    const jdir = dirname(entries[0]!.path);
    journal = join(jdir, `.zerowiz-${self().pid}-${hex()}.journal`);
    const jtemp = tempPathFor(journal);
    writeNewFile(jtemp, JSON.stringify({ pid: self().pid, entries } satisfies Journal), false);
    renameSync(v(jtemp), v(journal));
    for (const h of held)
      if (!stillMine(h))
        throw new UsageError(
          `the lock ${h.path} was taken over by another process`,
          'another zerowiz broke this lock as stale; try again',
        );
    for (const e of entries) {
      renameSync(v(e.temp), v(e.path));
      committed++;
    }
    unlinkQuietly(journal);
  } catch (err) {
    const undone = rollBack(entries, committed);
    if (journal) unlinkQuietly(journal);
    const after =
      committed === 0 || undone
        ? 'nothing was written'
        : 'some files could not be put back: check the .bak- files beside them';
    if (isOsError(err)) throw fileError(err, `${dirname(todo[0]!.path)}`, 'cannot write in', after);
    throw err;
  }
  for (const [i, f] of todo.entries()) {
    const r = results.find((x) => x.path === f.path)!;
    const b = entries[i]?.backup;
    if (b) r.backup = b;
  }
  return results;
}

/** Undoes a failed transaction: committed renames are reverted from their backups, temps removed. */
function rollBack(entries: Array<PlanEntry & { existed: boolean }>, committed: number): boolean {
  let ok = true;
  for (const [i, e] of entries.entries()) {
    if (i < committed) {
      try {
        if (e.backup) renameSync(v(e.backup), v(e.path));
        else unlinkSync(v(e.path));
      } catch {
        ok = false;
      }
    } else {
      unlinkQuietly(e.temp);
      if (e.backup && sameFile(e.backup, e.path)) unlinkQuietly(e.backup);
    }
  }
  return ok;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Makes `dir` (and its parents) exist as a directory, or says in one line why it cannot. */
function ensureDir(dir: string): void {
  // Looked at again right before the mkdir: a link another user planted since the first look makes no folder.
  const foreign = foreignLinkOnPath(dir);
  if (foreign)
    throw new UntrustedPathError(
      foreign.link,
      `is a symbolic link of ${userName(foreign.uid)}; zerowiz never writes through a link another user made`,
      'look at where it leads and remove it, or write somewhere else; nothing was written',
    );
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw fileError(Object.assign(new Error(code), { code: 'ENOTDIR' }), dir, 'cannot write in');
    throw fileError(e, dir, 'cannot write in');
  }
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dir);
  } catch (e) {
    throw fileError(e, dir, 'cannot write in');
  }
  if (!st.isDirectory())
    throw fileError(Object.assign(new Error('ENOTDIR'), { code: 'ENOTDIR' }), dir, 'cannot write in');
}

/**
 * Runs `fn` synchronously while holding the locks of `dirs` (created when missing), with signals held
 * back. Waits for a live holder up to LOCK_WAIT_MS, breaking locks whose holder is dead.
 */
export async function withDirLocks<T>(dirs: readonly string[], fn: (held: readonly Held[]) => T): Promise<T> {
  const sorted = [...new Set(dirs.map((d) => resolve(d)))].sort();
  for (const d of sorted) ensureDir(d);
  const pinned: string[] = [];
  try {
    for (const d of sorted) {
      pinDir(d);
      pinned.push(d);
    }
    return await lockedLoop(sorted, fn);
  } finally {
    for (const d of pinned) unpinDir(d);
  }
}

/** withDirLocks' loop over the (pinned) folders: take every lock or wait, then run `fn`. */
async function lockedLoop<T>(sorted: readonly string[], fn: (held: readonly Held[]) => T): Promise<T> {
  const deadline = Date.now() + lockWaitMs();
  let wait = LOCK_RETRY_MIN_MS;
  for (;;) {
    const outcome = await withSignalsHeld((): { value: T } | { blocked: string } => {
      const held: Held[] = [];
      try {
        for (const d of sorted) {
          let h: Held | null;
          try {
            h = tryLock(d);
          } catch (e) {
            throw fileError(e, d, 'cannot write in', 'nothing was written');
          }
          if (!h) return { blocked: d };
          held.push(h);
        }
        return { value: fn(held) };
      } finally {
        for (const h of held.reverse()) unlock(h);
      }
    });
    if ('value' in outcome) return outcome.value;
    const dir = outcome.blocked;
    const { free, holder } = breakStaleLock(dir);
    if (free) continue;
    if (Date.now() > deadline)
      throw new UsageError(
        `${dir} is locked by another zerowiz (${holder}) writing there`,
        `wait for it to finish; if no zerowiz is running, remove ${join(dir, LOCK_FILE_NAME)}`,
      );
    await sleep(wait + Math.random() * wait);
    wait = Math.min(LOCK_RETRY_MAX_MS, wait * 2);
  }
}

/**
 * Writes `files` as one transaction: all of them or none (see the module comment). Results come in the
 * order given. Refuses (UsageError, nothing written) a target that is a link, a directory or a special file.
 */
export async function writeFilesTogether(files: readonly FileToSave[]): Promise<WriteResult[]> {
  const abs = files.map((f) => ({ ...f, path: resolve(f.path) }));
  // A link another user made on the way (a folder swapped for a link to somewhere of the user's) would send
  // the write where the user never asked: refused before anything, the user's own and system links are fine.
  for (const f of abs) {
    const foreign = foreignLinkOnPath(f.path);
    if (foreign)
      throw new UntrustedPathError(
        foreign.link,
        `is a symbolic link of ${userName(foreign.uid)}; zerowiz never writes through a link another user made`,
        'look at where it leads and remove it, or write somewhere else; nothing was written',
      );
  }
  // Check what is in the way before creating any folder or lock.
  for (const f of abs) {
    try {
      if (statSync(dirname(f.path)).isDirectory()) currentContent(f.path);
    } catch (e) {
      if (e instanceof UsageError) throw e;
    }
  }
  return withDirLocks(
    abs.map((f) => dirname(f.path)),
    (held) => transact(abs, held),
  );
}

/** Writes one file safely (see writeFilesTogether); `mode` as FileToWrite's. */
export async function writeFileSafely(path: string, text: string, mode?: number): Promise<WriteResult> {
  return (await writeFilesTogether([{ path, text, mode }]))[0]!;
}

/**
 * Moves `path` aside to `base` (or `base-1`, `base-2`, ...: never over an existing file), under the folder's
 * lock; resolves with the new name.
 */
export async function moveAside(path: string, base: string): Promise<string> {
  return withDirLocks([dirname(resolve(path))], () => {
    try {
      const to = linkToFreeName(path, base);
      unlinkSync(v(path));
      return to;
    } catch (e) {
      throw fileError(e, path, 'cannot move');
    }
  });
}

/**
 * THE words for a file written, one line per file: `wrote PATH` / `unchanged PATH` / `updated PATH (previous
 * content kept as BACKUP)`, each path as `show` writes it (default: as it is).
 */
export function formatWrite(r: WriteResult, show: (path: string) => string = (p) => p): string {
  if (r.status === 'unchanged') return `unchanged ${show(r.path)}`;
  if (r.backup) return `updated ${show(r.path)} (previous content kept as ${show(r.backup)})`;
  return `${r.status === 'created' ? 'wrote' : 'updated'} ${show(r.path)}`;
}
