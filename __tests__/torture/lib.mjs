/** Helpers shared by the torture scenarios: run the bin, hit it with a signal at an instant, look at a folder. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Starts `node BIN ...args`; when `kill` is given, sends `kill.signal` after `kill.afterMs`, or, with
 * `kill.watch` (a folder), `kill.afterMs` after zerowiz's first lock, temp or journal file appears there (the
 * write has begun: this aims the signal into the transaction). Resolves when it has exited (reaped) with
 * {code, signal, stdout, stderr, pid, killed}.
 */
export function runBin(bin, args, { cwd, env, kill } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const hit = () => {
      if (child.exitCode === null && child.signalCode === null) killed = child.kill(kill.signal);
    };
    let timer = kill && !kill.watch ? setTimeout(hit, kill.afterMs) : null;
    const watcher = kill?.watch
      ? watch(kill.watch, (_event, file) => {
          if (timer || !/\.tmp$|\.journal$|^\.zerowiz\.lock$/.test(String(file))) return;
          timer = setTimeout(hit, kill.afterMs);
          if (kill.afterMs === 0) hit();
        })
      : null;
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      watcher?.close();
      resolve({ code, signal, stdout, stderr, pid: child.pid, killed });
    });
  });
}

/** Whether a process runs (a zombie does not), from /proc. */
export function running(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The files of a folder (names), or [] when it is missing. */
export function names(dir) {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Contents of every file of `dir` whose name passes `keep`, by name. */
export function contents(dir, keep = () => true) {
  const out = new Map();
  for (const n of names(dir)) {
    if (!keep(n)) continue;
    try {
      out.set(n, readFileSync(join(dir, n), 'utf8'));
    } catch {
      // a folder or a vanished file
    }
  }
  return out;
}

/** Leftovers zerowiz may never leave once a later zerowiz has written in the folder: temp files, journals, the lock. */
export function leftovers(dir) {
  return names(dir).filter((n) => n.endsWith('.tmp') || n.endsWith('.journal') || n === '.zerowiz.lock');
}

/** Picks one of `xs` with `rng`. */
export function pick(rng, xs) {
  return xs[Math.floor(rng() * xs.length)];
}

/** A random instant in [lo, hi] ms. */
export function between(rng, lo, hi) {
  return Math.round(lo + rng() * (hi - lo));
}

/**
 * How long a command takes when nothing hits it (median of three runs, each in a fresh folder made by
 * `make(dir)` -> {argv, env}): the random instants are spread around it.
 */
export async function calibrate(bin, make) {
  const times = [];
  for (let k = 0; k < 3; k++) {
    const dir = mkdtempSync(join(tmpdir(), 'zw-torture-calibrate-'));
    const { argv, env } = make(dir);
    const t = Date.now();
    await runBin(bin, argv, { cwd: dir, env });
    times.push(Date.now() - t);
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
  return times.sort((a, b) => a - b)[1];
}

/**
 * A signal plan: one of `signals` (null: none); half the time at a random instant of the run (0.3-1.1 x
 * `typicalMs`, times `spread`), half 0-2 ms after the write began (aimed at the transaction).
 */
export function signalPlan(rng, signals, typicalMs, spread = 1) {
  const aimed = rng() < 0.5;
  return {
    signal: pick(rng, signals),
    aimed,
    afterMs: aimed ? between(rng, 0, 2) : between(rng, 0.3 * typicalMs, 1.1 * typicalMs * spread),
  };
}

/** Runs every `{argv, signal, aimed, afterMs}` at once in `cwd`; aimed signals watch the folder `watchDir`. */
export function runAll(bin, specs, { cwd, env, watchDir }) {
  return Promise.all(
    specs.map((p) =>
      runBin(bin, p.argv, {
        cwd,
        env,
        kill: p.signal ? { signal: p.signal, afterMs: p.afterMs, watch: p.aimed ? watchDir : undefined } : undefined,
      }),
    ),
  );
}

/** A plan in a log line: `SIGKILL@write+1ms`, `SIGINT@230ms`, `no signal`. */
export function planText(p) {
  return p.signal ? `${p.signal}@${p.aimed ? 'write+' : ''}${p.afterMs}ms` : 'no signal';
}

/** What is wrong with a finished run whatever it was: still running, or a crash instead of one line. */
export function crashProblems(r, label) {
  const out = [];
  if (running(r.pid)) out.push(`${label} (pid ${r.pid}) still runs`);
  if (/unexpected error|\n\s+at /.test(r.stderr)) out.push(`${label} crashed: ${r.stderr.trim().split('\n')[0]}`);
  return out;
}
