/**
 * `launch --slurm --notify`: a real Slurm 22.05 (helpers/slurm.ts, two emulated nodes on this host) runs the
 * seed pipeline, and the job's batch node sends its notifications to a real HTTP server on the loopback
 * (started here): started, the first training step, each pass's end and the job's end, in order and once
 * each, naming the job; neither the job script nor any pass sees the targets. A job cancelled mid-pass still
 * says it ended. Skipped, with the reason printed, where the cluster cannot run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT } from '../helpers/pty.js';
import { GPUS_PER_NODE, slurmAvailability, startCluster, type SlurmCluster } from '../helpers/slurm.js';
import { startSink, type HttpSink } from '../helpers/http-sink.js';
import { processesUnder, until } from '../helpers/proc.js';
import type { NotifyPayload } from '../../src/notify/index.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const SEED = 'qwen-image-lora-lowvram';
const SCRIPT = 'examples/qwen_image/model_training/train.py';

const availability = slurmAvailability();
if (!availability.ok) console.warn(`Slurm notification tests skipped: ${availability.reason}`);

describe.skipIf(!availability.ok)('Slurm: notifications from the batch node', { timeout: 120_000 }, () => {
  let cluster: SlurmCluster;
  let sink: HttpSink;
  const dirs: string[] = [];

  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterEach(async () => {
    await sink?.close();
    await cluster?.reset();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }, 60_000);

  function checkout(): string {
    const d = mkdtempSync(join(tmpdir(), 'zw-slurm-notify-'));
    dirs.push(d);
    mkdirSync(join(d, 'examples/qwen_image/model_training'), { recursive: true });
    writeFileSync(join(d, SCRIPT), '# stand-in\n');
    return d;
  }

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

  const launch = (d: string, more: Record<string, string>, url: string | null) =>
    zerowiz(
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
        ...(url === null ? [] : ['--notify', url]),
      ],
      d,
      {
        ...cluster.env,
        FAKE_ACCELERATE_LOG: join(d, 'calls.jsonl'),
        FAKE_ACCELERATE_STEP_MS: '20',
        ZEROWIZ_SLURM_POLL_MS: '250',
        NO_COLOR: '1',
        ...more,
      },
    );

  const events = () => sink.requests.map((r) => JSON.parse(r.body) as NotifyPayload);

  it('the batch node sends started, the first step, each pass end and the end, naming the job; the targets reach no pass and no file', async () => {
    sink = await startSink();
    const d = checkout();
    const r = await launch(d, {}, `${sink.url}/SeCrEt-topic`);
    expect(r.code, r.stderr).toBe(0);
    const jobId = /submitted Slurm job (\d+)/.exec(r.stderr)?.[1];
    await sink.waitFor(5, 60_000);
    const got = events();
    expect(got.map((p) => p.event).filter((k) => k !== 'alert')).toEqual([
      'started',
      'pass-end',
      'first-step',
      'pass-end',
      'end',
    ]);
    for (const p of got) expect(p.run).toMatchObject({ kind: 'slurm', jobId, passes: 2, name: SEED });
    expect(got.at(-1)).toMatchObject({ outcome: { ended: 'succeeded', exitCode: 0 }, severity: 'success' });
    expect(got.find((p) => p.event === 'first-step')!.stepTime!.seconds).toBeGreaterThan(0);
    // Sent once each, though two nodes ran every pass.
    expect(new Set(got.map((p) => p.key)).size).toBe(got.length);
    // No pass saw the targets; the job's script and the record hold no URL.
    const calls = readFileSync(join(d, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { env?: Record<string, string> });
    expect(calls.filter((c) => c.env).length).toBe(4);
    for (const c of calls) expect(c.env?.ZEROWIZ_NOTIFY).toBeUndefined();
    const root = join(d, '.zerowiz', 'runs');
    const dir = join(root, readdirSync(root)[0]!);
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8')).not.toContain('SeCrEt');
    // The end mark is the notifier's, not shown to people.
    expect(r.stdout).not.toContain('zerowiz-job end');
    expect(existsSync(join(dir, 'job-watch.log'))).toBe(true);
  });

  it('a job cancelled during a pass still says it ended (interrupted)', async () => {
    sink = await startSink();
    const d = checkout();
    const run = launch(d, { FAKE_ACCELERATE_HANG: '1' }, `${sink.url}/x`);
    // Once the first pass runs on the nodes, cancel the job from another terminal.
    const first = await sink.waitFor(1, 60_000);
    expect((JSON.parse(first[0]!.body) as NotifyPayload).event).toBe('started');
    await new Promise((res) => setTimeout(res, 1500));
    const root = join(d, '.zerowiz', 'runs');
    const stop = await zerowiz(['stop', readdirSync(root)[0]!], d, cluster.env);
    expect(stop.code, stop.stderr).toBe(0);
    await run;
    const all = await sink.waitFor(2, 60_000);
    const end = all.map((q) => JSON.parse(q.body) as NotifyPayload).find((p) => p.event === 'end');
    expect(end, JSON.stringify(all.map((q) => q.body))).toBeDefined();
    expect(end!.outcome!.ended).toBe('interrupted');
  });

  it("without --notify the batch node still writes the series: the report plots both passes' loss and s/step", async () => {
    const d = checkout();
    const r = await launch(d, {}, null);
    expect(r.code, r.stderr).toBe(0);
    const root = join(d, '.zerowiz', 'runs');
    const dir = join(root, readdirSync(root)[0]!);
    const log = existsSync(join(dir, 'job-watch.log')) ? readFileSync(join(dir, 'job-watch.log'), 'utf8') : '';
    expect(log, 'the job watch had nothing to say').not.toMatch(/zerowiz:/);
    const losses = readFileSync(join(dir, 'losses.csv'), 'utf8').trim().split('\n');
    expect(losses[0]).toBe('pass,source,step,loss,t_ms');
    // Each pass's loss, from the trainer's lines the two nodes wrote (the stand-in's tqdm postfix).
    const passes = new Set(losses.slice(1).map((l) => l.split(',')[0]));
    expect([...passes].sort()).toEqual(['0', '1']);
    expect(readFileSync(join(dir, 'progress.csv'), 'utf8').trim().split('\n').length).toBeGreaterThan(1);
    // The viewer wrote the report once the job had ended, with the series the node wrote.
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).not.toContain('has no losses.csv');
    expect(html).not.toMatch(/pass \d \S+: no loss was read/);
  });

  it('launch --last of a Slurm run lets the supervisor it started with the command go at once (no process waits beside the job)', async () => {
    const d = checkout();
    const first = await launch(d, {}, null);
    expect(first.code, first.stderr).toBe(0);
    const root = join(d, '.zerowiz', 'runs');
    const again = zerowiz(['launch', '--last', '--accelerate', FAKE, '--no-tui'], d, {
      ...cluster.env,
      FAKE_ACCELERATE_HANG: '1',
      ZEROWIZ_SLURM_POLL_MS: '250',
      NO_COLOR: '1',
    });
    let ended = false;
    void again.then(() => {
      ended = true;
    });
    await until(() => readdirSync(root).length === 2, 'the second job submitted', 60_000);
    const here = realpathSync(d);
    const supervisors = () =>
      processesUnder([here]).filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('__zerowiz-supervise');
        } catch {
          return false;
        }
      });
    // The job hangs until stopped: a supervisor kept waiting would be there all along.
    await until(() => supervisors().length === 0, 'no local supervisor beside the Slurm job', 20_000);
    expect(ended).toBe(false);
    const id2 = readdirSync(root).sort()[1]!;
    const stop = await zerowiz(['stop', id2], d, cluster.env);
    expect(stop.code, stop.stderr).toBe(0);
    await again;
  });
});
