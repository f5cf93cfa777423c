// The folders' faces in the bundle. In the source every import of another folder goes through its face
// (`src/<folder>/index.ts`, which re-exports what other folders may use; __tests__/architecture.test.ts holds the
// rule). esbuild cannot split a barrel: one import of a face pulls every module the face re-exports into the
// chunk graph, and the bin's start-up loaded 0.9 MB instead of 0.1 MB (`zerowiz --version` 153 -> 220 ms). So
// at build time each named import of a face becomes an import of the module that defines the name, and the
// bundle is what it was before there were faces. Type-only names are left to esbuild, which drops them.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const EXPORT_FROM = /^export\s+(type\s+)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"];?/gm;
const IMPORT_FROM = /^(import|export)(\s+type)?\s*\{([^}]*)\}\s*from\s*(['"])([^'"]+)\4;?/gm;

/** Every face of the tree: its path, and for each name it exports the module that defines it. */
export function readFaces(root) {
  const faces = new Map();
  for (const top of ['src', 'components']) {
    const base = join(root, top);
    if (!existsSync(base)) continue;
    for (const entry of readdirSync(base, { withFileTypes: true })) {
      const face = join(base, entry.name, 'index.ts');
      if (!entry.isDirectory() || !existsSync(face)) continue;
      const names = new Map();
      for (const m of readFileSync(face, 'utf8').matchAll(EXPORT_FROM)) {
        if (m[1]) continue;
        const target = resolve(dirname(face), m[3].replace(/\.js$/, '.ts'));
        const file = existsSync(target) ? target : target.replace(/\.ts$/, '.tsx');
        for (const raw of m[2]
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)) {
          if (raw.startsWith('type ')) continue;
          const [name, alias] = raw.split(/\s+as\s+/);
          names.set((alias ?? name).trim(), { file, name: name.trim() });
        }
      }
      faces.set(face, names);
    }
  }
  return faces;
}

/** A source file's imports of faces, each named value imported from its own module instead. */
export function throughFaces(text, fromFile, faces) {
  return text.replace(IMPORT_FROM, (whole, kw, typeKw, body, _q, spec) => {
    if (typeKw || !spec.startsWith('.') || !spec.endsWith('/index.js')) return whole;
    const face = resolve(dirname(fromFile), spec.replace(/\.js$/, '.ts'));
    const names = faces.get(face);
    if (!names) return whole;
    const byFile = new Map();
    for (const raw of body
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      if (raw.startsWith('type ')) continue;
      const [name, alias] = raw.split(/\s+as\s+/).map((s) => s.trim());
      const hit = names.get(name);
      if (!hit) throw new Error(`${fromFile}: ${name} is not on the face ${face}`);
      const list = byFile.get(hit.file) ?? [];
      list.push(hit.name === (alias ?? name) ? hit.name : `${hit.name} as ${alias ?? name}`);
      byFile.set(hit.file, list);
    }
    return [...byFile].map(([file, list]) => `${kw} { ${list.join(', ')} } from ${JSON.stringify(file)};`).join('\n');
  });
}

/** The esbuild plugin: the project's own TypeScript, with its face imports resolved to the defining modules. */
export function facesPlugin(root) {
  const faces = readFaces(root);
  const own = new RegExp(`^${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(src|components|bin)/.*\\.tsx?$`);
  return {
    name: 'zerowiz-faces',
    setup(build) {
      build.onLoad({ filter: /\.tsx?$/ }, (args) => {
        if (!own.test(args.path)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        return { contents: throughFaces(text, args.path, faces), loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts' };
      });
    },
  };
}
