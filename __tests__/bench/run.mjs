// `npm run bench`: every figure as a ratio to a baseline measured in the same run, never an assertion.
// Each area adds a module here exporting `bench(ctx)` that resolves with rows
// { name, value, unit, ratio?, goal? } (ratio: value / the baseline it names in `name`).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const bin = join(root, 'dist', 'zerowiz.js');

/** Median wall time in ms of `node ...args` over `runs` runs (after one warm-up). */
export function timeNode(args, { runs = 15, env = process.env, input } = {}) {
  spawnSync(process.execPath, args, { env, input, stdio: ['pipe', 'ignore', 'ignore'] });
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    spawnSync(process.execPath, args, { env, input, stdio: ['pipe', 'ignore', 'ignore'] });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const nodeBaselineMs = timeNode(['-e', '0']);
const ctx = { root, bin, nodeBaselineMs, timeNode };
const only = process.argv.slice(2);
const rows = [{ name: 'baseline: node -e 0', value: nodeBaselineMs, unit: 'ms' }];
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs') && (only.length === 0 || only.some((o) => f.includes(o))))
  .sort();
for (const f of files) {
  const mod = await import(pathToFileURL(join(here, f)).href);
  rows.push(...(await mod.bench(ctx)));
}
const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3));
console.log('| figure | value | ratio | goal |');
console.log('|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.name} | ${fmt(r.value)} ${r.unit} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`} | ${r.goal ?? ''} |`,
  );
}
