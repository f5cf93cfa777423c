/**
 * What a run really emits, as users see it: the built bin launching the stand-in trainers
 * (__tests__/fixtures/trainers/, through --accelerate) with the stand-in nvidia-smi on PATH (streaming,
 * dying mid-run, or absent), in a real pseudo-terminal (the log pane at 80x24 and at 160 columns) and in
 * stream mode; then the summary, run.json and `zerowiz runs`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import stripAnsi from 'strip-ansi';
import { execFile, spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BIN, KEYS, ROOT, spawnPty } from '../helpers/pty.js';
import { closeWhenDone } from '../helpers/launch.js';
import { processesWithEnv, running, until, removeWorkDirs } from '../helpers/proc.js';
import type { RunJson } from '../../src/records/record.js';
import { barePath } from '../helpers/seal.js';

const FIXTURES = join(ROOT, '__tests__', 'fixtures');
const TRAINERS = join(FIXTURES, 'trainers');
const HF = join(TRAINERS, 'accelerate-hf');
const FAIL = join(TRAINERS, 'accelerate-fail');
const DIFFSYNTH = join(TRAINERS, 'accelerate-diffsynth');
/** One training step on 8 GPUs, ZeRO-1, 7B parameters: estimated at 46.5 GiB per GPU. */
const HF_EIGHT = join(FIXTURES, 'launch', 'hf-eight.yaml');
const SEED = 'qwen-image-lora-lowvram';
const NODE_DIR = dirname(process.execPath);
/**
 * GPU memory the stand-in reports, MiB: GPU 0 above the estimate (yellow), GPU 1 above 95% of its 81559 MiB
 * (red), the rest below the estimate.
 */
const USED_MIB = '44000:78000:30000';

const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});

function workDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-e2e-live-'));
  dirs.push(d);
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  return d;
}

/** The environment of a run: nvidia-smi from `bin` (the streaming stand-in, or none), fast loops. */
function env(more: Record<string, string> = {}, bin = 'bin-nvidia'): Record<string, string> {
  return {
    PATH: `${join(FIXTURES, bin)}:${NODE_DIR}:${barePath()}`,
    ZW_FAKE_NVIDIA_SMI: '8',
    ZW_FAKE_GPU_USED_MIB: USED_MIB,
    ZEROWIZ_TELEMETRY_MS: '100',
    FAKE_TRAIN_STEP_MS: '15',
    FAKE_TRAIN_STEPS: '200',
    NO_COLOR: '1',
    ...more,
  };
}

function records(d: string): string[] {
  const root = join(d, '.zerowiz', 'runs');
  return existsSync(root) ? readdirSync(root).sort() : [];
}

function runJson(d: string): RunJson {
  const [id] = records(d);
  return JSON.parse(readFileSync(join(d, '.zerowiz', 'runs', id!, 'run.json'), 'utf8')) as RunJson;
}

/** `zerowiz launch HF_EIGHT` with `trainer` as accelerate, in the pane of a `cols` x `rows` terminal. */
function paneLaunch(d: string, trainer: string, cols: number, rows: number, e: Record<string, string>) {
  return spawnPty({ args: ['launch', HF_EIGHT, '--accelerate', trainer], cwd: d, cols, rows, env: e });
}

/** The bin as a subprocess (no terminal: stream mode). */
function zerowiz(
  args: string[],
  cwd: string,
  e: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...e } }, (err, stdout, stderr) => {
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the log pane with GPU telemetry, in a real terminal', () => {
  it('80x24: GPU bars with the estimate and utilisation, the loss row from the Trainer log; the summary, run.json and `runs` keep the peaks against the estimate', async () => {
    const d = workDir();
    const s = paneLaunch(d, HF, 80, 24, env({ FAKE_DS_MEMORY: '1' }));
    // Eight GPUs, four per row: index, bar (with the estimate's ┃), memory used, utilisation.
    const gpuRow = /^0 \S*┃\S* +43G +97% 1 \S+ +76G +97% 2 \S+ +29G +97% 3 \S+ +29G +97%$/m;
    const screen = await s.waitFor(
      (x) => gpuRow.test(x) && /^loss 0\.\d{4} · min 0\.\d{4} · Trainer log \S+ recent · lr /m.test(x),
      20_000,
    );
    expect(screen).toMatch(/^4 \S+ +29G +97% 5 \S+ +29G +97% 6 \S+ +29G +97% 7 \S+ +29G +97%$/m);
    expect(screen).toMatch(/▶ 1\. train +running/);
    // The 24 rows are all used, the last one kept free; the key hints fit in 80 columns.
    const rows = s.lines();
    expect(rows[23]).toBe('');
    expect(rows[22]).toMatch(/q stop · d leave running$/);
    expect(await closeWhenDone(s)).toBe(0);
    await s.waitFor(/run record: \.zerowiz\/runs\//);
    const raw = s.raw();
    expect(raw).toContain('zerowiz: 1 step done');
    expect(raw).toContain('zerowiz: train: peak 76.2 GiB on GPU 1 vs estimated 46.5 GiB (+64%)');

    const j = runJson(d);
    expect(j.estimate).toEqual({ mode: '1', gpuBytesPerGpu: expect.any(Number), step: expect.any(Object) });
    expect(Math.round(j.estimate!.gpuBytesPerGpu / 2 ** 30)).toBe(46);
    const live = j.steps[0]!.live!;
    expect(live.gpu.telemetry).toBe('ok');
    expect(live.gpu.peaks.map((p) => [p.index, p.usedBytes / 2 ** 20])).toEqual([
      [0, 44000],
      [1, 78000],
      ...[2, 3, 4, 5, 6, 7].map((i) => [i, 30000]),
    ]);
    expect(live.metrics).toMatchObject({ lossSource: 'hf', lossCount: 40, dsPeakAllocatedBytes: expect.any(Number) });
    expect(live.alerts).toEqual([]);

    const runs = await zerowiz(['runs'], d, env());
    // The Trainer's loss falls all through the run: the last is the lowest, so no `(min ...)` after it.
    expect(live.metrics.lastLoss).toBe(live.metrics.minLoss);
    expect(runs.stdout).toMatch(
      /\n {2}train: peak 76\.2 GiB on GPU 1 vs estimated 46\.5 GiB \(\+64%\) · loss 0\.\d{4}( · [0-9.<]+ s\/step \(est [0-9.]+ s, -\d+%\))?\n/,
    );
    const listed = JSON.parse((await zerowiz(['runs', '--json'], d, env())).stdout) as {
      estimate: unknown;
      steps: { gpuPeak: unknown; loss: { source: string } }[];
    }[];
    expect(listed[0]!.estimate).toEqual(j.estimate);
    expect(listed[0]!.steps[0]).toMatchObject({
      gpuPeak: { gpu: 1, usedBytes: 78000 * 2 ** 20 },
      loss: { source: 'hf' },
    });
  }, 60_000);

  it('160 columns: a side panel beside the log, one GPU per row with its peak, and the step metrics in full', async () => {
    const d = workDir();
    const s = paneLaunch(d, HF, 160, 30, env({ FAKE_DS_MEMORY: '1' }));
    const screen = await s.waitFor(
      (x) => /│ 7 \S+ +29\.3\/79\.6G +97% pk 29\.3/.test(x) && /│ Max_MA +\d/.test(x) && /│ lr +\d/.test(x),
      20_000,
    );
    expect(screen).toMatch(/│ GPU memory · ┃ estimate 46\.5 GiB/);
    expect(screen).toMatch(/│ 1 \S+ +76\.2\/79\.6G +97% pk 76\.2/);
    expect(screen).toMatch(/│ loss +\d\.\d{4} \(Trainer log\)/);
    // No GPU rows under the log in the wide layout: the panel has them.
    expect(screen).not.toMatch(/^0 \S+ +43G/m);
    expect(await closeWhenDone(s)).toBe(0);
  }, 60_000);

  it('nvidia-smi dying mid-run: a dim row says why, and the record keeps the peaks seen before', async () => {
    const d = workDir();
    const s = paneLaunch(d, HF, 80, 24, env({ ZW_FAKE_NVIDIA_SMI_LOOPS: '3', ZW_FAKE_NVIDIA_SMI_END: 'lost' }));
    await s.waitFor(/GPU telemetry lost: nvidia-smi exited with code 15 after 24 samples/, 20_000);
    expect(await closeWhenDone(s)).toBe(0);
    await s.waitFor('train: peak 76.2 GiB on GPU 1 vs estimated 46.5 GiB');
    const live = runJson(d).steps[0]!.live!;
    expect(live.gpu.telemetry).toBe('lost');
    expect(live.gpu.reason).toMatch(/GPU is lost/);
    expect(live.gpu.peaks).toHaveLength(8);
  }, 60_000);

  it('nvidia-smi absent: the GPU row says so, the summary too; the run is unaffected', async () => {
    const d = workDir();
    const s = paneLaunch(d, HF, 80, 24, env({}, 'bin-empty'));
    await s.waitFor(/^no GPU telemetry: nvidia-smi not found on PATH$/m, 20_000);
    expect(await closeWhenDone(s)).toBe(0);
    await s.waitFor('zerowiz: no GPU telemetry: nvidia-smi not found on PATH');
    expect(runJson(d).steps[0]!.live!.gpu).toEqual({
      telemetry: 'unavailable',
      reason: 'nvidia-smi not found on PATH',
      peaks: [],
    });
  }, 60_000);

  it('a CUDA OOM: the alert row with the mode that fits by the estimate, `a` lists it, the summary gives it as the reason', async () => {
    const d = workDir();
    const s = paneLaunch(d, FAIL, 100, 24, env({ FAKE_FAIL: 'cuda-oom', FAKE_TRAIN_STEPS: '3' }));
    await s.waitFor(/\[failed: q to close\]/, 20_000);
    const screen = await s.waitFor(
      /^ ALERT CUDA out of memory on GPU 3 trying to allocate 1\.5 GiB +fix: switch to ZeRO-2/m,
    );
    expect(screen).toMatch(/· a alerts · Tab step · q close$/m);
    s.write('a');
    const list = await s.waitFor(/alerts of this run \(1\)/);
    expect(list).toMatch(/train: CUDA out of memory on GPU 3/);
    expect(list).toMatch(/fix: switch to ZeRO-2, which fits by the estimate \(33\.8 GiB per GPU against 46\.5/);
    expect(list).toMatch(/torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate 1\.50 GiB/);
    s.write(KEYS.esc);
    await s.waitFor(/── train · \d+ lines/);
    s.write('q');
    expect(await s.exited).toBe(1);
    await s.waitFor(/run record:/);
    expect(s.raw()).toMatch(
      /zerowiz: step train failed after [\d.]+s \(exit 1\)\r?\nzerowiz: {3}reason: CUDA out of memory on GPU 3 trying to allocate 1\.5 GiB\r?\nzerowiz: {3}fix: switch to ZeRO-2/,
    );
    const alerts = runJson(d).steps[0]!.live!.alerts;
    expect(alerts.map((a) => [a.id, a.fatal])).toEqual([['cuda-oom', true]]);
    expect(alerts[0]!.fix).toMatch(/^switch to ZeRO-2/);
  }, 60_000);
});

describe('stream mode (--no-tui)', () => {
  it('one line per percent with the loss and GPU memory; a NaN alert as it happens; the summary', async () => {
    const d = workDir();
    const r = await zerowiz(
      ['launch', HF_EIGHT, '--no-tui', '--accelerate', HF],
      d,
      env({ FAKE_TRAIN_STEPS: '100', FAKE_TRAIN_STEP_MS: '20', FAKE_TRAIN_NAN_AT: '60' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const bars = lines.filter((l) => /^\[train\] +\d+%\|/.test(l));
    // tqdm's own line (rate and ETA in it: tqdm redraws at most every 0.1 s), then what zerowiz adds; one
    // line per percent drawn, never two.
    expect(bars.length).toBeGreaterThanOrEqual(5);
    // (tqdm's close prints the bar once more, its rate updated: that last line may repeat 100%.)
    const percents = bars.map((l) => /(\d+)%\|/.exec(l)?.[1]);
    if (percents.at(-1) === '100' && percents.at(-2) === '100') percents.pop();
    expect(new Set(percents).size).toBe(percents.length);
    expect(r.stdout).toMatch(
      /^\[train\] +\d+%\|.*it\/s\] {2}\| loss 0\.\d{4} · GPU max 76\.2 GiB of 79\.6 GiB( · [0-9.<]+ s\/step \(est .*)?$/m,
    );
    // After the NaN: the last loss says so, the min is the last finite one.
    expect(r.stdout).toMatch(
      /^\[train\] +\d+%\|.*\| loss nan \(min 0\.\d{4}\) · GPU max 76\.2 GiB of 79\.6 GiB( · [0-9.<]+ s\/step \(est .*)?$/m,
    );
    const alertAt = lines.findIndex((l) => l.startsWith('[zerowiz] ALERT in train: loss is NaN (Trainer log); fix: '));
    expect(alertAt).toBeGreaterThan(0);
    // As it happened: before the step's end, and once.
    expect(alertAt).toBeLessThan(lines.findIndex((l) => l.startsWith('[zerowiz] step train done')));
    expect(lines.filter((l) => l.includes('ALERT'))).toHaveLength(1);
    expect(r.stdout).toMatch(/^\[zerowiz\] alert in train: loss is NaN \(Trainer log\); fix: /m);
    expect(r.stdout).toContain('[zerowiz] train: peak 76.2 GiB on GPU 1 vs estimated 46.5 GiB (+64%)');
    expect(runJson(d).steps[0]!.live!.alerts.map((a) => a.id)).toEqual(['nan-loss']);
  }, 60_000);

  it('port in use and a CUDA OOM: the alert as it happens (a free port, the mode that fits), the reason in the summary, the record keeps it', async () => {
    const d = workDir();
    const r = await zerowiz(
      ['launch', HF_EIGHT, '--no-tui', '--accelerate', FAIL],
      d,
      env({ FAKE_FAIL: 'port-in-use', FAKE_TRAIN_STEPS: '3' }),
    );
    expect(r.code).toBe(1);
    const port =
      /ALERT in train: port 29500 is already in use \(another run on this machine\?\); fix: use port (\d+) \(free when zerowiz checked\)/.exec(
        r.stdout,
      )?.[1];
    expect(Number(port)).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/^\[zerowiz\] {3}reason: port 29500 is already in use/m);
    expect(r.stderr).toMatch(/zerowiz: the run failed; logs in \.zerowiz\/runs\//);
    expect(runJson(d).steps[0]!.live!.alerts.map((a) => a.id)).toEqual(['port-in-use']);

    // A CUDA OOM in stream mode: the alert as it happens, then the same reason and fix in the summary.
    rmSync(join(d, '.zerowiz'), { recursive: true });
    const oom = await zerowiz(
      ['launch', HF_EIGHT, '--no-tui', '--accelerate', FAIL],
      d,
      env({ FAKE_FAIL: 'cuda-oom', FAKE_TRAIN_STEPS: '3' }),
    );
    expect(oom.code).toBe(1);
    const fix =
      /^\[zerowiz\] ALERT in train: CUDA out of memory on GPU 3 trying to allocate 1\.5 GiB; fix: (switch to ZeRO-2, .*)$/m.exec(
        oom.stdout,
      )?.[1];
    expect(fix).toBeDefined();
    expect(oom.stdout).toContain(`[zerowiz]   fix: ${fix}`);
    expect(runJson(d).steps[0]!.live!.alerts.map((a) => a.id)).toEqual(['cuda-oom']);
  }, 60_000);

  it('into a file it prints what it prints into a pipe; onto a full disk (/dev/full) the run goes on and logs all', async () => {
    const e = env({ FAKE_TRAIN_STEPS: '40', FAKE_TRAIN_STEP_MS: '5' });
    const d = workDir();
    const piped = await zerowiz(['launch', HF_EIGHT, '--no-tui', '--accelerate', HF], d, e);
    expect(piped.code, piped.stderr).toBe(0);
    /** A run with stdout on `path` (a regular file, or a device); resolves with its exit code and stderr. */
    const into = (path: string, cwd: string) =>
      new Promise<{ code: number | null; stderr: string }>((res) => {
        const fd = openSync(path, 'w');
        const c = spawn(process.execPath, [BIN, 'launch', HF_EIGHT, '--no-tui', '--accelerate', HF], {
          cwd,
          env: { ...process.env, ...e },
          stdio: ['ignore', fd, 'pipe'],
        });
        closeSync(fd);
        let stderr = '';
        c.stderr!.on('data', (b) => (stderr += b));
        c.on('close', (code) => res({ code, stderr }));
      });
    const d2 = workDir();
    const file = join(d2, 'out.txt');
    const f = await into(file, d2);
    expect(f.code, f.stderr).toBe(0);
    // Progress lines carry tqdm's rate and ETA, log lines their time: the rest must be the same, in order.
    const steady = (t: string) =>
      t
        .split('\n')
        .filter((l) => !/%\||\d+(\.\d+)?s\b|run \d{8}-\d{6}|record|log:|report:/.test(l))
        .map((l) => l.replace(/\[\d{4}-\d\d-\d\d [\d:,]+\]/, '[time]'))
        .join('\n');
    expect(steady(readFileSync(file, 'utf8'))).toBe(steady(piped.stdout));
    expect(readFileSync(file, 'utf8')).toMatch(/^\[zerowiz\] 1 step done/m);

    const d3 = workDir();
    const full = await into('/dev/full', d3);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stderr).not.toMatch(/ENOSPC|Error|\n\s+at /);
    const log = readFileSync(join(d3, '.zerowiz', 'runs', records(d3)[0]!, runJson(d3).steps[0]!.log!), 'utf8');
    expect(log).toContain("'train_runtime'");
  }, 60_000);

  it("kill -9 of the run's supervisor mid-run: run.json keeps the peaks saved so far, and the watchdog ends nvidia-smi too", async () => {
    const d = workDir();
    // An nvidia-smi that hangs without writing: no SIGPIPE will end it, only the watchdog.
    const e = env({
      FAKE_TRAIN_STEPS: '100000',
      ZEROWIZ_LIVE_SAVE_MS: '200',
      ZW_FAKE_NVIDIA_SMI_LOOPS: '3',
      ZW_FAKE_NVIDIA_SMI_END: 'hang',
    });
    const child = execFile(process.execPath, [BIN, 'launch', HF_EIGHT, '--no-tui', '--accelerate', HF], {
      cwd: d,
      env: { ...process.env, ...e },
    });
    const exited = new Promise<void>((res) => child.on('exit', () => res()));
    const livePeaks = () => {
      try {
        return runJson(d).steps[0]?.live?.gpu.peaks.length ?? 0;
      } catch {
        return 0; // the record is being made
      }
    };
    await until(() => records(d).length === 1 && livePeaks() === 8, 'a live save', 20_000);
    const dir = join(d, '.zerowiz', 'runs', records(d)[0]!);
    // Once it hangs (its last loop written), nothing it writes can end it.
    const cmdline = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        return ''; // gone meanwhile (one of its loop's short sleeps)
      }
    };
    const hung = () =>
      processesWithEnv('ZEROWIZ_HELPER_OF', dir).filter((p) => cmdline(p).startsWith('/bin/sleep\x003600'));
    await until(() => hung().length === 1, 'nvidia-smi to hang', 20_000);
    const smi = hung();
    // The run's owner is its supervisor (the viewer only follows it): killing it leaves the watchdog to end
    // the run, and the viewer reads that end.
    process.kill(runJson(d).supervisor!.pid, 'SIGKILL');
    await exited;
    expect(child.exitCode).toBe(130);
    await until(() => runJson(d).ended === 'interrupted', 'the watchdog to end the record', 20_000);
    await until(() => smi.every((p) => !running(p)), 'nvidia-smi to be gone', 10_000);
    const j = runJson(d);
    expect(j.steps[0]!.live!.gpu.peaks.find((p) => p.index === 1)?.usedBytes).toBe(78000 * 2 ** 20);
  }, 60_000);
});

describe('the --enable_csv_log offer of `zerowiz launch`', () => {
  /** A DiffSynth-Studio checkout: the seed's training script, and a parsers.py that knows the flag (or not). */
  function checkout(knowsFlag: boolean): string {
    const d = workDir();
    mkdirSync(join(d, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(d, 'examples/qwen_image/model_training/train.py'), '# stand-in\n');
    // Its example dataset, downloaded as DiffSynth-Studio's README says (the seed's data pass reads it).
    mkdirSync(join(d, 'data/example_image_dataset'), { recursive: true });
    writeFileSync(join(d, 'data/example_image_dataset/metadata.csv'), 'image,prompt\n');
    mkdirSync(join(d, 'diffsynth/diffusion'), { recursive: true });
    writeFileSync(
      join(d, 'diffsynth/diffusion/parsers.py'),
      knowsFlag
        ? 'def add_logger_config(parser):\n    parser.add_argument("--enable_csv_log", default=False, action="store_true")\n'
        : 'def add_general_config(parser):\n    pass\n',
    );
    // A preset file of the user's, to check it is never touched.
    copyFileSync(join(ROOT, 'presets', `${SEED}.yaml`), join(d, 'mine.yaml'));
    return d;
  }

  it('on a terminal it asks; yes adds the flag to this run (argv, commands.sh, run.json), never the preset, and the loss comes from loss.csv', async () => {
    const d = checkout(true);
    const before = readFileSync(join(d, 'mine.yaml'), 'utf8');
    const s = spawnPty({
      args: ['launch', './mine.yaml', '--accelerate', DIFFSYNTH],
      cwd: d,
      cols: 100,
      rows: 24,
      env: env({ FAKE_TRAIN_STEPS: '30', FAKE_TRAIN_STEP_MS: '20' }),
    });
    // The question wraps at the terminal's edge: read it as one text.
    await s.waitFor((x) =>
      /step train \(DiffSynth-Studio\) prints no loss; add --enable_csv_log for this run .*\[Y\/n\]/.test(
        x.replace(/\n/g, ''),
      ),
    );
    s.write(`y${KEYS.enter}`);
    await s.waitFor(/^loss 0\.\d{4} · min 0\.\d{4} · loss\.csv /m, 30_000);
    expect(await closeWhenDone(s)).toBe(0);
    // The data pass trains nothing: its row says so instead of waiting for a loss.
    const drawn = stripAnsi(s.raw());
    expect(drawn).toContain('loss: none: sft:data_process trains nothing');
    const j = runJson(d);
    expect(j.steps[1]!.argv.at(-1)).toBe('--enable_csv_log');
    expect(j.steps[0]!.argv).not.toContain('--enable_csv_log');
    expect(j.steps[1]!.live!.metrics.lossSource).toBe('csv');
    const [id] = records(d);
    expect(readFileSync(join(d, '.zerowiz', 'runs', id!, 'commands.sh'), 'utf8')).toMatch(
      /--task sft:train .*--enable_csv_log\n/,
    );
    expect(readFileSync(join(d, 'mine.yaml'), 'utf8')).toBe(before);
  }, 60_000);

  it('Ctrl+C at the question says so on a line of its own, and nothing starts (exit 130)', async () => {
    const d = checkout(true);
    const s = spawnPty({
      args: ['launch', './mine.yaml', '--accelerate', DIFFSYNTH, '--no-tui'],
      cwd: d,
      cols: 100,
      rows: 24,
      env: env({ FAKE_TRAIN_STEPS: '3' }),
    });
    await s.waitFor((x) => /add --enable_csv_log for this run .*\[Y\/n\]/.test(x.replace(/\n/g, '')));
    s.write(KEYS.ctrlC);
    expect(await s.exited).toBe(130);
    await s.waitFor(/^zerowiz: Ctrl\+C at the question: nothing was started$/m);
    expect(records(d)).toEqual([]);
  }, 60_000);

  it('attach to a finished run stops at its own end: the loss a later run of the preset appends to loss.csv never shows', async () => {
    const d = checkout(true);
    const first = await zerowiz(
      ['launch', './mine.yaml', '--csv-log', '--accelerate', DIFFSYNTH],
      d,
      env({ FAKE_TRAIN_STEPS: '3', FAKE_TRAIN_STEP_MS: '0' }),
    );
    expect(first.code, first.stderr).toBe(0);
    const [a] = records(d);
    // A later run of the same preset appends its rows to the same loss.csv (DiffSynth opens it for append).
    const later = await zerowiz(
      ['launch', './mine.yaml', '--csv-log', '--accelerate', DIFFSYNTH],
      d,
      env({ FAKE_TRAIN_STEPS: '5', FAKE_TRAIN_STEP_MS: '0' }),
    );
    expect(later.code, later.stderr).toBe(0);
    const rows = readFileSync(join(d, 'models/train/Qwen-Image_lora/loss.csv'), 'utf8').trim().split('\n').slice(1);
    // DiffSynth counts steps again from 1 in each run: the later run's rows start where the first's end.
    const restart = rows.findIndex((l, i) => i > 0 && l.startsWith('1,'));
    expect(restart).toBeGreaterThan(0);
    const lossOf = (row: string) => Number(row.split(',')[2]).toFixed(4);
    const own = lossOf(rows[restart - 1]!);
    const theirs = lossOf(rows.at(-1)!);
    expect(own).not.toBe(theirs);
    const r = await zerowiz(['attach', a!, '--no-tui'], d, env({}));
    expect(r.code, r.stderr).toBe(0);
    // Its own last loss, not the later run's.
    const out = r.stdout + r.stderr;
    expect(out).toContain(`loss ${own}`);
    expect(out).not.toContain(theirs);
  }, 60_000);

  it('without a terminal: a hint and no flag; --csv-log adds it, --no-csv-log is quiet; an older checkout gets a note', async () => {
    const d = checkout(true);
    const e = env({ FAKE_TRAIN_STEPS: '3', FAKE_TRAIN_STEP_MS: '0' });
    const plain = await zerowiz(['launch', './mine.yaml', '--accelerate', DIFFSYNTH], d, e);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain(
      'zerowiz: hint: step train (DiffSynth-Studio) prints no loss; --csv-log adds --enable_csv_log for this run (DiffSynth then writes ./models/train/Qwen-Image_lora/loss.csv), --no-csv-log leaves it out',
    );
    expect(runJson(d).steps[1]!.argv).not.toContain('--enable_csv_log');
    rmSync(join(d, '.zerowiz'), { recursive: true });

    const yes = await zerowiz(['launch', './mine.yaml', '--csv-log', '--accelerate', DIFFSYNTH], d, e);
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stderr).toContain('zerowiz: adding --enable_csv_log to train for this run');
    expect(runJson(d).steps[1]!.argv.at(-1)).toBe('--enable_csv_log');
    rmSync(join(d, '.zerowiz'), { recursive: true });

    const no = await zerowiz(['launch', './mine.yaml', '--no-csv-log', '--accelerate', DIFFSYNTH], d, e);
    expect(no.code, no.stderr).toBe(0);
    expect(no.stderr).not.toMatch(/--enable_csv_log|csv-log|loss\.csv/);

    const old = checkout(false);
    const r = await zerowiz(['launch', './mine.yaml', '--csv-log', '--dry-run', '--accelerate', DIFFSYNTH], old, e);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'zerowiz: note: step train: this DiffSynth-Studio checkout has no --enable_csv_log (added 2026-08-19): update it (git pull) to see the loss',
    );
    expect(r.stdout).not.toContain('--enable_csv_log');
  }, 60_000);

  it("a fast step's last progress line and its summary show the step's last loss.csv row, not one read before it", async () => {
    const d = checkout(true);
    const e = env({ FAKE_TRAIN_STEPS: '40', FAKE_TRAIN_STEP_MS: '0' });
    const r = await zerowiz(['launch', './mine.yaml', '--csv-log', '--no-tui', '--accelerate', DIFFSYNTH], d, e);
    expect(r.code, r.stderr).toBe(0);
    const rows = readFileSync(join(d, 'models/train/Qwen-Image_lora/loss.csv'), 'utf8').trim().split('\n');
    const last = Number(rows.at(-1)!.split(',')[2]);
    const shown = last.toFixed(4);
    const bars = r.stdout.split('\n').filter((l) => /^\[train\] +100%\|/.test(l));
    expect(bars.at(-1)).toContain(`| loss ${shown}`);
    expect(runJson(d).steps[1]!.live!.metrics).toMatchObject({ lastLoss: last, lossCount: rows.length - 1 });
  }, 60_000);
});
