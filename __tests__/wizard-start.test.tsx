import { describe, expect, it } from 'vitest';
import { render } from 'ink-testing-library';
import { App, type AppDeps } from '../components/wizard/App.js';
import { paintStartFrame, startFrameLines } from '../components/wizard/startText.js';
import { standInDeps } from './helpers/ink.js';

const never = new Promise<never>(() => undefined);
const deps: AppDeps = standInDeps({
  detect: () => never, // the first frame: detection has not answered
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

  it('puts each line at its row, hides the cursor and leaves it at the top; nothing when the prompt would wrap', () => {
    const out = paintStartFrame(80, 24, deps, false)!;
    expect(out.startsWith('\x1b[?25l')).toBe(true);
    expect(out.endsWith('\x1b[H')).toBe(true);
    expect(out).toMatch(/\x1b\[3;1H❯ (\x1b\[1m)?New setup/);
    expect(out).toMatch(/\x1b\[23;1H↑↓ Enter/); // the last row stays free, as in Ink's frame
    expect(out).not.toMatch(/\x1b\[3[0-9]m/); // no colour when asked for none
    expect(paintStartFrame(60, 24, deps)).toBeNull();
  });
});
