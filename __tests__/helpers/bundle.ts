/** What a module of the tree loads when it is bundled as the bin bundles it (faces resolved to their modules). */
import { join } from 'node:path';
import { build } from 'esbuild';
import { facesPlugin } from '../../scripts/faces.mjs';
import { ROOT } from './paths.js';

/**
 * The project's own files (paths relative to the root) that bundling `entry` (relative to the root) pulls in,
 * statically: lazy `import()`s are left out, as they load only when called. Nothing is written.
 */
export async function bundledInputs(entry: string): Promise<string[]> {
  const r = await build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    splitting: true,
    outdir: join(ROOT, 'dist', 'never-written'),
    format: 'esm',
    platform: 'node',
    packages: 'external',
    metafile: true,
    logLevel: 'silent',
    plugins: [facesPlugin(ROOT)],
  });
  // With splitting, a lazy import() becomes its own entry: only the entry chunk and what it imports statically count.
  const outputs = r.metafile.outputs;
  const entryOut = Object.keys(outputs).find((o) => outputs[o]!.entryPoint === entry)!;
  const seen = new Set<string>();
  const walk = (o: string) => {
    if (seen.has(o)) return;
    seen.add(o);
    for (const i of outputs[o]!.imports) if (i.kind === 'import-statement' && outputs[i.path]) walk(i.path);
  };
  walk(entryOut);
  const files = new Set<string>();
  for (const o of seen) for (const f of Object.keys(outputs[o]!.inputs)) files.add(f);
  return [...files].sort();
}
