#!/usr/bin/env node
/**
 * The fault-injection ("torture") runner: loops the dangerous moments (SIGKILL, SIGINT at random instants
 * during writes and launches) and checks after every iteration what zerowiz promises. Contract:
 * /work/notes/torture-contract.md (kept in docs/design/promises.md).
 *
 *   node __tests__/torture/run.mjs [--iterations N] [--seed S] [--only NAME]
 *
 * Scenarios are the `*.scenario.mjs` files of this folder (found by listing it). Iterations are spread
 * round-robin over them. Each iteration gets a fresh temp dir and its own random generator, seeded from the
 * run's seed and the iteration number, so a failure line names everything needed to look at it again.
 * Prints one line per failure and a last line `torture: N iterations, F failures (seed S)`; exits 1 on failures.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const BIN = join(ROOT, 'dist', 'zerowiz.js');

/** mulberry32: a small seeded generator with Math.random's shape. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The scenario modules of this folder, sorted by file name. */
export async function loadScenarios(only) {
  const files = readdirSync(HERE)
    .filter((f) => f.endsWith('.scenario.mjs'))
    .sort();
  const mods = [];
  for (const f of files) {
    const mod = await import(pathToFileURL(join(HERE, f)).href);
    if (typeof mod.name !== 'string' || typeof mod.iteration !== 'function')
      throw new Error(`${f}: a scenario exports name and iteration()`);
    mods.push(mod);
  }
  const names = new Set();
  for (const m of mods) {
    if (names.has(m.name)) throw new Error(`two scenarios are named ${m.name}`);
    names.add(m.name);
  }
  const chosen = only ? mods.filter((m) => m.name === only) : mods;
  if (only && chosen.length === 0) throw new Error(`no scenario named ${only} (have: ${[...names].join(', ')})`);
  return chosen;
}

/**
 * Runs `iterations` iterations over the scenarios; resolves with the counts and the failure lines.
 * `print` gets each line as it is made (failures, then the closing line).
 */
export async function runTorture({ iterations = 1000, seed = Date.now() % 2 ** 31, only, print = () => {} } = {}) {
  const scenarios = await loadScenarios(only);
  const failures = [];
  const perScenario = new Map(scenarios.map((s) => [s.name, 0]));
  /** What the scenarios counted (e.g. how many kills landed mid-write), summed. */
  const counts = new Map();
  const started = Date.now();
  for (const s of scenarios) if (s.setup) await s.setup({ bin: BIN, root: ROOT, rng: seededRandom(seed ^ 0x5eed) });
  try {
    for (let i = 0; i < iterations; i++) {
      const s = scenarios[i % scenarios.length];
      const dir = mkdtempSync(join(tmpdir(), `zw-torture-${s.name}-`));
      const notes = [];
      const ctx = {
        i,
        bin: BIN,
        root: ROOT,
        dir,
        rng: seededRandom((seed + Math.imul(i + 1, 0x9e3779b1)) >>> 0),
        log: (line) => notes.push(line),
      };
      let problems;
      try {
        let stats;
        ({ problems, stats } = await s.iteration(ctx));
        for (const [k, v] of Object.entries(stats ?? {}))
          counts.set(`${s.name} ${k}`, (counts.get(`${s.name} ${k}`) ?? 0) + v);
      } catch (e) {
        problems = [`the iteration threw: ${e?.stack ?? e}`];
      }
      perScenario.set(s.name, perScenario.get(s.name) + 1);
      if (problems.length > 0) {
        for (const p of problems) {
          const line = `FAIL ${s.name} iteration ${i} (seed ${seed}): ${p}${notes.length ? ` [${notes.join('; ')}]` : ''} (dir kept: ${dir})`;
          failures.push(line);
          print(line);
        }
      } else {
        // A process of the iteration may still be finishing a write there: try again rather than stop the run.
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      }
    }
  } finally {
    for (const s of scenarios) if (s.teardown) await s.teardown({ bin: BIN, root: ROOT });
  }
  const seconds = (Date.now() - started) / 1000;
  const spread = [...perScenario].map(([n, k]) => `${n} ${k}`).join(', ');
  const summary = `torture: ${iterations} iterations, ${failures.length} failures (seed ${seed})`;
  print(`(${spread}; ${seconds.toFixed(1)} s)`);
  if (counts.size > 0) print(`(${[...counts].map(([k, v]) => `${k}: ${v}`).join(', ')})`);
  print(summary);
  return { iterations, failures, seed, seconds, summary };
}

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--iterations') out.iterations = Number.parseInt(value(), 10);
    else if (a === '--seed') out.seed = Number.parseInt(value(), 10);
    else if (a === '--only') out.only = value();
    else if (a === '--help' || a === '-h') out.help = true;
    else throw new Error(`unknown argument ${a} (see --help)`);
  }
  if (out.iterations !== undefined && !(out.iterations > 0)) throw new Error('--iterations takes a number > 0');
  if (out.seed !== undefined && !Number.isFinite(out.seed)) throw new Error('--seed takes a number');
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`torture: ${e.message}\n`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write('usage: node __tests__/torture/run.mjs [--iterations N] [--seed S] [--only NAME]\n');
    process.exit(0);
  }
  const seed = args.seed ?? Date.now() % 2 ** 31;
  process.stdout.write(`torture: seed ${seed}\n`);
  const r = await runTorture({ ...args, seed, print: (l) => process.stdout.write(`${l}\n`) });
  process.exitCode = r.failures.length > 0 ? 1 : 0;
}
