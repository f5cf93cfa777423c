/** Helpers shared by the torture scenarios: run the bin, hit it with a signal at an instant, look at a folder. */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, watch } from 'node:fs';
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

/** How long the command takes when nothing hits it (median of three runs): kills are aimed around it. */
export async function measureMs(bin, args, opts) {
  const times = [];
  for (let k = 0; k < 3; k++) {
    const t = Date.now();
    await runBin(bin, args, opts);
    times.push(Date.now() - t);
  }
  return times.sort((a, b) => a - b)[1];
}
