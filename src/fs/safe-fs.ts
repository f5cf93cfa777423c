/**
 * Files on a shared machine: the one place that decides what zerowiz may trust and how it writes where
 * another local user could have been first (a 1777 scratch folder, a group-writable project, a checkout
 * unpacked from someone's archive).
 *
 * - Nothing is followed that zerowiz did not make: files are created with O_EXCL | O_NOFOLLOW (a planted
 *   link or file makes the open fail instead of being written through), read with O_NOFOLLOW, and replaced
 *   by rename (which replaces a link, never writes through it).
 * - A folder zerowiz keeps its own state in (`.zerowiz`, `.zerowiz/runs`, a run directory) must be the
 *   user's own, a real folder and not a link; it is made 0700 whatever the umask. Another user's folder,
 *   or a link, there is refused with one line naming the path, its owner and the fix (UntrustedPathError).
 * - A folder zerowiz writes many files into (a run directory) is pinned: opened once, checked through its
 *   descriptor, then reached as /proc/self/fd/N, so a rename or a link planted in its path afterwards
 *   cannot redirect a write. Where /proc is missing the path is used (the folder is still checked).
 * - Files zerowiz finds in a folder another user can write (a lock, a journal, a temporary file) count
 *   only when the user owns them; zerowiz never renames or removes another user's file.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { UsageError, fileError } from '../text/index.js';
import { printable } from '../text/index.js';

/** Mode of the folders zerowiz keeps to the user (`.zerowiz`, `.zerowiz/runs`, each run directory). */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of the files in them (run.json, config copies, the job script); scripts get PRIVATE_EXEC_MODE. */
export const PRIVATE_FILE_MODE = 0o600;
/** Mode of an executable private file (commands.sh). */
export const PRIVATE_EXEC_MODE = 0o700;
/** The largest file zerowiz reads back from a folder others may write (a lock, a journal). */
export const MAX_STATE_FILE_BYTES = 64 * 1024;

/** The effective uid of this process (-1 where the platform has none). */
export function myUid(): number {
  return process.geteuid?.() ?? -1;
}

let passwd: Map<number, string> | null = null;
/** The login name of `uid` (from /etc/passwd), or `uid N` when it has none. */
export function userName(uid: number): string {
  if (passwd === null) {
    passwd = new Map();
    const text = readNoFollow('/etc/passwd', 4 * 2 ** 20) ?? '';
    for (const line of text.split('\n')) {
      const [name, , id] = line.split(':');
      if (name && id !== undefined && /^\d+$/.test(id) && !passwd.has(Number(id))) passwd.set(Number(id), name);
    }
  }
  const name = passwd.get(uid);
  return name ? `user ${printable(name)} (uid ${uid})` : `uid ${uid}`;
}

/** A path zerowiz refuses to use: another user's folder or file, or a link where zerowiz keeps its own state. */
export class UntrustedPathError extends UsageError {
  constructor(
    readonly path: string,
    problem: string,
    hint: string,
  ) {
    super(`${path} ${problem}`, hint);
    this.name = 'UntrustedPathError';
  }
}

/** True when `st` belongs to this user. */
export function ownedByMe(st: Pick<Stats, 'uid'>): boolean {
  const me = myUid();
  return me === -1 || st.uid === me;
}

/**
 * The one-line refusal for something another user owns: `PATH belongs to user NAME (uid N), not to you;
 * WHY` and the fix as the hint.
 */
export function notYoursError(path: string, st: Pick<Stats, 'uid'>, why: string, fix: string): UntrustedPathError {
  return new UntrustedPathError(path, `belongs to ${userName(st.uid)}, not to you; ${why}`, fix);
}

/**
 * Makes `path` a folder of the user's own, private (0700 whatever the umask): created when missing, else
 * checked: a link, something other than a folder, or another user's folder is refused (UntrustedPathError
 * or a FileError); the user's own folder that others could write is tightened to 0700. `what` says what
 * zerowiz keeps there (e.g. `its run records`), `fix` is the hint.
 */
export function ensurePrivateDir(path: string, what: string, fix: string): void {
  try {
    mkdirSync(path, { mode: PRIVATE_DIR_MODE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fileError(e, path, 'cannot create');
  }
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (e) {
    throw fileError(e, path, 'cannot create');
  }
  if (st.isSymbolicLink())
    throw new UntrustedPathError(
      path,
      `is a symbolic link; zerowiz keeps ${what} only in a real folder of your own, never through a link`,
      fix,
    );
  if (!st.isDirectory())
    throw new UntrustedPathError(path, `is not a folder; zerowiz keeps ${what} in a folder of that name`, fix);
  if (!ownedByMe(st)) throw notYoursError(path, st, `zerowiz keeps ${what} only in folders of your own`, fix);
  if ((st.mode & 0o777) !== PRIVATE_DIR_MODE) {
    try {
      chmodSync(path, PRIVATE_DIR_MODE);
    } catch (e) {
      throw fileError(e, path, 'cannot make private');
    }
  }
}

/** True where a pinned folder can be reached through /proc/self/fd. */
const PROC_FD = (() => {
  try {
    return lstatSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();

const hex = () => randomBytes(6).toString('hex');

/**
 * A folder opened once and checked through its descriptor: the user's own, a real folder (O_NOFOLLOW),
 * private. Its files are reached as /proc/self/fd/N/NAME, so nothing done to its path afterwards (a
 * rename, a link) can send a write elsewhere.
 */
export class PinnedDir {
  private constructor(
    /** The folder's path as given (for messages and for the user). */
    readonly path: string,
    private fd: number,
  ) {}

  /**
   * Opens and checks `path`: refused (UntrustedPathError) when it is a link, not a folder, or another
   * user's; the user's own folder is made private (0700) when it is not.
   */
  static open(path: string): PinnedDir {
    const abs = resolve(path);
    let fd: number;
    try {
      fd = openSync(abs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENOTDIR') {
        let link = false;
        try {
          link = lstatSync(abs).isSymbolicLink();
        } catch {}
        if (link)
          throw new UntrustedPathError(
            abs,
            'is a symbolic link; zerowiz writes its records only into a folder of its own',
            'remove the link (its target stays), then run zerowiz again',
          );
      }
      throw fileError(e, abs, 'cannot open');
    }
    try {
      const st = fstatSync(fd);
      if (!ownedByMe(st))
        throw notYoursError(
          abs,
          st,
          'zerowiz writes its records only into folders of your own',
          'move it aside (it is not yours), then run zerowiz again',
        );
      if ((st.mode & 0o777) !== PRIVATE_DIR_MODE) fchmodSync(fd, PRIVATE_DIR_MODE);
    } catch (e) {
      closeSync(fd);
      throw fileError(e, abs, 'cannot open');
    }
    return new PinnedDir(abs, fd);
  }

  /** The path of `name` in this folder, through the pinned descriptor where /proc has it. */
  at(name: string): string {
    if (this.fd < 0) throw new Error(`${this.path} was closed`);
    return PROC_FD ? `/proc/self/fd/${this.fd}/${name}` : join(this.path, name);
  }

  /**
   * Writes `name` whole or not at all: a new temporary file (O_EXCL | O_NOFOLLOW, `mode` set exactly
   * whatever the umask) renamed over it. A link at `name` is replaced, never written through. Throws the
   * OS error (the temporary file removed).
   */
  writeAtomic(name: string, data: string | Buffer, mode = PRIVATE_FILE_MODE, tempPrefix = `${name}.tmp-`): void {
    const temp = `${tempPrefix}${process.pid}-${hex()}`;
    this.writeNew(temp, data, mode);
    try {
      renameSync(this.at(temp), this.at(name));
    } catch (e) {
      try {
        unlinkSync(this.at(temp));
      } catch {}
      throw e;
    }
  }

  /** Creates `name`, which must not exist (O_EXCL | O_NOFOLLOW), with exactly `mode`; flushed when `sync`. */
  writeNew(name: string, data: string | Buffer, mode = PRIVATE_FILE_MODE, sync = false): void {
    writeNewFile(this.at(name), data, mode, sync);
  }

  /** Whether the path still names the folder this descriptor holds (same device and inode, not a link). */
  stillAt(): boolean {
    if (this.fd < 0) return false;
    try {
      const a = fstatSync(this.fd);
      const b = lstatSync(this.path);
      return a.ino === b.ino && a.dev === b.dev && b.isDirectory();
    } catch {
      return false;
    }
  }

  /** Closes the descriptor (the path stays usable for messages). */
  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

/**
 * Creates the file `path`, which must not exist yet (O_EXCL | O_NOFOLLOW: a planted file or link fails
 * with EEXIST instead of being written through), with exactly `mode` (fchmod: whatever the umask), and
 * writes `data`; flushed to disk when `sync`. On an error the new file is removed.
 */
export function writeNewFile(path: string, data: string | Buffer, mode: number, sync = false): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    fchmodSync(fd, mode);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
    if (sync) fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {}
    throw e;
  }
  closeSync(fd);
}

const pinned = new Map<string, PinnedDir>();

/**
 * The pinned folder for `dir`: opened and checked on first use, then kept for this process while its path
 * still names the same folder (a folder removed, renamed or replaced since is opened and checked again).
 */
export function pinnedDir(dir: string): PinnedDir {
  const abs = resolve(dir);
  const p = pinned.get(abs);
  if (p?.stillAt()) return p;
  p?.close();
  const fresh = PinnedDir.open(abs);
  pinned.set(abs, fresh);
  return fresh;
}

/** Forgets (and closes) the pinned folder of `dir`, e.g. once a record directory was removed. */
export function unpinDir(dir: string): void {
  const abs = resolve(dir);
  pinned.get(abs)?.close();
  pinned.delete(abs);
}

/**
 * Writes `path` whole or not at all inside a folder of the user's own (see PinnedDir.writeAtomic): the
 * folder is pinned and checked on first use. For zerowiz's own state (run.json, commands.sh, the copies).
 */
export function writePrivateFile(path: string, data: string | Buffer, mode = PRIVATE_FILE_MODE): void {
  const abs = resolve(path);
  pinnedDir(dirname(abs)).writeAtomic(abs.slice(dirname(abs).length + 1), data, mode);
}

/**
 * Reads a file zerowiz finds in a folder others may write: a regular file only, its last component never
 * followed (O_NOFOLLOW), never blocking (O_NONBLOCK: a FIFO), at most `maxBytes`. Null when it is absent,
 * a link, not a regular file, too big or unreadable.
 */
export function readNoFollow(path: string, maxBytes = MAX_STATE_FILE_BYTES): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    const buf = Buffer.allocUnsafe(maxBytes + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    return n > maxBytes ? null : buf.subarray(0, n).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Why zerowiz must not trust the folder `path` (nor what is in it: presets it would run), or null: it, or
 * the link standing for it, belongs to another user, or others may create files in it (world-writable, or
 * writable by a group that is not the user's own). A folder that does not exist is no problem. The user's
 * own link to the user's own folder is fine (a dotfiles setup).
 */
export function untrustedDirProblem(path: string): string | null {
  const l = lstatOrNull(path);
  if (!l) return null;
  if (!ownedByMe(l)) return `belongs to ${userName(l.uid)}, not to you`;
  let st: Stats;
  try {
    st = l.isSymbolicLink() ? statSync(path) : l;
  } catch {
    return null;
  }
  if (!ownedByMe(st)) return `leads to a folder of ${userName(st.uid)}, not to you`;
  // Group-writable counts only for a group other than the user's own (a user-private group under umask 002
  // is the user alone).
  const groupWrites = (st.mode & 0o020) !== 0 && st.gid !== (process.getegid?.() ?? -1);
  if (st.isDirectory() && ((st.mode & 0o002) !== 0 || groupWrites))
    return 'can be written by other users (its group or everyone)';
  return null;
}

/**
 * Makes the folder `path` and any missing parent, each new one private (0700 exactly, whatever the umask);
 * folders that exist are left as they are (a link of the user's among them is fine). Throws a FileError, or an
 * UntrustedPathError when another user's link is on the way, or when what it was about to make turns out to be
 * another user's (a link or a folder planted in a shared folder between the look and the mkdir): nothing is
 * made through it.
 */
export function mkdirPrivate(path: string): void {
  const abs = resolve(path);
  const missing: string[] = [];
  for (let p = abs; lstatOrNull(p) === null; p = dirname(p)) {
    missing.unshift(p);
    if (dirname(p) === p) break;
  }
  const fix = 'remove it, or choose a folder of your own';
  if (missing.length > 0) {
    const parent = dirname(missing[0]!);
    const foreign = foreignLinkOnPath(parent);
    if (foreign) throw notYoursError(foreign.link, { uid: foreign.uid }, 'zerowiz makes no folder through it', fix);
    // The folder it makes them in is the user's or the system's (a sticky /tmp-like folder), never another user's.
    const st = lstatOrNull(parent);
    if (st && !ownedByMe(st) && st.uid !== 0) throw notYoursError(parent, st, 'zerowiz makes no folder in it', fix);
  }
  for (const p of missing) {
    try {
      mkdirSync(p, { mode: PRIVATE_DIR_MODE });
      chmodSync(p, PRIVATE_DIR_MODE);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fileError(e, p, 'cannot create');
    }
    // What is there now must be the folder just made (or one of the user's): never a link or another's folder.
    const st = lstatOrNull(p);
    if (!st) throw fileError(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }), p, 'cannot create');
    if (!ownedByMe(st)) throw notYoursError(p, st, 'zerowiz makes no folder in it', fix);
    if (st.isSymbolicLink() || !st.isDirectory())
      throw new UntrustedPathError(p, 'is not a folder zerowiz made (a link or a file took its place)', fix);
  }
}

/** How many links a path may go through before foreignLinkOnPath gives up (the kernel's own limit). */
const MAX_LINKS_ON_PATH = 40;

/**
 * The first symbolic link on the way to `path` (its folders and itself, following each link to where it
 * leads) that another user made: neither the user nor root owns it. Null when there is none. A folder that
 * is the user's own link (a dotfiles setup) or a system link is fine; a link another user planted would send
 * zerowiz's write somewhere the user never named.
 */
export function foreignLinkOnPath(path: string): { link: string; uid: number } | null {
  const me = myUid();
  let todo = resolve(path)
    .split('/')
    .filter((c) => c !== '');
  let at = '/';
  for (let links = 0; todo.length > 0; ) {
    const next = join(at, todo.shift()!);
    const st = lstatOrNull(next);
    if (!st) return null; // the rest does not exist yet: zerowiz makes it
    if (!st.isSymbolicLink()) {
      at = next;
      continue;
    }
    if (st.uid !== me && st.uid !== 0 && me !== -1) return { link: next, uid: st.uid };
    if (++links > MAX_LINKS_ON_PATH) return null; // a loop: the write fails on its own with ELOOP
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      return null;
    }
    const parts = target.split('/').filter((c) => c !== '');
    if (target.startsWith('/')) at = '/';
    todo = [...parts, ...todo];
  }
  return null;
}

/** lstat, or null when nothing is there (or it cannot be looked at). */
export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Removes `path` only when it is the user's own (a file or a link; never another user's). */
export function unlinkIfMine(path: string): boolean {
  const st = lstatOrNull(path);
  if (!st || !ownedByMe(st) || st.isDirectory()) return false;
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The entries of a folder, or [] when it cannot be listed. */
export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
