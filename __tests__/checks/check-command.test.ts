/**
 * `zerowiz check` as users run it (the built bin), against real parts: a small /dev/shm (unshare -m and a
 * tmpfs), a real cgroup memory limit, a port held by a real socket, an NVMe folder on a small tmpfs, the
 * stand-in nvidia-smi of an old machine, a DiffSynth checkout's files. The Python checks against the real
 * interpreter are in __tests__/real/check.test.ts (they need the real tier's venv).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNodeCheckLine } from '../../src/checks/format.js';
import { CHECK_IDS } from '../../src/checks/types.js';
import { makeMemoryCgroup, removeCgroup } from '../helpers/cgroup.js';
import { expectOneLineError, runCli, sandbox, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { BIN } from '../helpers/pty.js';
import { mountTmpfs, unmountAll } from '../helpers/tmpfs.js';
import { barePath } from '../helpers/seal.js';

const NVIDIA_BIN = join(ROOT, '__tests__', 'fixtures', 'bin-nvidia');
/** A PATH with neither accelerate nor nvidia-smi: a bare machine. */
const BARE_PATH = barePath();

interface JsonCheck {
  id: string;
  status: 'pass' | 'warn' | 'fail' | 'skip';
  title: string;
  measured: string;
  need: string;
  fix: string | null;
}

function json(stdout: string): { checks: JsonCheck[]; failed: string[]; warned: string[] } {
  return JSON.parse(stdout);
}
function check(stdout: string, id: string): JsonCheck {
  const c = json(stdout).checks.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id} in ${stdout}`);
  return c;
}

/** A preset file in `dir` with these answers and one `train.py` step (the script made too). */
function presetFile(dir: string, answers: Record<string, unknown>, extra = ''): string {
  writeFileSync(join(dir, 'train.py'), 'print("hi")\n');
  const lines = Object.entries(answers).map(([k, v]) => `  ${k}: ${typeof v === 'string' ? JSON.stringify(v) : v}`);
  const p = join(dir, 'box.yaml');
  writeFileSync(
    p,
    `name: box\n${extra}answers:\n${lines.join('\n')}\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py]\n`,
  );
  return p;
}

beforeAll(() => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
});
afterAll(() => unmountAll());

describe('zerowiz check on a bare machine', () => {
  it('says what is missing and how to get it, in the order to fix it, and exits 2', () => {
    const box = sandbox();
    const r = runCli(['check', 'qwen-image-lora-lowvram'], { cwd: box.cwd, env: { ...box.env, PATH: BARE_PATH } });
    expect(r.code).toBe(2);
    expectOneLineError(
      {
        ...r,
        stderr: r.stderr
          .split('\n')
          .filter((l) => l.startsWith('zerowiz: ') || l.startsWith('  hint:'))
          .join('\n'),
      },
      /check\(s\) failed: python, cuda-driver/,
    );
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^zerowiz check qwen-image-lora-lowvram: 2 pass\(es\), ZeRO-3 offload, 1 process\(es\) per node x 1 node\(s\): \d+ FAIL/,
    );
    // Every check is there, in the fix order, and every FAIL says measured, need and fix.
    const heads = lines.filter((l) => /^(PASS|WARN|FAIL|SKIP) /.test(l)).map((l) => l.split(/\s+/)[1]);
    expect(heads).toEqual([...CHECK_IDS]);
    const python = lines.findIndex((l) => l.startsWith('FAIL python'));
    expect(lines[python + 1]).toContain('measured: accelerate is not on PATH');
    expect(lines[python + 3]).toContain('fix:      activate the Python environment that has accelerate');
    const driver = lines.findIndex((l) => l.startsWith('FAIL cuda-driver'));
    expect(lines[driver + 1]).toContain('no NVIDIA driver answered (nvidia-smi not found on PATH)');
    expect(lines[driver + 3]).toContain('install the NVIDIA driver');
    const inputs = lines.findIndex((l) => l.startsWith('FAIL inputs'));
    expect(lines[inputs + 1]).toContain('the script examples/qwen_image/model_training/train.py does not exist');
    expect(lines[inputs + 1]).toContain('the dataset folder');
    const order = lines.find((l) => l.startsWith('fix in this order: '))!;
    expect(order).toMatch(/^fix in this order: 1\. python {2}2\. cuda-driver {2}3\. /);
    expect(order).toContain('models (warning)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('--json gives every check with id, status, measured, need and fix', () => {
    const box = sandbox();
    const r = runCli(['check', 'zero3', '--json'], { cwd: box.cwd, env: { ...box.env, PATH: BARE_PATH } });
    expect(r.code).toBe(2);
    const j = json(r.stdout);
    expect(j.checks.map((c) => c.id)).toEqual([...CHECK_IDS]);
    for (const c of j.checks) {
      expect(['pass', 'warn', 'fail', 'skip']).toContain(c.status);
      expect(typeof c.measured).toBe('string');
      expect(typeof c.need).toBe('string');
      if (c.status === 'fail' || c.status === 'warn') expect(c.fix).toBeTruthy();
    }
    expect(j.failed[0]).toBe('python');
    expect(check(r.stdout, 'nvme-speed').status).toBe('pass'); // zero3 offloads nothing to NVMe
  });

  it('--skip-check lets a check not fail; an unknown id or pass is one line and a hint', () => {
    const box = sandbox();
    const env = { ...box.env, PATH: BARE_PATH };
    const r = runCli(['check', 'zero3', '--json', '--skip-check', 'python', '--skip-check', 'cuda-driver,inputs'], {
      cwd: box.cwd,
      env,
    });
    for (const id of ['python', 'cuda-driver', 'inputs']) {
      expect(check(r.stdout, id)).toMatchObject({ status: 'skip', measured: 'skipped by --skip-check' });
      expect(json(r.stdout).failed).not.toContain(id);
    }
    expectOneLineError(
      runCli(['check', 'zero3', '--skip-check', 'nope'], { cwd: box.cwd, env }),
      /--skip-check: there is no check 'nope'/,
    );
    expectOneLineError(runCli(['check', 'zero3', '--pass', '3'], { cwd: box.cwd, env }), /--pass '3' is out of range/);
    expectOneLineError(
      runCli(['check', 'zero3', '--pass', 'nope'], { cwd: box.cwd, env }),
      /--pass: the setup has no pass 'nope'/,
    );
  });

  it('--pass checks one pass; --node-report prints one parseable line per check for a Slurm pass log', () => {
    const box = sandbox();
    const r = runCli(['check', 'qwen-image-lora-lowvram', '--pass', 'train', '--node-report', '--port', '29617'], {
      cwd: box.cwd,
      env: { ...box.env, PATH: BARE_PATH },
    });
    expect(r.code).toBe(2);
    const parsed = r.stdout.trim().split('\n').map(parseNodeCheckLine);
    expect(parsed.every((p) => p !== null)).toBe(true);
    const checks = parsed.filter((p) => p?.kind === 'check');
    expect(checks.map((p) => p!.kind === 'check' && p!.id)).toEqual([...CHECK_IDS]);
    expect(parsed[parsed.length - 1]).toMatchObject({ kind: 'done' });
    const port = checks.find((p) => p!.kind === 'check' && p!.id === 'port');
    expect(port).toMatchObject({ measured: 'port 29617 is free' });
    const inputs = checks.find((p) => p!.kind === 'check' && p!.id === 'inputs');
    // Only the train pass: its cache must exist now (the data pass ran before it).
    expect(inputs).toMatchObject({ status: 'fail' });
    expect(inputs!.kind === 'check' && inputs!.measured).not.toContain('data_process:');
  });
});

describe('zerowiz check with real limits', () => {
  it('a 64 MB /dev/shm (unshare -m and a tmpfs) fails the shm check of an 8-process node', () => {
    if (process.getuid?.() !== 0) return void console.log('skipped: unshare -m and mount need root');
    const box = sandbox();
    const r = spawnSync(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$0" "$@"',
        process.execPath,
        BIN,
        'check',
        'zero3',
        '--json',
        '--no-speed-test',
      ],
      { cwd: box.cwd, env: { ...process.env, ...box.env, PATH: BARE_PATH, NO_COLOR: '1' }, encoding: 'utf8' },
    );
    if (r.status !== 2 && /unshare|mount/.test(r.stderr)) return void console.log(`skipped: ${r.stderr.trim()}`);
    const shm = check(r.stdout, 'shm');
    expect(shm.status).toBe('fail');
    expect(shm.measured).toContain('/dev/shm is 64 MiB');
    expect(shm.need).toContain('NCCL between the 8 processes of a node');
    expect(shm.fix).toContain('--shm-size');
  });

  it('a cgroup memory limit below the estimate fails host-memory, naming the limit', async () => {
    const cg = makeMemoryCgroup(512 * 2 ** 20);
    if (!cg.ok) return void console.log(`skipped: ${cg.reason}`);
    try {
      const box = sandbox();
      const r = spawnSync(
        'sh',
        [
          '-c',
          `echo $$ > ${cg.procs} && exec "$0" "$@"`,
          process.execPath,
          BIN,
          'check',
          'qwen-image-lora-lowvram',
          '--json',
        ],
        { cwd: box.cwd, env: { ...process.env, ...box.env, PATH: BARE_PATH, NO_COLOR: '1' }, encoding: 'utf8' },
      );
      const mem = check(r.stdout, 'host-memory');
      expect(mem.status).toBe('fail');
      expect(mem.measured).toContain(`cgroup v${cg.version} limit 512 MiB (${cg.dir})`);
      expect(mem.need).toMatch(/^42\.\d GiB per node for ZeRO-3 offload/);
      expect(mem.fix).toMatch(/raise the memory limit to \d+G/);
    } finally {
      await removeCgroup(cg);
    }
  });

  it('a port held by a real socket: the holder is named, and a free port is offered', async () => {
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen({ port: 0, host: '0.0.0.0' }, () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      const dir = tempDir('zw-port-');
      // The main node of two: accelerate stops there ("another process is utilizing it").
      const p = presetFile(dir, {
        num_machines: 2,
        num_processes: 2,
        machine_rank: 0,
        main_process_ip: '10.0.0.1',
        main_process_port: port,
        mode: '2',
      });
      const r = runCli(['check', p, '--json'], { cwd: dir, env: { PATH: BARE_PATH } });
      const c = check(r.stdout, 'port');
      expect(c.status).toBe('fail');
      expect(c.measured).toContain(`port ${port} is taken: pid ${process.pid} (`);
      expect(c.fix).toMatch(
        new RegExp(
          `kill ${process.pid} if it is yours, or use port \\d+ \\(free now\\): zerowiz preset save box --preset box --main-process-port \\d+`,
        ),
      );
      // The other node does not bind it.
      const rank1 = runCli(['check', p, '--json', '--machine-rank', '1'], { cwd: dir, env: { PATH: BARE_PATH } });
      expect(check(rank1.stdout, 'port').status).toBe('pass');
    } finally {
      server.close();
    }
  });

  it('an NVMe folder on a small tmpfs: no room for the offloaded states; a bigger one gets the speed test', () => {
    const small = mountTmpfs('16m');
    const big = mountTmpfs('300m');
    if (!small.ok || !big.ok)
      return void console.log(`skipped: ${small.ok ? '' : small.reason}${big.ok ? '' : big.reason}`);
    const dir = tempDir('zw-nvme-');
    const answers = { num_processes: 1, mode: '3-offload', offload_device: 'nvme', mixed_precision: 'bf16' };
    const p = presetFile(dir, { ...answers, nvme_path: small.dir }, 'model:\n  params: 7B\n  largest_layer: 200M\n');
    const r = runCli(['check', p, '--json'], { cwd: dir, env: { PATH: BARE_PATH } });
    const nvme = check(r.stdout, 'nvme');
    expect(nvme.status).toBe('fail');
    expect(nvme.measured).toMatch(new RegExp(`${small.dir}: tmpfs, 16 MiB free, writable, O_DIRECT works`));
    expect(nvme.need).toMatch(/GiB free for the ZeRO-3 offload NVMe states/);
    expect(check(r.stdout, 'nvme-speed').measured).toMatch(/too little room/);
    // A tiny model fits the bigger tmpfs: the speed test runs (dd with O_DIRECT) and says what it measured.
    const q = presetFile(dir, { ...answers, nvme_path: big.dir }, 'model:\n  params: 10M\n  largest_layer: 1M\n');
    const cache = { PATH: BARE_PATH, XDG_CACHE_HOME: tempDir('zw-cache-') };
    const estimate = () =>
      runCli(
        ['estimate', '--params', '10M', '--largest-layer', '1M', '--gpu-memory', '80GiB', '--nvme-path', big.dir],
        {
          cwd: dir,
          env: cache,
        },
      ).stdout;
    expect(estimate()).toMatch(/; NVMe 2\.00 GB\/s \(assumed; `zerowiz check` measures the drive\);/);
    const speed = check(runCli(['check', q, '--json'], { cwd: dir, env: cache }).stdout, 'nvme-speed');
    expect(speed.measured).toMatch(/^\d+ MiB with O_DIRECT: write [\d.]+ GB\/s, read [\d.]+ GB\/s/);
    // The estimate's NVMe term now takes the drive's slower direction, as check measured it.
    const rates = [...speed.measured.matchAll(/(?:write|read) ([\d.]+ [kMG]?B\/s)/g)].map((m) => m[1]!);
    const bytes = (r: string) => Number.parseFloat(r) * 10 ** (3 * ' kMG'.indexOf(r.split(' ')[1]![0]!));
    const slower = rates.sort((a, b) => bytes(a) - bytes(b))[0];
    expect(estimate()).toContain(`; NVMe ${slower} (measured by \`zerowiz check\`);`);
    const skipped = runCli(['check', q, '--json', '--no-speed-test'], { cwd: dir, env: { PATH: BARE_PATH } });
    expect(check(skipped.stdout, 'nvme-speed')).toMatchObject({
      status: 'skip',
      measured: 'skipped by --no-speed-test',
    });
    expect(check(skipped.stdout, 'nvme').status).toBe('warn'); // a tmpfs is RAM, not a drive
  });

  it('the stand-in nvidia-smi of an old machine: bf16 on a V100 fails, the old driver is named', () => {
    const dir = tempDir('zw-old-');
    const p = presetFile(dir, { num_processes: 1, mode: '2', mixed_precision: 'bf16' });
    const r = runCli(['check', p, '--json'], {
      cwd: dir,
      env: { PATH: `${NVIDIA_BIN}:${BARE_PATH}`, ZW_FAKE_NVIDIA_SMI: 'old' },
    });
    const gpus = check(r.stdout, 'gpus');
    expect(gpus.status).toBe('fail');
    expect(gpus.measured).toContain('Tesla V100-SXM2-32GB) has compute capability 7.0');
    expect(gpus.fix).toContain('--mixed-precision fp16');
    // Without torch (no accelerate here) the driver is still measured and named.
    expect(check(r.stdout, 'cuda-driver').measured).toContain('driver 470.57.02, which supports CUDA up to 11.4');
  });

  it("a DiffSynth checkout's inputs and models: a missing image and models still to download", () => {
    const box = sandbox();
    const cwd = box.cwd;
    mkdirSync(join(cwd, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(cwd, 'examples/qwen_image/model_training/train.py'), '');
    mkdirSync(join(cwd, 'data/example_image_dataset'), { recursive: true });
    writeFileSync(
      join(cwd, 'data/example_image_dataset/metadata.csv'),
      'image,prompt\n1.jpg,"dog, running"\n2.jpg,cat\n',
    );
    writeFileSync(join(cwd, 'data/example_image_dataset/1.jpg'), 'x');
    mkdirSync(join(cwd, 'models/Qwen/Qwen-Image/vae'), { recursive: true });
    writeFileSync(join(cwd, 'models/Qwen/Qwen-Image/vae/diffusion_pytorch_model.safetensors'), Buffer.alloc(2048));
    const env = { ...box.env, PATH: BARE_PATH };
    const r = runCli(['check', 'qwen-image-lora-lowvram', '--json'], { cwd, env });
    const inputs = check(r.stdout, 'inputs');
    expect(inputs.status).toBe('fail');
    expect(inputs.measured).toContain('1 of the first 2 row(s)');
    expect(inputs.measured).toContain(': 2.jpg');
    const models = check(r.stdout, 'models');
    expect(models.status).toBe('warn');
    expect(models.measured).toContain('Qwen/Qwen-Image:vae/diffusion_pytorch_model.safetensors: 1 file(s), 2 KiB');
    expect(models.measured).toContain('Qwen/Qwen-Image:text_encoder/model*.safetensors: not in');
    writeFileSync(join(cwd, 'data/example_image_dataset/2.jpg'), 'x');
    const again = runCli(['check', 'qwen-image-lora-lowvram', '--json'], {
      cwd,
      env: { ...env, DIFFSYNTH_SKIP_DOWNLOAD: 'true' },
    });
    expect(check(again.stdout, 'inputs').status).toBe('pass');
    expect(check(again.stdout, 'models').status).toBe('fail');
  });
});
