import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as shellParse } from 'shell-quote';
import { BIN, ROOT } from '../helpers/pty.js';
import { loadPreset } from '../../src/setups/presets.js';
import { toAccelerateYaml } from '../../src/config/emit.js';
import { shellJoin } from '../../src/text/quote.js';
import { trainingScript } from '../../src/config/argv.js';
import type { RunJson } from '../../src/records/record.js';
import { removeWorkDirs } from '../helpers/proc.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const TWO_STEP = join(ROOT, '__tests__', 'fixtures', 'launch', 'two-step.yaml');
const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});
beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/zerowiz.js is missing: run `node scripts/build.mjs` first');
});

function tmp(files: string[] = []): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-launch-'));
  dirs.push(d);
  for (const f of files) {
    mkdirSync(join(d, f, '..'), { recursive: true });
    writeFileSync(join(d, f), '# stand-in training script\n');
  }
  return d;
}

function zerowiz(
  args: string[],
  cwd: string,
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const e: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, FAKE_ACCELERATE_STEP_MS: '0', ...env }))
      if (v !== undefined) e[k] = v;
    execFile(process.execPath, [BIN, ...args], { cwd, env: e }, (err, stdout, stderr) => {
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const argvLog = (d: string) =>
  readFileSync(join(d, 'argv.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { argv: string[] });
const records = (d: string) => readdirSync(join(d, '.zerowiz', 'runs')).sort();
const runJson = (d: string, id: string) =>
  JSON.parse(readFileSync(join(d, '.zerowiz', 'runs', id, 'run.json'), 'utf8')) as RunJson;

/** The seed document's two commands, as argv after `accelerate`. */
function seedArgv(): string[][] {
  const text = readFileSync('/work/shared/seed/000_727647c9fffbab57.txt', 'utf8');
  const cmds = [...text.matchAll(/^accelerate launch[\s\S]*?(?=\n\n)/gm)].map((m) => m[0].replace(/\\\n/g, ' '));
  return cmds.map((c) => (shellParse(c) as string[]).slice(1));
}

describe('zerowiz launch (stream mode, as a subprocess)', () => {
  it('runs the seed preset: both passes with exactly the seed arguments, the second with the generated config', async () => {
    const d = tmp(['examples/qwen_image/model_training/train.py']);
    const r = await zerowiz(['launch', 'qwen-image-lora-lowvram', '--accelerate', FAKE], d, {
      FAKE_ACCELERATE_LOG: join(d, 'argv.jsonl'),
    });
    expect(r.stderr).not.toMatch(/unexpected|at .*\.js:\d+/);
    expect(r.code).toBe(0);
    const seed = seedArgv();
    expect(seed).toHaveLength(2);
    expect(argvLog(d).map((x) => x.argv)).toEqual(seed);
    // The --config_file the second pass got is the YAML zerowiz generated for the preset.
    const setup = await loadPreset('qwen-image-lora-lowvram');
    const yamlPath = seed[1]![2]!;
    expect(readFileSync(join(d, yamlPath), 'utf8')).toBe(toAccelerateYaml(setup));
    expect(r.stdout).toMatch(/^\[data_process\] /m);
    expect(r.stdout).toMatch(/^\[train\] +.*Initializing TorchBackend/m);
  });

  it('stops after a failing first pass (exit 1), shows where the log is, and records it', async () => {
    const d = tmp(['train.py']);
    const r = await zerowiz(['launch', TWO_STEP, '--accelerate', FAKE], d, {
      FAKE_ACCELERATE_LOG: join(d, 'argv.jsonl'),
      FAKE_ACCELERATE_EXIT: '7',
      FAKE_ACCELERATE_FAIL_TASK: 'sft:data_process',
    });
    expect(r.code).toBe(1);
    expect(argvLog(d)).toHaveLength(1);
    expect(r.stdout).toMatch(/step data_process failed after .* \(exit 7\)/);
    expect(r.stdout.match(/step data_process failed after/g)).toHaveLength(1); // said once, not again in the summary
    expect(r.stdout).toMatch(/full log: \.zerowiz\/runs\/\d{8}-\d{6}-two-step\/01-data_process\.log/);
    const [id] = records(d);
    const j = runJson(d, id!);
    expect(j).toMatchObject({ name: 'two-step', ended: 'failed', exitCode: 1 });
    expect(j.steps.map((s) => [s.name, s.status, s.exitCode])).toEqual([
      ['data_process', 'failed', 7],
      ['train', 'pending', null],
    ]);
    expect(readFileSync(join(d, '.zerowiz', 'runs', id!, '01-data_process.log'), 'utf8')).toContain(
      'CUDA out of memory',
    );
  });

  it('keeps a run record: config copies, commands.sh, a log per step, run.json; `runs` lists it and `--last` reruns it', async () => {
    const d = tmp(['train.py']);
    const env = { FAKE_ACCELERATE_LOG: join(d, 'argv.jsonl'), ZEROWIZ_ACCELERATE: FAKE };
    expect((await zerowiz(['launch', TWO_STEP], d, env)).code).toBe(0);
    const [id] = records(d);
    const dir = join(d, '.zerowiz', 'runs', id!);
    expect(readdirSync(dir).sort()).toEqual([
      '01-data_process.log',
      '02-train.log',
      'accelerate_config.yaml',
      'commands.sh',
      'ds_config.json',
      // What the run's supervisor writes for its viewers.
      'events.jsonl',
      'live.json',
      // The series it kept for the report (no GPU here: no gpu.csv), and the report.
      'losses.csv',
      'progress.csv',
      'report.html',
      'run.json',
    ]);
    const j = runJson(d, id!);
    expect(j).toMatchObject({ version: 1, ended: 'succeeded', exitCode: 0, cwd: d, source: TWO_STEP });
    expect(j.steps.every((s) => s.status === 'done' && s.exitCode === 0 && typeof s.durationMs === 'number')).toBe(
      true,
    );
    expect(readFileSync(join(dir, 'accelerate_config.yaml'), 'utf8')).toBe(
      readFileSync(join(d, 'cfg', 'accelerate_config.yaml'), 'utf8'),
    );
    const sh = readFileSync(join(dir, 'commands.sh'), 'utf8');
    expect(sh).toContain(
      `${FAKE} launch --config_file cfg/accelerate_config.yaml train.py --dataset_base_path ./cache --task sft:train`,
    );
    expect(sh).toContain('set -e');

    const list = await zerowiz(['runs'], d);
    expect(list.stdout).toContain(id);
    const again = await zerowiz(['launch', '--last'], d, env);
    expect(again.code).toBe(0);
    expect(records(d)).toHaveLength(2);
    expect(argvLog(d).map((x) => x.argv)).toEqual([
      ...argvLog(d)
        .slice(0, 2)
        .map((x) => x.argv),
      ...argvLog(d)
        .slice(0, 2)
        .map((x) => x.argv),
    ]);
    const json = JSON.parse((await zerowiz(['runs', '--json'], d)).stdout) as { id: string; source: string }[];
    expect(json[0]?.source).toBe(`--last (${id})`);
  });

  it("`runs` shows each step's last loss, and the lowest only when it is lower", async () => {
    const d = tmp();
    const id = '20261130-120000-x';
    mkdirSync(join(d, '.zerowiz', 'runs', id), { recursive: true });
    const step = (name: string, lastLoss: number | string, minLoss: number) => ({
      name,
      argv: [],
      usesConfig: false,
      command: 'accelerate launch train.py',
      log: `${name}.log`,
      status: 'done',
      exitCode: 0,
      signal: null,
      startedAt: null,
      endedAt: null,
      durationMs: null,
      live: {
        metrics: {
          lossSource: 'csv',
          lastLoss,
          minLoss,
          lossCount: 10,
          nonFiniteLosses: 0,
          learningRate: null,
          ratePerS: null,
          skippedSteps: 0,
          lossScale: null,
          dsPeakAllocatedBytes: null,
        },
        gpu: { telemetry: 'ok', reason: null, peaks: [] },
        alerts: [],
      },
    });
    const json = {
      version: 1,
      id,
      name: 'x',
      source: 'x',
      cwd: d,
      accelerate: { path: FAKE, display: 'accelerate' },
      startedAt: '2026-11-30T12:00:00.000Z',
      endedAt: '2026-11-30T12:01:00.000Z',
      ended: 'succeeded',
      exitCode: 0,
      configFiles: [],
      steps: [step('settled', 0.25, 0.25), step('rising', 0.3, 0.25), step('broken', 'nan', 0.25)],
      setup: {},
    };
    writeFileSync(join(d, '.zerowiz', 'runs', id, 'run.json'), JSON.stringify(json));
    const r = await zerowiz(['runs'], d);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('\n  settled: loss 0.2500\n');
    expect(r.stdout).toContain('\n  rising: loss 0.3000 (min 0.2500)\n');
    expect(r.stdout).toContain('\n  broken: loss nan (min 0.2500)\n');
  });

  it('--dry-run prints the exact commands, shell-quoted, and runs nothing', async () => {
    const d = tmp(['examples/qwen_image/model_training/train.py']);
    const r = await zerowiz(['launch', 'qwen-image-lora-lowvram', '--dry-run', '--accelerate', FAKE], d, {
      FAKE_ACCELERATE_LOG: join(d, 'argv.jsonl'),
    });
    expect(r.code).toBe(0);
    const cmds = r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(cmds.map((c) => (shellParse(c) as string[]).slice(1))).toEqual(seedArgv());
    expect(existsSync(join(d, 'argv.jsonl'))).toBe(false);
    expect(existsSync(join(d, '.zerowiz'))).toBe(false);
  });

  it('exits 2 with a hint to activate the Python environment when accelerate is missing', async () => {
    const d = tmp(['train.py']);
    const r = await zerowiz(['launch', TWO_STEP], d, { PATH: '/nonexistent', ZEROWIZ_ACCELERATE: undefined });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /accelerate is not on PATH\n {2}hint: activate the Python environment that has accelerate and deepspeed/,
    );
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
  });

  it('exits 2 for a missing training script, a missing preset, and --last without records', async () => {
    const d = tmp([]);
    const a = await zerowiz(['launch', TWO_STEP, '--accelerate', FAKE], d);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/training script train\.py not found/);
    const b = await zerowiz(['launch', 'no-such-preset', '--accelerate', FAKE], d);
    expect(b.code).toBe(2);
    const c = await zerowiz(['launch', '--last'], d);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/no run recorded/);
    for (const x of [a, b, c]) expect(x.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('commands for pasting', () => {
  it('quotes only what the shell would misread, and round-trips through a shell parser', () => {
    const argv = [
      'accelerate',
      'launch',
      'a b',
      "it's",
      'sft:train',
      'Qwen/Qwen-Image:text_encoder/model*.safetensors',
      '',
      '$HOME',
    ];
    const text = shellJoin(argv);
    expect(text).toContain(' sft:train ');
    expect(shellParse(text)).toEqual(argv);
  });

  it('finds the training script after accelerate launch options', () => {
    expect(trainingScript(['--num_processes', '2', '--multi_gpu', 'train.py', '--lr', '1'])).toBe('train.py');
    expect(trainingScript(['--mixed_precision=bf16', 'x/train.py'])).toBe('x/train.py');
    expect(trainingScript(['-m', 'pkg.train'])).toBeNull();
  });
});

describe('a step pinned to the config without DeepSpeed', () => {
  it('launch writes that config too, keeps a copy in the run record, and commands.sh puts it back', async () => {
    const d = tmp(['train.py']);
    // The data pass names cfg/accelerate_no_deepspeed.yaml (what the wizard's "pin" writes into its args).
    const preset = readFileSync(TWO_STEP, 'utf8').replace(
      'args: [train.py, --task, "sft:data_process"',
      'args: [--config_file, cfg/accelerate_no_deepspeed.yaml, train.py, --task, "sft:data_process"',
    );
    writeFileSync(join(d, 'pinned.yaml'), preset);
    const r = await zerowiz(['launch', 'pinned.yaml', '--accelerate', FAKE, '--no-tui'], d, {
      FAKE_ACCELERATE_LOG: join(d, 'argv.jsonl'),
    });
    expect(r.code, r.stderr).toBe(0);
    const pinned = readFileSync(join(d, 'cfg', 'accelerate_no_deepspeed.yaml'), 'utf8');
    expect(pinned).toMatch(/^distributed_type: 'NO'$/m);
    const [id] = records(d);
    const json = runJson(d, id!);
    const copy = json.configFiles.find((f) => f.path === 'cfg/accelerate_no_deepspeed.yaml');
    expect(copy).toBeDefined();
    expect(readFileSync(join(d, '.zerowiz', 'runs', id!, copy!.copy), 'utf8')).toBe(pinned);
    const sh = readFileSync(join(d, '.zerowiz', 'runs', id!, 'commands.sh'), 'utf8');
    expect(sh).toContain(`"$RUN_DIR/"${copy!.copy} cfg/accelerate_no_deepspeed.yaml`);
  });

  it('--dry-run names that config among the files a real launch writes, and alone when no step uses the setup config', async () => {
    const d = tmp(['train.py']);
    const preset = readFileSync(TWO_STEP, 'utf8').replace(
      'args: [train.py, --task, "sft:data_process"',
      'args: [--config_file, cfg/accelerate_no_deepspeed.yaml, train.py, --task, "sft:data_process"',
    );
    writeFileSync(join(d, 'pinned.yaml'), preset);
    const r = await zerowiz(['launch', 'pinned.yaml', '--dry-run', '--accelerate', FAKE], d);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '# a real launch first writes cfg/accelerate_config.yaml, cfg/ds_config.json and cfg/accelerate_no_deepspeed.yaml\n',
    );
    // Only the pinned data pass: the setup's YAML and JSON are not written, the pinned config is.
    const dataOnly = preset.replace(/\n {2}- name: train\n[\s\S]*$/, '\n');
    expect(dataOnly).not.toContain('name: train');
    writeFileSync(join(d, 'data.yaml'), dataOnly);
    const only = await zerowiz(['launch', 'data.yaml', '--dry-run', '--accelerate', FAKE], d);
    expect(only.code, only.stderr).toBe(0);
    expect(only.stdout).toContain('# a real launch first writes cfg/accelerate_no_deepspeed.yaml\n');
    expect(existsSync(join(d, 'cfg'))).toBe(false);
    expect(existsSync(join(d, '.zerowiz'))).toBe(false);
  });
});
