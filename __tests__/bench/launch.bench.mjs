// The launch flood: FLOOD_LINES log lines (~100 bytes each; half are tqdm `\r` redraws on stderr, half
// log lines on stdout) through stream mode and through the pane, against the same child writing to
// /dev/null. Two figures per viewer: the whole `zerowiz launch` (a viewer prints or draws what the run wrote,
// at its own pace, after the child too) and the child's own time under it (the step's duration in run.json:
// what the training pays). And the child's time under a stalled viewer (one whose stdout nobody reads, one
// stopped with SIGSTOP): the run belongs to its supervisor, so it must not change.
// ZEROWIZ_BENCH_FLOOD_LINES scales it down for quick runs (default: the issue's 1,000,000).
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from 'node-pty';
import xterm from '@xterm/headless';
import { withBusyNeighbour } from './neighbour.mjs';

const FLOOD_LINES = Number(process.env.ZEROWIZ_BENCH_FLOOD_LINES ?? 1_000_000);
// Each figure is the median of RUNS interleaved runs (child, stream, pane, child, ...): on a shared
// 2-core machine one run says little. Key latencies of all pane runs are pooled for the p95.
const RUNS = Math.max(1, Number(process.env.ZEROWIZ_BENCH_LAUNCH_RUNS ?? 3));
const KEY_INTERVAL_MS = 150;

const PRESET = `name: flood
answers:
  num_processes: 1
  mode: 3-offload
  mixed_precision: bf16
  gradient_checkpointing: true
files:
  accelerate_config: cfg/accelerate_config.yaml
  ds_config: cfg/ds_config.json
steps:
  - name: train
    uses_config: true
    args: [train.py, --task, "sft:train"]
`;

// The stand-in accelerate is no Python and there is no GPU here: the checks before each pass would refuse the
// flood's pass. They have their own bench (checks.bench.mjs); these figures are the stream's and the pane's.
function cleanEnv(extra) {
  const env = { ...process.env, ZEROWIZ_SKIP_CHECKS: 'all', ...extra };
  delete env.CI;
  delete env.CONTINUOUS_INTEGRATION;
  return env;
}

/** Peak RSS (VmHWM) of a pid, polled until it exits. */
function watchMemory(pid) {
  let peakKb = 0;
  const read = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {}
  };
  const t = setInterval(read, 20);
  return {
    stop: () => {
      read();
      clearInterval(t);
      return peakKb / 1024;
    },
  };
}

function runToDevNull(cmd, args, opts) {
  return new Promise((res, rej) => {
    const fd = openSync('/dev/null', 'w');
    const t0 = performance.now();
    const c = spawn(cmd, args, { ...opts, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const mem = watchMemory(c.pid);
    c.on('error', rej);
    c.on('exit', (code) => res({ ms: performance.now() - t0, code, peakMb: mem.stop() }));
  });
}

function pct(values, p) {
  const v = [...values].sort((a, b) => a - b);
  return v.length === 0 ? NaN : v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
}

async function paneRun(bin, fake, cwd, env) {
  const cols = 120;
  const rows = 30;
  const term = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 0 });
  const t0 = performance.now();
  const p = pty.spawn(process.execPath, [bin, 'launch', 'flood.yaml', '--accelerate', fake], {
    name: 'xterm-256color',
    cols,
    rows,
    cwd,
    env,
  });
  const mem = watchMemory(p.pid);
  p.onData((d) => term.write(d));
  let exited = false;
  const exit = new Promise((res) =>
    p.onExit((e) => {
      exited = true;
      res(e.exitCode);
    }),
  );
  const screen = () => {
    const b = term.buffer.active;
    let s = '';
    for (let i = 0; i < rows; i++) s += `${b.getLine(b.viewportY + i)?.translateToString(true) ?? ''}\n`;
    return s;
  };
  const flush = () => new Promise((r) => term.write('', r));
  // Wait for the pane to be up and streaming.
  while (!exited && !/ETA|q to close/.test(screen())) {
    await flush();
    await new Promise((r) => setTimeout(r, 10));
  }
  const latencies = [];
  let wrap = false;
  // Keys while the run goes; at its end the pane stays open until q.
  const ended = () => /q to close/.test(screen());
  while (!exited && !ended()) {
    wrap = !wrap;
    const want = wrap ? 'wrap on' : 'wrap off';
    const k0 = performance.now();
    p.write('w');
    while (!exited) {
      await flush();
      if (screen().includes(want)) {
        latencies.push(performance.now() - k0);
        break;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    await new Promise((r) => setTimeout(r, KEY_INTERVAL_MS));
  }
  while (!exited && !ended()) {
    await flush();
    await new Promise((r) => setTimeout(r, 10));
  }
  p.write('q');
  const code = await exit;
  return { ms: performance.now() - t0, code, peakMb: mem.stop(), latencies, childMs: childMsOf(cwd) };
}

/** The step's own time in the newest run record of `cwd` (spawn to exit, as the supervisor saw it). */
function childMsOf(cwd) {
  const root = join(cwd, '.zerowiz', 'runs');
  const [id] = readdirSync(root).sort().reverse();
  return JSON.parse(readFileSync(join(root, id, 'run.json'), 'utf8')).steps[0].durationMs;
}

/** Waits until the newest run record of `cwd` has ended. */
async function runEnded(cwd) {
  for (;;) {
    try {
      const root = join(cwd, '.zerowiz', 'runs');
      const [id] = readdirSync(root).sort().reverse();
      if (id && JSON.parse(readFileSync(join(root, id, 'run.json'), 'utf8')).ended !== 'running') return;
    } catch {}
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Stream mode under a stalled viewer: `stdout` a pipe nobody reads, or the viewer stopped with SIGSTOP once the
 * run started; the child's own time once the run has ended (then the viewer is let go).
 */
async function stalledRun(bin, fake, cwd, env, how) {
  const c = spawn(process.execPath, [bin, 'launch', 'flood.yaml', '--no-tui', '--accelerate', fake], {
    cwd,
    env,
    stdio: ['ignore', how === 'pipe' ? 'pipe' : 'ignore', 'ignore'],
  });
  const exited = new Promise((res) => c.on('exit', res));
  if (how === 'stop') {
    // Stopped as soon as the run has a record: the supervisor runs it from then on.
    for (;;) {
      try {
        if (readdirSync(join(cwd, '.zerowiz', 'runs')).length > 0) break;
      } catch {}
      await new Promise((r) => setTimeout(r, 5));
    }
    c.kill('SIGSTOP');
  }
  await runEnded(cwd);
  const childMs = childMsOf(cwd);
  if (how === 'stop') c.kill('SIGCONT');
  c.kill('SIGKILL');
  await exited;
  return { childMs };
}

const WATCHDOG_SPAWNS = 40;

/**
 * What starting the launch's watchdog costs zerowiz: the time spawn() blocks (until `sh` has started), from
 * a process holding about as much memory as zerowiz does then (fork copies the page tables).
 */
function watchdogSpawnMs() {
  const ballast = Array.from({ length: 300_000 }, (_, i) => ({ i, s: String(i) }));
  const times = [];
  for (let i = 0; i < WATCHDOG_SPAWNS; i++) {
    const t0 = performance.now();
    const c = spawn('/bin/sh', ['-c', 'read -r l'], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    times.push(performance.now() - t0);
    c.stdin.end('e\n');
  }
  return { median: pct(times, 50), p90: pct(times, 90), ballast: ballast.length };
}

/**
 * The floor under the ratios, as reference rows (no goals): the same child piped into readers that do nothing
 * with what they read, run in the same series. `cat` and `node` reading their stdin start beside the child (the
 * shell starts both at once), so they show what a pipe reader costs the child on this machine; the Node
 * launcher starts first and then the child, as zerowiz does, with its two pipes, and appends every raw chunk to
 * a log file (the one thing zerowiz must do with each byte): Node's start plus the pipes plus the log.
 */
const FLOOR_READERS = [
  { key: 'cat', name: 'child | cat > /dev/null' },
  { key: 'nodeStdin', name: 'child | node reading its stdin (discards it)' },
  {
    key: 'launcher',
    name: 'a Node launcher (spawns the child, reads its two pipes, appends every chunk to a log file)',
  },
];

function runFloor(key, { fake, cwd, env, root }) {
  const child = `"$0" launch train.py`;
  if (key === 'cat') return runToDevNull('/bin/sh', ['-c', `${child} 2>&1 | cat > /dev/null`, fake], { cwd, env });
  if (key === 'nodeStdin')
    return runToDevNull('/bin/sh', ['-c', `${child} 2>&1 | "$1" -e 'process.stdin.resume()'`, fake, process.execPath], {
      cwd,
      env,
    });
  const reader = join(root, '__tests__', 'bench', 'floor-reader.mjs');
  return runToDevNull(process.execPath, [reader, 'log', join(cwd, 'floor.log'), fake, 'launch', 'train.py'], {
    cwd,
    env,
  });
}

/** RUNS interleaved runs of the child alone, the floor readers, stream mode and the pane; medians and ranges as rows. */
async function floodSeries({ bin, fake, cwd, env, label, tag, root }) {
  const base = [];
  const stream = [];
  const pane = [];
  const stalledPipe = [];
  const stalledStop = [];
  const floors = Object.fromEntries(FLOOR_READERS.map((f) => [f.key, []]));
  for (let r = 0; r < RUNS; r++) {
    base.push(await runToDevNull(fake, ['launch', 'train.py'], { cwd, env }));
    for (const f of FLOOR_READERS) {
      const x = await runFloor(f.key, { fake, cwd, env, root });
      if (x.code !== 0) throw new Error(`floor reader ${f.key} exited ${x.code}`);
      floors[f.key].push(x);
      rmSync(join(cwd, 'floor.log'), { force: true });
    }
    const s = await runToDevNull(process.execPath, [bin, 'launch', 'flood.yaml', '--no-tui', '--accelerate', fake], {
      cwd,
      env,
    });
    if (s.code !== 0) throw new Error(`stream mode exited ${s.code}`);
    stream.push({ ...s, childMs: childMsOf(cwd) });
    rmSync(join(cwd, '.zerowiz'), { recursive: true, force: true });
    stalledPipe.push(await stalledRun(bin, fake, cwd, env, 'pipe'));
    rmSync(join(cwd, '.zerowiz'), { recursive: true, force: true });
    stalledStop.push(await stalledRun(bin, fake, cwd, env, 'stop'));
    rmSync(join(cwd, '.zerowiz'), { recursive: true, force: true });
    const p = await paneRun(bin, fake, cwd, env);
    if (p.code !== 0) throw new Error(`pane exited ${p.code}`);
    pane.push(p);
    // Each run leaves ~200 MB of step logs: drop them so the page cache's writeback does not weigh on the next run.
    rmSync(join(cwd, '.zerowiz'), { recursive: true, force: true });
  }
  const median = (xs) => pct(xs, 50);
  const range = (xs, f = (x) => x.toFixed(2)) => `${f(Math.min(...xs))}-${f(Math.max(...xs))}`;
  const runs = RUNS > 1 ? `, median of ${RUNS}` : '';
  const baseMs = median(base.map((x) => x.ms));
  // Each run's ratio against the child run just before it: the spread says how noisy the machine was.
  const ratios = (xs) => xs.map((x, k) => x.ms / base[k].ms);
  const streamMs = median(stream.map((x) => x.ms));
  const paneMs = median(pane.map((x) => x.ms));
  const childRatios = (xs) => xs.map((x, k) => x.childMs / base[k].ms);
  const child = (xs) => median(xs.map((x) => x.childMs));
  const streamChild = child(stream);
  const latencies = pane.flatMap((x) => x.latencies);
  return [
    { name: `launch flood ${label}${tag}: child alone to /dev/null${runs}`, value: baseMs, unit: 'ms' },
    ...FLOOR_READERS.map((f) => {
      const ms = median(floors[f.key].map((x) => x.ms));
      return {
        name: `launch flood ${label}${tag}: floor (reference, no goal): ${f.name} (vs child to /dev/null)${runs}; each run ${range(ratios(floors[f.key]))}x`,
        value: ms,
        unit: 'ms',
        ratio: ms / baseMs,
      };
    }),
    {
      name: `launch flood ${label}${tag}: stream mode (vs child to /dev/null)${runs}; each run ${range(ratios(stream))}x`,
      value: streamMs,
      unit: 'ms',
      ratio: streamMs / baseMs,
      goal: '<= 1.5x',
    },
    {
      name: `launch flood ${label}${tag}: the child's own time under stream mode (vs child to /dev/null)${runs}; each run ${range(childRatios(stream))}x`,
      value: streamChild,
      unit: 'ms',
      ratio: streamChild / baseMs,
      goal: '<= 1.5x',
    },
    {
      name: `launch flood ${label}${tag}: the child's own time under the pane (vs child to /dev/null)${runs}; each run ${range(childRatios(pane))}x`,
      value: child(pane),
      unit: 'ms',
      ratio: child(pane) / baseMs,
      goal: '<= 1.5x',
    },
    {
      name: `launch flood ${label}${tag}: the child's own time under a viewer whose stdout nobody reads (vs under stream mode)${runs}; each run ${range(stalledPipe.map((x, k) => x.childMs / stream[k].childMs))}x`,
      value: child(stalledPipe),
      unit: 'ms',
      ratio: child(stalledPipe) / streamChild,
      goal: '<= 1.05x',
    },
    {
      name: `launch flood ${label}${tag}: the child's own time under a viewer stopped with SIGSTOP (vs under stream mode)${runs}; each run ${range(stalledStop.map((x, k) => x.childMs / stream[k].childMs))}x`,
      value: child(stalledStop),
      unit: 'ms',
      ratio: child(stalledStop) / streamChild,
      goal: '<= 1.05x',
    },
    {
      name: `launch flood ${label}${tag}: stream mode peak RSS${runs}; each run ${range(
        stream.map((x) => x.peakMb),
        (x) => x.toFixed(0),
      )} MB`,
      value: median(stream.map((x) => x.peakMb)),
      unit: 'MB',
      goal: '<= 150 MB',
    },
    {
      name: `launch flood ${label}${tag}: pane (vs child to /dev/null)${runs}; each run ${range(ratios(pane))}x`,
      value: paneMs,
      unit: 'ms',
      ratio: paneMs / baseMs,
      goal: '<= 1.5x',
    },
    {
      name: `launch flood ${label}${tag}: pane peak RSS${runs}`,
      value: median(pane.map((x) => x.peakMb)),
      unit: 'MB',
      goal: '<= 150 MB',
    },
    {
      name: `launch flood ${label}${tag}: pane keypress latency p95 (${latencies.length} keys${RUNS > 1 ? `, ${RUNS} runs` : ''})`,
      value: pct(latencies, 95),
      unit: 'ms',
      goal: '<= 100 ms',
    },
  ];
}

export async function bench({ root, bin }) {
  const fake = join(root, '__tests__', 'fixtures', 'accelerate');
  const cwd = mkdtempSync(join(tmpdir(), 'zw-bench-launch-'));
  writeFileSync(join(cwd, 'train.py'), '# stand-in\n');
  writeFileSync(join(cwd, 'flood.yaml'), PRESET);
  const env = cleanEnv({ FAKE_ACCELERATE_FLOOD_LINES: String(FLOOD_LINES) });
  const rows = [];
  const label = FLOOD_LINES === 1_000_000 ? '1M lines' : `${FLOOD_LINES} lines`;
  const median = (xs) => pct(xs, 50);
  try {
    rows.push(...(await floodSeries({ bin, fake, cwd, env, label, tag: '', root })));
    rows.push(
      ...(await withBusyNeighbour(() =>
        floodSeries({ bin, fake, cwd, env, label, tag: ', busy CPU neighbour', root }),
      )),
    );
    // The fixed part of every ratio: zerowiz starting (node, the CLI, pre-flight, config files, the run
    // record) before the child and finishing after it, measured on a 10-line run.
    const tinyEnv = cleanEnv({ FAKE_ACCELERATE_FLOOD_LINES: '10' });
    const tinyBase = [];
    const tinyStream = [];
    for (let r = 0; r < RUNS; r++) {
      tinyBase.push(await runToDevNull(fake, ['launch', 'train.py'], { cwd, env: tinyEnv }));
      tinyStream.push(
        await runToDevNull(process.execPath, [bin, 'launch', 'flood.yaml', '--no-tui', '--accelerate', fake], {
          cwd,
          env: tinyEnv,
        }),
      );
      rmSync(join(cwd, '.zerowiz'), { recursive: true, force: true });
    }
    const overheads = tinyStream.map((x, k) => x.ms - tinyBase[k].ms);
    const overheadMs = median(tinyStream.map((x) => x.ms)) - median(tinyBase.map((x) => x.ms));
    const watchdog = watchdogSpawnMs();
    const runs = RUNS > 1 ? `, median of ${RUNS}` : '';
    rows.push({
      name: `launch: zerowiz's fixed start/finish cost (10-line run minus its child)${runs}; each run ${Math.min(...overheads).toFixed(0)}-${Math.max(...overheads).toFixed(0)} ms`,
      value: overheadMs,
      unit: 'ms',
    });
    rows.push({
      name: `launch: of which the watchdog's spawn (/bin/sh, zerowiz blocked until it starts), median / p90 of ${WATCHDOG_SPAWNS}`,
      value: watchdog.median,
      unit: `ms (p90 ${watchdog.p90.toFixed(1)} ms)`,
      ratio: watchdog.median / overheadMs,
    });
  } finally {
    rmSync(cwd, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
  return rows;
}
