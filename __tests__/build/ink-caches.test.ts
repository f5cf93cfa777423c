// The bundled bin keeps Ink's per-line measurements across frames (scripts/ink-caches.mjs): the frames must be
// byte for byte Ink's own, the cache must really be one across frames (what the speed comes from) and bounded,
// and a different Ink must fail the build rather than ship without the patch.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script in plain JavaScript, without types
import * as inkCachesModule from '../../scripts/ink-caches.mjs';

const { INK_SHARED_CACHE_MAX_ENTRIES, inkCaches, patchInkOutput, patchInkRenderNode } = inkCachesModule;
const root = join(__dirname, '..', '..');
const inkBuild = dirname(createRequire(join(root, 'package.json')).resolve('ink'));

interface OutputLike {
  caches: unknown;
  write(x: number, y: number, text: string, o: { transformers: ((s: string, i: number) => string)[] }): void;
  clip(c: { x1?: number; x2?: number; y1?: number; y2?: number }): void;
  unclip(): void;
  get(): { output: string; height: number };
}
interface Bundle {
  Output: new (o: { width: number; height: number }) => OutputLike;
  frames: (el: (frame: number) => unknown, count: number, columns: number) => Promise<string[]>;
  React: { createElement: (...a: unknown[]) => unknown };
  Box: unknown;
  Text: unknown;
}

const dir = mkdtempSync(join(tmpdir(), 'zw-ink-caches-'));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

/** Ink's Output and a renderer of frames, bundled as the bin bundles them, with or without the patch. */
async function bundle(patched: boolean): Promise<Bundle> {
  const entry = `
    export { default as Output } from ${JSON.stringify(join(inkBuild, 'output.js'))};
    export { render, Box, Text } from 'ink';
    export { default as React } from 'react';
    import { render } from 'ink';
    export async function frames(el, count, columns) {
      const written = [];
      const stdout = { columns, rows: 40, isTTY: false, write: (s) => { written.push(s); return true; }, on() {}, off() {}, removeListener() {} };
      const app = render(el(0), { stdout, debug: true, patchConsole: false, exitOnCtrlC: false });
      for (let f = 1; f < count; f++) app.rerender(el(f));
      app.unmount();
      return written;
    }`;
  const out = join(dir, `ink-${patched ? 'patched' : 'plain'}.mjs`);
  await build({
    stdin: { contents: entry, resolveDir: root, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    define: { 'process.env.NODE_ENV': '"production"' },
    alias: { 'react-devtools-core': join(root, 'scripts', 'devtools-stub.mjs') },
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    plugins: patched ? [inkCaches()] : [],
    logLevel: 'silent',
  });
  return (await import(pathToFileURL(out).href)) as Bundle;
}

let plain: Bundle;
let patched: Bundle;
beforeAll(async () => {
  plain = await bundle(false);
  patched = await bundle(true);
}, 60_000);

// Lines as the wizard writes them: colours, bold, wide characters (CJK, emoji), block glyphs, a clipped box.
const LINES = [
  '\x1b[36mcompute_environment\x1b[39m: \x1b[32mLOCAL_MACHINE\x1b[39m',
  '\x1b[1mZeRO-1             \x1b[22m  159 GiB \x1b[31m█████\x1b[39m   609 GiB',
  'ZeRO-3 offload      41.3 GiB \x1b[32m██▋  \x1b[39m   381 GiB \x1b[31m✗ CPU\x1b[39m',
  '模型 参数 ★ 🚀 mixed 宽字符 line',
  '\x1b[7m\x1b[1m YAML \x1b[22m\x1b[27m JSON  commands \x1b[90m 1-3/18\x1b[39m',
  '',
  'plain ascii line that is long enough to be clipped by the box on the right side',
];

function frame(O: Bundle['Output'], f: number): string {
  const o = new O({ width: 60, height: 12 });
  for (let i = 0; i < 8; i++) o.write(i % 3, i, LINES[(i + f) % LINES.length] ?? '', { transformers: [] });
  o.clip({ x1: 4, x2: 30, y1: 8, y2: 11 });
  for (let i = 0; i < 4; i++) o.write(2, 7 + i, LINES[(i * 2 + f) % LINES.length] ?? '', { transformers: [] });
  o.unclip();
  o.write(0, 11, `frame ${f % 3} \x1b[33m!\x1b[39m`, { transformers: [(s: string) => `\x1b[2m${s}\x1b[22m`] });
  return o.get().output;
}

describe('Ink with its measurements kept across frames (the bundled bin)', () => {
  it('writes every frame exactly as Ink does without the shared cache', () => {
    for (let f = 0; f < 20; f++) expect(frame(patched.Output, f)).toBe(frame(plain.Output, f));
  });

  it('renders a wrapping and truncating tree frame for frame as Ink does', async () => {
    const tree = (b: Bundle) => (f: number) =>
      b.React.createElement(
        b.Box,
        { flexDirection: 'column', width: 36 },
        b.React.createElement(b.Text, { color: 'cyan' }, `a line that wraps at the box's width, frame ${f % 4}`),
        b.React.createElement(
          b.Text,
          { wrap: 'truncate' },
          `ZeRO-${f % 3} ██▋ 模型 参数 ★ truncated past the width of it`,
        ),
        b.React.createElement(b.Text, { bold: f % 2 === 0 }, LINES[f % LINES.length]),
      );
    const a = await patched.frames(tree(patched), 12, 40);
    const b = await plain.frames(tree(plain), 12, 40);
    expect(a.length).toBeGreaterThan(5);
    expect(a).toEqual(b);
  });

  it('keeps one cache for the frames (Ink alone starts one per frame), started again past its bound', () => {
    expect(new plain.Output({ width: 1, height: 1 }).caches).not.toBe(new plain.Output({ width: 1, height: 1 }).caches);
    const first = new patched.Output({ width: 10, height: 1 });
    expect(new patched.Output({ width: 10, height: 1 }).caches).toBe(first.caches);
    for (let i = 0; i <= INK_SHARED_CACHE_MAX_ENTRIES; i++) {
      const o = new patched.Output({ width: 10, height: 1 });
      o.write(0, 0, `line ${i}`, { transformers: [] });
      o.get();
    }
    expect(new patched.Output({ width: 10, height: 1 }).caches).not.toBe(first.caches);
  });

  it('fails the build, naming the file, when Ink no longer holds the lines it patches', () => {
    expect(() => patchInkOutput('export default class Output {}')).toThrow(
      /ink\/build\/output\.js.*another Ink version/,
    );
    expect(() => patchInkRenderNode('const w = widestLine(x);')).toThrow(/render-node-to-output\.js/);
  });
});
