import { describe, expect, it } from 'vitest';
import { render } from 'ink-testing-library';
import { App, type AppDeps } from '../../../components/wizard/App.js';
import { PassThrough } from 'node:stream';
import { earlyStartKeys, paintStartFrame, startFrameLines } from '../../../components/wizard/startText.js';
import { standInDeps } from '../../helpers/ink.js';

const never = new Promise<never>(() => undefined);
const deps: AppDeps = standInDeps({
  detect: () => never, // the first frame: detection has not answered
  ready: never, // ... nor have the presets been read (no count is shown yet)
  importConfig: () => {
    throw new Error('unused');
  },
  defaultConfigPath: '/home/u/.cache/huggingface/accelerate/default_config.yaml',
});

describe('the start screen painted before Ink loads', () => {
  it('is the frame the wizard draws, line for line', () => {
    const r = render(<App deps={deps} onExit={() => undefined} />);
    // ink-testing-library's stdout is 100 columns; rows fall back to 24
    const drawn = r
      .lastFrame()!
      .split('\n')
      .map((l) => l.trimEnd());
    const painted = startFrameLines(100, 24, deps);
    expect(painted).not.toBeNull();
    expect(drawn).toEqual(painted);
    r.unmount();
  });

  it('with another entry highlighted (↓ answered before Ink loaded), is the frame the wizard then draws', () => {
    for (const index of [1, 4]) {
      const r = render(<App deps={deps} startIndex={index} onExit={() => undefined} />);
      const drawn = r
        .lastFrame()!
        .split('\n')
        .map((l) => l.trimEnd());
      const painted = startFrameLines(100, 24, deps, index);
      expect(painted![2 + index]).toMatch(/^❯ /);
      expect(drawn).toEqual(painted);
      r.unmount();
    }
  });

  it('puts each line at its row, hides the cursor and leaves it at the top; nothing when the prompt would wrap', () => {
    const out = paintStartFrame(80, 24, deps, false)!;
    expect(out.startsWith('\x1b[?25l')).toBe(true);
    expect(out.endsWith('\x1b[H')).toBe(true);
    expect(out).toMatch(/\x1b\[3;1H\x1b\[2K❯ (\x1b\[1m)?New setup/);
    expect(out).toMatch(/\x1b\[23;1H\x1b\[2K↑↓ move · Enter choose/); // the last row stays free, as in Ink's frame
    expect(out).not.toMatch(/\x1b\[3[0-9]m/); // no colour when asked for none
    expect(paintStartFrame(60, 24, deps)).toBeNull();
  });
});

describe('keys answered on the painted frame, before Ink', () => {
  it('↑/↓ (and k/j) move the highlight at once; the first other key and all after it are left for the wizard', async () => {
    const stdin = new PassThrough() as unknown as NodeJS.ReadStream;
    const painted: number[] = [];
    const early = earlyStartKeys(stdin, (i) => painted.push(i));
    const settle = () => new Promise((r) => setImmediate(r));
    (stdin as unknown as PassThrough).write('\x1b[B\x1b[B');
    await settle();
    (stdin as unknown as PassThrough).write('k\x1bOBj');
    await settle();
    expect(painted).toEqual([2, 3]); // a repaint per read: down, down; then up, down, down
    (stdin as unknown as PassThrough).write('\x1b[A\r2');
    await settle();
    (stdin as unknown as PassThrough).write('x');
    await settle();
    const { index, rest } = early.stop();
    expect(index).toBe(2);
    expect(rest?.toString('latin1')).toBe('\r2x');
    // ↑ from the first entry wraps to the last, as the list does.
    const other = new PassThrough();
    const again = earlyStartKeys(other as unknown as NodeJS.ReadStream, () => undefined);
    other.write('\x1b[A');
    await settle();
    expect(again.stop()).toEqual({ index: 4, rest: null });
  });
});
