/**
 * What the run supervisor does around each pass, through the built bin as users run it (no terminal):
 * the checks before a pass (their lines begin the pass log; a FAIL of the first pass stops the launch before
 * anything starts, exit 2; --dry-run runs them too), the stall watch during a pass, each checkpoint verified as it is saved (an alert, `runs`), the
 * topology kept in the record, and a relaunch over DeepSpeed checkpoints of another topology (the ways
 * forward: convert as a first pass, fresh, go on with the warning kept).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { writeDeepSpeedTag } from '../helpers/deepspeed-ckpt.js';
import { FAKE_ACCELERATE } from '../helpers/launch.js';
import { ROOT } from '../helpers/paths.js';
import { BIN } from '../helpers/pty.js';

const DIFFSYNTH = join(ROOT, '__tests__', 'fixtures', 'trainers', 'accelerate-diffsynth');

/** A working directory with a preset file and an empty training script. */
function workdir(preset: string): string {
  const cwd = tempDir('zw-guard-');
  writeFileSync(join(cwd, 'train.py'), '');
  writeFileSync(join(cwd, 'p.yaml'), preset);
  return cwd;
}

const ONE_STEP = (args: string, answers = 'num_processes: 1\n  mode: "2"\n  mixed_precision: bf16') => `name: p
answers:
  ${answers}
files:
  accelerate_config: cfg/a.yaml
  ds_config: cfg/d.json
steps:
  - name: train
    uses_config: true
    args: [${args}]
`;

/** The newest run record of cwd: its directory and run.json. */
function lastRun(cwd: string): { dir: string; json: Record<string, unknown> & { steps: Record<string, unknown>[] } } {
  const runs = join(cwd, '.zerowiz', 'runs');
  const id = readdirSync(runs).sort().at(-1)!;
  const dir = join(runs, id);
  return { dir, json: JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) };
}

/** The invocations the stand-in accelerate logged (FAKE_ACCELERATE_LOG). */
function invocations(log: string): { argv: string[] }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { argv: string[]; event?: string })
    .filter((x) => x.event === undefined);
}

describe('the checks before each pass of a local launch', () => {
  it('a FAIL of the first pass stops the launch before anything starts: each FAIL said once, the way on, exit 2, no record', () => {
    const cwd = workdir(ONE_STEP('train.py, --output_path, ./out'));
    const log = join(cwd, 'accelerate.log');
    // The stand-in accelerate is a Node script: the python check rightly fails (it is not run by Python).
    const r = runCli(['launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE], {
      cwd,
      env: { ZEROWIZ_SKIP_CHECKS: '', FAKE_ACCELERATE_LOG: log, PATH: process.env.PATH },
    });
    expect(r.code).toBe(2);
    const all = r.stdout + r.stderr;
    expect(r.stderr).toMatch(/^zerowiz: FAIL python +/m);
    // One reason, said once (not in a summary, a step error and an alert as well).
    expect(all.match(/not by Python/g)?.length ?? all.match(/FAIL python/g)?.length).toBe(1);
    expect(r.stderr).toMatch(
      /^zerowiz: (a check|\d+ checks) of pass 1 \(train\) failed \(above\): nothing was started, written or recorded\n\s*hint: .*add --skip-check python/m,
    );
    expect(invocations(log)).toHaveLength(0);
    expect(existsSync(join(cwd, '.zerowiz'))).toBe(false);
    expect(existsSync(join(cwd, 'cfg'))).toBe(false);
  });

  it('--dry-run runs the same checks and says a real launch would stop there, and how to go on', () => {
    const cwd = workdir(ONE_STEP('train.py, --output_path, ./out'));
    const r = runCli(['launch', 'p.yaml', '--dry-run', '--accelerate', FAKE_ACCELERATE], {
      cwd,
      env: { ZEROWIZ_SKIP_CHECKS: '' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/accelerate launch --config_file cfg\/a\.yaml train\.py --output_path \.\/out$/m);
    expect(r.stderr).toMatch(/^zerowiz: the checks of pass 1 \(train\): \d+ run, \d+ FAIL$/m);
    expect(r.stderr).toMatch(/^zerowiz: FAIL python /m);
    expect(r.stderr).toMatch(
      /^zerowiz: a real launch would stop here, before the pane; --skip-check python\S* goes on without/m,
    );
    expect(existsSync(join(cwd, '.zerowiz'))).toBe(false);
    const skipped = runCli(['launch', 'p.yaml', '--dry-run', '--accelerate', FAKE_ACCELERATE, '--skip-check', 'all'], {
      cwd,
    });
    expect(skipped.stderr).toMatch(/the checks before each pass are left out/);
  });

  it('checks that pass are written above the pass output, which then runs; --skip-check leaves one out', () => {
    const cwd = workdir(ONE_STEP('train.py, --output_path, ./out'));
    const log = join(cwd, 'accelerate.log');
    const r = runCli(
      [
        'launch',
        'p.yaml',
        '--no-tui',
        '--accelerate',
        FAKE_ACCELERATE,
        '--skip-check',
        'python,cuda-driver,gpus,deepspeed-ops,versions',
        '--skip-check',
        'host-memory',
      ],
      { cwd, env: { ZEROWIZ_SKIP_CHECKS: '', FAKE_ACCELERATE_LOG: log, PATH: process.env.PATH } },
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(invocations(log)).toHaveLength(1);
    const lines = readFileSync(join(lastRun(cwd).dir, '01-train.log'), 'utf8').split('\n');
    expect(lines[0]).toMatch(/^zerowiz-check \S+ SKIP python: skipped by --skip-check/);
    const done = lines.findIndex((l) => /^zerowiz-check \S+ done: \d+ PASS/.test(l));
    expect(done).toBeGreaterThan(0);
    expect(lines.slice(0, done).some((l) => /^zerowiz-check \S+ PASS port: port \d+ is free/.test(l))).toBe(true);
    // The pass's own output follows the checks.
    expect(lines.slice(done + 1).join('\n')).toMatch(/\d+%\|/);
  });

  it('launch --last keeps the --skip-check and --no-speed-test of the run it repeats, and says so', () => {
    const cwd = workdir(ONE_STEP('train.py, --output_path, ./out'));
    const env = { ZEROWIZ_SKIP_CHECKS: '' };
    const skip = ['--skip-check', 'python,cuda-driver,gpus,deepspeed-ops,versions,host-memory'];
    const first = runCli(
      ['launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE, ...skip, '--no-speed-test'],
      {
        cwd,
        env,
      },
    );
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(lastRun(cwd).json.skippedChecks).toEqual({
      ids: ['python', 'cuda-driver', 'gpus', 'deepspeed-ops', 'versions', 'host-memory'],
      speedTest: false,
    });
    const again = runCli(['launch', '--last', '--no-tui', '--accelerate', FAKE_ACCELERATE], { cwd, env });
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(again.stderr).toMatch(
      /^zerowiz: note: --last keeps --skip-check python,cuda-driver,gpus,deepspeed-ops,versions,host-memory and --no-speed-test, as run \S+ had$/m,
    );
    const log = readFileSync(join(lastRun(cwd).dir, '01-train.log'), 'utf8');
    expect(log).toMatch(/^zerowiz-check \S+ SKIP python: skipped by --skip-check/m);
    expect(log).toMatch(/^zerowiz-check \S+ SKIP nvme-speed: skipped by --no-speed-test/m);
  });

  it('an unknown --skip-check id is bad input: one line naming the ids, nothing run', () => {
    const cwd = workdir(ONE_STEP('train.py'));
    const r = runCli(['launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE, '--skip-check', 'gpu'], {
      cwd,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^zerowiz: --skip-check: there is no check 'gpu'\n\s*hint: the checks are: all, python,/m);
    expect(existsSync(join(cwd, '.zerowiz'))).toBe(false);
  });
});

describe('the watch during a pass', () => {
  it('a pass that stops printing while alive raises the stall alert, long before any timeout', async () => {
    const cwd = workdir(ONE_STEP('train.py'));
    const child = spawn(process.execPath, [BIN, 'launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE], {
      cwd,
      env: { ...process.env, ZEROWIZ_STALL_MIN_S: '2', FAKE_ACCELERATE_HANG: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
    const t0 = Date.now();
    while (!/ALERT in train: no progress/.test(out) && Date.now() - t0 < 20_000) await sleep(100);
    // zerowiz without a terminal: SIGTERM stops the run, and it exits 130 once the run has ended.
    child.kill('SIGTERM');
    expect(await exited, out + err).toBe(130);
    expect(out).toMatch(
      /ALERT in train: no progress for \d+(\.\d)?s \(the floor of 2\.0s; .*\) while the processes live/,
    );
    const alerts = (lastRun(cwd).json.steps[0]!.live as { alerts: { id: string }[] }).alerts;
    expect(alerts.map((a) => a.id)).toContain('stall');
  });
});

describe('checkpoints verified as they are saved', () => {
  it('an empty LoRA save is an alert as it happens, and `runs` lists each checkpoint with its verdict', () => {
    const cwd = workdir(
      ONE_STEP('train.py, --task, "sft:train", --output_path, ./out, --lora_rank, "4", --num_epochs, "2"'),
    );
    const r = runCli(['launch', 'p.yaml', '--no-tui', '--accelerate', DIFFSYNTH], {
      cwd,
      env: { FAKE_TRAIN_SAVE: 'empty', PATH: process.env.PATH },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ALERT in train: checkpoint epoch-0\.safetensors is unusable: its tensors are empty/);
    const runs = runCli(['runs', '--json'], { cwd });
    const cps = JSON.parse(runs.stdout)[0].checkpoints as { path: string; verdict: string; reason: string }[];
    expect(cps.map((c) => [c.path, c.verdict])).toEqual([
      [join(cwd, 'out', 'epoch-0.safetensors'), 'bad'],
      [join(cwd, 'out', 'epoch-1.safetensors'), 'bad'],
    ]);
    expect(cps[0]!.reason).toMatch(/4 of 4 tensors are empty/);
    expect(runCli(['runs'], { cwd }).stdout).toMatch(
      /checkpoint out\/epoch-1\.safetensors BAD: 4 of 4 tensors are empty/,
    );
  });

  it('a good save is ok, and the record keeps the topology it was written with', () => {
    const cwd = workdir(ONE_STEP('train.py, --task, "sft:train", --output_path, ./out, --lora_rank, "4"'));
    const r = runCli(['launch', 'p.yaml', '--no-tui', '--accelerate', DIFFSYNTH], {
      cwd,
      env: { PATH: process.env.PATH },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/ALERT/);
    const j = JSON.parse(runCli(['runs', '--json'], { cwd }).stdout)[0];
    expect(j.checkpoints).toEqual([
      { path: join(cwd, 'out', 'epoch-0.safetensors'), verdict: 'ok', reason: expect.any(String) },
    ]);
    expect(j.topology).toMatchObject({ stage: 2, worldSize: 1, nodes: 1, precision: 'bf16' });
  });
});

describe('a relaunch over DeepSpeed checkpoints written with another topology', () => {
  const preset = ONE_STEP('train.py, --output_dir, ./out', 'num_processes: 1\n  mode: "3"\n  mixed_precision: bf16');

  it('without a terminal it goes on, says so, and the record keeps the warning', () => {
    const cwd = workdir(preset);
    writeDeepSpeedTag(join(cwd, 'out'), { tag: 'global_step500', stage: 3, worldSize: 8, bf16: true });
    const r = runCli(['launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE], {
      cwd,
      env: { PATH: process.env.PATH },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /warning: the checkpoint a resume would load, .*global_step500 .* 8 processes.*this launch runs/,
    );
    expect(r.stderr).toMatch(/hint: --on-topology-change convert\|weights\|fresh\|go-on/);
    const w = lastRun(cwd).json.topologyWarnings as { checkpoint: string }[];
    expect(w.map((x) => x.checkpoint)).toEqual([join(cwd, 'out', 'global_step500')]);
    expect(runCli(['runs'], { cwd }).stdout).toMatch(/relaunched over .*global_step500, written with another topology/);
  });

  it('convert: ds_to_universal runs first as a pass of its own, then the training resumes with load_universal', () => {
    const cwd = workdir(preset);
    const tag = writeDeepSpeedTag(join(cwd, 'out'), { tag: 'global_step500', stage: 3, worldSize: 8, bf16: true });
    const log = join(cwd, 'accelerate.log');
    const r = runCli(
      ['launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE, '--on-topology-change', 'convert'],
      { cwd, env: { FAKE_ACCELERATE_LOG: log, PATH: process.env.PATH } },
    );
    expect(r.code, r.stderr).toBe(0);
    const calls = invocations(log).map((c) => c.argv);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toEqual([
      'launch',
      '--num_processes',
      '1',
      '--num_machines',
      '1',
      '--mixed_precision',
      'no',
      '--dynamo_backend',
      'no',
      '-m',
      'deepspeed.checkpoint.ds_to_universal',
      '--input_folder',
      tag,
      '--output_folder',
      `${tag}_universal`,
      '--inject_missing_state',
    ]);
    expect(calls[1]).toContain('train.py');
    expect(JSON.parse(readFileSync(join(cwd, 'cfg', 'd.json'), 'utf8')).checkpoint).toEqual({ load_universal: true });
    expect(lastRun(cwd).json.steps.map((s) => s.name)).toEqual(['ds_to_universal', 'train']);
  });

  it('fresh: the old states are moved aside (nothing deleted) before the run', () => {
    const cwd = workdir(preset);
    writeDeepSpeedTag(join(cwd, 'out'), { tag: 'global_step500', stage: 3, worldSize: 8, bf16: true });
    const r = runCli(
      ['launch', 'p.yaml', '--no-tui', '--accelerate', FAKE_ACCELERATE, '--on-topology-change', 'fresh'],
      {
        cwd,
        env: { PATH: process.env.PATH },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const left = readdirSync(join(cwd, 'out')).sort();
    expect(left.some((n) => /^global_step500\.set-aside-\d{8}-\d{6}$/.test(n))).toBe(true);
    expect(left.some((n) => /^latest\.set-aside-/.test(n))).toBe(true);
    expect(left).not.toContain('global_step500');
    expect(r.stderr).toMatch(/moved out\/global_step500 to out\/global_step500\.set-aside-/);
  });
});
