/**
 * Writing a setup's files (./files.ts: THE list) as one transaction through src/fs/write.ts: backups of differing
 * content, atomic renames, the JSON first.
 */
import { type WriteResult, writeFilesTogether } from '../fs/index.js';
import { inReportOrder, launchConfigFiles, setupFiles, type SetupFile } from './files.js';
import type { Setup } from './setup.js';

/** Writes some of a setup's files as one transaction; results in report order ([] for no files). */
async function writeSetupFiles(files: readonly SetupFile[]): Promise<WriteResult[]> {
  if (files.length === 0) return [];
  const results = await writeFilesTogether(files);
  return inReportOrder(files.map((f, i) => ({ role: f.role, result: results[i]! }))).map((x) => x.result);
}

/**
 * Writes the files of a setup (setupFiles: its `files` paths, relative to `cwd`, and the pinned config
 * without DeepSpeed when a step uses it) as one transaction. Results: [YAML, JSON, then the extra files].
 */
export async function writeConfigFiles(setup: Setup, cwd = process.cwd()): Promise<WriteResult[]> {
  return writeSetupFiles(setupFiles(setup, cwd));
}

/**
 * Writes the files a launch writes (launchConfigFiles) as one transaction; results as writeConfigFiles gives
 * them, [] when no step uses any of them. `mode` sets their permissions exactly (0600 in a run record).
 */
export async function writeLaunchConfigFiles(setup: Setup, cwd = process.cwd(), mode?: number): Promise<WriteResult[]> {
  return writeSetupFiles(launchConfigFiles(setup, cwd).map((f) => (mode === undefined ? f : { ...f, mode })));
}
