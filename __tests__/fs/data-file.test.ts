/**
 * zerowiz's own YAML data parsed once by the build (src/fs/data-file.ts): the copy is taken only for the exact
 * text it was made from, so an edited catalog is never answered from a stale copy.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseDataFile } from '../../src/fs/data-file.js';
import { ROOT } from '../helpers/pty.js';

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'data', 'models.json')))
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dataDir(copies: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-data-'));
  dirs.push(d);
  for (const [name, text] of Object.entries(copies)) writeFileSync(join(d, name), text);
  return d;
}

describe('a data file parsed by the build', () => {
  it('takes the copy made of this very text, and parses any other text itself', () => {
    // A copy that says something else than its source would, to see which one answered.
    const d = dataDir({ 'x.json': JSON.stringify({ source: 'a: 1\n', data: { a: 'from the copy' } }) });
    expect(parseDataFile('/any/where/x.yaml', 'a: 1\n', d)).toEqual({ a: 'from the copy' });
    expect(parseDataFile('/any/where/x.yaml', 'a: 2\n', d)).toEqual({ a: 2 });
    expect(parseDataFile('/any/where/y.yaml', 'a: 1\n', d)).toEqual({ a: 1 });
    expect(parseDataFile('/any/where/x.yaml', 'a: 1\n', null)).toEqual({ a: 1 });
  });

  it('a damaged copy is passed over', () => {
    const d = dataDir({ 'x.json': '{"source": "a: 1\\n", "da' });
    expect(parseDataFile('x.yaml', 'a: 1\n', d)).toEqual({ a: 1 });
  });

  it("the build's copies say what the shipped YAML says", () => {
    for (const name of ['models', 'templates']) {
      const text = readFileSync(join(ROOT, 'presets', `${name}.yaml`), 'utf8');
      const copy = JSON.parse(readFileSync(join(ROOT, 'dist', 'data', `${name}.json`), 'utf8'));
      expect(copy.source).toBe(text);
      expect(copy.data).toEqual(parse(text));
    }
  });
});
