/**
 * Where run records live, made safe on a shared machine (../safe-fs.ts does the checking):
 *   ensureRunsRoot  `.zerowiz` and `.zerowiz/runs` under the launch directory: the user's own folders,
 *                   never a link, 0700 whatever the umask; another user's (or a link) is refused with one
 *                   line naming it, its owner and the fix, before anything is written;
 *   makeRunDir      a new run directory in it (`<base>`, `<base>-2`, ...), 0700, pinned (see PinnedDir);
 *   writeRecordFile a file of a record written whole or not at all through the pinned folder, 0600 (an
 *                   executable 0700) whatever the umask, never through a link planted at its name or at a
 *                   temporary name.
 * The record code (record.ts) calls these for its folders and files; the step logs it opens itself.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, ensurePrivateDir, pinnedDir, writePrivateFile } from '../fs/index.js';

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
