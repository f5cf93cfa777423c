/**
 * A real HTTP server on the loopback, started by a test, that records every request it gets (method, path,
 * headers, body, arrival time) and answers as the test says: 200, a status (500, 429, 404), never (a hung
 * endpoint), or by closing the connection. Close it in afterEach.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** One request as the server got it. */
export interface SinkRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the server answers. */
export type SinkMode = 'ok' | 'hang' | 'close' | number;

/** A running sink. */
export interface HttpSink {
  url: string;
  port: number;
  requests: SinkRequest[];
  /** How the next requests are answered (a function: per request, by its index). */
  mode: SinkMode | ((i: number) => SinkMode);
  /** Resolves once `n` requests arrived (or rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<SinkRequest[]>;
  close(): Promise<void>;
}

/** Starts a sink on 127.0.0.1 (a free port). */
export async function startSink(mode: HttpSink['mode'] = 'ok'): Promise<HttpSink> {
  const requests: SinkRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters: { n: number; res: (r: SinkRequest[]) => void }[] = [];
  const sink: HttpSink = {
    url: '',
    port: 0,
    requests,
    mode,
    waitFor(n, timeoutMs = 20_000) {
      if (requests.length >= n) return Promise.resolve(requests.slice());
      return new Promise((res, rej) => {
        const t = setTimeout(
          () => rej(new Error(`the sink got ${requests.length} of ${n} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          n,
          res: (r) => {
            clearTimeout(t);
            res(r);
          },
        });
      });
    },
    close: () =>
      new Promise((res) => {
        for (const s of sockets) s.destroy();
        server.close(() => res());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const i = requests.length;
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      for (const w of waiters.filter((x) => requests.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.res(requests.slice());
      }
      const m = typeof sink.mode === 'function' ? sink.mode(i) : sink.mode;
      if (m === 'hang') return;
      if (m === 'close') {
        req.socket.destroy();
        return;
      }
      res.writeHead(m === 'ok' ? 200 : m, { 'content-type': 'text/plain' });
      res.end(m === 'ok' ? 'ok\n' : `status ${m}\n`);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const addr = server.address();
  sink.port = typeof addr === 'object' && addr ? addr.port : 0;
  sink.url = `http://127.0.0.1:${sink.port}`;
  return sink;
}
