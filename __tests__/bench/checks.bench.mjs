// The cost of the checks before a pass (issue 19), each as measured by the check itself (its `ms` in
// `zerowiz check --json`), and of the health watch's tick during a pass:
// - `zerowiz check` of the seed preset on a machine without accelerate (no Python probe): the whole
//   command against `node -e 0`, and each check's own time (medians over ROUNDS runs);
// - with the real accelerate tier's venv (ZEROWIZ_REAL_VENV, else .venv-real) and the DeepSpeed stand-in:
//   the Python probe asked (--fresh: one interpreter importing torch, accelerate and deepspeed) and
//   remembered (probe-cache.ts), and the whole command both ways;
// - the NVMe checks at a folder under the temp dir (zero3-nvme, a 7B model): the O_DIRECT test and the dd
//   speed test (256 MiB written and read back);
// - RunHealth.tick on a pass of 8 sleeping processes, in process: its time, and its CPU share at one tick
//   every 5 s.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import { facesPlugin } from '../../scripts/faces.mjs';

const ROUNDS = 5;
const BARE_PATH = '/usr/bin:/bin';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Runs `zerowiz check ...args --json` ROUNDS times: the median wall time and each check's median `ms`. */
function checkRuns(bin, args, env, cwd, rounds = ROUNDS) {
  const walls = [];
  const per = new Map();
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [bin, 'check', ...args, '--json'], { env, cwd, encoding: 'utf8' });
    walls.push(performance.now() - t0);
    for (const c of JSON.parse(r.stdout).checks)
      if (c.ms !== undefined) per.set(c.id, [...(per.get(c.id) ?? []), c.ms]);
  }
  return { wall: median(walls), per: new Map([...per].map(([k, v]) => [k, median(v)])) };
}

export async function bench({ root, bin, nodeBaselineMs }) {
  const rows = [];
  const home = mkdtempSync(join(tmpdir(), 'zw-bench-checks-'));
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'cfg'),
    XDG_CACHE_HOME: join(home, 'cache'),
    PATH: BARE_PATH,
    NO_COLOR: '1',
  };
  try {
    const bare = checkRuns(bin, ['qwen-image-lora-lowvram'], env, home);
    rows.push({
      name: 'zerowiz check (seed preset, no Python probe) vs node -e 0',
      value: bare.wall,
      unit: 'ms',
      ratio: bare.wall / nodeBaselineMs,
    });
    for (const [id, ms] of bare.per)
      rows.push({ name: `  check ${id} (its own measuring, no probe)`, value: ms, unit: 'ms' });

    const venv = process.env.ZEROWIZ_REAL_VENV ?? join(root, '.venv-real');
    const acc = join(venv, 'bin', 'accelerate');
    if (existsSync(acc)) {
      const penv = {
        ...env,
        PATH: `${join(venv, 'bin')}:${BARE_PATH}`,
        PYTHONPATH: join(root, '__tests__', 'fixtures', 'deepspeed-standin'),
      };
      const args = ['zero3-offload', '--accelerate', acc, '--skip-check', 'inputs'];
      const asked = checkRuns(bin, [...args, '--fresh'], penv, home, 3);
      const kept = checkRuns(bin, args, penv, home, ROUNDS);
      rows.push({
        name: 'python probe asked (--fresh: torch, accelerate, deepspeed stand-in imported)',
        value: asked.per.get('python'),
        unit: 'ms',
      });
      rows.push({
        name: 'python probe remembered (nothing installed since)',
        value: kept.per.get('python'),
        unit: 'ms',
      });
      rows.push({
        name: 'zerowiz check, probe asked, vs node -e 0',
        value: asked.wall,
        unit: 'ms',
        ratio: asked.wall / nodeBaselineMs,
        goal: '< 2 s warm',
      });
      rows.push({
        name: 'zerowiz check, probe remembered, vs node -e 0',
        value: kept.wall,
        unit: 'ms',
        ratio: kept.wall / nodeBaselineMs,
        goal: '< 2 s warm',
      });
    } else
      rows.push({
        name: `python probe: not measured (no venv at ${venv}; npm run test:real makes it)`,
        value: 0,
        unit: '',
      });

    const nv = mkdtempSync(join(tmpdir(), 'zw-bench-nvme-'));
    const preset = join(home, 'nvme.yaml');
    writeFileSync(
      preset,
      `name: nvme\nmodel:\n  params: 7B\n  largest_layer: 200M\nanswers:\n  num_processes: 1\n  mode: 3-offload\n  offload_device: nvme\n  nvme_path: ${nv}\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py]\n`,
    );
    const nvme = checkRuns(bin, [preset], env, home, 3);
    rows.push({ name: `  check nvme (statfs, O_DIRECT open) at ${tmpdir()}`, value: nvme.per.get('nvme'), unit: 'ms' });
    rows.push({
      name: '  check nvme-speed (dd 256 MiB O_DIRECT write + read)',
      value: nvme.per.get('nvme-speed'),
      unit: 'ms',
    });
    rmSync(nv, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });

    const outfile = join(home, 'health.mjs');
    await build({
      plugins: [facesPlugin(root)],
      stdin: {
        contents: `export { RunHealth } from ${JSON.stringify(join(root, 'src', 'observe', 'health.ts'))};`,
        resolveDir: root,
        loader: 'ts',
      },
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
      // execa's dependencies require() node builtins: give the ESM bundle a require.
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    });
    const { RunHealth } = await import(pathToFileURL(outfile).href);
    const group = spawn('sh', ['-c', 'for i in 1 2 3 4 5 6 7 8; do RANK=$i sleep 60 & done; wait'], {
      detached: true,
      stdio: 'ignore',
    });
    await new Promise((r) => setTimeout(r, 300));
    const h = new RunHealth({ step: 0, spacePaths: [{ path: tmpdir(), what: 'outputs' }] });
    h.start(Date.now());
    const ticks = [];
    for (let i = 0; i < 30; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await h.tick(Date.now(), { pgid: group.pid });
      ticks.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      if (i === 29)
        rows.push({
          name: 'health tick CPU at one tick per 5 s (8 ranks, /proc, cgroup, /dev/shm, 1 folder)',
          value: ((c.user + c.system) / 1000 / 5000) * 100,
          unit: '%',
          goal: '< 1%',
        });
    }
    rows.push({ name: 'health tick (8 ranks)', value: median(ticks), unit: 'ms' });
    try {
      process.kill(-group.pid, 'SIGKILL');
    } catch {}
  } finally {
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
  return rows;
}
