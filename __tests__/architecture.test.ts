/**
 * The house's rules, over the import statements of src/, components/ and bin/ (docs/design/layout.md draws it):
 * - every folder has a floor, and no folder imports a folder above it (FLOORS, lowest first);
 * - a folder uses another only through its face (`<folder>/index.ts`): a static import of another folder names
 *   the face; a lazy `import()` (kept off the start-up path, see scripts/faces.mjs) names a module the face
 *   exports from, so it reaches nothing the face does not show;
 * - a face re-exports only its own folder;
 * - src/ never imports ink or react.
 * Fails with every offending import named, file and line.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';

/** The floors, lowest first: a folder may import its own floor and the ones below. */
const FLOORS: readonly (readonly string[])[] = [
  ['src/text'],
  ['src/fs', 'src/proc'],
  ['src/config'],
  ['src/setups'],
  ['src/explain', 'src/machine'],
  ['src/estimate'],
  ['src/rules'],
  ['src/checks'],
  ['src/observe'],
  ['src/records'],
  ['src/checkpoints'],
  ['src/notify', 'src/report'],
  ['src/pane'],
  ['src/launch'],
  ['src/slurm'],
  ['src/wizard'],
  ['src/commands'],
  ['src'],
  ['components/common'],
  ['components/pane'],
  ['components/wizard'],
  ['bin'],
];
/** Same-floor folders that may not import each other either (they are siblings, not a stack). */
const SIBLINGS_APART = true;
/** Modules another folder may import for their side effect alone (no names): zod's English messages. */
const SIDE_EFFECT_ONLY: ReadonlySet<string> = new Set(['src/text/zod.ts']);

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (/\.tsx?$/.test(e.name)) out.push(p);
    }
  };
  for (const d of ['src', 'components', 'bin']) walk(d);
  return out;
}

/** The folder a file belongs to: src/<folder>, components/<folder>, bin, or `src` for the files at src/'s top. */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'bin') return 'bin';
  return parts.length === 2 ? parts[0]! : `${parts[0]}/${parts[1]}`;
}

function floorOf(folder: string): number {
  const i = FLOORS.findIndex((f) => f.includes(folder));
  return i;
}

function resolveSpec(from: string, spec: string): string | null {
  const base = normalize(join(dirname(from), spec)).replace(/\.js$/, '');
  for (const c of [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) if (existsSync(join(ROOT, c))) return c;
  return null;
}

interface Use {
  file: string;
  line: number;
  spec: string;
  target: string;
  kind: 'static' | 'lazy' | 'bare';
}

const STATIC = /^(?:import|export)(?:\s+type)?\s*(?:\{[^}]*\}|\*\s+as\s+\w+|\w+)\s*from\s*['"]([^'"]+)['"]/gm;
const BARE = /^import\s*['"]([^'"]+)['"]/gm;
const LAZY = /import\(\s*['"]([^'"]+)['"]\s*\)/g;

function usesOf(file: string): Use[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const lineAt = (i: number) => text.slice(0, i).split('\n').length;
  const out: Use[] = [];
  for (const [re, kind] of [
    [STATIC, 'static'],
    [BARE, 'bare'],
    [LAZY, 'lazy'],
  ] as const) {
    for (const m of text.matchAll(re)) {
      const spec = m[1]!;
      if (!spec.startsWith('.')) continue;
      const target = resolveSpec(file, spec);
      if (target) out.push({ file, line: lineAt(m.index), spec, target, kind });
    }
  }
  return out;
}

/** The modules a face re-exports from. */
function faceModules(face: string): Set<string> {
  const out = new Set<string>();
  for (const m of readFileSync(join(ROOT, face), 'utf8').matchAll(/from\s*['"]([^'"]+)['"]/g)) {
    const t = resolveSpec(face, m[1]!);
    if (t) out.add(t);
  }
  return out;
}

const files = sourceFiles();
const uses = files.flatMap(usesOf);
const at = (u: Use) => `${u.file}:${u.line} ${u.spec}`;

describe('the house', () => {
  it('gives every folder a floor', () => {
    const folders = [...new Set(files.map(folderOf))];
    expect(folders.filter((f) => floorOf(f) < 0)).toEqual([]);
  });

  it('no folder imports a folder above it, nor a sibling on its floor', () => {
    const climbs = uses
      .filter((u) => folderOf(u.target) !== folderOf(u.file))
      .filter((u) => {
        const from = floorOf(folderOf(u.file));
        const to = floorOf(folderOf(u.target));
        return to > from || (SIBLINGS_APART && to === from);
      })
      .map((u) => `${at(u)} (${folderOf(u.file)} -> ${folderOf(u.target)})`);
    expect(climbs).toEqual([]);
  });

  it('a folder uses another through its face only (a lazy import names a module the face exports from)', () => {
    const past = uses
      .filter((u) => folderOf(u.target) !== folderOf(u.file) && folderOf(u.target) !== 'src')
      .filter((u) => {
        const face = `${folderOf(u.target)}/index.ts`;
        if (u.target === face) return false;
        if (u.kind === 'bare') return !SIDE_EFFECT_ONLY.has(u.target);
        if (u.kind === 'lazy') return !existsSync(join(ROOT, face)) || !faceModules(face).has(u.target);
        return true;
      })
      .map(at);
    expect(past).toEqual([]);
  });

  it('a face re-exports its own folder only', () => {
    const faces = files.filter((f) => f.endsWith('/index.ts'));
    expect(faces.length).toBeGreaterThan(10);
    const foreign = uses.filter((u) => u.file.endsWith('/index.ts') && folderOf(u.target) !== folderOf(u.file));
    expect(foreign.map(at)).toEqual([]);
  });

  it('src/ never imports ink or react', () => {
    const ui = files
      .filter((f) => f.startsWith('src/'))
      .filter((f) =>
        /from\s*['"](ink|react)(\/[^'"]*)?['"]|import\(\s*['"](ink|react)['"]/.test(
          readFileSync(join(ROOT, f), 'utf8'),
        ),
      );
    expect(ui).toEqual([]);
  });

  it('the rule reads real imports (a sanity check of the parser)', () => {
    expect(uses.length).toBeGreaterThan(500);
    expect(uses.some((u) => u.kind === 'lazy')).toBe(true);
    expect(relative(ROOT, join(ROOT, 'src'))).toBe('src');
  });
});
