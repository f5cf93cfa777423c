import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { Screen } from '../../src/proc/terminal.js';

/** A terminal's two ends as the Screen uses them: what was written, and the raw-mode calls. */
function fakeTerminal() {
  const written: string[] = [];
  const raw: boolean[] = [];
  const stdout = Object.assign(new EventEmitter(), {
    isTTY: true,
    columns: 120,
    rows: 40,
    destroyed: false,
    write: (s: string) => written.push(s) > 0,
  });
  const stdin = Object.assign(new EventEmitter(), {
    isTTY: true,
    setRawMode: (on: boolean) => raw.push(on),
    resume: () => undefined,
    pause: () => undefined,
  });
  return {
    io: { stdin: stdin as unknown as NodeJS.ReadStream, stdout: stdout as unknown as NodeJS.WriteStream },
    written,
    raw,
  };
}

describe('the terminal lifecycle', () => {
  it('enters the modes it is asked for and restores each exactly once, on whichever way out comes first', () => {
    const t = fakeTerminal();
    const before = process.listeners('exit');
    const screen = Screen.open(
      { altScreen: true, hideCursor: true, autowrapOff: true, clear: true, raw: true, catchCrash: false },
      t.io,
    );
    expect(t.written.join('')).toBe('\x1b[?1049h\x1b[?25l\x1b[?7l\x1b[2J');
    expect(t.raw).toEqual([true]);
    expect(screen.size()).toEqual({ columns: 120, rows: 40 });
    // process.exit() runs the 'exit' listeners: the screen's own one restores it there.
    const added = process.listeners('exit').filter((f) => !before.includes(f));
    expect(added).toHaveLength(1);
    (added[0] as () => void)();
    screen.restore();
    expect(t.written.slice(1).join('')).toBe('\x1b[?7h\x1b[?1049l\x1b[?25h');
    expect(t.raw).toEqual([true, false]);
    expect(process.listeners('exit')).toEqual(before);
  });

  it('stops reading keys and listening for resizes when restored', () => {
    const t = fakeTerminal();
    const screen = Screen.open({ raw: true, catchCrash: false }, t.io);
    const keys: string[] = [];
    let resizes = 0;
    screen.onInput((d) => keys.push(d));
    screen.onResize(() => resizes++);
    t.io.stdin.emit('data', Buffer.from('q'));
    t.io.stdout.emit('resize');
    screen.restore();
    t.io.stdin.emit('data', Buffer.from('x'));
    t.io.stdout.emit('resize');
    expect(keys).toEqual(['q']);
    expect(resizes).toBe(1);
  });
});
