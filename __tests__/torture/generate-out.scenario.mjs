/**
 * `generate --out` over the user's existing files, hit by SIGKILL or SIGINT at random instants, with one
 * writer or several in parallel. After every iteration: the user's previous files exist intact or as
 * backups; every write a writer reported exists (as the file or a backup); no half file; the YAML and the JSON
 * are a pair (or a dead writer's journal says how to finish it, which the next writer does); no temp file,
 * journal or lock is left once a later zerowiz has written there; no writer is still running.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  calibrate,
  contents,
  crashProblems,
  leftovers,
  names,
  pick,
  planText,
  runAll,
  runBin,
  signalPlan,
} from './lib.mjs';

export const name = 'generate-out';

const YAML = 'accelerate_config.yaml';
const JSON_FILE = 'ds_config.json';
let typicalMs = 400;

function args(out, steps, mode) {
  return [
    'generate',
    '--mode',
    mode,
    '--num-processes',
    '8',
    '--gradient-accumulation-steps',
    String(steps),
    '--out',
    out,
  ];
}

function sandboxEnv(dir) {
  return { HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_CACHE_HOME: join(dir, 'cache') };
}

export async function setup(ctx) {
  typicalMs = await calibrate(ctx.bin, (dir) => ({ argv: args(join(dir, 'out'), 1, '3'), env: sandboxEnv(dir) }));
}

const isZerowizYaml = (t) => t?.includes('deepspeed_config_file:');
const isZerowizJson = (t) => t?.includes('"zero_optimization"');

/** Checks the folder; `settled` after a clean writer ran there (no leftovers allowed at all). */
function check(out, originals, reported, settled, hardKilled) {
  const problems = [];
  const files = contents(out, (n) => !n.endsWith('.tmp') && !n.endsWith('.journal') && n !== '.zerowiz.lock');
  for (const [n, text] of originals)
    if (![...files.values()].includes(text)) problems.push(`the user's ${n} is gone (neither intact nor backed up)`);
  for (const [n, text] of files) {
    try {
      if (n.startsWith(JSON_FILE)) JSON.parse(text);
      else parseYaml(text);
    } catch (e) {
      problems.push(`half file ${n}: ${String(e.message).split('\n')[0]}`);
    }
  }
  const jsons = [...files].filter(([n]) => n.startsWith(JSON_FILE)).map(([, t]) => t);
  for (const steps of reported)
    if (!jsons.some((t) => t.includes(`"gradient_accumulation_steps": ${steps},`)))
      problems.push(`a reported write is lost: the JSON with gradient_accumulation_steps ${steps}`);
  const yaml = files.get(YAML);
  const json = files.get(JSON_FILE);
  const whole = (isZerowizYaml(yaml) && isZerowizJson(json)) || (!isZerowizYaml(yaml) && !isZerowizJson(json));
  const journal = names(out).some((n) => n.endsWith('.journal'));
  if (!whole && !(hardKilled && journal && !settled))
    problems.push(
      `the pair is mixed: YAML ${isZerowizYaml(yaml) ? 'new' : 'old'}, JSON ${isZerowizJson(json) ? 'new' : 'old'}`,
    );
  const left = leftovers(out);
  if ((settled || !hardKilled) && left.length > 0) problems.push(`left behind: ${left.join(', ')}`);
  return problems;
}

export async function iteration(ctx) {
  const { dir, rng, bin, i } = ctx;
  const out = join(dir, 'out');
  mkdirSync(out);
  const env = sandboxEnv(dir);
  const tag = `u${i}-${Math.floor(rng() * 1e9)}`;
  const existing = pick(rng, ['none', 'yaml', 'both', 'both']);
  const originals = new Map();
  if (existing !== 'none')
    originals.set(YAML, `# the user's own config\ncompute_environment: LOCAL_MACHINE\nuser_tag: ${tag}\n`);
  if (existing === 'both') originals.set(JSON_FILE, `{"user_tag": "${tag}"}\n`);
  for (const [n, t] of originals) writeFileSync(join(out, n), t);

  const writers = pick(rng, [1, 1, 1, 2, 3, 5]);
  const plan = Array.from({ length: writers }, (_, w) => ({
    steps: i * 10 + w + 1,
    mode: pick(rng, ['2', '3', '3-offload']),
    ...signalPlan(rng, ['SIGKILL', 'SIGINT', 'SIGKILL', 'SIGINT', null], typicalMs, Math.max(1, writers / 2)),
  }));
  for (const p of plan) p.argv = args(out, p.steps, p.mode);
  ctx.log(`${existing} existing, ${plan.map(planText).join(' ')}`);
  const results = await runAll(bin, plan, { cwd: dir, env, watchDir: out });
  const problems = [];
  const reported = [];
  for (const [w, r] of results.entries()) {
    problems.push(...crashProblems(r, `writer ${w}`));
    if (r.code === 0) {
      if (!r.stdout.includes(JSON_FILE)) problems.push(`writer ${w} exited 0 without saying what it wrote`);
      reported.push(plan[w].steps);
    } else if (r.signal === null && r.code !== 130) {
      problems.push(`writer ${w} exited ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
    }
  }
  const hardKilled = results.some((r) => r.signal === 'SIGKILL');
  problems.push(...check(out, originals, reported, false, hardKilled));
  const left = leftovers(out);
  const stats = {
    'signals landed': results.filter((r) => r.signal !== null).length,
    'SIGKILL aimed at the write': results.filter((r, k) => r.signal === 'SIGKILL' && plan[k].aimed).length,
    'SIGKILL mid-write (leftovers to recover)': hardKilled && left.length > 0 ? 1 : 0,
    'journals finished or undone by the next writer': left.some((n) => n.endsWith('.journal')) ? 1 : 0,
  };
  // A later writer finishes or undoes what a killed one left, and leaves nothing behind itself.
  const follow = await runBin(bin, args(out, 9, '3'), { cwd: dir, env });
  if (follow.code !== 0) problems.push(`the next generate failed: ${follow.stderr.trim().split('\n')[0]}`);
  else reported.push(9);
  problems.push(...check(out, originals, reported, true, hardKilled).map((p) => `after the next generate: ${p}`));
  return { problems, stats };
}
