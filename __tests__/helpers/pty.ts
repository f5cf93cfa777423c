/**
 * Drives the built bin in a real pseudo-terminal (node-pty) and reads the screen through a headless
 * xterm, the way a user sees it. Waits for frames by predicate, never by fixed sleeps.
 */
import pty from 'node-pty';
import xterm from '@xterm/headless';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'dist', 'zerowiz.js');

/** Key sequences, named once. */
export const KEYS = {
  enter: '\r',
  up: '\x1b[A',
  down: '\x1b[B',
  right: '\x1b[C',
  left: '\x1b[D',
  esc: '\x1b',
  tab: '\t',
  backspace: '\x7f',
  ctrlC: '\x03',
  pageUp: '\x1b[5~',
  pageDown: '\x1b[6~',
} as const;

export interface PtyOptions {
  args?: string[];
  cols?: number;
  rows?: number;
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Run this file with node instead of the bin. */
  script?: string;
  /** Run this executable (with `args`) instead of node: e.g. an interactive shell with job control. */
  file?: string;
}

/** A running program in a pseudo-terminal. */
export interface PtySession {
  /** The visible screen, one string per row, right-trimmed. */
  lines(): string[];
  /** The visible screen as one string. */
  screen(): string;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  /** Resolves when `pred(screen)` holds; rejects with the screen after `timeoutMs`. */
  waitFor(pred: string | RegExp | ((screen: string) => boolean), timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or 128+signal). */
  exited: Promise<number>;
  pid: number;
  kill(signal?: string): void;
  /** Closes the terminal: the pty master is closed (the kernel hangs up the session), as when a window or an SSH link goes. */
  hangUp(): void;
  /** Everything the program wrote, raw. */
  raw(): string;
  /**
   * Stops reading the pty master (as a terminal whose SSH link hangs, or a laptop lid closed, stops taking the
   * program's output): once the kernel's buffer is full, the program's writes to its terminal block.
   */
  pauseReading(): void;
  /** Reads the pty master again. */
  resumeReading(): void;
}

/** Starts the bin (or `opts.script`) in a pseudo-terminal of `cols` x `rows` (80x24 by default). */
export function spawnPty(opts: PtyOptions = {}): PtySession {
  const cols = opts.cols ?? 80;
  const rows = opts.rows ?? 24;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, TERM: 'xterm-256color', ...opts.env })) {
    if (v !== undefined) env[k] = v;
  }
  // Ink stops drawing frames and reading keys when it sees CI; a real terminal user has no CI variable.
  delete env.CI;
  delete env.CONTINUOUS_INTEGRATION;
  for (const k of Object.keys(opts.env ?? {})) if (opts.env?.[k] === undefined) delete env[k];
  const term = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 0 });
  const child = pty.spawn(
    opts.file ?? process.execPath,
    opts.file ? (opts.args ?? []) : [opts.script ?? BIN, ...(opts.args ?? [])],
    {
      name: 'xterm-256color',
      cols,
      rows,
      cwd: opts.cwd ?? ROOT,
      env,
    },
  );
  let rawOut = '';
  let pending = Promise.resolve();
  child.onData((d) => {
    rawOut += d;
    pending = pending.then(() => new Promise<void>((res) => term.write(d, res)));
  });
  const exited = new Promise<number>((res) => {
    child.onExit(({ exitCode, signal }) => res(signal ? 128 + signal : exitCode));
  });
  const lines = () => {
    const buf = term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < term.rows; i++) out.push(buf.getLine(buf.viewportY + i)?.translateToString(true) ?? '');
    return out;
  };
  const screen = () => lines().join('\n');
  return {
    lines,
    screen,
    write: (d) => child.write(d),
    resize: (c, r) => {
      child.resize(c, r);
      term.resize(c, r);
    },
    async waitFor(pred, timeoutMs = 10_000) {
      const test =
        typeof pred === 'string'
          ? (s: string) => s.includes(pred)
          : pred instanceof RegExp
            ? (s: string) => pred.test(s)
            : pred;
      const deadline = Date.now() + timeoutMs;
      let done = false;
      exited.then(() => {
        done = true;
      });
      for (;;) {
        await pending;
        const s = screen();
        if (test(s)) return s;
        if (Date.now() > deadline || (done && !test(s))) {
          await new Promise((r) => setTimeout(r, 50));
          await pending;
          const again = screen();
          if (test(again)) return again;
          throw new Error(`waitFor timed out${done ? ' (program exited)' : ''}; screen was:\n${again}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    exited,
    pid: child.pid,
    kill: (signal) => child.kill(signal),
    // node-pty's destroy() closes the master, then also sends SIGHUP as a terminal emulator does.
    hangUp: () => (child as unknown as { destroy(): void }).destroy(),
    raw: () => rawOut,
    pauseReading: () => child.pause(),
    resumeReading: () => child.resume(),
  };
}
