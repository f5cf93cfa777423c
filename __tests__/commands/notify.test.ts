/**
 * `launch --notify` and `zerowiz notify test`, as users run them: the built bin launching the seed preset over
 * the stand-in DiffSynth trainer and nvidia-smi, with a real HTTP server on the loopback (started here) as the
 * endpoint. The events arrive in order, once each, with the run's facts; endpoints that hang, answer 500 or
 * close the connection change nothing in the run and leave a line in the record without the URL's secret; a
 * command target that hangs is killed after its time; the steps never see the targets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { startSink, type HttpSink } from '../helpers/http-sink.js';
import { diffsynthCheckout, launchSeed, runDirs, runEnv, SEED_OUTPUT, zerowiz } from '../helpers/diffsynth-run.js';
import { expectOneLineError } from '../helpers/cli.js';
import type { NotifyPayload } from '../../src/notify/index.js';
import { removeWorkDirs } from '../helpers/proc.js';

const sinks: HttpSink[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of sinks.splice(0)) await s.close();
  await removeWorkDirs(dirs.splice(0));
});

async function sink(mode: HttpSink['mode'] = 'ok'): Promise<HttpSink> {
  const s = await startSink(mode);
  sinks.push(s);
  return s;
}

function checkout(): string {
  const d = diffsynthCheckout('zw-notify-');
  dirs.push(d);
  return d;
}

function payloads(s: HttpSink): NotifyPayload[] {
  return s.requests.map((r) => JSON.parse(r.body) as NotifyPayload);
}

/** run.json as these tests read it. */
interface RunJsonRead {
  id: string;
  ended: string;
  steps: { status: string }[];
  estimate?: { gpuBytesPerGpu: number };
  supervisor?: { pid: number };
  notify: {
    targets: { target: string; sent: number; failed: number }[];
    failures: { target: string; event: string; why: string }[];
  };
}

function runJson(dir: string): RunJsonRead {
  return JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunJsonRead;
}

/** Waits until the run's supervisor has exited (its notifications are then all sent or given up). */
async function supervisorGone(dir: string, timeoutMs = 60_000): Promise<void> {
  const pid = runJson(dir).supervisor?.pid;
  const t0 = Date.now();
  while (pid && existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`the supervisor ${pid} still runs after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('launch --notify to a JSON endpoint', () => {
  it('sends started, each pass end, the first step, alerts and the end, in order and once each, with the facts', async () => {
    const s = await sink();
    const d = checkout();
    const env = runEnv(d, { ZW_FAKE_GPU_USED_MIB: '30000,41000,43000' });
    const r = await launchSeed(d, env, ['--notify', `${s.url}/hook/SeCrEt-123`]);
    expect(r.code, r.stderr).toBe(0);
    const [dir] = runDirs(d);
    await supervisorGone(dir!);
    const got = payloads(s);
    const kinds = got.map((p) => p.event);
    expect(kinds.filter((k) => k !== 'alert')).toEqual(['started', 'pass-end', 'first-step', 'pass-end', 'end']);
    // Alerts (the stand-in's checkpoints do not match the preset's LoRA) come while the training pass runs.
    expect(kinds.indexOf('alert')).toBeGreaterThan(kinds.indexOf('first-step'));
    expect(new Set(got.map((p) => p.key)).size).toBe(got.length);
    const json = runJson(dir!);
    const id = json.id;
    for (const p of got)
      expect(p.run).toMatchObject({ id, host: hostname(), name: 'qwen-image-lora-lowvram', passes: 2, kind: 'local' });
    const byKind = (k: string) => got.find((p) => p.event === k)!;
    expect(byKind('started').attach).toBe(`cd ${d} && zerowiz attach ${id}`);
    expect(byKind('pass-end')).toMatchObject({
      pass: { number: 1, name: 'data_process', status: 'done', exitCode: 0 },
    });
    const first = byKind('first-step');
    expect(first.pass).toMatchObject({ number: 2, name: 'train' });
    expect(first.stepTime!.seconds).toBeGreaterThan(0);
    expect(first.stepTime!.total).toBe(40);
    expect(first.stepTime!.etaSeconds).toBeGreaterThanOrEqual(0);
    const end = byKind('end');
    expect(end.outcome).toMatchObject({ ended: 'succeeded', exitCode: 0, reason: null });
    expect(end.severity).toBe('success');
    // The last loss is the last row of the trainer's loss.csv; the peak is the stand-in's highest.
    const rows = readFileSync(join(d, SEED_OUTPUT, 'loss.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(end.loss!.last).toBeCloseTo(Number(rows.at(-1)!.split(',')[2]), 9);
    const estimate = json.estimate!.gpuBytesPerGpu;
    expect(end.gpu).toMatchObject({ peakBytes: 43000 * 2 ** 20, gpu: 0, estimateBytes: estimate });
    expect(end.report).toBe(join(dir!, 'report.html'));
    expect(existsSync(end.report!)).toBe(true);
    expect(end.text).toContain(`attach: cd ${d} && zerowiz attach ${id}`);
    // The record says where notifications went and how it went, never the URL's path.
    expect(json.notify).toMatchObject({ targets: [{ sent: got.length, failed: 0 }], failures: [] });
    expect(JSON.stringify(json)).not.toContain('SeCrEt');
    expect(r.stderr).not.toContain('SeCrEt');
    expect(r.stderr).toMatch(/zerowiz: note: notifications go to http:\/\/127\.0\.0\.1:\d+\/… \[[0-9a-f]{4}\]/);
  }, 90_000);

  it("a failed run's end says why, with its log's last lines", async () => {
    const s = await sink();
    const d = checkout();
    const r = await launchSeed(d, runEnv(d, { FAKE_TRAIN_EXIT: '3' }), ['--notify', `${s.url}/hook`]);
    expect(r.code).toBe(1);
    await supervisorGone(runDirs(d)[0]!);
    expect(payloads(s).map((p) => p.event)).toEqual(['started', 'pass-end', 'end']);
    const end = payloads(s).find((p) => p.event === 'end')!;
    expect(end.outcome).toMatchObject({ ended: 'failed', exitCode: 1, reason: 'data_process exited 3' });
    expect(end.pass).toMatchObject({ number: 1, name: 'data_process' });
    expect(end.severity).toBe('error');
    expect(end.logTail.length).toBeGreaterThan(0);
    const log = readFileSync(join(runDirs(d)[0]!, '01-data_process.log'), 'utf8');
    for (const l of end.logTail) expect(log).toContain(l.trim());
    expect(end.text).toContain('last lines of the log:');
    expect(payloads(s)[1]).toMatchObject({ severity: 'error', pass: { number: 1, status: 'failed', exitCode: 3 } });
  }, 90_000);
});

describe('endpoints that fail change nothing in the run', () => {
  it('one that hangs, one that answers 500, one that closes the connection: the run, its record and a good endpoint go on', async () => {
    const good = await sink();
    const hang = await sink('hang');
    const fail = await sink(500);
    const close = await sink('close');
    const d = checkout();
    const env = runEnv(d, { ZEROWIZ_NOTIFY_TIMEOUT_MS: '400', ZEROWIZ_NOTIFY_RETRY_MS: '100' });
    const targets = [good, hang, fail, close].flatMap((x) => ['--notify', `${x.url}/SeCrEt-${x.port}`]);
    const r = await launchSeed(d, env, targets);
    expect(r.code, r.stderr).toBe(0);
    const [dir] = runDirs(d);
    await supervisorGone(dir!);
    const json = runJson(dir!);
    expect(json.ended).toBe('succeeded');
    expect(json.steps.map((x) => x.status)).toEqual(['done', 'done']);
    // The trainer wrote every row, and the run's series took every one.
    const rows =
      readFileSync(join(d, SEED_OUTPUT, 'loss.csv'), 'utf8')
        .trim()
        .split('\n').length - 1;
    expect(readFileSync(join(dir!, 'losses.csv'), 'utf8').trim().split('\n').length - 1).toBe(rows);
    const kinds = payloads(good)
      .map((p) => p.event)
      .filter((k) => k !== 'alert');
    expect(kinds).toEqual(['started', 'pass-end', 'first-step', 'pass-end', 'end']);
    const n = payloads(good).length;
    expect(json.notify.targets.map((t) => [t.sent, t.failed])).toEqual([
      [n, 0],
      [0, n],
      [0, n],
      [0, n],
    ]);
    const whys = new Set(json.notify.failures.map((f) => f.why.replace(/ \(attempt \d\)$/, '')));
    expect(whys).toEqual(
      new Set([
        'no answer within 400 ms',
        'answered 500: status 500',
        'the connection was closed after the request was sent',
      ]),
    );
    // The hung and closing endpoints got each event once (no retry could deliver twice); the 500 one three tries
    // of the first event, then one of each (it answered no event since).
    expect(hang.requests).toHaveLength(n);
    expect(close.requests).toHaveLength(n);
    expect(fail.requests).toHaveLength(n + 2);
    const everything = `${readFileSync(join(dir!, 'run.json'), 'utf8')}${r.stdout}${r.stderr}${readFileSync(join(dir!, 'report.html'), 'utf8')}`;
    expect(everything).not.toContain('SeCrEt');
  }, 120_000);

  it('a command target that hangs is killed with its group after its time, and never sees the targets', async () => {
    const d = checkout();
    const tool = join(d, 'notify-tool.sh');
    const seen = join(d, 'seen');
    // It records what it was given, then hangs in a child (one that ignores SIGTERM too: notifier.test.ts).
    writeFileSync(
      tool,
      `#!/bin/sh\necho "$ZEROWIZ_EVENT notify=\${ZEROWIZ_NOTIFY:-unset}" >> "${seen}"\nsleep 600.25 &\nwait\n`,
    );
    chmodSync(tool, 0o755);
    const r = await launchSeed(d, runEnv(d, { ZEROWIZ_NOTIFY_TIMEOUT_MS: '300', ZEROWIZ_NOTIFY: tool }));
    expect(r.code, r.stderr).toBe(0);
    const [dir] = runDirs(d);
    await supervisorGone(dir!);
    const json = runJson(dir!);
    expect(json.notify.failures.length).toBeGreaterThan(0);
    for (const f of json.notify.failures) expect(f.why).toBe('killed after 300 ms (it was still running)');
    expect(readFileSync(seen, 'utf8').split('\n')[0]).toBe('started notify=unset');
    const left = (await zerowizPs()).filter((c) => c.includes('sleep 600.25'));
    expect(left).toEqual([]);
  }, 120_000);
});

describe('when the supervisor itself is killed', () => {
  it('kill -9 of the supervisor: its watchdog ends the record, writes the report and sends the end (interrupted, why)', async () => {
    const s = await sink();
    const d = checkout();
    const go = join(d, 'go');
    // The training waits for a file that never comes: the run is mid-pass when its supervisor dies.
    const run = launchSeed(d, runEnv(d, { FAKE_TRAIN_GO_FILE: go }), ['--notify', `${s.url}/hook`]);
    try {
      await s.waitFor(2, 60_000);
      const [dir] = runDirs(d);
      for (let i = 0; i < 200 && runJson(dir!).steps[1]?.status !== 'running'; i++)
        await new Promise((res) => setTimeout(res, 100));
      const sup = runJson(dir!).supervisor!.pid;
      process.kill(sup, 'SIGKILL');
      const r = await run;
      expect(r.code).toBe(130);
      const all = await s.waitFor(3, 60_000);
      const end = all.map((q) => JSON.parse(q.body) as NotifyPayload).find((p) => p.event === 'end')!;
      expect(end.outcome).toMatchObject({ ended: 'interrupted' });
      expect(end.outcome!.reason).toMatch(/zerowiz ended before the run did \(killed/);
      expect(end.pass).toMatchObject({ number: 2, name: 'train', status: 'stopped' });
      expect(end.report).toBe(join(dir!, 'report.html'));
      expect(existsSync(end.report!)).toBe(true);
      expect(runJson(dir!).notify.targets[0]).toMatchObject({ sent: 1, failed: 0 });
    } finally {
      // A test that failed before the kill leaves no run waiting for ever: the training goes on and ends.
      writeFileSync(go, '');
      await run;
    }
  }, 90_000);
});

/** Every process's command line, from /proc. */
async function zerowizPs(): Promise<string[]> {
  const { readdirSync } = await import('node:fs');
  const out: string[] = [];
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!/^State:\s+Z/m.test(readFileSync(`/proc/${p}/status`, 'utf8'))) out.push(cmd);
    } catch {}
  }
  return out;
}

describe('where the targets come from', () => {
  it("the preset's notify: list, ZEROWIZ_NOTIFY and --notify, each target once; the steps never see them", async () => {
    const a = await sink();
    const b = await sink();
    const d = checkout();
    const envFile = join(d, 'step-env');
    // A one-step preset whose accelerate writes its environment down.
    const acc = join(d, 'accelerate-env');
    writeFileSync(acc, `#!/bin/sh\nenv > "${envFile}"\n`);
    chmodSync(acc, 0o755);
    writeFileSync(join(d, 'train.py'), '# stand-in\n');
    writeFileSync(
      join(d, 'env.yaml'),
      `name: env\nanswers:\n  num_processes: 1\n  mode: 2\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py]\nnotify:\n  - ${a.url}/from-preset\n  - ["${join(d, 'no-such-tool')}", "{event}"]\n`,
    );
    const env = runEnv(d, { ZEROWIZ_NOTIFY: `${b.url}/from-env ${a.url}/from-preset` });
    const r = await zerowiz(
      ['launch', './env.yaml', '--no-tui', '--accelerate', acc, '--notify', `${b.url}/from-env`],
      d,
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const [dir] = runDirs(d);
    await supervisorGone(dir!);
    expect(a.requests.map((q) => q.path)).toEqual(a.requests.map(() => '/from-preset'));
    expect(b.requests.map((q) => q.path)).toEqual(b.requests.map(() => '/from-env'));
    expect(payloads(a).map((p) => p.event)).toEqual(['started', 'pass-end', 'end']);
    expect(payloads(b).map((p) => p.event)).toEqual(['started', 'pass-end', 'end']);
    const json = runJson(dir!);
    expect(json.notify.targets).toHaveLength(3);
    expect(json.notify.failures[0]!.why).toMatch(/^could not run it: no program .*no-such-tool \(ENOENT\)$/);
    const stepEnv = readFileSync(envFile, 'utf8');
    expect(stepEnv).not.toContain('ZEROWIZ_NOTIFY');
    expect(stepEnv).not.toContain('from-preset');
  }, 90_000);

  it('a bad target is refused before anything runs, in one line', async () => {
    const d = checkout();
    const env = runEnv(d);
    expectOneLineError(
      await launchSeed(d, env, ['--notify', 'mail me | tee x']),
      /--notify: a command target runs without a shell/,
    );
    expectOneLineError(
      await launchSeed(d, env, ['--notify', 'ftp://example.org/x']),
      /--notify: only http:\/\/ and https:\/\/ URLs/,
    );
    expectOneLineError(
      await launchSeed(d, { ...env, ZEROWIZ_NOTIFY: 'pager+https://example.org/SeCrEt' }),
      /ZEROWIZ_NOTIFY \(target 1\): 'pager\+' is not a notification style/,
    );
    expect(runDirs(d)).toEqual([]);
  }, 60_000);
});

describe('zerowiz notify test', () => {
  it('sends a sample end to each target and says how each went', async () => {
    const ok = await sink();
    const bad = await sink(500);
    const d = checkout();
    const r = await zerowiz(['notify', 'test', `${ok.url}/SeCrEt`, `ntfy+${bad.url}/topic`], d, runEnv(d));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^zerowiz: http:\/\/127\.0\.0\.1:\d+\/… \[[0-9a-f]{4}\]: sent \(answered 200, \d+\.\d\d s\)$/m,
    );
    expect(r.stderr).toMatch(
      /^zerowiz: warning: http:\/\/127\.0\.0\.1:\d+\/… \[[0-9a-f]{4}\]: not sent: answered 500: status 500/m,
    );
    expect(r.stderr).not.toContain('SeCrEt');
    const p = payloads(ok)[0]!;
    expect(p).toMatchObject({ event: 'end', run: { id: 'zerowiz-notify-test' }, outcome: { ended: 'succeeded' } });
    // ntfy's style: the text as the body, the title in a header.
    expect(bad.requests[0]!.headers.title).toMatch(/succeeded/);
    expect(bad.requests).toHaveLength(1);
  }, 30_000);

  it('without a target says how to give one (exit 2); the environment is used when none is given', async () => {
    const s = await sink();
    const d = checkout();
    expectOneLineError(await zerowiz(['notify', 'test'], d, runEnv(d)), /no notification target to test/);
    const r = await zerowiz(['notify', 'test'], d, { ...runEnv(d), ZEROWIZ_NOTIFY: `${s.url}/x` });
    expect(r.code, r.stderr).toBe(0);
    expect(s.requests).toHaveLength(1);
  }, 30_000);
});
