// Bundles the CLI with esbuild: the entry dist/zerowiz.js holds the command-line surface, and every
// dynamically imported part (each command's implementation, the Ink views) becomes a chunk in
// dist/chunks/ that is compiled only when used. Start-up then never resolves node_modules and never
// compiles code it does not run: `zerowiz --version` does not pay for zod, yaml, execa or Ink.
import { build } from 'esbuild';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { facesPlugin } from './faces.mjs';
import { inkCaches } from './ink-caches.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const outdir = join(root, 'dist');
const outfile = join(outdir, 'zerowiz.js');
const result = await build({
  write: false,
  entryPoints: { zerowiz: join(root, 'bin', 'zerowiz.ts') },
  outdir,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  jsx: 'automatic',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"', ZEROWIZ_VERSION: JSON.stringify(pkg.version) },
  // Ink loads react-devtools-core only when DEV=true; never in the shipped bin.
  alias: { 'react-devtools-core': join(root, 'scripts', 'devtools-stub.mjs') },
  // Ink's per-line measurements kept across frames (see ink-caches.mjs): a keypress re-measures what changed only.
  // Each import of a folder's face resolved to the module that defines the name (see faces.mjs).
  plugins: [facesPlugin(root), inkCaches()],
  banner: {
    js: [
      "import { createRequire as __zwCreateRequire } from 'node:module';",
      "import { fileURLToPath as __zwFileURLToPath } from 'node:url';",
      "import { dirname as __zwDirname } from 'node:path';",
      'const require = __zwCreateRequire(import.meta.url);',
      'const __filename = __zwFileURLToPath(import.meta.url);',
      'const __dirname = __zwDirname(__filename);',
    ].join('\n'),
  },
});
// Chunks have content-hashed names, so they are written first and the entry last, by rename: a
// zerowiz (or a test) running while this builds never sees a half-written or mismatched bundle.
mkdirSync(join(outdir, 'chunks'), { recursive: true });
let entryText = '';
for (const file of result.outputFiles) {
  if (file.path === outfile) entryText = `#!/usr/bin/env node\n${file.text}`;
  else if (!existsSync(file.path)) writeFileSync(file.path, file.contents);
}
const tmp = `${outfile}.${process.pid}.tmp`;
writeFileSync(tmp, entryText, { mode: 0o755 });
chmodSync(tmp, 0o755);
renameSync(tmp, outfile);
// zerowiz's own YAML data, parsed once here (src/fs/data-file.ts): a fresh process takes a copy whose source is
// the file's exact text, and parses any other text itself. A value JSON cannot carry (.inf, a date) gets no copy.
mkdirSync(join(outdir, 'data'), { recursive: true });
for (const name of ['models.yaml', 'templates.yaml']) {
  const text = readFileSync(join(root, 'presets', name), 'utf8');
  const data = parseYaml(text);
  const json = JSON.stringify({ source: text, data });
  const target = join(outdir, 'data', name.replace(/\.yaml$/, '.json'));
  if (!isDeepStrictEqual(JSON.parse(json).data, data)) {
    rmSync(target, { force: true });
    continue;
  }
  const part = `${target}.${process.pid}.tmp`;
  writeFileSync(part, json);
  renameSync(part, target);
}
// Chunks no build has produced for an hour are stale.
const fresh = new Set(result.outputFiles.map((f) => f.path));
for (const name of readdirSync(join(outdir, 'chunks'))) {
  const path = join(outdir, 'chunks', name);
  if (!fresh.has(path) && Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { force: true });
}
