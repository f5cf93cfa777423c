/**
 * A hostile neighbour on a shared machine: while zerowiz writes configs (`generate --out`), presets
 * (`preset save`) and run records (`launch`), a second user (nobody, through setpriv) races every write in
 * the shared 1777 folders (./neighbour.mjs): links at every name zerowiz writes and at its temp names, dead
 * writers' journals, locks, the folders zerowiz is about to make or links in their place, renames. After every
 * iteration: the victim file and the victim folder (what the links lead to) are byte for byte as they were;
 * every zerowiz ended on its own with 0 or a one-line refusal and its hint (never a crash or a hang); no file
 * of the user's appeared outside the folders the user named (the --out folder, the preset's config folder,
 * the presets folder, the launch's .zerowiz); a launch that succeeded kept its record in private folders of
 * the user's own. Where a second user cannot be had (not root, no setpriv), each iteration says so and passes.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { crashProblems, pick, runBin } from './lib.mjs';

export const name = 'hostile';

const SETPRIV = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];
/** Why the scenario cannot run here, or null. */
let skip = null;
/** Where the neighbour's program is, readable by nobody. */
let neighbourDir = null;
/** How long one zerowiz may take before the iteration calls it hung. */
const HANG_MS = 60_000;

export async function setup(ctx) {
  if (process.getuid?.() !== 0) skip = 'not root: no second user to be (setpriv needs root)';
  else if (spawnSync('setpriv', [...SETPRIV, 'true']).status !== 0) skip = 'setpriv cannot drop to nobody here';
  if (skip) return;
  neighbourDir = mkdtempSync(join(tmpdir(), 'zw-torture-neighbour-'));
  chmodSync(neighbourDir, 0o755);
  copyFileSync(join(ctx.root, '__tests__', 'torture', 'neighbour.mjs'), join(neighbourDir, 'neighbour.mjs'));
  chmodSync(join(neighbourDir, 'neighbour.mjs'), 0o644);
}

export async function teardown() {
  if (neighbourDir) rmSync(neighbourDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

/** Every file (not folder) under `dir` owned by `uid`, as paths relative to `dir`; links are not followed. */
function filesOf(dir, uid, out = [], base = dir) {
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    const p = join(dir, n);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) filesOf(p, uid, out, base);
    else if (st.uid === uid) out.push(relative(base, p));
  }
  return out;
}

/** A snapshot of the victim folder: names and contents. */
function snapshot(dir) {
  return JSON.stringify(
    readdirSync(dir).map((n) => {
      const p = join(dir, n);
      const st = lstatSync(p);
      // Anything but a regular file is named as such (a folder or a link in the victim folder is a change).
      return [n, st.isFile() ? readFileSync(p, 'utf8') : st.isDirectory() ? '<folder>' : '<not a file>'];
    }),
  );
}

/** stderr without the lines a run may print before a refusal (warnings and their fixes, files written). */
function refusalLines(stderr) {
  const lines = stderr.trim().split('\n');
  return lines.filter(
    (l, i) =>
      l !== '' &&
      !l.startsWith('zerowiz: warning: ') &&
      !(l.startsWith('  fix: ') && lines[i - 1]?.startsWith('zerowiz: warning: ')) &&
      !/^zerowiz: (wrote|updated|unchanged) /.test(l),
  );
}

/** Which refusal a one-line error is, for the counts. */
function refusalKind(line) {
  if (/belongs to/.test(line)) return 'another user owns it';
  if (/symbolic link/.test(line)) return 'a link';
  if (/not a regular file|not a folder|is a directory/.test(line)) return 'something else in the way';
  if (/locked by/.test(line)) return 'a live lock';
  if (/journal/.test(line)) return 'a journal';
  return 'other';
}

export async function iteration(ctx) {
  const { dir, rng, bin, root, i } = ctx;
  if (skip) {
    ctx.log(`skipped: ${skip}`);
    return { problems: [], stats: { [`skipped (${skip})`]: 1 } };
  }
  chmodSync(dir, 0o755);
  const shared = join(dir, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  const victim = join(dir, 'victim.bashrc');
  const victimText = `export VICTIM=${i} # must come out byte for byte\n`;
  writeFileSync(victim, victimText, { mode: 0o600 });
  const victimDir = join(dir, 'victim-dir');
  mkdirSync(victimDir, { mode: 0o700 });
  writeFileSync(join(victimDir, 'accelerate_config.yaml'), victimText, { mode: 0o600 });
  const before = snapshot(victimDir);
  // The launch directory and the presets' XDG folder are shared too; the --out folder, the preset's config
  // folder and the presets folder are left for zerowiz (or the neighbour) to make.
  const proj = join(shared, 'proj');
  const xdg = join(shared, 'xdg');
  for (const d of [proj, xdg]) {
    mkdirSync(d);
    chmodSync(d, 0o1777);
  }
  writeFileSync(join(proj, 'train.py'), '# stand-in\n');
  const out = join(shared, 'out');
  const neighbour = spawn(
    'setpriv',
    [
      ...SETPRIV,
      process.execPath,
      join(neighbourDir, 'neighbour.mjs'),
      JSON.stringify({ folders: [shared, proj, xdg], victim, victimDir, seed: Math.floor(rng() * 2 ** 31) }),
    ],
    { cwd: '/', stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: process.env.PATH } },
  );
  let planted = '';
  neighbour.stdout.on('data', (d) => {
    planted += d;
  });
  // Let it get going first: half the time it is there before zerowiz, half the time it starts with it.
  if (rng() < 0.5) await new Promise((r) => setTimeout(r, 20 + rng() * 80));
  const env = {
    HOME: dir,
    XDG_CONFIG_HOME: xdg,
    XDG_CACHE_HOME: join(dir, 'cache'),
    ZEROWIZ_LOCK_WAIT_MS: '2000',
    FAKE_ACCELERATE_STEP_MS: '0',
    // The checks before each pass would refuse the stand-in accelerate (no Python, no GPU) in `npm run torture`.
    ZEROWIZ_SKIP_CHECKS: 'all',
  };
  const fake = join(root, '__tests__', 'fixtures', 'accelerate');
  const twoStep = join(root, '__tests__', 'fixtures', 'launch', 'two-step.yaml');
  const kinds = Array.from({ length: pick(rng, [1, 2, 3]) }, () => pick(rng, ['generate', 'preset', 'launch']));
  const specs = kinds.map((k) =>
    k === 'generate'
      ? { k, argv: ['generate', '--mode', pick(rng, ['2', '3']), '--num-processes', '2', '--out', out], cwd: shared }
      : k === 'preset'
        ? { k, argv: ['preset', 'save', 'p', '--mode', pick(rng, ['2', '3'])], cwd: shared }
        : { k, argv: ['launch', twoStep, '--no-tui', '--accelerate', fake], cwd: proj },
  );
  ctx.log(kinds.join(', '));
  // A zerowiz still running after HANG_MS is killed (by its pid) and counted as hung.
  const results = await Promise.all(
    specs.map(async (s) => {
      const t0 = Date.now();
      const r = await runBin(bin, s.argv, { cwd: s.cwd, env, kill: { signal: 'SIGKILL', afterMs: HANG_MS } });
      return { ...r, hung: r.killed, ms: Date.now() - t0 };
    }),
  );
  neighbour.kill('SIGTERM');
  await new Promise((r) => neighbour.on('close', r));
  const problems = [];
  const stats = { 'zerowiz runs': results.length, succeeded: 0, 'zerowiz ms': results.reduce((a, r) => a + r.ms, 0) };
  for (const [k, r] of results.entries()) {
    const label = `${specs[k].k} (${specs[k].argv.join(' ')})`;
    if (r.hung) problems.push(`${label} hung past ${HANG_MS / 1000} s`);
    problems.push(...crashProblems(r, label));
    if (r.code === 0) {
      stats.succeeded++;
      continue;
    }
    const lines = refusalLines(r.stderr);
    if (
      r.code !== 2 ||
      lines.length < 1 ||
      lines.length > 2 ||
      !/^zerowiz: /.test(lines[0]) ||
      (lines[1] && !lines[1].startsWith('  hint: '))
    )
      problems.push(
        `${label} ended with ${r.code ?? r.signal} and not one refusal line: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
      );
    else stats[`refused: ${refusalKind(lines[0])}`] = (stats[`refused: ${refusalKind(lines[0])}`] ?? 0) + 1;
  }
  // The victims.
  if (readFileSync(victim, 'utf8') !== victimText) problems.push('the victim file was changed');
  if ((lstatSync(victim).mode & 0o777) !== 0o600) problems.push('the victim file changed mode');
  if (snapshot(victimDir) !== before) problems.push(`the victim folder changed: ${readdirSync(victimDir).join(', ')}`);
  // No file of the user's outside the folders the user named (or zerowiz's own record folders).
  const allowed = [/^out\//, /^proj\/cfg\//, /^proj\/\.zerowiz\//, /^proj\/train\.py$/, /^xdg\/zerowiz\/presets\//];
  for (const f of filesOf(shared, 0))
    if (!allowed.some((re) => re.test(f))) problems.push(`a file of the user's outside the named folders: ${f}`);
  // A launch that succeeded: its record in private folders of the user's own.
  if (results.some((r, k) => r.code === 0 && specs[k].k === 'launch')) {
    for (const d of [join(proj, '.zerowiz'), join(proj, '.zerowiz', 'runs')]) {
      const st = lstatSync(d);
      if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o777) !== 0o700)
        problems.push(
          `${relative(dir, d)} is not a private folder of the user's (uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)})`,
        );
    }
    for (const id of readdirSync(join(proj, '.zerowiz', 'runs'))) {
      const st = lstatSync(join(proj, '.zerowiz', 'runs', id));
      if (st.uid !== 0 || (st.mode & 0o777) !== 0o700) problems.push(`record ${id} is not private`);
    }
  }
  try {
    for (const [k, v] of Object.entries(JSON.parse(planted.trim().split('\n').pop() || '{}')))
      stats[`neighbour planted: ${k}`] = v;
  } catch {}
  return { problems, stats };
}
