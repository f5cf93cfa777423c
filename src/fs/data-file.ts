/**
 * zerowiz's own data files (presets/models.yaml, presets/templates.yaml), parsed. YAML costs a fresh process
 * 45-65 ms for the 30 KB model catalog (JSON.parse of the same data: 0.3 ms), and every launch pays it twice: in
 * the launcher and in the run's supervisor. So the build (scripts/build.mjs) keeps each file's parsed form beside
 * the bundle, `dist/data/NAME.json` = `{"source": TEXT, "data": VALUE}`, and a copy whose source is the file's
 * exact text is taken; any other text (the file edited since the build, no build) is parsed as YAML. The YAML
 * stays the one definition: the copy can only ever say what the text says.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** The build's folder of parsed data files, from the bundle (dist/chunks/) or the sources (src/fs/). */
function builtDataDir(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, '..', 'data'), join(here, '..', '..', 'dist', 'data')])
    if (existsSync(candidate)) return candidate;
  return null;
}

/** The name of a data file's parsed copy (`models.yaml` -> `models.json`). */
export function builtDataName(file: string): string {
  return `${basename(file).replace(/\.ya?ml$/, '')}.json`;
}

/**
 * The parsed form of `text`, the content of the data file `file`: the build's copy (in `dir`) when it is of
 * this text.
 */
export function parseDataFile(file: string, text: string, dir: string | null = builtDataDir()): unknown {
  if (dir !== null) {
    try {
      const copy = JSON.parse(readFileSync(join(dir, builtDataName(file)), 'utf8')) as {
        source?: unknown;
        data?: unknown;
      };
      if (copy.source === text) return copy.data;
    } catch {
      // No copy, or a damaged one: the text is parsed.
    }
  }
  return parse(text);
}
