/**
 * `preset save` and `preset delete` on a user preset (and `preset save` over a file zerowiz cannot parse),
 * hit by SIGKILL or SIGINT at random instants, alone or in parallel. After every iteration: the previous
 * preset exists as the file, a backup or a deleted copy; every reported save exists; the unparseable file is
 * byte for byte as it was and has no backup; no half file; nothing left once a later save ran; no process alive.
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

export const name = 'preset';

const BAD_TEXT = 'answers: [unclosed\n';
let typicalMs = 400;

function sandbox(dir) {
  const env = { HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_CACHE_HOME: join(dir, 'cache') };
  return { env, presets: join(dir, 'cfg', 'zerowiz', 'presets') };
}

export async function setup(ctx) {
  typicalMs = await calibrate(ctx.bin, (dir) => ({
    argv: ['preset', 'save', 'p', '--description', 'x'],
    env: sandbox(dir).env,
  }));
}

function check(presets, original, saved, settled, hardKilled) {
  const problems = [];
  const files = contents(presets, (n) => !n.endsWith('.tmp') && !n.endsWith('.journal') && n !== '.zerowiz.lock');
  const bad = [...files.keys()].filter((n) => n.startsWith('bad.yaml'));
  if (files.get('bad.yaml') !== BAD_TEXT) problems.push('the unparseable bad.yaml was changed');
  if (bad.length !== 1) problems.push(`bad.yaml got copies: ${bad.join(', ')}`);
  const ours = [...files].filter(([n]) => n.startsWith('p.yaml'));
  if (original !== null && !ours.some(([, t]) => t === original))
    problems.push('the previous p.yaml is gone (neither intact, backed up nor kept as deleted)');
  for (const d of saved)
    if (!ours.some(([, t]) => t.includes(`description: ${d}\n`))) problems.push(`a reported save is lost: ${d}`);
  for (const [n, t] of files) {
    if (n.startsWith('bad.yaml')) continue;
    try {
      parseYaml(t);
    } catch (e) {
      problems.push(`half file ${n}: ${String(e.message).split('\n')[0]}`);
    }
  }
  const left = leftovers(presets);
  if ((settled || !hardKilled) && left.length > 0) problems.push(`left behind: ${left.join(', ')}`);
  return problems;
}

export async function iteration(ctx) {
  const { dir, rng, bin, i } = ctx;
  const { env, presets } = sandbox(dir);
  mkdirSync(presets, { recursive: true });
  writeFileSync(join(presets, 'bad.yaml'), BAD_TEXT);
  const original = rng() < 0.75 ? `description: orig-${i}\nanswers:\n  mode: '3'\n` : null;
  if (original !== null) writeFileSync(join(presets, 'p.yaml'), original);
  const ops = Array.from({ length: pick(rng, [1, 1, 2, 3]) }, (_, k) => {
    const what = pick(rng, ['save', 'save', 'delete', 'save-bad']);
    const description = `d-${i}-${k}`;
    const argv =
      what === 'save'
        ? ['preset', 'save', 'p', '--mode', pick(rng, ['2', '3']), '--description', description]
        : what === 'delete'
          ? ['preset', 'delete', 'p']
          : ['preset', 'save', 'bad', '--description', description];
    return { what, description, argv, ...signalPlan(rng, ['SIGKILL', 'SIGINT', 'SIGKILL', null], typicalMs) };
  });
  ctx.log(`${original ? 'p.yaml exists' : 'no p.yaml'}; ${ops.map((o) => `${o.what} ${planText(o)}`).join(', ')}`);
  const results = await runAll(bin, ops, { cwd: dir, env, watchDir: presets });
  const problems = [];
  const saved = [];
  for (const [k, r] of results.entries()) {
    const o = ops[k];
    problems.push(...crashProblems(r, o.what));
    if (o.what === 'save-bad' && r.code === 0) problems.push('preset save over the unparseable bad.yaml succeeded');
    if (o.what === 'save' && r.code === 0) saved.push(o.description);
    if (o.what === 'save' && r.code !== 0 && r.signal === null && r.code !== 130)
      problems.push(`save exited ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
  }
  const hardKilled = results.some((r) => r.signal === 'SIGKILL');
  problems.push(...check(presets, original, saved, false, hardKilled));
  const left = leftovers(presets);
  const stats = {
    'signals landed': results.filter((r) => r.signal !== null).length,
    'SIGKILL aimed at the write': results.filter((r, k) => r.signal === 'SIGKILL' && ops[k].aimed).length,
    'SIGKILL mid-write (leftovers to recover)': hardKilled && left.length > 0 ? 1 : 0,
  };
  const follow = await runBin(bin, ['preset', 'save', 'follow', '--description', 'f'], { cwd: dir, env });
  if (follow.code !== 0) problems.push(`the next preset save failed: ${follow.stderr.trim().split('\n')[0]}`);
  problems.push(...check(presets, original, saved, true, hardKilled).map((p) => `after the next save: ${p}`));
  if (!names(presets).includes('follow.yaml')) problems.push('the next preset save wrote nothing');
  return { problems, stats };
}
