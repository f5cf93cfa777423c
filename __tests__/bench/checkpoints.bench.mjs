// The cost of the checkpoint guard (issue 21), in-process, bundled by esbuild into a temp dir:
// - verifying a LoRA of Qwen-Image's catalog shapes (rank 2, the seed's 12 targets, 60 blocks: 2,880 tensors,
//   29 MB in bf16) against reading the same file whole (readFileSync), the least any check of its bytes costs;
// - one poll of the watcher in its steady state (40 epoch files and 20 checkpoint-N folders already judged),
//   against a bare readdir + stat of the same entries: what the supervisor pays every CHECKPOINT_POLL_INTERVAL_MS.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { facesPlugin } from '../../scripts/faces.mjs';

const ROUNDS = 7;

function medianMs(fn) {
  fn();
  const t = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  return t.sort((a, b) => a - b)[Math.floor(t.length / 2)];
}

export async function bench({ root }) {
  const dir = mkdtempSync(join(tmpdir(), 'zw-bench-ckpt-'));
  try {
    const outfile = join(dir, 'ckpt.mjs');
    await build({
      plugins: [facesPlugin(root)],
      stdin: {
        contents: [
          `export { verifyWeightsFile } from ${JSON.stringify(join(root, 'src', 'checkpoints', 'verify.ts'))};`,
          `export { loraExpectation, NO_EXPECTATION } from ${JSON.stringify(join(root, 'src', 'checkpoints', 'expect.ts'))};`,
          `export { CheckpointWatcher } from ${JSON.stringify(join(root, 'src', 'checkpoints', 'watch.ts'))};`,
          `export { loadModelCatalog } from ${JSON.stringify(join(root, 'src', 'estimate', 'models.ts'))};`,
          `export { safetensorsBytes, diffsynthLora } from ${JSON.stringify(join(root, '__tests__', 'helpers', 'safetensors.ts'))};`,
        ].join('\n'),
        resolveDir: root,
        loader: 'ts',
      },
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
      // execa's dependencies require() Node's built-ins: give the ESM bundle a require, as scripts/build.mjs does.
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    });
    const m = await import(pathToFileURL(outfile).href);
    const qwen = m.loadModelCatalog(join(root, 'presets', 'models.yaml')).find((x) => x.id === 'qwen-image');
    const targets = qwen.loraTargets;
    const e = m.loraExpectation(2, targets, qwen);
    const expect = { ...m.NO_EXPECTATION, lora: e.lora };
    const shapes = Object.fromEntries(e.lora.targets.map((t) => [t.name, [t.in, t.out, t.count]]));
    const file = join(dir, 'epoch-0.safetensors');
    writeFileSync(file, m.safetensorsBytes(m.diffsynthLora(2, shapes)));
    const bytes = statSync(file).size;
    let sink = 0;
    const read = medianMs(() => {
      sink += readFileSync(file).length;
    });
    const verify = medianMs(() => {
      sink += m.verifyWeightsFile(file, expect).tensors;
    });

    const out = join(dir, 'out');
    mkdirSync(out);
    const small = m.safetensorsBytes(m.diffsynthLora(2, { to_q: [64, 64, 2] }));
    for (let i = 0; i < 40; i++) writeFileSync(join(out, `epoch-${i}.safetensors`), small);
    for (let i = 0; i < 20; i++) {
      mkdirSync(join(out, `checkpoint-${i * 10}`));
      writeFileSync(join(out, `checkpoint-${i * 10}`, 'model.safetensors'), small);
      writeFileSync(join(out, `checkpoint-${i * 10}`, 'trainer_state.json'), '{}');
    }
    const w = new m.CheckpointWatcher({
      steps: [{ index: 0, name: 'train', roots: [out], expect: m.NO_EXPECTATION }],
      since: 0,
      settleMs: 0,
      fix: { setupRef: 'x', runId: null },
    });
    w.poll();
    w.poll(); // everything judged: what follows is the steady state
    const poll = medianMs(() => {
      sink += w.poll().length;
    });
    const bare = medianMs(() => {
      for (const n of readdirSync(out)) {
        const s = statSync(join(out, n));
        if (s.isDirectory()) for (const c of readdirSync(join(out, n))) sink += statSync(join(out, n, c)).size;
      }
    });
    if (sink < 0) console.log(sink);
    return [
      {
        name: `checkpoints: read a ${(bytes / 2 ** 20).toFixed(0)} MiB Qwen-Image LoRA whole (readFileSync)`,
        value: read,
        unit: 'ms',
      },
      {
        name: 'checkpoints: verify it (header, 2,880 shapes, every value for NaN/inf and all-zero lora_B)',
        value: verify,
        unit: 'ms',
        ratio: verify / read,
      },
      { name: 'checkpoints: readdir + stat of 40 files and 20 checkpoint-N folders', value: bare, unit: 'ms' },
      {
        name: 'checkpoints: one watcher poll of them, all judged (the supervisor every 2 s)',
        value: poll,
        unit: 'ms',
        ratio: poll / bare,
        goal: 'well under 1% of the 2 s interval',
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}
