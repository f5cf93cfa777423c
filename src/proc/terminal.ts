/**
 * The terminal's lifecycle, one definition for the wizard (Ink) and the launch (its log pane, drawn
 * directly, and stream mode):
 *
 * - output that survives its reader: once stdout or stderr fails (EIO on a terminal that was closed,
 *   EPIPE on a pipe whose reader left), later writes are dropped instead of raising an error that would
 *   crash zerowiz with a stack trace in the middle of a run (guardOutput, writeOut, writeErr);
 * - SIGINT, SIGTERM and SIGHUP routed to whoever holds the terminal (onTerminalSignals); a SIGHUP, an
 *   I/O error on the terminal or its input ending mean the terminal is gone (onHangup, terminalHungUp);
 * - a full-screen session (Screen): raw mode, the alternate screen, the cursor hidden, autowrap off, and
 *   all of it restored exactly once on every way out: a normal end, an exception, process.exit, a signal.
 *
 * Plain TypeScript: no Ink, no React.
 */

import { fstatSync, writeSync } from 'node:fs';

/** The signals a terminal session handles. */
export type TerminalSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** Exit codes for dying of a signal (128 + its number). */
export const SIGNAL_EXIT_CODES: Readonly<Record<TerminalSignal, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

const ENTER_ALT_SCREEN = '\x1b[?1049h';
const LEAVE_ALT_SCREEN = '\x1b[?1049l';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';
const AUTOWRAP_OFF = '\x1b[?7l';
const AUTOWRAP_ON = '\x1b[?7h';
const CLEAR_SCREEN = '\x1b[2J';
const CURSOR_HOME = '\x1b[H';

// ---------------------------------------------------------------------------------------------------------
// Output

type OutName = 'stdout' | 'stderr';
const gone: Record<OutName, boolean> = { stdout: false, stderr: false };
let guarded = false;

function stream(name: OutName): NodeJS.WriteStream {
  return name === 'stdout' ? process.stdout : process.stderr;
}

/**
 * From now on, for the rest of the process, a write error on stdout or stderr marks that stream gone
 * instead of crashing zerowiz; EIO on a terminal also means the terminal hung up. Idempotent.
 */
export function guardOutput(): void {
  if (guarded) return;
  guarded = true;
  for (const name of ['stdout', 'stderr'] as const) {
    stream(name).on('error', (err: NodeJS.ErrnoException) => {
      gone[name] = true;
      if (err.code === 'EIO' || (stream(name).isTTY && err.code !== 'EAGAIN')) noteHangup();
    });
  }
}

/** Whether stdout (or stderr) can no longer be written to. */
export function outputGone(name: OutName = 'stdout'): boolean {
  return gone[name] || stream(name).destroyed;
}

/**
 * The descriptor of stdout (or stderr) when it is a file or a device other than a terminal: Node writes those
 * synchronously anyway (its SyncWriteStream: Buffer.from, then writeSync), and writeSync of the string itself
 * encodes it straight into the write, half the work for the 50 MB stream mode prints in a flood. null: a
 * terminal or a pipe, written through the stream.
 */
const fileFds: Record<OutName, number | null | undefined> = { stdout: undefined, stderr: undefined };

function fileFd(name: OutName): number | null {
  let fd = fileFds[name];
  if (fd !== undefined) return fd;
  fd = null;
  const s = stream(name) as NodeJS.WriteStream & { fd?: unknown };
  if (typeof s.fd === 'number' && !s.isTTY) {
    try {
      const st = fstatSync(s.fd);
      if (st.isFile() || st.isCharacterDevice()) fd = s.fd;
    } catch {}
  }
  fileFds[name] = fd;
  return fd;
}

function writeTo(name: OutName, text: string): void {
  guardOutput();
  if (outputGone(name)) return;
  const fd = fileFd(name);
  if (fd === null) {
    stream(name).write(text);
    return;
  }
  try {
    writeSync(fd, text);
  } catch {
    // As the stream's error handler does (guardOutput): the output is gone, the run goes on.
    gone[name] = true;
  }
}

/**
 * Resolves once what stdout and stderr have queued is written (or they are gone). They are separate file
 * descriptors: when the terminal is slow to read, a write to one can pass what waits on the other, and a
 * summary printed to stderr right after leaving the alternate screen on stdout would land inside it.
 */
export async function drainOutput(): Promise<void> {
  await Promise.all(
    (['stdout', 'stderr'] as const).map(
      (name) =>
        new Promise<void>((res) => {
          const s = stream(name);
          if (outputGone(name) || s.writableLength === 0) {
            res();
            return;
          }
          const done = () => {
            s.off('error', done);
            s.off('close', done);
            res();
          };
          s.on('error', done);
          s.on('close', done);
          // Writes complete in order: this one's callback runs once everything before it is written.
          s.write('', done);
        }),
    ),
  );
}

/** Writes to stdout; dropped once stdout is gone. Never throws. */
export function writeOut(text: string): void {
  writeTo('stdout', text);
}

/**
 * Bytes written to stdout that its reader has not taken yet (a pipe whose reader stopped reading: `| tee` on a
 * full disk, `| less` left open). 0 for a file or a device, which are written synchronously.
 */
export function stdoutBacklog(): number {
  if (outputGone('stdout')) return 0;
  return fileFd('stdout') === null ? process.stdout.writableLength : 0;
}

/** Writes to stderr; dropped once stderr is gone. Never throws. */
export function writeErr(text: string): void {
  writeTo('stderr', text);
}

// ---------------------------------------------------------------------------------------------------------
// Hangup and signals

let hungUp = false;
const hangupListeners = new Set<() => void>();

function noteHangup(): void {
  if (hungUp) return;
  hungUp = true;
  for (const f of [...hangupListeners]) f();
}

/** Whether the terminal hung up (SIGHUP, an I/O error on it, or its input ended). */
export function terminalHungUp(): boolean {
  return hungUp;
}

/** Calls `f` once when the terminal hangs up (at once if it already has); returns the unsubscribe. */
export function onHangup(f: () => void): () => void {
  if (hungUp) {
    f();
    return () => undefined;
  }
  hangupListeners.add(f);
  return () => hangupListeners.delete(f);
}

/** How long endAfterHangup waits for its own SIGHUP to end the process. */
const HANGUP_EXIT_WAIT_MS = 1_000;

/**
 * Ends zerowiz after its terminal hung up, as a process without a SIGHUP handler ends: killed by SIGHUP,
 * after the 'exit' listeners ran (the screen's restore, the process groups' hook). Node 20's own exit path
 * puts the terminal's saved settings back, which fails on a terminal that is gone, and then aborts
 * (SIGABRT, a native stack trace, a core file where core dumps are on); dying of the signal skips it.
 */
export function endAfterHangup(code: number = SIGNAL_EXIT_CODES.SIGHUP): void {
  process.exitCode = code;
  process.emit('exit', code);
  process.removeAllListeners('exit');
  process.removeAllListeners('SIGHUP');
  process.kill(process.pid, 'SIGHUP');
  // The signal ends the process during this wait.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, HANGUP_EXIT_WAIT_MS);
  process.exit(code);
}

const SIGNALS: readonly TerminalSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * While installed, SIGINT, SIGTERM and SIGHUP go to `handler` (with how many of them came so far) instead
 * of ending zerowiz. SIGHUP first marks the terminal as hung up. Output is guarded meanwhile (a terminal
 * that is gone must not crash what handles its signal). Returns the uninstall.
 */
export function onTerminalSignals(handler: (sig: TerminalSignal, count: number) => void): () => void {
  guardOutput();
  let count = 0;
  const on = (sig: NodeJS.Signals) => {
    count++;
    if (sig === 'SIGHUP') noteHangup();
    handler(sig as TerminalSignal, count);
  };
  for (const s of SIGNALS) process.on(s, on);
  return () => {
    for (const s of SIGNALS) process.off(s, on);
  };
}

/**
 * Writes `question` to stderr and reads the line typed on stdin (a terminal in its usual line mode): the
 * answer, trimmed; null when stdin ends first or the question is withdrawn. stdin is read only while the
 * question is open.
 */
export function askLine(question: string): {
  answer: Promise<string | null>;
  withdraw(): void;
  /** Whether Ctrl+C (SIGINT) ended the question: the answer is then null, and the caller says what happened. */
  interrupted(): boolean;
} {
  const stdin = process.stdin;
  let settle: (a: string | null) => void = () => undefined;
  let interrupted = false;
  const answer = new Promise<string | null>((res) => {
    settle = res;
  });
  const onData = (d: Buffer | string) => done(String(d).trim());
  const onEnd = () => done(null);
  // Ctrl+C at the question ends it (the terminal echoed ^C on the question's line: the next line starts fresh).
  const onInterrupt = () => {
    interrupted = true;
    writeErr('\n');
    done(null);
  };
  const done = (a: string | null) => {
    stdin.off('data', onData);
    stdin.off('end', onEnd);
    process.off('SIGINT', onInterrupt);
    stdin.pause();
    settle(a);
  };
  // Ctrl+C is handled before the question shows: one typed as soon as it is seen (the process may not run again
  // between its write and the next line, on a busy machine) must reach onInterrupt, not SIGINT's default, which
  // ends zerowiz without a word.
  process.on('SIGINT', onInterrupt);
  stdin.on('data', onData);
  stdin.on('end', onEnd);
  writeErr(question);
  stdin.resume();
  return { answer, withdraw: () => done(null), interrupted: () => interrupted };
}

// ---------------------------------------------------------------------------------------------------------
// The full-screen session

/** What a full-screen session turns on (and restores). */
export interface ScreenModes {
  /** The alternate screen: the user's scrollback stays untouched. */
  altScreen?: boolean;
  hideCursor?: boolean;
  /** Autowrap off: a row wider than the terminal thinks is clipped at the edge instead of pushing rows down. */
  autowrapOff?: boolean;
  /** Clear the screen after entering. */
  clear?: boolean;
  /** Move the cursor to the top left after entering. */
  home?: boolean;
  /** Raw mode on stdin (keys arrive at once, unechoed; Ctrl+C is a key). */
  raw?: boolean;
  /**
   * What an uncaught exception does while the screen is up: the screen is restored first, then one
   * line is printed and zerowiz exits 1 (never a stack trace over a restored terminal). Default true.
   */
  catchCrash?: boolean;
}

/** The terminal as a full-screen view uses it: write, read keys, size, and restore once. */
export class Screen {
  private restored = false;
  private readonly offs: (() => void)[] = [];

  private constructor(
    private readonly modes: ScreenModes,
    private readonly stdin: NodeJS.ReadStream,
    private readonly stdout: NodeJS.WriteStream,
  ) {}

  /** Enters the modes and arranges their restore on every way out. */
  static open(modes: ScreenModes, io: { stdin?: NodeJS.ReadStream; stdout?: NodeJS.WriteStream } = {}): Screen {
    guardOutput();
    const s = new Screen(modes, io.stdin ?? process.stdin, io.stdout ?? process.stdout);
    s.enter();
    return s;
  }

  private enter(): void {
    const restore = () => this.restore();
    process.on('exit', restore);
    this.offs.push(() => process.off('exit', restore));
    if (this.modes.catchCrash !== false) {
      const crash = (err: unknown) => {
        this.restore();
        writeErr(
          `zerowiz: unexpected error: ${err instanceof Error ? err.message : String(err)}\n  hint: please report this with the command you ran\n`,
        );
        if (hungUp) endAfterHangup(1);
        else process.exit(1);
      };
      process.on('uncaughtException', crash);
      this.offs.push(() => process.off('uncaughtException', crash));
    }
    // The terminal's input fails or ends when the terminal goes: that is a hangup, not a crash.
    const inputGone = () => noteHangup();
    this.stdin.on('error', inputGone);
    this.stdin.on('end', inputGone);
    this.offs.push(() => {
      this.stdin.off('error', inputGone);
      this.stdin.off('end', inputGone);
    });
    this.applyModes();
  }

  private applyModes(): void {
    let seq = '';
    if (this.modes.altScreen) seq += ENTER_ALT_SCREEN;
    if (this.modes.hideCursor) seq += HIDE_CURSOR;
    if (this.modes.autowrapOff) seq += AUTOWRAP_OFF;
    if (this.modes.home) seq += CURSOR_HOME;
    if (this.modes.clear) seq += CLEAR_SCREEN;
    this.write(seq);
    if (this.modes.raw) this.setRaw(true);
  }

  /**
   * After zerowiz was stopped and continued (Ctrl+Z then `fg`, or `kill -STOP`/`-CONT` from outside), the shell
   * has put the terminal back in its own modes (cooked, main screen): `f` runs after the screen's modes are
   * entered again (a full redraw). Until restore; returns the unsubscribe.
   */
  onContinue(f: () => void): () => void {
    const on = () => {
      if (this.restored || hungUp) return;
      // libuv remembers the mode it set last and skips setting it again: off, then on, sets it for real.
      if (this.modes.raw) this.setRaw(false);
      this.applyModes();
      f();
    };
    process.on('SIGCONT', on);
    const off = () => process.off('SIGCONT', on);
    this.offs.push(off);
    return off;
  }

  private setRaw(on: boolean): void {
    if (this.stdin.isTTY !== true || typeof this.stdin.setRawMode !== 'function') return;
    try {
      this.stdin.setRawMode(on);
    } catch {
      // the terminal is gone
    }
  }

  /** Whether the terminal can still be written to. */
  get alive(): boolean {
    return !hungUp && !this.restored && !outputGone('stdout');
  }

  /** Writes to the terminal; dropped once it is gone. */
  write(data: string): void {
    if (data === '' || hungUp || outputGone('stdout')) return;
    this.stdout.write(data);
  }

  /** The terminal's size (80x24 when it does not say). */
  size(): { columns: number; rows: number } {
    return { columns: this.stdout.columns || 80, rows: this.stdout.rows || 24 };
  }

  /** Raw input, as it arrives, until restore; returns the unsubscribe. */
  onInput(f: (data: string) => void): () => void {
    const on = (d: Buffer | string) => f(typeof d === 'string' ? d : d.toString('utf8'));
    this.stdin.on('data', on);
    this.stdin.resume();
    const off = () => {
      this.stdin.off('data', on);
      this.stdin.pause();
    };
    this.offs.push(off);
    return off;
  }

  /** Size changes, until restore; returns the unsubscribe. */
  onResize(f: () => void): () => void {
    this.stdout.on('resize', f);
    const off = () => this.stdout.off('resize', f);
    this.offs.push(off);
    return off;
  }

  /** Clears the screen (after a resize, before the next full frame). */
  clear(): void {
    this.write(CLEAR_SCREEN);
  }

  /** Restores everything it turned on, once: raw mode off, autowrap on, main screen, cursor shown. */
  restore(): void {
    if (this.restored) return;
    this.restored = true;
    for (const off of this.offs.splice(0)) off();
    if (this.modes.raw) this.setRaw(false);
    let seq = '';
    if (this.modes.autowrapOff) seq += AUTOWRAP_ON;
    if (this.modes.altScreen) seq += LEAVE_ALT_SCREEN;
    if (this.modes.hideCursor || this.modes.altScreen) seq += SHOW_CURSOR;
    // Even after a SIGHUP: a terminal that is still there (a `kill -HUP`) gets its modes back; a dead one's
    // write error is guarded.
    if (seq !== '' && !outputGone('stdout')) this.stdout.write(seq);
  }
}
