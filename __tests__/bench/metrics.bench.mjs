// The cost of reading what a run emits (issue 10): metric sources and alerts per line, and GPU telemetry.
// In-process, bundled by esbuild into a temp dir:
// - the 1M-line flood of the launch bench (half log lines with `loss=`, half tqdm redraws, plus one
//   DeepSpeed report, HF dict and alert-looking line per thousand): its finished lines through RunWatch
//   (metrics + alerts), against the flood child alone, whose 1.5x stream/pane goal leaves zerowiz 0.5x of
//   it for everything.
// - telemetry: zerowiz's own CPU while GpuTelemetry reads the stand-in nvidia-smi (8 GPUs, -lms 1000) for
//   ZEROWIZ_BENCH_TELEMETRY_S seconds, against the same idle window without it. nvidia-smi's own CPU on a
//   real GPU is not measurable here (see docs/design/benchmarks.md).
// ZEROWIZ_BENCH_FLOOD_LINES scales the flood down for quick runs.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { facesPlugin } from '../../scripts/faces.mjs';

const FLOOD_LINES = Number(process.env.ZEROWIZ_BENCH_FLOOD_LINES ?? 1_000_000);
const TELEMETRY_S = Number(process.env.ZEROWIZ_BENCH_TELEMETRY_S ?? 10);
const ROUNDS = 5;

/**
 * The finished lines a 1M-line flood gives the runner's `line` event: the log half (the tqdm half are `\r`
 * redraws, thinned by a byte scan and parsed about once per percent, not per line), with one DeepSpeed
 * report, HF dict or shared-memory NCCL line (an alert needle that is no alert) per thousand.
 */
function floodLines(total) {
  const lines = [];
  for (let i = 0; i < total; i += 2) {
    if (i % 1000 === 0 && i > 0) {
      lines.push(
        [
          `[2026-05-01 12:00:00,123] [INFO] [logging.py:128:log_dist] [Rank 0] step=${i}, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]`,
          `{'loss': 0.${i % 997}, 'grad_norm': 0.52, 'learning_rate': 0.0001, 'epoch': 0.5}`,
          'NCCL INFO Channel 00 : 0[100000] -> 1[200000] via direct shared memory',
        ][(i / 1000) % 3],
      );
    } else {
      lines.push(
        `[2026-05-01 12:00:00,123] [INFO] [engine.py:2100:step] step=${i} loss=${(1 / (1 + i / 1e5)).toFixed(4)} lr=1.00e-04 gn=0.52`,
      );
    }
  }
  return lines;
}

/** Median ms of each function over ROUNDS interleaved rounds (a, b, a, b, ...), after a warm-up of each. */
function interleavedMedians(fns) {
  for (const f of fns) f();
  const times = fns.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    fns.forEach((f, k) => {
      const t0 = performance.now();
      f();
      times[k].push(performance.now() - t0);
    });
  }
  return times.map((t) => t.sort((x, y) => x - y)[Math.floor(t.length / 2)]);
}

function medianMs(fn) {
  return interleavedMedians([fn])[0];
}

function childAloneMs(root) {
  return new Promise((resolve, reject) => {
    const fd = openSync('/dev/null', 'w');
    const t0 = performance.now();
    const c = spawn(join(root, '__tests__', 'fixtures', 'accelerate'), ['launch', 'train.py'], {
      env: { ...process.env, FAKE_ACCELERATE_FLOOD_LINES: String(FLOOD_LINES) },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    c.on('error', reject);
    c.on('exit', () => resolve(performance.now() - t0));
  });
}

export async function bench({ root }) {
  const dir = mkdtempSync(join(tmpdir(), 'zw-bench-metrics-'));
  try {
    const outfile = join(dir, 'watch.mjs');
    await build({
      plugins: [facesPlugin(root)],
      stdin: {
        contents: [
          `export { RunWatch } from ${JSON.stringify(join(root, 'src', 'observe', 'watch.ts'))};`,
          `export { mayBeProgress, parseProgress } from ${JSON.stringify(join(root, 'src', 'observe', 'logparse.ts'))};`,
          `export { GpuTelemetry, parseTelemetryLine } from ${JSON.stringify(join(root, 'src', 'observe', 'telemetry.ts'))};`,
        ].join('\n'),
        resolveDir: root,
        loader: 'ts',
      },
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
    });
    const { RunWatch, mayBeProgress, parseProgress, GpuTelemetry, parseTelemetryLine } = await import(
      pathToFileURL(outfile).href
    );
    const lines = floodLines(FLOOD_LINES);
    // The runner's tqdm test, done once per line and handed to every subscriber.
    const progress = lines.map((text) => (mayBeProgress(text) ? parseProgress(text) : null));
    let sink = 0;
    const perLine = medianMs(() => {
      const watch = new RunWatch({ steps: [{ name: 'train' }] });
      for (let k = 0; k < lines.length; k++) watch.line(0, lines[k], progress[k]);
      sink += watch.steps[0].metrics.lossCount;
    });
    const child = await childAloneMs(root);
    const label = FLOOD_LINES === 1_000_000 ? '1M lines' : `${FLOOD_LINES} lines`;
    const rows = [
      { name: `flood child alone (${label}, to /dev/null)`, value: child, unit: 'ms' },
      {
        name: `metrics + alerts per finished line (RunWatch, ${lines.length} lines)`,
        value: perLine,
        unit: 'ms',
        ratio: perLine / child,
        goal: 'a small part of the 0.5x zerowiz may add',
      },
    ];

    // Telemetry: parsing one sample, then the process's CPU while reading 8 GPUs at 1 Hz.
    const sample = '3, 62669, 81559, 97';
    const perSampleMs = medianMs(() => {
      for (let i = 0; i < 1e5; i++) sink += parseTelemetryLine(sample).index;
    });
    rows.push({ name: 'telemetry: one CSV sample parsed', value: (perSampleMs / 1e5) * 1000, unit: 'µs' });
    const window = async (withTelemetry) => {
      const t = withTelemetry
        ? new GpuTelemetry({ env: { PATH: `${join(root, '__tests__', 'fixtures', 'bin-nvidia')}:/usr/bin:/bin` } })
        : null;
      t?.start();
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      await new Promise((r) => setTimeout(r, TELEMETRY_S * 1000));
      const c = process.cpuUsage(c0);
      const wall = performance.now() - w0;
      const samples = t?.samples ?? 0;
      await t?.stop();
      return { cpuMs: (c.user + c.system) / 1000, wall, samples };
    };
    const idle = await window(false);
    const live = await window(true);
    const cpuPct = ((live.cpuMs - idle.cpuMs) / live.wall) * 100;
    rows.push({
      name: `telemetry at 1 Hz, 8 GPUs: zerowiz's CPU over ${TELEMETRY_S} s (${live.samples} samples; idle window ${idle.cpuMs.toFixed(1)} ms)`,
      value: Math.max(cpuPct, 0),
      unit: '% CPU',
      goal: '< 1% CPU',
    });
    if (sink === -1) console.log(sink);
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}
