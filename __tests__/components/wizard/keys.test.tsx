import type React from 'react';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { Text } from 'ink';
import { KeyRouter, splitKeys } from '../../../components/common/keys.js';
import { List, type ListItem } from '../../../components/common/List.js';
import { TextField } from '../../../components/common/TextField.js';
import { App } from '../../../components/wizard/App.js';
import { called, frame, listening, standInDeps, type Rendered } from '../../helpers/ink.js';
import { QuestionScreen } from '../../../components/wizard/QuestionScreen.js';
import { Indicator, PlainItem } from '../../../components/wizard/parts.js';
import { question, withDefaults, type Question } from '../../../src/config/questions.js';
import type { ModelEntry } from '../../../src/estimate/models.js';
import { modelEntry } from '../../helpers/fixtures.js';

const DOWN = '\x1b[B';
const LEFT = '\x1b[D';

const items = (names: string[]): ListItem[] => names.map((n) => ({ key: n, value: n, label: n }));

/** Two lists in a row: choosing in the first shows the second (like one question after another). */
function TwoLists({ onSecond }: { onSecond: (v: string) => void }): React.JSX.Element {
  const [first, setFirst] = useState<string | null>(null);
  if (first === null) {
    return (
      <List
        items={items(['a1', 'a2', 'a3'])}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(i) => setFirst(i.value)}
      />
    );
  }
  return (
    <>
      <Text>second list</Text>
      <List
        items={items(['b1', 'b2', 'b3'])}
        renderIndicator={Indicator}
        renderItem={PlainItem}
        onSelect={(i) => onSecond(`${first}/${i.value}`)}
      />
    </>
  );
}

/** A text field holding its own value. */
function Field({ onSubmit }: { onSubmit: (v: string) => void }): React.JSX.Element {
  const [v, setV] = useState('');
  return <TextField value={v} onChange={setV} onSubmit={onSubmit} />;
}

describe('keys typed faster than a frame', () => {
  it('splits text that arrives as one event into one key per character, and leaves special keys whole', () => {
    expect(splitKeys('2\r', {} as never).map(([i, k]) => [i, k.return])).toEqual([
      ['2', false],
      ['', true],
    ]);
    // A list takes "2" as its second entry; the rest belongs to the screen that choice opens.
    expect(splitKeys('2c10d\r', {} as never).map(([i, k]) => (k.return ? '⏎' : i))).toEqual([
      '2',
      'c',
      '1',
      '0',
      'd',
      '⏎',
    ]);
    expect(splitKeys('é🙂', {} as never).map(([i]) => i)).toEqual(['é', '🙂']);
    expect(splitKeys('', { downArrow: true } as never)).toHaveLength(1);
    expect(splitKeys('x', { meta: true } as never)).toHaveLength(1);
  });

  it('a Ctrl+letter behind another key in the same read is still that Ctrl+letter (Backspace, then Ctrl+G)', () => {
    const keys = splitKeys('\x7f\x07a\x01', {} as never).map(([i, k]) => [i, !!k.backspace, !!k.ctrl]);
    expect(keys).toEqual([
      ['', true, false],
      ['g', false, true],
      ['a', false, false],
      ['a', false, true],
    ]);
  });

  it('two downs and Enter in one chunk move twice, then choose', async () => {
    const onSelect = vi.fn();
    const r = render(
      <KeyRouter>
        <List
          items={items(['x', 'y', 'z'])}
          renderIndicator={Indicator}
          renderItem={PlainItem}
          onSelect={(i) => onSelect(i.value)}
        />
      </KeyRouter>,
    );
    await listening(r);
    r.stdin.write(`${DOWN}${DOWN}\r`);
    await called(r, onSelect);
    expect(onSelect).toHaveBeenCalledWith('z');
    r.unmount();
  });

  it('keys sent with the Enter that opens a new list reach the new list', async () => {
    const onSecond = vi.fn();
    const r = render(
      <KeyRouter>
        <TwoLists onSecond={onSecond} />
      </KeyRouter>,
    );
    // Enter picks a1; the down and the Enter after it arrive before the second list has drawn
    await listening(r);
    r.stdin.write(`\r${DOWN}\r`);
    await called(r, onSecond);
    expect(onSecond).toHaveBeenCalledWith('a1/b2');
    r.unmount();
  });

  it('a long paste (more keys than React lets updates nest) is typed whole, then submitted', async () => {
    const onSubmit = vi.fn();
    const r = render(
      <KeyRouter>
        <Field onSubmit={onSubmit} />
      </KeyRouter>,
    );
    await listening(r);
    const text = `${'/scratch/cache/qwen-image-'.repeat(6)}end`;
    r.stdin.write(`${'\x7f'.repeat(10)}${text}\r`);
    await called(r, onSubmit);
    expect(onSubmit).toHaveBeenCalledWith(text);
    r.unmount();
  });

  it('a pasted answer with its Enter ("2\\r") is typed, then submitted', async () => {
    const onAnswer = vi.fn();
    const q = question('num_machines') as Question;
    const r = render(
      <KeyRouter>
        <QuestionScreen
          q={q}
          answers={withDefaults({})}
          given={{}}
          env={{ gpuCount: 8, gpuMemoryBytes: null, cpuMemoryBytes: null }}
          width={80}
          help={false}
          isActive
          models={[]}
          onAnswer={onAnswer}
          onDraft={() => undefined}
        />
      </KeyRouter>,
    );
    await listening(r);
    r.stdin.write('\x7f2\r');
    await called(r, onAnswer);
    expect(onAnswer).toHaveBeenCalledWith({ num_machines: 2 });
    r.unmount();
  });
});

const MODELS: ModelEntry[] = [
  modelEntry({ id: 'tiny', name: 'Tiny-1B', params: 1e9, largestLayer: 5e7 }),
  modelEntry({ id: 'big', name: 'Big-20B', params: 2e10, largestLayer: 6e8 }),
];

const standIn = () => standInDeps({ loadModels: () => MODELS });

/** Renders the whole wizard and walks with Enter to the model picker. */
async function toModelPicker(): Promise<{ r: Rendered; onExit: ReturnType<typeof vi.fn> }> {
  const onExit = vi.fn();
  const r = render(<App deps={standIn()} onExit={onExit} />);
  await frame(r, (f) => f.includes('8 GPUs (stand-in)') && f.includes('New setup'));
  await listening(r);
  for (const [prompt, next] of [
    ['New setup', 'How many machines'],
    ['How many machines', 'Check distributed'],
    ['Check distributed', 'torch dynamo'],
    ['torch dynamo', 'How many parameters'],
  ] as const) {
    await frame(r, (f) => f.includes(prompt));
    r.stdin.write('\r');
    await frame(r, (f) => f.includes(next));
  }
  await frame(r, (f) => f.includes('Big-20B'));
  return { r, onExit };
}

describe('the model picker behaves like the other lists', () => {
  it('← goes back one question', async () => {
    const { r } = await toModelPicker();
    r.stdin.write(LEFT);
    await frame(r, (f) => f.includes('torch dynamo') && !f.includes('How many parameters'));
    r.unmount();
  });

  it('r opens the review and q quits', async () => {
    const { r, onExit } = await toModelPicker();
    r.stdin.write('r');
    await frame(r, (f) => f.includes('Review:'));
    r.stdin.write('q');
    await called(r, onExit);
    expect(onExit.mock.calls[0]![0]).toMatchObject({ code: 0 });
    r.unmount();
  });

  it('once "type a parameter count" is chosen, the field takes q and ← as text', async () => {
    const { r, onExit } = await toModelPicker();
    r.stdin.write(`${DOWN}${DOWN}\r`);
    await frame(r, (f) => f.includes('Enter accept · Esc back'));
    r.stdin.write('q');
    await frame(r, (f) => /❯ .*q/.test(f));
    expect(onExit).not.toHaveBeenCalled();
    r.unmount();
  });
});

describe('help', () => {
  it('Esc closes the help and stays on the question; a second Esc goes back', async () => {
    const { r } = await toModelPicker();
    r.stdin.write('?');
    await frame(r, (f) => f.includes('(? closes this help · g: glossary)'));
    r.stdin.write('\x1b');
    await frame(r, (f) => !f.includes('(? closes this help · g: glossary)'));
    expect(r.lastFrame()).toContain('How many parameters');
    r.stdin.write('\x1b');
    await frame(r, (f) => f.includes('torch dynamo') && !f.includes('How many parameters'));
    r.unmount();
  });
});

describe('the ZeRO question starts its preview on the highlighted row', () => {
  it('a ↓ typed the moment the question shows moves the highlight, and the picture (and the preview) follow it', async () => {
    const onExit = vi.fn();
    const r = render(<App deps={standIn()} onExit={onExit} />);
    await frame(r, (f) => f.includes('8 GPUs (stand-in)') && f.includes('New setup'));
    await listening(r);
    for (let i = 0; i < 40 && !(r.lastFrame() ?? '').includes('Which ZeRO mode'); i++) {
      const before = r.lastFrame();
      r.stdin.write('\r');
      await frame(r, (f) => f !== before);
    }
    // The start row and the next one, as the list draws them.
    const f = await frame(r, (x) => x.includes('Which ZeRO mode') && /❯ ZeRO-/.test(x));
    const rows = f.split('\n').filter((l) => /^(❯| ) ZeRO-/.test(l));
    const at = rows.findIndex((l) => l.startsWith('❯'));
    const next = rows[(at + 1) % rows.length]!.slice(2, 21).trim();
    r.stdin.write(`${DOWN}p`);
    const picture = await frame(r, (x) => x.includes('per GPU and per node'));
    expect(picture.split('\n').find((l) => l.includes('per GPU and per node'))).toMatch(new RegExp(`^${next} · `));
    r.unmount();
  });

  it("after ↓ the help's Default names the recommendation, and the highlighted row that Enter chooses", async () => {
    const r = render(<App deps={standIn()} onExit={vi.fn()} />);
    await frame(r, (f) => f.includes('8 GPUs (stand-in)') && f.includes('New setup'));
    await listening(r);
    for (let i = 0; i < 40 && !(r.lastFrame() ?? '').includes('Which ZeRO mode'); i++) {
      const before = r.lastFrame();
      r.stdin.write('\r');
      await frame(r, (f) => f !== before);
    }
    const f = await frame(r, (x) => x.includes('Which ZeRO mode') && /❯ ZeRO-/.test(x));
    const rows = f.split('\n').filter((l) => /^(❯| ) ZeRO-/.test(l));
    const at = rows.findIndex((l) => l.startsWith('❯'));
    const next = rows[(at + 1) % rows.length]!.slice(2, 21).trim();
    r.stdin.write(DOWN);
    await frame(r, (x) => x.includes(`❯ ${next}`));
    r.stdin.write('?');
    const help = await frame(r, (x) => x.includes('Default: '));
    expect(help.replace(/\s+/g, ' ')).toMatch(
      new RegExp(`Default: ZeRO-[^(]+\\(the recommendation for your model\\); Enter chooses ${next} +\\(\\? closes`),
    );
    r.unmount();
  });
});
