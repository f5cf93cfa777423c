/**
 * `zerowiz launch --slurm`, `attach`, `runs` and `export slurm` against a real Slurm 22.05: slurmctld and
 * two slurmd emulating the nodes n1 and n2 (two GPUs each) on this host (helpers/slurm.ts), with the
 * stand-in accelerate recording what each node's launcher got. Skipped, with the reason printed, where
 * the cluster cannot run (not root, no Slurm and no apt-get).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BIN, KEYS, ROOT, spawnPty } from '../helpers/pty.js';
import { closeWhenDone } from '../helpers/launch.js';
import { running } from '../helpers/proc.js';
import {
  GPUS_PER_NODE,
  KILL_WAIT_S,
  NODE_NAMES,
  slurmAvailability,
  startCluster,
  type SlurmCluster,
} from '../helpers/slurm.js';
import type { RunJson } from '../../src/records/record.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const SEED = 'qwen-image-lora-lowvram';
const SCRIPT = 'examples/qwen_image/model_training/train.py';
/** State polls of zerowiz in these tests (the default is a few seconds: a shared controller). */
const POLL_MS = '250';

const availability = slurmAvailability();
if (!availability.ok) console.warn(`Slurm tests skipped: ${availability.reason}`);

/** One stand-in invocation (a node's `accelerate launch`), or its end. */
interface Call {
  argv: string[];
  pid: number;
  workerPid: number | null;
  at: number;
  env: Record<string, string>;
}
type LogLine =
  | Call
  | { event: 'end'; pid: number; at: number; code: number }
  | { event: 'worker-sigterm'; pid: number };

const flag = (c: Call, name: string) => c.argv[c.argv.indexOf(name) + 1];
const task = (c: Call) => c.argv.find((a) => a.startsWith('sft:'));

// Each test submits and follows real jobs: seconds alone, but several times that on a loaded 2-core machine.
describe.skipIf(!availability.ok)('Slurm: a real cluster with two emulated nodes', { timeout: 90_000 }, () => {
  let cluster: SlurmCluster;
  const dirs: string[] = [];

  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  // A test that fails leaves no job behind to hold the nodes for the next one.
  afterEach(async () => {
    await cluster?.reset();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }, 60_000);

  /** A DiffSynth-like checkout with the seed's training script. */
  function checkout(): string {
    const d = mkdtempSync(join(tmpdir(), 'zw-slurm-run-'));
    dirs.push(d);
    mkdirSync(join(d, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(d, SCRIPT), '# stand-in\n');
    return d;
  }

  function env(d: string, more: Record<string, string> = {}): Record<string, string> {
    return {
      ...cluster.env,
      FAKE_ACCELERATE_LOG: join(d, 'calls.jsonl'),
      FAKE_ACCELERATE_LOG_END: '1',
      FAKE_ACCELERATE_STEP_MS: '5',
      ZEROWIZ_SLURM_POLL_MS: POLL_MS,
      NO_COLOR: '1',
      ...more,
    };
  }

  function zerowiz(
    args: string[],
    cwd: string,
    e: Record<string, string | undefined>,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((res) => {
      const full: Record<string, string> = {};
      for (const [k, v] of Object.entries({ ...process.env, ...e })) if (v !== undefined) full[k] = v;
      execFile(process.execPath, [BIN, ...args], { cwd, env: full }, (err, stdout, stderr) => {
        res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  const calls = (d: string): LogLine[] =>
    existsSync(join(d, 'calls.jsonl'))
      ? readFileSync(join(d, 'calls.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as LogLine)
      : [];
  const starts = (d: string) => calls(d).filter((c): c is Call => 'argv' in c);
  const records = (d: string) =>
    existsSync(join(d, '.zerowiz/runs')) ? readdirSync(join(d, '.zerowiz/runs')).sort() : [];
  const runJson = (d: string, id: string) =>
    JSON.parse(readFileSync(join(d, '.zerowiz/runs', id, 'run.json'), 'utf8')) as RunJson;
  const jobState = (id: string) =>
    /JobState=(\S+)/.exec(cluster.run('scontrol', ['-o', 'show', 'job', id]).stdout)?.[1];

  it('runs the seed pipeline as one job on both nodes: each launcher gets its rank, the main address, port and process count; pass 2 waits for pass 1', async () => {
    const d = checkout();
    const r = await zerowiz(
      [
        'launch',
        SEED,
        '--slurm',
        '--nodes',
        '2',
        '--gpus-per-node',
        String(GPUS_PER_NODE),
        '--partition',
        'debug',
        '--accelerate',
        FAKE,
      ],
      d,
      env(d),
    );
    expect(r.code, r.stderr).toBe(0);
    // What zerowiz changed for the shape, and the fit re-check's place.
    expect(r.stderr).toContain('slurm: num_processes 1 -> 4 (2 node(s) x 2 GPU(s) per node)');
    expect(r.stderr).toContain('slurm: num_machines 1 -> 2');
    expect(r.stderr).toMatch(/slurm: multinode_launcher pdsh \(the default\) -> standard/);
    expect(r.stderr).toMatch(/warning: the job runs in .*under \/tmp/);
    const jobId = /submitted Slurm job (\d+)/.exec(r.stderr)?.[1];
    expect(jobId).toBeDefined();

    const all = starts(d);
    expect(all).toHaveLength(4);
    for (const pass of ['sft:data_process', 'sft:train']) {
      const mine = all.filter((c) => task(c) === pass);
      expect(mine.map((c) => flag(c, '--machine_rank')).sort()).toEqual(['0', '1']);
      for (const c of mine) {
        // The rank is the node's own: expanded inside the srun task, not by the batch shell.
        expect(flag(c, '--machine_rank')).toBe(c.env.SLURM_NODEID);
        expect(c.env.SLURMD_NODENAME).toBe(NODE_NAMES[Number(c.env.SLURM_NODEID)]);
        expect(flag(c, '--num_machines')).toBe('2');
        expect(flag(c, '--num_processes')).toBe(String(2 * GPUS_PER_NODE));
        expect(flag(c, '--main_process_ip')).toBe(NODE_NAMES[0]);
        expect(c.env.PYTHONUNBUFFERED).toBe('1');
        expect(c.env.SLURM_JOB_ID).toBe(jobId);
        // Slurm gave each node's step its GPUs (GRES).
        expect(c.env.CUDA_VISIBLE_DEVICES).toBe('0,1');
      }
      const ports = new Set(mine.map((c) => flag(c, '--main_process_port')));
      expect(ports.size).toBe(1);
      expect(Number([...ports][0])).toBeGreaterThanOrEqual(20_000);
    }
    // Only the training pass reads the config, written into the record for the job's shape.
    const data = all.filter((c) => task(c) === 'sft:data_process');
    const train = all.filter((c) => task(c) === 'sft:train');
    expect(data.every((c) => !c.argv.includes('--config_file'))).toBe(true);
    const cfg = flag(train[0]!, '--config_file')!;
    const [id] = records(d);
    expect(cfg).toBe(join(d, '.zerowiz/runs', id!, 'accelerate_config.yaml'));
    const yaml = parseYaml(readFileSync(cfg, 'utf8')) as {
      num_processes: number;
      num_machines: number;
      deepspeed_config: Record<string, unknown>;
    };
    expect(yaml.num_processes).toBe(4);
    expect(yaml.num_machines).toBe(2);
    expect(yaml.deepspeed_config.deepspeed_multinode_launcher).toBe('standard');
    expect(yaml.deepspeed_config.deepspeed_config_file).toBe(join(d, '.zerowiz/runs', id!, 'ds_config.json'));
    // The setup's own files were not touched (the record holds the job's).
    expect(existsSync(join(d, 'examples/qwen_image/model_training/special'))).toBe(false);

    // Pass 2 started on no node before pass 1 had ended on every node.
    const ends = calls(d).filter(
      (c): c is { event: 'end'; pid: number; at: number; code: number } => 'event' in c && c.event === 'end',
    );
    const dataEnd = Math.max(...data.map((c) => ends.find((e) => e.pid === c.pid)!.at));
    expect(Math.min(...train.map((c) => c.at))).toBeGreaterThanOrEqual(dataEnd);

    // Stream mode followed the output: progress with loss, and the job's end.
    expect(r.stdout).toMatch(/^\[train\] +Steps: 100%.*loss=/m);
    expect(r.stdout).toContain(`[zerowiz] job ${jobId}: done`);
    const j = runJson(d, id!);
    expect(j.slurm).toMatchObject({ jobId, state: 'COMPLETED', phase: 'done', shape: { nodes: 2, gpusPerNode: 2 } });
    expect(j.ended).toBe('succeeded');
    expect(j.steps.map((s) => s.status)).toEqual(['done', 'done']);
    expect(jobState(jobId!)).toBe('COMPLETED');

    // --last submits the same setup again, with the same Slurm options, as a new record and job.
    const again = await zerowiz(['launch', '--last', '--accelerate', FAKE, '--no-tui'], d, env(d));
    expect(again.code, again.stderr).toBe(0);
    const jobId2 = /submitted Slurm job (\d+) \(2 node\(s\) x 2 GPU\(s\)\)/.exec(again.stderr)?.[1];
    expect(Number(jobId2)).toBeGreaterThan(Number(jobId));
    const [, id2] = records(d);
    expect(runJson(d, id2!).source).toBe(`--last (${id})`);
    expect(runJson(d, id2!).slurm?.options.partition).toBe('debug');
    expect(starts(d)).toHaveLength(8);

    // `runs` lists both with their final states.
    const runs = await zerowiz(['runs'], d, env(d));
    expect(runs.stdout).toMatch(new RegExp(`${id2}\\s+succeeded\\s+0 .*slurm job ${jobId2} done`));
    expect(runs.stdout).toMatch(new RegExp(`${id}\\s+succeeded\\s+0 .*slurm job ${jobId} done`));
  });

  it("the wizard's Submit to Slurm: the partitions from sinfo, the setup's shape as the default, then the same job as launch --slurm", async () => {
    const d = checkout();
    const home = mkdtempSync(join(tmpdir(), 'zw-slurm-home-'));
    dirs.push(home);
    const s = spawnPty({
      cwd: d,
      cols: 120,
      rows: 34,
      env: env(d, { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ZEROWIZ_ACCELERATE: FAKE }),
    });
    await s.waitFor(/Start from a preset \([1-9]/);
    s.write(KEYS.down);
    await s.waitFor(/❯ Start from a preset/);
    s.write(KEYS.enter);
    await s.waitFor(`❯ ${SEED}`);
    s.write(KEYS.enter);
    await s.waitFor('→ Finish');
    s.write(KEYS.enter);
    await s.waitFor('Submit the 2 step(s) to Slurm');
    // One ↓ at a time, each waiting for the highlight itself to move (other redraws do not count).
    const highlighted = (x: string) => /^❯ (.*)$/m.exec(x)?.[1] ?? '';
    for (let i = 0; i < 10 && !highlighted(s.screen()).startsWith('Submit the 2 step(s) to Slurm'); i++) {
      const was = highlighted(s.screen());
      s.write(KEYS.down);
      await s.waitFor((x) => highlighted(x) !== was);
    }
    s.write(KEYS.enter);
    // The partitions come from sinfo; the cluster's default is the field's start.
    const form = await s.waitFor(/partitions: .*debug \(default\)/, 30_000);
    expect(form).toMatch(/❯ Partition: +debug/);
    s.write(KEYS.enter); // partition: debug
    await s.waitFor(/❯ Nodes: +1/);
    s.write(`${KEYS.backspace}2${KEYS.enter}`); // two nodes
    await s.waitFor(/❯ GPUs per node: +1/);
    s.write(`${KEYS.backspace}${GPUS_PER_NODE}${KEYS.enter}`);
    await s.waitFor(/❯ Time limit:/);
    s.write(`bogus${KEYS.enter}`);
    await s.waitFor("--time 'bogus' is not a Slurm time"); // refused in the form, as launch --slurm refuses the flag
    s.write(`${KEYS.backspace.repeat(5)}00:10:00${KEYS.enter}`);
    await s.waitFor(/❯ Account:/);
    s.write(KEYS.enter);
    expect(await closeWhenDone(s, 90_000)).toBe(0);
    const all = starts(d);
    expect(all).toHaveLength(4); // both passes on both nodes
    expect(all.filter((c) => task(c) === 'sft:train').map((c) => flag(c, '--num_processes'))).toEqual([
      String(2 * GPUS_PER_NODE),
      String(2 * GPUS_PER_NODE),
    ]);
    const [id] = records(d);
    const j = runJson(d, id!);
    expect(j.slurm?.shape).toEqual({ nodes: 2, gpusPerNode: GPUS_PER_NODE });
    expect(j.slurm?.options).toMatchObject({ partition: 'debug', time: '00:10:00' });
    expect(j.ended).toBe('succeeded');
  });

  it('the pane follows the job from pending to running; q then y cancels it, and a worker that ignores SIGTERM is killed after KillWait', async () => {
    const d = checkout();
    const s = spawnPty({
      args: ['launch', SEED, '--slurm', '--nodes', '2', '--sbatch-arg=--begin=now+1hour', '--accelerate', FAKE],
      cwd: d,
      cols: 120,
      rows: 30,
      env: env(d, {
        FAKE_ACCELERATE_STEPS: '40',
        FAKE_ACCELERATE_HANG: '1',
        FAKE_ACCELERATE_WORKER: '1',
        FAKE_ACCELERATE_WORKER_IGNORE_SIGTERM: '1',
      }),
    });
    await s.waitFor(/Slurm job \d+ · pending \(BeginTime\): it was asked to start later/, 30_000);
    expect(s.screen()).toMatch(/\[pending\]/);
    expect(s.screen()).toMatch(/· 1\. data_process +pending/);
    const jobId = /Slurm job (\d+)/.exec(s.screen())![1]!;
    // The job becomes eligible now: the pane follows it into running.
    expect(cluster.run('scontrol', ['update', `jobid=${jobId}`, 'StartTime=now']).code).toBe(0);
    await s.waitFor(/Slurm job \d+ · running on n\[1-2\]/, 30_000);
    // Progress and loss follow; not necessarily to 100%: the nodes share one output file, and a node's line
    // glued onto the other's last tqdm redraw leaves that redraw unread (seen under load: 97% 39/40).
    await s.waitFor(
      (x) => /▶ 1\. data_process +running/.test(x) && /\d+% \d+\/40 /.test(x) && /loss 0\.\d{4}/.test(x),
      30_000,
    );
    expect(s.screen()).toMatch(/\[running\]/);
    // The two nodes' output shares one file: a node's line can land after the other's unfinished tqdm
    // redraw and be cut at the pane's edge (wrap is off), so only its start is looked for here.
    expect(s.screen()).toMatch(/task sft:data_process: starting \(pid/);
    await cluster.waitFor(() => starts(d).filter((c) => c.workerPid !== null).length === 2, 20_000, 'both workers');
    const workers = starts(d).map((c) => c.workerPid!);
    expect(workers.every(running)).toBe(true);

    s.write('q');
    await s.waitFor(`Cancel Slurm job ${jobId}?`);
    s.write('y');
    await s.waitFor(/\[stopping…\]/);
    expect(await s.exited).toBe(130);
    // SIGTERM reached the workers (they ignored it); SIGKILL after KillWait ended them.
    const sigterms = calls(d).filter((c) => 'event' in c && c.event === 'worker-sigterm');
    expect(sigterms.length).toBeGreaterThanOrEqual(1);
    await cluster.waitFor(
      () => workers.every((p) => !running(p)),
      (KILL_WAIT_S + 10) * 1000,
      'the workers to be killed',
    );
    expect(jobState(jobId)).toBe('CANCELLED');
    const [id] = records(d);
    const j = runJson(d, id!);
    expect(j.ended).toBe('interrupted');
    expect(j.exitCode).toBe(130);
    expect(j.slurm?.state).toBe('CANCELLED');
    expect(j.steps.map((x) => x.status)).toEqual(['stopped', 'pending']);
    // Only the first pass ever started.
    expect(starts(d).every((c) => task(c) === 'sft:data_process')).toBe(true);
    await s.waitFor(new RegExp(`zerowiz: Slurm job ${jobId} cancelled; logs in`));
    const raw = s.raw();
    expect(raw.lastIndexOf('\x1b[?1049l')).toBeGreaterThan(raw.lastIndexOf('\x1b[?1049h'));
  });

  it('leaving the pane (d) keeps the job running; attach follows it to the end; runs shows each state', async () => {
    const d = checkout();
    const gate = join(d, 'go');
    const e = env(d, { FAKE_ACCELERATE_WAIT_FILE: gate });
    const s = spawnPty({
      args: ['launch', SEED, '--slurm', '--nodes', '2', '--accelerate', FAKE],
      cwd: d,
      cols: 120,
      rows: 30,
      env: e,
    });
    await s.waitFor(/Slurm job \d+ · running/, 30_000);
    await s.waitFor(/waiting for .*go/, 30_000);
    const jobId = /Slurm job (\d+)/.exec(s.screen())![1]!;
    expect(s.screen()).toContain('d leave running');
    s.write('d');
    expect(await s.exited).toBe(0);
    const [id] = records(d);
    await s.waitFor(`follow it again: zerowiz attach ${id}`);
    expect(jobState(jobId)).toBe('RUNNING');
    const listed = await zerowiz(['runs'], d, e);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+running .*slurm job ${jobId} running on n\\[1-2\\]`));

    const attached = zerowiz(['attach', '--no-tui'], d, e);
    // Attach replays what the job wrote so far, then follows it.
    await cluster.waitFor(() => existsSync(join(d, '.zerowiz/runs', id!, '01-data_process.log')), 10_000, 'the log');
    writeFileSync(gate, '');
    const a = await attached;
    expect(a.code, a.stderr).toBe(0);
    expect(a.stderr).toContain(`attaching to Slurm job ${jobId}`);
    // (.*: a node's line may be glued onto the other node's last tqdm redraw; they share one file)
    expect(a.stdout).toMatch(/^\[data_process\] .*task sft:data_process: starting/m);
    expect(a.stdout).toMatch(/^\[train\] +Steps: 100%/m);
    expect(a.stdout).toContain(`job ${jobId}: done`);
    expect(runJson(d, id!).ended).toBe('succeeded');
    const after = await zerowiz(['runs', '--json'], d, e);
    expect(JSON.parse(after.stdout)[0]).toMatchObject({ id, ended: 'succeeded', slurm: { jobId, state: 'COMPLETED' } });
    // Attaching to the finished job shows it again (exit 0, all passes done).
    const again = await zerowiz(['attach', jobId, '--no-tui'], d, e);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('which has ended');
  });

  it('a job that stays pending shows why; without a terminal SIGINT leaves it queued; Ctrl+C in stream mode asks, then cancels', async () => {
    const d = checkout();
    const e = env(d);
    const child = execFile(
      process.execPath,
      [BIN, 'launch', SEED, '--slurm', '--sbatch-arg=--begin=now+1hour', '--accelerate', FAKE, '--no-tui'],
      { cwd: d, env: { ...process.env, ...e } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (x: string) => {
      stdout += x;
    });
    child.stderr!.on('data', (x: string) => {
      stderr += x;
    });
    const code = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
    await cluster.waitFor(() => /pending \(BeginTime\): it was asked to start later/.test(stdout), 20_000, 'pending');
    child.kill('SIGINT');
    expect(await code).toBe(0);
    const jobId = /submitted Slurm job (\d+)/.exec(stderr)![1]!;
    expect(stderr).toContain(`Slurm job ${jobId} keeps running (pending (BeginTime))`);
    expect(jobState(jobId)).toBe('PENDING');

    // attach in stream mode, in a terminal: Ctrl+C asks; y cancels.
    const s = spawnPty({ args: ['attach', '--no-tui'], cwd: d, cols: 160, rows: 30, env: e });
    await s.waitFor(/pending \(BeginTime\)/);
    s.write(KEYS.ctrlC);
    await s.waitFor(`cancel Slurm job ${jobId}?`);
    s.write(`y${KEYS.enter}`);
    expect(await s.exited).toBe(130);
    expect(jobState(jobId)).toBe('CANCELLED');
    const [id] = records(d);
    expect(runJson(d, id!)).toMatchObject({ ended: 'interrupted', slurm: { state: 'CANCELLED' } });
    // Nothing ever ran.
    expect(starts(d)).toHaveLength(0);
  });

  it('launch --slurm checks each pass on both nodes first: a FAIL ends the job before the pass, with the reason', async () => {
    const d = checkout();
    const r = await zerowiz(
      [
        'launch',
        SEED,
        '--slurm',
        '--nodes',
        '2',
        '--accelerate',
        FAKE,
        '--no-tui',
        // No GPUs or CUDA on the test nodes: what is left checks the Python of accelerate (a Node stand-in).
        '--skip-check',
        'cuda-driver,gpus,deepspeed-ops,versions,nvme-speed,host-memory,models,inputs',
      ],
      d,
      env(d, { ZEROWIZ_SKIP_CHECKS: '' }),
    );
    expect(r.code).toBe(1);
    const [id] = records(d);
    const dir = join(d, '.zerowiz/runs', id!);
    const script = readFileSync(join(dir, 'job.sbatch'), 'utf8');
    expect(script).toContain('check "$2" --pass "$3" --port "$4" --machine-rank "$SLURM_NODEID" --node-report');
    expect(script).toContain(' --skip-check cuda-driver');
    // The nodes check the setup as the job runs it, from the record.
    expect(parseYaml(readFileSync(join(dir, 'setup.yaml'), 'utf8')).answers.num_machines).toBe(2);
    const log = readFileSync(join(dir, runJson(d, id!).steps[0]!.log), 'utf8');
    for (const n of ['n1', 'n2'])
      expect(log).toMatch(new RegExp(`^zerowiz-check ${n} FAIL python: .*not by Python`, 'm'));
    expect(r.stdout).toMatch(/the checks on the nodes failed \(exit 2\); the pass does not start: n[12] FAIL python: /);
    // The pass never started anywhere.
    expect(starts(d)).toHaveLength(0);
  });

  it('a pass that fails on a node ends the job: the next pass never starts, the job is failed, exit 1', async () => {
    const d = checkout();
    const r = await zerowiz(
      ['launch', SEED, '--slurm', '--nodes', '2', '--accelerate', FAKE],
      d,
      env(d, { FAKE_ACCELERATE_EXIT: '3', FAKE_ACCELERATE_FAIL_TASK: 'sft:data_process' }),
    );
    expect(r.code).toBe(1);
    const jobId = /submitted Slurm job (\d+)/.exec(r.stderr)![1]!;
    // Both nodes fail with 3; whichever srun sees second may already be ended by --kill-on-bad-exit
    // (SIGTERM: 143), and srun reports the larger code.
    const code = /pass 1\/2 data_process failed \(exit (3|143)\); the next pass does not start/.exec(r.stdout)?.[1];
    expect(code).toBeDefined();
    expect(r.stderr).toContain(`zerowiz: Slurm job ${jobId} failed (exit ${code}); logs in .zerowiz/runs/`);
    // srun -u passes each node's output on as it comes: one node's error may follow the other node's
    // unfinished tqdm redraw on the same line.
    expect(r.stdout).toMatch(/\[data_process\] .*RuntimeError: CUDA out of memory \(stand-in failure, exit 3\)/);
    expect(starts(d).every((c) => task(c) === 'sft:data_process')).toBe(true);
    expect(jobState(jobId)).toBe('FAILED');
    const [id] = records(d);
    expect(runJson(d, id!)).toMatchObject({
      ended: 'failed',
      exitCode: 1,
      slurm: { state: 'FAILED', phase: 'failed' },
    });
    expect(runJson(d, id!).steps.map((x) => [x.status, x.exitCode])).toEqual([
      ['failed', Number(code)],
      ['pending', null],
    ]);
  });

  // Slurm counts time limits in whole minutes and checks them every 30 s or so: this test takes 1-1.5 min.
  it('a job that runs into its --time: timeout with the limit named, the running pass stopped, the next never started, and how to give it more', async () => {
    const d = checkout();
    const r = await zerowiz(
      ['launch', SEED, '--slurm', '--nodes', '2', '--time', '1', '--accelerate', FAKE],
      d,
      env(d, { FAKE_ACCELERATE_STEPS: '5', FAKE_ACCELERATE_HANG: '1' }),
    );
    expect(r.code, r.stderr).toBe(1);
    const jobId = /submitted Slurm job (\d+)/.exec(r.stderr)![1]!;
    expect(jobState(jobId)).toBe('TIMEOUT');
    expect(r.stderr).toContain(`zerowiz: Slurm job ${jobId} timeout (time limit 00:01:00); logs in .zerowiz/runs/`);
    expect(r.stderr).toContain(
      'it ran out of time: submit it again with more, e.g. `zerowiz launch --last --time 00:02:00`',
    );
    expect(starts(d).every((c) => task(c) === 'sft:data_process')).toBe(true);
    const [id] = records(d);
    expect(runJson(d, id!)).toMatchObject({
      ended: 'failed',
      exitCode: 1,
      slurm: { state: 'TIMEOUT', phase: 'timeout' },
    });
    expect(runJson(d, id!).steps.map((x) => x.status)).toEqual(['stopped', 'pending']);
  }, 180_000);

  it('bad input: an unknown partition, sbatch refusing the job, no Slurm on PATH, a job Slurm no longer knows', async () => {
    const d = checkout();
    const e = env(d);
    const unknown = await zerowiz(['launch', SEED, '--slurm', '--partition', 'gpuz', '--accelerate', FAKE], d, e);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("zerowiz: Slurm has no partition 'gpuz'");
    expect(unknown.stderr).toContain('hint: the partitions here are: debug (default), short');
    expect(records(d)).toEqual([]);

    // Four GPUs per node: no node has them. sbatch's own words are shown; no record is left.
    const refused = await zerowiz(
      ['launch', SEED, '--slurm', '--nodes', '2', '--gpus-per-node', '4', '--accelerate', FAKE],
      d,
      e,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'zerowiz: sbatch refused the job: sbatch: error: Batch job submission failed: Requested node configuration is not available\n',
    );
    expect(refused.stderr).toContain('hint: fix what sbatch names');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(records(d)).toEqual([]);

    const noSlurm = await zerowiz(['launch', SEED, '--slurm', '--accelerate', FAKE], d, {
      ...e,
      PATH: join(d, 'no-bin'),
    });
    expect(noSlurm.code).toBe(2);
    expect(noSlurm.stderr).toContain("zerowiz: Slurm's sbatch is not on PATH");
    expect(noSlurm.stderr).toContain('hint: run zerowiz on the cluster login node');
    expect(records(d)).toEqual([]);

    // A record whose job Slurm does not know (never was, or purged after MinJobAge without accounting).
    const ok = await zerowiz(['launch', SEED, '--slurm', '--accelerate', FAKE, '--no-tui'], d, e);
    expect(ok.code, ok.stderr).toBe(0);
    const [id] = records(d);
    const path = join(d, '.zerowiz/runs', id!, 'run.json');
    const j = runJson(d, id!);
    j.slurm!.jobId = '987654';
    j.ended = 'running';
    writeFileSync(path, JSON.stringify(j));
    const lost = await zerowiz(['attach', id!], d, e);
    expect(lost.code).toBe(2);
    expect(lost.stderr).toContain('zerowiz: Slurm no longer knows job 987654');
    expect(lost.stderr).toContain('hint: its logs are in');
    // The record keeps `running` (its end is not known), and says the state is unknown.
    expect(runJson(d, id!)).toMatchObject({ ended: 'running', slurm: { state: 'UNKNOWN', phase: 'unknown' } });
    const listed = await zerowiz(['runs'], d, e);
    expect(listed.stdout).toContain('slurm job 987654 unknown to Slurm now');
  });

  it('export slurm writes a script that plain sbatch runs on both nodes with their ranks', async () => {
    const d = checkout();
    const out = join(d, 'slurm-out');
    const e = env(d);
    const r = await zerowiz(
      ['export', 'slurm', SEED, '--out', out, '--nodes', '2', '--gpus-per-node', '2', '--accelerate', FAKE],
      d,
      e,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${join(out, `${SEED}.sbatch`)}`);
    const sb = cluster.run('sbatch', ['--parsable', join(out, `${SEED}.sbatch`)], e);
    expect(sb.code, sb.stderr).toBe(0);
    const jobId = sb.stdout.trim();
    await cluster.waitFor(() => jobState(jobId) === 'COMPLETED', 30_000, 'the exported job');
    const ranks = starts(d).map((c) => `${task(c)}:${flag(c, '--machine_rank')}:${c.env.SLURM_NODEID}`);
    expect(ranks.sort()).toEqual(['sft:data_process:0:0', 'sft:data_process:1:1', 'sft:train:0:0', 'sft:train:1:1']);
    expect(readFileSync(join(out, 'logs', `slurm-${jobId}.out`), 'utf8')).toContain('zerowiz: all 2 pass(es) done');
    expect(existsSync(join(out, 'logs', `${jobId}-02-train.log`))).toBe(true);
  });
});
