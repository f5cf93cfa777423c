// Ink measures and tokenizes every line of every frame from scratch: its Output keeps its caches (a line's
// styled characters, its width) for one frame only, and each text node's widest line is measured again each
// frame. These are pure functions of the line's text, and a keypress on the wizard changes a few lines of ~30,
// so the bundled bin keeps them across frames: one Output cache, shared by the frames, emptied when it holds
// more than INK_SHARED_CACHE_MAX_ENTRIES entries. The same text gives the same characters and widths, so every
// frame is byte for byte what Ink writes without it (__tests__/build/ink-caches.test.ts); on the ZeRO question it
// takes about a third of the CPU a keypress costs (docs/design/benchmarks.md).
//
// Applied by scripts/build.mjs as an esbuild plugin, to Ink's own files as installed: when Ink's source no
// longer has the lines patched here (another Ink version), the build fails and says so, rather than ship
// the bin without the caches or with a half-applied patch.

/**
 * Most entries (lines, blocks, widths) the shared cache holds before it starts again: a line's styled characters
 * take ~100 bytes apiece, so this bounds it at a few MB; a wizard frame has ~30 lines, the ZeRO question's seven
 * rows with and without the picture a few hundred.
 */
export const INK_SHARED_CACHE_MAX_ENTRIES = 1024;

const OUTPUT_FROM = '    caches = new OutputCaches();';
const OUTPUT_TO = '    caches = sharedOutputCaches();';
const OUTPUT_TAIL = `
// zerowiz (scripts/ink-caches.mjs): one cache for every frame, started again past its bound.
let zerowizSharedCaches;
function sharedOutputCaches() {
    const c = zerowizSharedCaches;
    if (c === undefined || c.styledChars.size + c.blockWidths.size + c.widths.size > ${INK_SHARED_CACHE_MAX_ENTRIES}) {
        zerowizSharedCaches = new OutputCaches();
    }
    return zerowizSharedCaches;
}
`;

const NODE_FROM = '                const currentWidth = widestLine(text);';
const NODE_TO = '                const currentWidth = output.caches.getWidestLine(text);';

function replaceOnce(source, from, to, file) {
  const at = source.indexOf(from);
  if (at === -1 || source.indexOf(from, at + from.length) !== -1) {
    throw new Error(
      `scripts/ink-caches.mjs: ${file} does not hold \`${from.trim()}\` exactly once (another Ink version?): update the patch`,
    );
  }
  return source.slice(0, at) + to + source.slice(at + from.length);
}

/** Ink's build/output.js with one Output cache shared by the frames. */
export function patchInkOutput(source) {
  return replaceOnce(source, OUTPUT_FROM, OUTPUT_TO, 'ink/build/output.js') + OUTPUT_TAIL;
}

/** Ink's build/render-node-to-output.js measuring a text node's widest line through the Output's cache. */
export function patchInkRenderNode(source) {
  return replaceOnce(source, NODE_FROM, NODE_TO, 'ink/build/render-node-to-output.js');
}

/** The esbuild plugin that applies both patches to Ink's files as they are bundled. */
export function inkCaches() {
  return {
    name: 'zerowiz-ink-caches',
    setup(build) {
      build.onLoad({ filter: /[\\/]ink[\\/]build[\\/](output|render-node-to-output)\.js$/ }, async (args) => {
        const { readFile } = await import('node:fs/promises');
        const source = await readFile(args.path, 'utf8');
        const patch = /[\\/]output\.js$/.test(args.path) ? patchInkOutput : patchInkRenderNode;
        return { contents: patch(source), loader: 'js' };
      });
    },
  };
}
