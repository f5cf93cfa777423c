/**
 * Where run records live, made safe on a shared machine (../safe-fs.ts does the checking):
 *   ensureRunsRoot  `.zerowiz` and `.zerowiz/runs` under the launch directory: the user's own folders,
 *                   never a link, 0700 whatever the umask; another user's (or a link) is refused with one
 *                   line naming it, its owner and the fix, before anything is written;
 *   makeRunDir      a new run directory in it (`<base>`, `<base>-2`, ...), 0700, pinned (see PinnedDir);
 *   writeRecordFile a file of a record written whole or not at all through the pinned folder, 0600 (an
 *                   executable 0700) whatever the umask, never through a link planted at its name or at a
 *                   temporary name.
 * The record code (record.ts) calls these for its folders and files; the step logs it opens itself. Reading
 * back is the mirror: readRecordJson is the one reader of a record's JSON files, runDirProblem the check of
 * the folder they are in.
 */
import { mkdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, ensurePrivateDir, pinnedDir, writePrivateFile } from '../fs/index.js';
import { lstatOrNull, ownedByMe, readOwnedFile, userName, type FileProblem } from '../fs/index.js';
import { parseJsonBounded } from '../text/index.js';

/** The hint of every refusal of the records' folders. */
const RUNS_FIX =
  'move it aside (e.g. `mv .zerowiz .zerowiz.not-mine`) after checking what it holds, or launch from a folder of your own; zerowiz keeps run records only in folders that are yours';

/**
 * Makes `<cwd>/.zerowiz` and `<cwd>/.zerowiz/runs` private folders of the user's own and returns the
 * latter. Throws UntrustedPathError for another user's folder or a link, FileError for an OS error.
 */
export function ensureRunsRoot(cwd: string, runsDir: string): string {
  const top = join(cwd, runsDir.split('/')[0]!);
  ensurePrivateDir(top, 'its run records', RUNS_FIX);
  const root = join(cwd, runsDir);
  ensurePrivateDir(root, 'its run records', RUNS_FIX);
  return root;
}

/**
 * Creates the run directory `root/base` (or `base-2`, `base-3`, ... when taken), private (0700) and
 * pinned for the record's writes. Returns its id and path; throws the OS error.
 */
export function makeRunDir(root: string, base: string): { id: string; dir: string } {
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base}-${n}`;
    const dir = join(root, id);
    try {
      mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    // Checked through its descriptor (the user's own, not a link) and made exactly 0700.
    pinnedDir(dir);
    return { id, dir };
  }
}

/**
 * Writes a file of a run record whole or not at all, private to the user: `mode` keeps only the owner's
 * bits (0600 by default; 0700 for an executable), whatever the umask.
 */
export function writeRecordFile(path: string, data: string | Buffer, mode = PRIVATE_FILE_MODE): void {
  writePrivateFile(path, data, mode & 0o700);
}

/** The largest run.json zerowiz reads back (a multi-day run's is tens of KiB: its steps, setup and peaks). */
export const RUN_JSON_MAX_BYTES = 16 * 2 ** 20;

/** A record file's value, or what is wrong with it in words that follow its path (`missing`: not there). */
export type RecordFileRead<T> = { value: T; st: Stats } | FileProblem;

/** The first problem of a failed parse as `key.path: message`. */
export function firstIssue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const i = error.issues[0];
  if (!i) return 'not what zerowiz writes there';
  const key = i.path.map(String).join('.');
  return key ? `${key}: ${i.message}` : i.message;
}

/**
 * THE reader of a run directory's JSON files (run.json, live.json): read under the rule of every file read
 * back from a run (a regular file of the user's own, never through a link, at most `maxBytes`: ../fs/read.ts),
 * parsed with a bounded depth and exact numbers (../text/json.ts), then checked against its schema. Never
 * throws, never waits.
 */
export function readRecordJson<T>(path: string, schema: z.ZodMiniType<T>, maxBytes: number): RecordFileRead<T> {
  const read = readOwnedFile(path, maxBytes);
  if ('problem' in read) return read;
  const parsed = parseJsonBounded(read.text);
  if (!parsed.ok)
    return { problem: parsed.syntax ? `is not valid JSON (${parsed.problem})` : parsed.problem, missing: false };
  const checked = z.safeParse(schema, parsed.data);
  if (!checked.success) return { problem: firstIssue(checked.error), missing: false };
  return { value: checked.data, st: read.st };
}

/**
 * Why a run directory cannot be read as one (a link, not a folder, another user's folder), or null. Its files
 * are then never opened.
 */
export function runDirProblem(dir: string): string | null {
  const st = lstatOrNull(dir);
  if (st === null) return 'is not there';
  if (st.isSymbolicLink()) return 'is a symbolic link; zerowiz reads run records only in folders it made';
  if (!st.isDirectory()) return 'is not a folder';
  if (!ownedByMe(st)) return `belongs to ${userName(st.uid)}, not to you`;
  return null;
}
