import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../components/wizard/App.js';
import { frame, listening, standInDeps } from './helpers/ink.js';

// previewOf as it is, counted: the wizard loads the module lazily, so the spy is the one it gets.
const counted = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../src/wizard/preview.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/wizard/preview.js')>();
  return {
    ...real,
    previewOf: (...args: Parameters<typeof real.previewOf>) => {
      counted.calls++;
      return real.previewOf(...args);
    },
  };
});

describe('the preview is computed once per change of what it shows', () => {
  it('a key that changes no answer (Tab to the next preview tab) computes no preview', async () => {
    const r = render(<App deps={standInDeps()} onExit={vi.fn()} />);
    await frame(r, (f) => f.includes('8 GPUs (stand-in)') && f.includes('New setup'));
    await listening(r);
    r.stdin.write('\r');
    // The first question with its preview (the YAML tab).
    await frame(r, (f) => f.includes('How many machines') && f.includes('distributed_type'));
    const before = counted.calls;
    expect(before).toBeGreaterThan(0);
    r.stdin.write('\t');
    await frame(r, (f) => f.includes('How many machines') && f.includes('"zero_optimization"'));
    r.stdin.write('\t');
    await frame(r, (f) => f.includes('How many machines') && f.includes('# run your training script'));
    expect(counted.calls).toBe(before);
    r.unmount();
  });
});
