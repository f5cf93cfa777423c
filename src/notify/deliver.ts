/**
 * One attempt to deliver one payload to one target, bounded in time: a POST to a URL (no redirect followed,
 * no connection kept, at most RESPONSE_MAX_BYTES of the answer read), or a command run as the leader of its
 * own process group (argument array, the text on stdin, killed with its group after its time). Never throws.
 *
 * Whether a failed attempt may be tried again is decided by what is known to have reached the other side:
 * an endpoint that was never reached (refused, no such host) or that answered 429 or 5xx may be tried again;
 * one that took the request and then hung or closed the connection is not, so an event is never delivered
 * twice. A command is run once.
 */
import { spawn } from 'node:child_process';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { envNumber, printable } from '../text/index.js';
import { signalGroup, trackGroup, untrackGroup } from '../proc/index.js';
import type { NotifyPayload } from './message.js';
import { commandRequestFor, httpRequestFor } from './styles.js';
import { NOTIFY_ENV, type NotifyTarget } from './targets.js';

/** How long one attempt may take, connection to answer (override: ZEROWIZ_NOTIFY_TIMEOUT_MS). */
export const NOTIFY_TIMEOUT_MS = 10_000;
/** How long a command target may run. */
export const COMMAND_TIMEOUT_MS = 30_000;
/** After SIGTERM, how long a command's group gets before SIGKILL. */
const COMMAND_KILL_GRACE_MS = 2_000;
/** Bytes of an answer (or a command's stderr) read for the failure's line. */
const RESPONSE_MAX_BYTES = 2048;

/** How one attempt went. */
export interface AttemptResult {
  ok: boolean;
  /** Whether trying again cannot deliver the event twice (it never arrived, or the endpoint refused it). */
  retry: boolean;
  /** What happened, for people (never the URL: the caller scrubs it of the target's secret parts too). */
  why: string;
  ms: number;
}

/** The time limits of an attempt. */
export interface AttemptLimits {
  timeoutMs: number;
  commandTimeoutMs: number;
}

/** The limits in effect for an environment. */
export function attemptLimits(env: NodeJS.ProcessEnv): AttemptLimits {
  // One setting for both (unset: each its own default).
  const ms = envNumber(env, 'ZEROWIZ_NOTIFY_TIMEOUT_MS', -1);
  return ms < 0
    ? { timeoutMs: NOTIFY_TIMEOUT_MS, commandTimeoutMs: COMMAND_TIMEOUT_MS }
    : { timeoutMs: ms, commandTimeoutMs: ms };
}

/** Errors that say the request never reached the endpoint. */
const NEVER_ARRIVED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** Delivers once; resolves with the result, never rejects. */
export function deliverOnce(
  t: NotifyTarget,
  p: NotifyPayload,
  limits: AttemptLimits,
  env: NodeJS.ProcessEnv,
): Promise<AttemptResult> {
  const started = Date.now();
  const done = (ok: boolean, retry: boolean, why: string): AttemptResult => ({
    ok,
    retry,
    why: scrub(why, t),
    ms: Date.now() - started,
  });
  return t.kind === 'url'
    ? postOnce(t.url, httpRequestFor(t.style, p), limits.timeoutMs, done)
    : runOnce(t.argv, p, limits.commandTimeoutMs, env, done);
}

type Done = (ok: boolean, retry: boolean, why: string) => AttemptResult;

/** One POST. */
function postOnce(
  url: string,
  req: ReturnType<typeof httpRequestFor>,
  timeoutMs: number,
  done: Done,
): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const body = Buffer.from(req.body, 'utf8');
    let sent = false;
    let r: ReturnType<typeof httpRequest>;
    try {
      const u = new URL(url);
      const make = u.protocol === 'https:' ? httpsRequest : httpRequest;
      r = make(u, {
        method: 'POST',
        agent: false,
        headers: { ...req.headers, 'user-agent': 'zerowiz', 'content-length': String(body.length) },
      });
    } catch (e) {
      finish(done(false, false, `the request could not be made: ${(e as Error).message}`));
      return;
    }
    const timer = setTimeout(() => {
      finish(done(false, !sent, `no answer within ${timeoutMs} ms`));
      r.destroy();
    }, timeoutMs);
    timer.unref();
    r.on('finish', () => {
      sent = true;
    });
    r.on('error', (e: NodeJS.ErrnoException) => {
      const never = !sent && e.code !== undefined && NEVER_ARRIVED.has(e.code);
      finish(done(false, never, describeNetError(e, sent)));
    });
    r.on('response', (res) => answerOf(res, (status, text) => finish(judge(status, text, done))));
    r.end(body);
  });
}

/** The status and the first bytes of an answer, once read (or cut). */
function answerOf(res: IncomingMessage, then: (status: number, text: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const end = () => then(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'));
  res.on('data', (c: Buffer) => {
    if (size >= RESPONSE_MAX_BYTES) return;
    chunks.push(c.subarray(0, RESPONSE_MAX_BYTES - size));
    size += c.length;
    if (size >= RESPONSE_MAX_BYTES) {
      res.destroy();
      end();
    }
  });
  res.on('end', end);
  res.on('error', end);
  res.on('close', end);
}

/** What an answer means: 2xx delivered; 429 and 5xx may be tried again; the rest is refused. */
function judge(status: number, text: string, done: Done): AttemptResult {
  if (status >= 200 && status < 300) return done(true, false, `answered ${status}`);
  const said = printable(text.trim().split('\n')[0] ?? '').slice(0, 160);
  const tail = said ? `: ${said}` : '';
  if (status >= 300 && status < 400)
    return done(false, false, `answered ${status} (a redirect; zerowiz follows none: give the final URL)${tail}`);
  return done(false, status === 429 || status >= 500, `answered ${status}${tail}`);
}

/** A network error as one line. */
function describeNetError(e: NodeJS.ErrnoException, sent: boolean): string {
  const what = e.code ? `${e.code}` : e.message;
  if (e.code === 'ECONNRESET' || e.message === 'socket hang up')
    return `the connection was closed ${sent ? 'after the request was sent' : 'before the request was sent'}`;
  return `the request failed: ${printable(what)}${e.code && e.message.includes(e.code) ? '' : ` (${printable(e.message)})`}`;
}

/** Runs a command target once, its group killed after `timeoutMs`. */
function runOnce(
  argv: readonly string[],
  p: NotifyPayload,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  done: Done,
): Promise<AttemptResult> {
  const c = commandRequestFor(argv, p);
  // The targets (URLs with their secrets) are nobody else's business: a command never sees them.
  const childEnv: NodeJS.ProcessEnv = { ...env, ...c.env };
  delete childEnv[NOTIFY_ENV];
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(c.argv[0]!, c.argv.slice(1), { detached: true, stdio: ['pipe', 'ignore', 'pipe'], env: childEnv });
    } catch (e) {
      resolve(done(false, false, `could not run ${printable(c.argv[0]!)}: ${(e as Error).message}`));
      return;
    }
    const pgid = child.pid;
    if (pgid !== undefined) trackGroup(pgid);
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      if (stderr.length < RESPONSE_MAX_BYTES) stderr += d.slice(0, RESPONSE_MAX_BYTES - stderr.length);
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(c.stdin);
    const timer = setTimeout(() => {
      timedOut = true;
      if (pgid === undefined) return;
      signalGroup(pgid, 'SIGTERM');
      killTimer = setTimeout(() => {
        signalGroup(pgid, 'SIGKILL');
        // A process that left the group may still hold stderr open: it is not waited for.
        killTimer = setTimeout(() => {
          child.stderr!.destroy();
          untrackGroup(pgid);
          finish(done(false, false, `killed after ${timeoutMs} ms (it was still running)`));
        }, COMMAND_KILL_GRACE_MS);
        killTimer.unref();
      }, COMMAND_KILL_GRACE_MS);
      killTimer.unref();
    }, timeoutMs);
    timer.unref();
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (pgid !== undefined) untrackGroup(pgid);
      const what = e.code === 'ENOENT' ? `no program ${printable(c.argv[0]!)} (ENOENT)` : printable(e.message);
      finish(done(false, false, `could not run it: ${what}`));
    });
    child.on('close', (code, signal) => {
      if (pgid !== undefined) {
        // Whatever it left behind in its group goes with it.
        signalGroup(pgid, 'SIGKILL');
        untrackGroup(pgid);
      }
      clearTimeout(killTimer);
      const said = printable(stderr.trim().split('\n').at(-1) ?? '').slice(0, 160);
      if (timedOut) finish(done(false, false, `killed after ${timeoutMs} ms (it was still running)`));
      else if (code === 0) finish(done(true, false, 'exited 0'));
      else finish(done(false, false, `exited ${code ?? signal}${said ? `: ${said}` : ''}`));
    });
  });
}

/** Text with every secret part of the target's URL (user, password, path, query) replaced by `…`. */
export function scrub(text: string, t: NotifyTarget): string {
  if (t.kind !== 'url') return text;
  let u: URL;
  try {
    u = new URL(t.url);
  } catch {
    return text;
  }
  const parts = [t.url, u.href, u.pathname + u.search, u.pathname, u.search.slice(1), u.username, u.password]
    .concat(u.pathname.split('/'))
    .filter((s) => s.length >= 4)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const s of parts) out = out.split(s).join('…');
  return out;
}
