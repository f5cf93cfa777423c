import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../../../components/wizard/App.js';
import { modelEntry } from '../../helpers/fixtures.js';
import { frame, listening, standInDeps } from '../../helpers/ink.js';

// tradeoffOf and glossaryView as they are, counted.
const counted = vi.hoisted(() => ({ calls: 0, glossary: 0 }));
vi.mock('../../../src/wizard/glossary.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/wizard/glossary.js')>();
  return {
    ...real,
    glossaryView: (...args: Parameters<typeof real.glossaryView>) => {
      counted.glossary++;
      return real.glossaryView(...args);
    },
  };
});
vi.mock('../../../src/wizard/tradeoff.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/wizard/tradeoff.js')>();
  return {
    ...real,
    tradeoffOf: (...args: Parameters<typeof real.tradeoffOf>) => {
      counted.calls++;
      return real.tradeoffOf(...args);
    },
  };
});

const DOWN = '\x1b[B';

/** The wizard on the ZeRO question, with a model to estimate. */
async function onModeQuestion() {
  const r = render(
    <App
      deps={standInDeps({
        loadModels: () => [modelEntry({ id: 'tiny', name: 'Tiny-1B', params: 1e9, largestLayer: 5e7 })],
      })}
      onExit={vi.fn()}
    />,
  );
  await frame(r, (f) => f.includes('8 GPUs (stand-in)') && f.includes('New setup'));
  await listening(r);
  for (let i = 0; i < 40 && !(r.lastFrame() ?? '').includes('Which ZeRO mode'); i++) {
    const before = r.lastFrame();
    r.stdin.write('\r');
    await frame(r, (f) => f !== before);
  }
  await frame(r, (x) => x.includes('Which ZeRO mode') && /❯ ZeRO-/.test(x));
  return r;
}

describe('the ZeRO table is computed once per answers', () => {
  it('opening and closing the help or the picture on the ZeRO question computes no table', async () => {
    const r = await onModeQuestion();
    const before = counted.calls;
    expect(before).toBeGreaterThan(0);
    r.stdin.write('?');
    await frame(r, (x) => x.includes('Default: '));
    r.stdin.write('?');
    await frame(r, (x) => !x.includes('Default: ') && x.includes('Which ZeRO mode'));
    r.stdin.write('p');
    await frame(r, (x) => x.includes('per GPU and per node'));
    r.stdin.write('\x1b');
    await frame(r, (x) => !x.includes('per GPU and per node') && x.includes('Which ZeRO mode'));
    expect(counted.calls).toBe(before);
    r.unmount();
  });
});

describe('the glossary window', () => {
  it('is built once per scroll key, for the keys and the view alike', async () => {
    const r = await onModeQuestion();
    r.stdin.write('?');
    await frame(r, (x) => x.includes('Default: '));
    r.stdin.write('g');
    const open = await frame(r, (x) => x.includes('Glossary · lines'));
    const at = /Glossary · lines (\d+)-/.exec(open)![1];
    const before = counted.glossary;
    r.stdin.write(DOWN);
    await frame(r, (x) => x.includes('Glossary · lines') && !x.includes(`Glossary · lines ${at}-`));
    expect(counted.glossary).toBe(before + 1);
    r.unmount();
  });
});
