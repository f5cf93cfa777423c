/**
 * A stop is always gentle, and no training outlives its record. A run (stream mode) of a Python trainer that
 * saves a checkpoint when SIGINT asks it to stop, and whose save a second SIGINT cuts (as a KeyboardInterrupt
 * would): __tests__/fixtures/trainers/accelerate-saver, with a worker (a second rank) half the time. At random
 * instants: 0-3 `zerowiz stop RUN` (some at once), sometimes a `zerowiz stop RUN --now`, and SIGKILL of the
 * run's supervisor, of its watchdog, or of both (sometimes at the same instant).
 *
 * What must hold after every iteration:
 * - every `zerowiz stop` ended on its own, exit 0, within the time the ladder allows;
 * - no step process lives without a record that says so: once the dust settles, either none of the trainer's
 *   processes is alive and the record is final (or `zerowiz runs` settles it), or they all are, the record says
 *   `running`, and `zerowiz runs --json` lists the run as orphaned with exactly those pids; a last `zerowiz stop`
 *   then ends them (gently) and the record says `interrupted`;
 * - unless `--now` was used: each rank got at most one SIGINT, and every save that began completed (no `cut`,
 *   every `saving` has its `saved`); the ledger in events.jsonl holds at most one SIGINT per group;
 * - the record directory holds no leftover (a stop lock, the space reserve, a temporary file).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { running } from './lib.mjs';

export const name = 'stop';

const PRESET = `name: saver
answers:
  num_processes: 1
  mode: "2"
steps:
  - name: train
    uses_config: true
    args: [train.py]
`;
/** The ladder's grace periods here: SIGINT's holds the trainer's save several times over. */
const SIGINT_GRACE_MS = 2_500;
const SIGTERM_GRACE_MS = 800;
/** The trainer's save, and its steps (400 x 10 ms: a run left alone ends by itself after about 4 s). */
const SAVE_MS = 300;
/** Signals and stops land in [0, WINDOW_MS] after the trainer started. */
const WINDOW_MS = 1_800;
/** How long one `zerowiz stop` may take: the whole ladder, a Node start, and a load of 2 busy cores. */
const STOP_HANG_MS = 45_000;

function envOf(ctx) {
  const e = {
    ...process.env,
    HOME: ctx.dir,
    XDG_CONFIG_HOME: join(ctx.dir, 'xdg'),
    NO_COLOR: '1',
    ZEROWIZ_SKIP_CHECKS: 'all',
    ZEROWIZ_SIGINT_GRACE_MS: String(SIGINT_GRACE_MS),
    ZEROWIZ_SIGTERM_GRACE_MS: String(SIGTERM_GRACE_MS),
    SAVER_DIR: join(ctx.dir, 'out'),
    SAVER_STEPS: '400',
    SAVER_PERIOD_MS: '10',
    SAVER_SAVE_MS: String(SAVE_MS),
  };
  delete e.CI;
  return e;
}

const saver = (ctx) => join(ctx.root, '__tests__', 'fixtures', 'trainers', 'accelerate-saver');

function notes(ctx) {
  try {
    return readFileSync(join(ctx.dir, 'out', 'notes.log'), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** The trainer's live processes (the launcher and its worker), by their environment and command line. */
function trainers(ctx) {
  const out = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8');
      if (!cmd.includes('accelerate-saver') || cmd.includes('zerowiz.js')) continue;
      if (readFileSync(`/proc/${n}/environ`, 'utf8').includes(`SAVER_DIR=${ctx.dir}/out`) && running(Number(n)))
        out.push(Number(n));
    } catch {}
  }
  return out.sort((a, b) => a - b);
}

function recordDir(ctx) {
  const root = join(ctx.dir, '.zerowiz', 'runs');
  const id = existsSync(root) ? readdirSync(root).find((n) => !n.startsWith('.')) : undefined;
  return id ? { id, dir: join(root, id) } : null;
}

function runJson(rec) {
  try {
    return JSON.parse(readFileSync(join(rec.dir, 'run.json'), 'utf8'));
  } catch {
    return null;
  }
}

/** Runs `zerowiz ARGS` in the iteration's folder; resolves with its exit and output (null code: it hung). */
function zerowiz(ctx, args, hangMs = STOP_HANG_MS) {
  return new Promise((res) => {
    const c = spawn(process.execPath, [ctx.bin, ...args], {
      cwd: ctx.dir,
      env: envOf(ctx),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.stderr.on('data', (d) => {
      out += d;
    });
    const timer = setTimeout(() => {
      c.kill('SIGKILL');
      res({ code: null, out, hung: true });
    }, hangMs);
    c.on('exit', (code) => {
      clearTimeout(timer);
      res({ code, out, hung: false });
    });
  });
}

async function until(pred, ms) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function kill(pid) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
}

/** The plan of an iteration, drawn from its generator. */
function drawPlan(rng) {
  const at = () => Math.floor(rng() * WINDOW_MS);
  const stops = Array.from({ length: Math.floor(rng() * 4) }, at);
  // Two stops at the same instant, some of the time.
  if (stops.length > 1 && rng() < 0.4) stops[1] = stops[0];
  const now = rng() < 0.15 ? at() : null;
  const sup = rng() < 0.4 ? at() : null;
  let dog = rng() < 0.4 ? at() : null;
  if (sup !== null && dog !== null && rng() < 0.3) dog = sup;
  return { workers: rng() < 0.5 ? 1 : 0, stops, now, sup, dog };
}

export async function iteration(ctx) {
  const problems = [];
  const plan = drawPlan(ctx.rng);
  ctx.log(
    `workers ${plan.workers}, stops at [${plan.stops.join(', ')}] ms${plan.now !== null ? `, --now at ${plan.now}` : ''}${plan.sup !== null ? `, SIGKILL supervisor at ${plan.sup}` : ''}${plan.dog !== null ? `, SIGKILL watchdog at ${plan.dog}` : ''}`,
  );
  mkdirSync(join(ctx.dir, 'out'));
  writeFileSync(join(ctx.dir, 'saver.yaml'), PRESET);
  writeFileSync(join(ctx.dir, 'train.py'), '# stand-in\n');
  const viewer = spawn(process.execPath, [ctx.bin, 'launch', 'saver.yaml', '--no-tui', '--accelerate', saver(ctx)], {
    cwd: ctx.dir,
    env: { ...envOf(ctx), SAVER_WORKERS: String(plan.workers) },
    stdio: 'ignore',
  });
  try {
    if (!(await until(() => notes(ctx).some((l) => l.startsWith('start 0')), 30_000)))
      return { problems: ['the trainer did not start within 30 s'] };
    const rec = recordDir(ctx);
    const first = rec && runJson(rec);
    if (!first?.supervisor) return { problems: ['no record with its supervisor once the trainer ran'] };
    await act(ctx, rec, plan, problems);
    await settle(ctx, rec, plan, problems);
  } finally {
    viewer.kill('SIGKILL');
    for (const p of trainers(ctx)) kill(p);
  }
  return { problems, stats: { iterations: 1 } };
}

/** Carries out the plan: the stops and the kills at their instants; resolves once every stop has ended. */
async function act(ctx, rec, plan, problems) {
  const t0 = Date.now();
  const at = (ms) => sleep(Math.max(0, ms - (Date.now() - t0)));
  const stops = plan.stops.map((ms) => at(ms).then(() => zerowiz(ctx, ['stop', rec.id])));
  if (plan.now !== null) stops.push(at(plan.now).then(() => zerowiz(ctx, ['stop', rec.id, '--now'])));
  const kills = [];
  // The supervisor and the watchdog as the record names them at that instant (a watchdog replaced since included).
  if (plan.sup !== null) kills.push(at(plan.sup).then(() => kill(runJson(rec)?.supervisor?.pid)));
  if (plan.dog !== null) kills.push(at(plan.dog).then(() => kill(runJson(rec)?.supervisor?.watchdog?.pid)));
  await Promise.all(kills);
  for (const r of await Promise.all(stops)) {
    if (r.hung) problems.push(`a zerowiz stop hung (${STOP_HANG_MS / 1000} s): ${r.out.trim().split('\n').at(-1)}`);
    else if (r.code !== 0) problems.push(`a zerowiz stop exited ${r.code}: ${r.out.trim()}`);
  }
}

/** Whether the run's owner (its supervisor, or a watchdog) still runs. */
function ownerAlive(rec) {
  const s = runJson(rec)?.supervisor;
  return (s && running(s.pid)) || (s?.watchdog && running(s.watchdog.pid));
}

/** Waits for the dust to settle, then checks the promises (see the module comment). */
async function settle(ctx, rec, plan, problems) {
  // Either the run ends (its owner finishes it, or it finishes by itself), or its owner is gone.
  const quiet = () => (runJson(rec)?.ended !== 'running' && trainers(ctx).length === 0) || !ownerAlive(rec);
  if (!(await until(quiet, 30_000))) {
    problems.push(`the run neither ended nor lost its owner within 30 s (record: ${runJson(rec)?.ended})`);
    return;
  }
  await until(() => !ownerAlive(rec) || runJson(rec)?.ended !== 'running', 5_000);
  const alive = trainers(ctx);
  const json = runJson(rec);
  if (alive.length > 0) {
    if (json?.ended !== 'running')
      problems.push(`trainer processes ${alive.join(', ')} live, but the record says ${json?.ended}`);
    // The orphans may end meanwhile (their training finishes, or a SIGINT the killed watchdog sent lets them save
    // and exit): `runs` must list every one still alive after it answered, and none not alive before it was asked.
    const before = trainers(ctx);
    const listed = await zerowiz(ctx, ['runs', '--json'], 20_000);
    const after = trainers(ctx);
    let orphans = null;
    try {
      orphans = JSON.parse(listed.out)[0]?.orphans?.map((o) => o.pid);
    } catch {}
    const listedRight =
      Array.isArray(orphans) && after.every((p) => orphans.includes(p)) && orphans.every((p) => before.includes(p));
    if (!listedRight)
      problems.push(
        `runs --json lists orphans ${JSON.stringify(orphans)}; the trainer's processes were ${JSON.stringify(before)} before and ${JSON.stringify(after)} after`,
      );
    const last = await zerowiz(ctx, ['stop', rec.id]);
    if (last.hung || last.code !== 0)
      problems.push(
        `the last stop of the orphaned run: ${last.hung ? 'hung' : `exit ${last.code}`}: ${last.out.trim()}`,
      );
    if (!(await until(() => trainers(ctx).length === 0, 10_000))) problems.push('the orphans outlived the last stop');
  }
  if (runJson(rec)?.ended === 'running') {
    // Nobody runs it and nothing of it lives: `runs` settles it.
    await zerowiz(ctx, ['runs'], 20_000);
    if (runJson(rec)?.ended === 'running') problems.push('the record still says running with nothing of the run alive');
  }
  // The record says the run ended before the supervisor's last writes (live.json, the last events) and its exit:
  // the leftovers are judged once the run's owner is gone.
  if (!(await until(() => !ownerAlive(rec), 20_000)))
    problems.push('the supervisor or its watchdog still runs 20 s after the run ended');
  checkSaves(ctx, rec, plan, problems);
  checkLeftovers(rec, problems);
}

/** Unless --now was used: one SIGINT per rank and per group, and every save complete. */
function checkSaves(ctx, rec, plan, problems) {
  if (plan.now !== null) return;
  const lines = notes(ctx);
  for (const rank of ['0', '1']) {
    const of = (what) => lines.filter((l) => l.startsWith(`${what} ${rank} `)).length;
    if (of('sigint') > 1) problems.push(`rank ${rank} got ${of('sigint')} SIGINTs`);
    if (of('cut') > 0) problems.push(`rank ${rank}'s save was cut by a stop that was not --now`);
    if (of('saving') > of('saved')) problems.push(`rank ${rank} began a save that never completed`);
  }
  let events = [];
  try {
    events = readFileSync(join(rec.dir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {}
  const sigints = new Map();
  for (const e of events)
    if (e.t === 'signal' && e.sig === 'SIGINT') sigints.set(e.pgid, (sigints.get(e.pgid) ?? 0) + 1);
  for (const [pgid, n] of sigints) if (n > 1) problems.push(`the ledger has ${n} SIGINTs for group ${pgid}`);
}

/** No stop lock, space reserve or temporary file left in the record directory. */
function checkLeftovers(rec, problems) {
  for (const n of readdirSync(rec.dir))
    if (/^stop\.lock\.|^\.space-reserve$|\.tmp-/.test(n)) problems.push(`left in the record: ${n}`);
}
