/**
 * A setup's files: THE list of what a setup writes (the DeepSpeed JSON, the accelerate YAML and the pinned config
 * without DeepSpeed), their texts (from the compiled setup, ./compile.ts) and paths. Pure: writing them is
 * ./write-files.ts, so a reader of the list (the preview) does not load the write transaction.
 */
import { isAbsolute, join, resolve } from 'node:path';
import type { FileToWrite } from '../fs/index.js';
import { extraConfigFiles, withFiles } from './accelerate-config.js';
import { compileSetup } from './compile.js';
import type { Setup } from './setup.js';

/** The file texts of a setup, as written to disk (the JSON gets a final newline). */
export function configTexts(setup: Setup): { yaml: string; json: string } {
  const c = compileSetup(setup);
  return { yaml: c.yaml, json: `${c.json}\n` };
}

/**
 * Re-points a setup's files into `dir` (accelerate_config.yaml + ds_config.json) and makes the YAML's
 * deepspeed_config_file the JSON's absolute path, unless the answers name another path. A step pinned to the
 * setup's config without DeepSpeed follows it into `dir` (see withFiles).
 */
export function setupInDir(setup: Setup, dir: string): Setup {
  const absDir = resolve(dir);
  return withFiles(setup, {
    accelerateConfig: join(absDir, 'accelerate_config.yaml'),
    dsConfig: join(absDir, 'ds_config.json'),
  });
}

/** Which of a setup's files a SetupFile is. */
export type SetupFileRole = 'accelerate' | 'deepspeed' | 'noDeepSpeed';

/** One file a setup writes: its role, its path (absolute) and its text. */
export interface SetupFile extends FileToWrite {
  role: SetupFileRole;
  /** The path as the setup names it: relative to the directory it is used in, or absolute. */
  named: string;
}

/**
 * THE list of files a setup writes, in the order they are committed: the DeepSpeed JSON, the accelerate
 * YAML and, when a step is pinned to it, the accelerate config without DeepSpeed (accelerate-config.ts
 * extraConfigFiles). Relative paths are resolved against `cwd`. Every writer of a setup (the wizard's
 * finish screen, `generate`, a launch) writes exactly these, together, through writeFilesTogether.
 */
export function setupFiles(setup: Setup, cwd = process.cwd()): SetupFile[] {
  const { yaml, json } = configTexts(setup);
  const file = (role: SetupFileRole, named: string, text: string): SetupFile => ({
    role,
    named,
    path: isAbsolute(named) ? named : join(cwd, named),
    text,
  });
  // JSON first: if a rename fails halfway the rollback restores it, and a YAML never points at a missing file.
  return [
    file('deepspeed', setup.files.dsConfig, json),
    file('accelerate', setup.files.accelerateConfig, yaml),
    ...extraConfigFiles(setup).map((f) => file('noDeepSpeed', f.path, f.text)),
  ];
}

/**
 * THE files a launch of a setup writes (and its run record keeps): all of setupFiles when a step uses the
 * setup's config; else only the pinned config without DeepSpeed, which a step may still name.
 */
export function launchConfigFiles(setup: Setup, cwd = process.cwd()): SetupFile[] {
  const files = setupFiles(setup, cwd);
  return setup.steps.some((s) => s.usesConfig) ? files : files.filter((f) => f.role === 'noDeepSpeed');
}

/** Where each role comes when files are reported (results, the dry run, the record): YAML, JSON, pinned config. */
const REPORT_ORDER: Record<SetupFileRole, number> = { accelerate: 0, deepspeed: 1, noDeepSpeed: 2 };

/** Some of a setup's files (setupFiles' commit order) in the order they are reported: YAML, JSON, pinned config. */
export function inReportOrder<T extends { role: SetupFileRole }>(files: readonly T[]): T[] {
  return [...files].sort((a, b) => REPORT_ORDER[a.role] - REPORT_ORDER[b.role]);
}
