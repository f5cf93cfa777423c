// The report and the notifications, each as a ratio to a baseline of the same run, idle and beside
// one busy CPU neighbour:
// - `zerowiz report RUN` of a 100,000-step run (a loss per step, the progress bar every 5 s for a day,
//   8 GPUs' memory every 5 s for a day: what the supervisor's series files hold after such a run), against
//   `node -e 0` (the bench's baseline) and against reading its series files alone; its size (goal: well under
//   5 MB) and its time (goal: under 2 s).
// - a step's time with notifications: the stand-in accelerate times each of its steps (FAKE_ACCELERATE_TICK_FILE)
//   in a run without --notify, and in one notifying a server that never answers and one that answers 500;
//   the median step under each, against the run without (goal: 1.00x, nothing measurable).
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { facesPlugin } from '../../scripts/faces.mjs';
import { withBusyNeighbour } from './neighbour.mjs';

const STEPS = 100_000;
const GPUS = 8;
const DAY_S = 86_400;
const RUNS = Math.max(1, Number(process.env.ZEROWIZ_BENCH_REPORT_RUNS ?? 5));
const TICK_STEPS = Number(process.env.ZEROWIZ_BENCH_TICK_STEPS ?? 600);

const PRESET = `name: bench
answers:
  num_processes: 1
  mode: 2
steps:
  - name: data
    uses_config: false
    args: [train.py, --task, "sft:data_process"]
  - name: train
    uses_config: true
    args: [train.py, --task, "sft:train"]
`;

function cleanEnv(extra = {}) {
  const env = { ...process.env, ZEROWIZ_SKIP_CHECKS: 'all', NO_COLOR: '1', ...extra };
  delete env.CI;
  delete env.ZEROWIZ_NOTIFY;
  return env;
}

function median(xs) {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
}

/** A short real run (the stand-in accelerate), whose record becomes the 100k-step run's. */
function realRun(ctx, dir, extraArgs = [], env = {}) {
  return new Promise((res) => {
    const c = spawn(
      process.execPath,
      [
        ctx.bin,
        'launch',
        'bench.yaml',
        '--no-tui',
        '--accelerate',
        join(ctx.root, '__tests__/fixtures/accelerate'),
        ...extraArgs,
      ],
      { cwd: dir, env: cleanEnv(env), stdio: 'ignore' },
    );
    c.on('exit', (code) => res(code));
  });
}

/** Writes a day-long 100k-step run's series into a record directory. */
function fillSeries(runDir) {
  const json = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
  const t0 = Date.parse(json.startedAt);
  json.endedAt = new Date(t0 + DAY_S * 1000).toISOString();
  writeFileSync(join(runDir, 'run.json'), JSON.stringify(json));
  let losses = 'pass,source,step,loss,t_ms\n';
  for (let i = 1; i <= STEPS; i++)
    losses += `1,csv,${i},${0.02 + 0.3 / Math.sqrt(i) + 0.01 * Math.sin(i * 12.9898) ** 2},${t0 + Math.round((i * DAY_S * 1000) / STEPS)}\n`;
  writeFileSync(join(runDir, 'losses.csv'), losses);
  let progress = 'pass,n,total,rate_per_s,t_ms\n';
  for (let s = 5; s <= DAY_S; s += 5)
    progress += `1,${Math.floor((s * STEPS) / DAY_S)},${STEPS},${(STEPS / DAY_S) * (1 + 0.05 * Math.sin(s / 600))},${t0 + s * 1000}\n`;
  writeFileSync(join(runDir, 'progress.csv'), progress);
  let gpu = 't_ms,pass,gpu,used_mib,total_mib,util_pct\n';
  for (let s = 0; s < DAY_S; s += 5)
    for (let g = 0; g < GPUS; g++) gpu += `${t0 + s * 1000},1,${g},${60000 + ((s * 7 + g * 1000) % 9000)},81559,97\n`;
  writeFileSync(join(runDir, 'gpu.csv'), gpu);
  return json.id;
}

/** The report's module, bundled as the bin bundles it. */
async function reportModule(root, dir) {
  const outfile = join(dir, 'report.mjs');
  await build({
    plugins: [facesPlugin(root)],
    entryPoints: [join(root, 'src', 'report', 'index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return import(pathToFileURL(outfile).href);
}

/** Median CPU ms (user + system) of `f` over RUNS runs, in this process: what the report costs, whatever the load. */
function cpuMs(f) {
  f();
  const out = [];
  for (let r = 0; r < RUNS; r++) {
    const c = process.cpuUsage();
    f();
    const d = process.cpuUsage(c);
    out.push((d.user + d.system) / 1000);
  }
  return median(out);
}

/** The report built in process: its CPU time, against reading and splitting its series files. */
async function cpuRows(ctx, dir, runDir) {
  const m = await reportModule(ctx.root, dir);
  let sink = 0;
  const buildMs = cpuMs(() => {
    sink += m.buildReport(runDir).length;
  });
  const readMs = cpuMs(() => {
    for (const f of ['losses.csv', 'progress.csv', 'gpu.csv'])
      sink += readFileSync(join(runDir, f), 'utf8').split('\n').length;
  });
  if (sink < 0) console.log(sink);
  return [
    {
      name: 'report: its CPU time, built in process (read, checked, drawn twice, written as HTML)',
      value: buildMs,
      unit: 'ms',
      ratio: buildMs / readMs,
    },
    { name: 'report: (baseline) the CPU time to read and split its three series files', value: readMs, unit: 'ms' },
  ];
}

async function reportRows(ctx, dir, id, runDir, label) {
  const reportMs = [];
  const readMs = [];
  for (let r = 0; r < RUNS; r++) {
    let t = performance.now();
    const out = spawnSync(process.execPath, [ctx.bin, 'report', id], { cwd: dir, env: cleanEnv(), stdio: 'ignore' });
    reportMs.push(performance.now() - t);
    if (out.status !== 0) throw new Error(`zerowiz report failed (${out.status})`);
    t = performance.now();
    spawnSync(
      process.execPath,
      [
        '-e',
        `const fs=require('fs');let n=0;for(const f of ['losses.csv','progress.csv','gpu.csv'])n+=fs.readFileSync(${JSON.stringify(runDir)}+'/'+f,'utf8').split('\\n').length;`,
      ],
      { stdio: 'ignore' },
    );
    readMs.push(performance.now() - t);
  }
  const ms = median(reportMs);
  return [
    {
      name: `report: zerowiz report of a 100,000-step day-long run (8 GPUs)${label} vs node -e 0`,
      value: ms,
      unit: 'ms',
      ratio: ms / ctx.nodeBaselineMs,
      goal: 'under 2 s',
    },
    {
      name: `report: the same vs node reading and splitting its three series files${label}`,
      value: ms,
      unit: 'ms',
      ratio: ms / median(readMs),
    },
  ];
}

/** A server that never answers, and one that answers 500. */
async function badServers() {
  const sockets = new Set();
  const hang = createServer(() => {});
  const fail = createServer((req, res) => req.on('data', () => {}).on('end', () => res.writeHead(500).end()));
  for (const s of [hang, fail]) s.on('connection', (c) => sockets.add(c));
  await Promise.all([hang, fail].map((s) => new Promise((r) => s.listen(0, '127.0.0.1', r))));
  return {
    urls: [hang, fail].map((s) => `http://127.0.0.1:${s.address().port}/bench`),
    close: () => {
      for (const c of sockets) c.destroy();
      hang.close();
      fail.close();
    },
  };
}

/** Waits until every run's supervisor in `dir` has exited (it sends its last notifications after the launcher returns). */
async function supervisorsGone(dir) {
  const runs = join(dir, '.zerowiz', 'runs');
  for (const n of readdirSync(runs)) {
    const pid = JSON.parse(readFileSync(join(runs, n, 'run.json'), 'utf8')).supervisor?.pid;
    for (let i = 0; pid && i < 600; i++) {
      try {
        if (/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) break;
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The median time between the train pass's steps (the stand-in's own clock), in ms. */
function stepMs(tickFile) {
  const t = readFileSync(tickFile, 'utf8').trim().split('\n').map(Number);
  const train = t.slice(-TICK_STEPS);
  return median(train.slice(1).map((x, i) => x - train[i]));
}

async function notifyRows(ctx, label) {
  const servers = await badServers();
  const dir = mkdtempSync(join(tmpdir(), 'zw-bench-notify-'));
  try {
    writeFileSync(join(dir, 'bench.yaml'), PRESET);
    writeFileSync(join(dir, 'train.py'), '');
    const plain = [];
    const notified = [];
    for (let r = 0; r < 2; r++) {
      for (const [out, args] of [
        [plain, []],
        [notified, servers.urls.flatMap((u) => ['--notify', u])],
      ]) {
        const tick = join(dir, `tick-${r}-${out === plain ? 'plain' : 'notify'}`);
        await realRun(ctx, dir, args, {
          FAKE_ACCELERATE_TICK_FILE: tick,
          FAKE_ACCELERATE_STEPS: String(TICK_STEPS),
          FAKE_ACCELERATE_STEP_MS: '10',
          ZEROWIZ_NOTIFY_TIMEOUT_MS: '3000',
        });
        out.push(stepMs(tick));
      }
    }
    const a = median(plain);
    const b = median(notified);
    return [
      { name: `notify: a step (10 ms asked) without --notify${label}`, value: a, unit: 'ms' },
      {
        name: `notify: a step with --notify to a server that never answers and one that answers 500${label}`,
        value: b,
        unit: 'ms',
        ratio: b / a,
        goal: '1.00x (nothing measurable)',
      },
    ];
  } finally {
    await supervisorsGone(dir);
    servers.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

export async function bench(ctx) {
  const dir = mkdtempSync(join(tmpdir(), 'zw-bench-report-'));
  try {
    writeFileSync(join(dir, 'bench.yaml'), PRESET);
    writeFileSync(join(dir, 'train.py'), '');
    const code = await realRun(ctx, dir, [], { FAKE_ACCELERATE_STEPS: '20' });
    if (code !== 0) throw new Error(`the bench's run failed (${code})`);
    const runs = join(dir, '.zerowiz', 'runs');
    const runDir = join(runs, readdirSync(runs)[0]);
    const id = fillSeries(runDir);
    const rows = [...(await reportRows(ctx, dir, id, runDir, '')), ...(await cpuRows(ctx, dir, runDir))];
    rows.push({
      name: 'report: its size (goal: well under 5 MB)',
      value: statSync(join(runDir, 'report.html')).size / 2 ** 20,
      unit: 'MiB',
    });
    rows.push(...(await withBusyNeighbour(() => reportRows(ctx, dir, id, runDir, ', beside a busy neighbour'))));
    rows.push(...(await notifyRows(ctx, '')));
    rows.push(...(await withBusyNeighbour(() => notifyRows(ctx, ', beside a busy neighbour'))));
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}
