/**
 * The notifier against a real HTTP server on the loopback (started here) and real command targets: events in
 * order, once each, with the payload's fields; each endpoint's own body (ntfy, Slack, Discord, Teams); a server
 * that hangs, answers 500 or closes the connection is bounded in time, retried only where that cannot deliver
 * twice, and leaves a failure line without the URL's secret parts; a command that hangs is killed after its time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Notifier,
  PAYLOAD_SCHEMA,
  parseTarget,
  payloadOf,
  type NotifyPayload,
  type NotifyEventKind,
} from '../../src/notify/index.js';
import { startSink, type HttpSink } from '../helpers/http-sink.js';
import { running, until } from '../helpers/proc.js';

const sinks: HttpSink[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of sinks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

async function sink(mode: HttpSink['mode'] = 'ok'): Promise<HttpSink> {
  const s = await startSink(mode);
  sinks.push(s);
  return s;
}

const RUN = {
  id: '20261205-101500-qwen',
  name: 'qwen-lora',
  host: 'gpu-box',
  cwd: '/work/proj',
  source: 'qwen-lora',
  kind: 'local' as const,
  jobId: null,
  startedAt: '2026-12-05T10:15:00.000Z',
  passes: 2,
};

function event(kind: NotifyEventKind, n = 1): NotifyPayload {
  return payloadOf(
    kind,
    RUN,
    kind === 'pass-end'
      ? { pass: { number: n, name: n === 1 ? 'data' : 'train', status: 'done', exitCode: 0, seconds: 12 } }
      : kind === 'end'
        ? { outcome: { ended: 'succeeded', exitCode: 0, wallSeconds: 3600, reason: null } }
        : {},
    'cd /work/proj && zerowiz attach 20261205-101500-qwen',
    Date.parse('2026-12-05T11:15:00Z'),
  );
}

const FAST = { timeoutMs: 300, commandTimeoutMs: 400 };

describe('a JSON endpoint', () => {
  it('gets every event once, in order, with the payload fields', async () => {
    const s = await sink();
    const n = new Notifier({ targets: [parseTarget(`${s.url}/hook`)], env: {} });
    const kinds: NotifyEventKind[] = ['started', 'first-step', 'pass-end', 'end'];
    for (const k of kinds) n.send(k === 'pass-end' ? event(k, 1) : event(k));
    // A repeat of an event already sent is dropped.
    n.send(event('started'));
    await n.flush(5_000);
    expect(s.requests.map((r) => JSON.parse(r.body).event)).toEqual(kinds);
    const end = JSON.parse(s.requests[3]!.body) as NotifyPayload;
    expect(end).toMatchObject({
      schema: PAYLOAD_SCHEMA,
      event: 'end',
      key: `${RUN.id}/end`,
      severity: 'success',
      run: { id: RUN.id, name: 'qwen-lora', host: 'gpu-box', passes: 2 },
      outcome: { ended: 'succeeded', exitCode: 0, wallSeconds: 3600 },
      attach: 'cd /work/proj && zerowiz attach 20261205-101500-qwen',
    });
    expect(end.title).toBe('qwen-lora succeeded after 1h00m');
    expect(s.requests[0]!.headers['content-type']).toMatch(/^application\/json/);
    expect(n.summary().targets[0]).toMatchObject({ sent: 4, failed: 0 });
  });
});

describe("each endpoint's own body", () => {
  it('ntfy: the text as the body, Title (RFC 2047 when not ASCII), Tags and Priority headers', async () => {
    const s = await sink();
    const n = new Notifier({ targets: [parseTarget(`ntfy+${s.url}/my-topic`)], env: {} });
    const p = payloadOf('started', { ...RUN, name: 'qwen-lora-ü' }, {}, 'attach', Date.now());
    n.send(p);
    await n.flush(5_000);
    const r = s.requests[0]!;
    expect(r.path).toBe('/my-topic');
    expect(r.body).toBe(p.text);
    expect(r.headers.title).toBe(`=?UTF-8?B?${Buffer.from(p.title).toString('base64')}?=`);
    expect(r.headers.tags).toBe('information_source');
    expect(r.headers.priority).toBe('3');
  });

  it('Slack: text with <, > and & escaped (no ping); Discord: content with no mention allowed; Teams: a card', async () => {
    const s = await sink();
    const n = new Notifier({
      targets: [
        parseTarget(`slack+${s.url}/slack`),
        parseTarget(`discord+${s.url}/discord`),
        parseTarget(`teams+${s.url}/teams`),
      ],
      env: {},
    });
    n.send(payloadOf('started', { ...RUN, name: '<!channel> @everyone & co' }, {}, 'attach', Date.now()));
    await n.flush(5_000);
    const by = (path: string) => JSON.parse(s.requests.find((r) => r.path === path)!.body);
    expect(by('/slack').text).toContain('&lt;!channel&gt; @everyone &amp; co');
    expect(by('/slack').text).not.toContain('<!channel>');
    expect(by('/discord')).toMatchObject({ allowed_mentions: { parse: [] } });
    expect(by('/discord').content).toContain('@everyone');
    expect(by('/teams')).toMatchObject({ '@type': 'MessageCard', title: expect.stringContaining('started') });
  });
});

describe('an endpoint that fails', () => {
  it('500: tried three times, then one failure line; the caller never waited', async () => {
    const s = await sink(500);
    const n = new Notifier({
      targets: [parseTarget(`${s.url}/SeCrEtPaTh`)],
      env: {},
      limits: FAST,
      retryDelaysMs: [50, 50],
    });
    const t0 = Date.now();
    n.send(event('started'));
    expect(Date.now() - t0).toBeLessThan(50);
    await n.flush(5_000);
    expect(s.requests).toHaveLength(3);
    const sum = n.summary();
    expect(sum.targets[0]).toMatchObject({ sent: 0, failed: 1 });
    expect(sum.failures[0]).toMatchObject({ event: 'started', why: 'answered 500: status 500 (attempt 3)' });
    expect(JSON.stringify(sum)).not.toContain('SeCrEtPaTh');
  });

  it('a target that failed every attempt of an event gets one attempt per later event, until one goes through', async () => {
    const s = await sink((i) => (i < 4 ? 500 : 'ok'));
    const n = new Notifier({ targets: [parseTarget(`${s.url}/x`)], env: {}, limits: FAST, retryDelaysMs: [20, 20] });
    for (const k of ['started', 'first-step', 'pass-end', 'end'] as const) n.send(event(k));
    await n.flush(5_000);
    // started: 3 tries (500s); first-step: 1 try (500); pass-end: 1 try (ok); end: 1 try (ok).
    expect(s.requests.map((r) => JSON.parse(r.body).event)).toEqual([
      'started',
      'started',
      'started',
      'first-step',
      'pass-end',
      'end',
    ]);
    expect(n.summary().targets[0]).toMatchObject({ sent: 2, failed: 2 });
  });

  it('a hung endpoint: the attempt ends at its time limit and is not retried (it may have arrived)', async () => {
    const s = await sink('hang');
    const n = new Notifier({ targets: [parseTarget(`${s.url}/x`)], env: {}, limits: FAST, retryDelaysMs: [50, 50] });
    const t0 = Date.now();
    n.send(event('started'));
    n.send(event('end'));
    await n.flush(5_000);
    const took = Date.now() - t0;
    expect(took).toBeLessThan(3_000);
    expect(s.requests.map((r) => JSON.parse(r.body).event)).toEqual(['started', 'end']);
    expect(n.summary().failures.map((f) => f.why)).toEqual(['no answer within 300 ms', 'no answer within 300 ms']);
  });

  it('a connection closed on the request: not retried, said so', async () => {
    const s = await sink('close');
    const n = new Notifier({ targets: [parseTarget(`${s.url}/x`)], env: {}, limits: FAST, retryDelaysMs: [50, 50] });
    n.send(event('started'));
    await n.flush(5_000);
    expect(s.requests).toHaveLength(1);
    expect(n.summary().failures[0]!.why).toMatch(/the connection was closed/);
  });

  it('nobody listening: retried (it never arrived), then one failure', async () => {
    const s = await sink();
    const url = `${s.url}/x`;
    await s.close();
    sinks.splice(0);
    const n = new Notifier({ targets: [parseTarget(url)], env: {}, limits: FAST, retryDelaysMs: [20, 20] });
    n.send(event('started'));
    await n.flush(5_000);
    expect(n.summary().failures[0]!.why).toMatch(/ECONNREFUSED.*\(attempt 3\)/);
  });

  it('a flush that runs out of time gives the waiting events up, each said', async () => {
    const s = await sink('hang');
    const n = new Notifier({
      targets: [parseTarget(`${s.url}/x`)],
      env: {},
      limits: { timeoutMs: 2_000, commandTimeoutMs: 2_000 },
    });
    for (const k of ['started', 'first-step', 'end'] as const) n.send(event(k));
    const t0 = Date.now();
    await n.flush(300);
    expect(Date.now() - t0).toBeLessThan(1_500);
    const whys = n.summary().failures.map((f) => `${f.event}: ${f.why}`);
    expect(whys).toEqual([
      'started: not sent: still being tried when the run ended (its notifications had 0.3 s)',
      'first-step: not sent: the run ended and its notifications had 0.3 s',
      'end: not sent: the run ended and its notifications had 0.3 s',
    ]);
    // The attempt given up is not counted again when it ends.
    await new Promise((r) => setTimeout(r, 2_200));
    expect(n.summary().targets[0]).toMatchObject({ sent: 0, failed: 3 });
  });

  it('a slow target holds up only itself', async () => {
    const slow = await sink('hang');
    const fast = await sink();
    const n = new Notifier({
      targets: [parseTarget(`${slow.url}/s`), parseTarget(`${fast.url}/f`)],
      env: {},
      limits: { timeoutMs: 5_000, commandTimeoutMs: 5_000 },
    });
    n.send(event('started'));
    n.send(event('end'));
    await fast.waitFor(2, 2_000);
    expect(fast.requests.map((r) => JSON.parse(r.body).event)).toEqual(['started', 'end']);
    await n.flush(100);
  });
});

describe('a command target', () => {
  function script(body: string): string {
    const d = mkdtempSync(join(tmpdir(), 'zw-notify-cmd-'));
    dirs.push(d);
    const p = join(d, 'notify.sh');
    writeFileSync(p, `#!/bin/sh\n${body}\n`);
    chmodSync(p, 0o755);
    return p;
  }

  it('gets its words filled, the text on stdin, the payload in its environment, never ZEROWIZ_NOTIFY', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'zw-notify-out-')), 'got');
    dirs.push(join(out, '..'));
    const cmd = script(
      `{ echo "args: $*"; echo "event: $ZEROWIZ_EVENT"; echo "notify: \${ZEROWIZ_NOTIFY:-unset}"; printf '%s\\n' "$ZEROWIZ_PAYLOAD"; echo '--- stdin'; cat; } > "${out}"`,
    );
    const n = new Notifier({
      targets: [parseTarget([cmd, '-s', '{title}', '{event}/{run}'])],
      env: { ...process.env, ZEROWIZ_NOTIFY: 'https://ntfy.sh/SeCrEt' },
    });
    const p = event('end');
    n.send(p);
    await n.flush(10_000);
    const got = readFileSync(out, 'utf8');
    expect(got).toContain(`args: -s ${p.title} end/${RUN.id}`);
    expect(got).toContain('event: end');
    expect(got).toContain('notify: unset');
    expect(got).toContain(`--- stdin\n${p.title}\n\n${p.text}\n`);
    expect(JSON.parse(got.split('\n')[3]!)).toMatchObject({ event: 'end', run: { id: RUN.id } });
    expect(n.summary().targets[0]).toMatchObject({ sent: 1, failed: 0 });
  });

  it('that hangs is killed, with its process group, after its time', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'zw-notify-pid-')), 'pids');
    dirs.push(join(pidFile, '..'));
    // A child that ignores SIGTERM, in the same group: only the group's SIGKILL ends it.
    const cmd = script(
      `sh -c 'trap "" TERM; echo $$ >> "${pidFile}"; while :; do sleep 1; done' & echo $$ >> "${pidFile}"; wait`,
    );
    const n = new Notifier({ targets: [parseTarget(cmd)], env: process.env, limits: FAST });
    const t0 = Date.now();
    n.send(event('started'));
    await n.flush(10_000);
    const took = Date.now() - t0;
    expect(took).toBeLessThan(6_000);
    expect(n.summary().failures[0]!.why).toBe('killed after 400 ms (it was still running)');
    const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    // SIGKILL is delivered when the kernel next runs the process: under load that is not at once. The child that
    // ignores SIGTERM would run forever had its group not been killed.
    for (const pid of pids) await until(() => !running(pid), `process ${pid} of the group to end`, 5_000);
  });

  it('that fails says its exit and its last stderr line; a missing program says so', async () => {
    const cmd = script('echo "smtp: relay refused" >&2; exit 3');
    const n = new Notifier({ targets: [parseTarget(cmd), parseTarget('zerowiz-no-such-program-x')], env: process.env });
    n.send(event('started'));
    await n.flush(10_000);
    const whys = n
      .summary()
      .failures.map((f) => f.why)
      .sort();
    expect(whys).toEqual([
      'could not run it: no program zerowiz-no-such-program-x (ENOENT)',
      'exited 3: smtp: relay refused',
    ]);
  });
});
