/**
 * Safe writes: nothing a user wrote is lost. An existing file with other content is first copied to
 * `NAME.bak-<YYYYmmdd-HHMMSS>`; the new content goes to a temp file that is renamed over the target
 * (write-file-atomic), so a crash never leaves a half-written file.
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { toAccelerateYaml, toDeepSpeedJson } from './emit.js';
import type { Setup } from './setup.js';

/** What happened to one file. */
export interface WriteResult {
  path: string;
  status: 'created' | 'updated' | 'unchanged';
  /** The backup of the previous content, when there was one that differed. */
  backup?: string;
}

/** A sortable local timestamp, YYYYmmdd-HHMMSS. */
export function timestamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** A backup path that does not exist yet. */
function backupPath(path: string): string {
  const base = `${path}.bak-${timestamp()}`;
  let candidate = base;
  for (let i = 1; existsSync(candidate); i++) candidate = `${base}-${i}`;
  return candidate;
}

/** Writes `text` to `path` atomically, backing up differing existing content first. */
export async function writeFileSafely(path: string, text: string): Promise<WriteResult> {
  let old: string | null = null;
  try {
    old = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (old === text) return { path, status: 'unchanged' };
  await mkdir(dirname(path), { recursive: true });
  let backup: string | undefined;
  if (old !== null) {
    backup = backupPath(path);
    await copyFile(path, backup);
  }
  await writeFileAtomic(path, text, { encoding: 'utf8' });
  return backup ? { path, status: 'updated', backup } : { path, status: old === null ? 'created' : 'updated' };
}

/** The file texts of a setup, as written to disk (the JSON gets a final newline). */
export function configTexts(setup: Setup): { yaml: string; json: string } {
  return { yaml: toAccelerateYaml(setup), json: `${toDeepSpeedJson(setup)}\n` };
}

/**
 * Re-points a setup's files into `dir` (accelerate_config.yaml + ds_config.json) and makes the YAML's
 * deepspeed_config_file the JSON's absolute path, unless the answers name another path.
 */
export function setupInDir(setup: Setup, dir: string): Setup {
  const absDir = resolve(dir);
  return {
    ...setup,
    files: { accelerateConfig: join(absDir, 'accelerate_config.yaml'), dsConfig: join(absDir, 'ds_config.json') },
  };
}

/** Writes both config files of a setup (its `files` paths, relative to `cwd`). */
export async function writeConfigFiles(setup: Setup, cwd = process.cwd()): Promise<WriteResult[]> {
  const { yaml, json } = configTexts(setup);
  const at = (p: string) => (isAbsolute(p) ? p : join(cwd, p));
  // JSON first: the YAML points at it, so a YAML never exists without its JSON.
  const jsonResult = await writeFileSafely(at(setup.files.dsConfig), json);
  const yamlResult = await writeFileSafely(at(setup.files.accelerateConfig), yaml);
  return [yamlResult, jsonResult];
}
