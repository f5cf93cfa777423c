import { describe, expect, it } from 'vitest';
import {
  parseInterval,
  parseLoss,
  parseProgress,
  parseRate,
  parseScaled,
  sparkline,
  formatLossPair,
} from '../../src/observe/logparse.js';
import { formatClock, formatTallyRate } from '../../src/text/format.js';
import { LineSplitter, RingBuffer, cleanLine, collapseCarriageReturns } from '../../src/observe/lines.js';

describe('tqdm progress parsing', () => {
  it('reads the default bar with a loss postfix (the DiffSynth-Studio shape)', () => {
    const p = parseProgress('  3%|▎         | 30/1000 [00:05<02:41,  6.00it/s, loss=0.1234]');
    expect(p).toMatchObject({
      desc: '',
      percent: 3,
      n: 30,
      total: 1000,
      elapsedS: 5,
      remainingS: 161,
      ratePerS: 6,
      rateText: '6.00it/s',
      postfix: 'loss=0.1234',
      loss: 0.1234,
    });
  });

  it('reads a described bar with seconds per iteration and an hour-long ETA', () => {
    const p = parseProgress('Epoch 1:  45%|████▌     | 450/1000 [1:02:03<1:15:00, 12.34s/it]');
    expect(p?.desc).toBe('Epoch 1');
    expect(p?.percent).toBe(45);
    expect(p?.elapsedS).toBe(3723);
    expect(p?.remainingS).toBe(4500);
    expect(p?.ratePerS).toBeCloseTo(1 / 12.34, 6);
    expect(p?.loss).toBeNull();
  });

  it('reads the first update, where tqdm prints ? for the ETA and the rate', () => {
    const p = parseProgress('Steps:   0%|          | 0/500 [00:00<?, ?it/s]');
    expect(p).toMatchObject({
      desc: 'Steps',
      percent: 0,
      n: 0,
      total: 500,
      remainingS: null,
      ratePerS: null,
      loss: null,
    });
  });

  it('reads unit_scale counts and byte rates', () => {
    const p = parseProgress('model.safetensors:  42%|████▏     | 4.20G/10.0G [00:30<00:41, 140MB/s]');
    expect(p?.n).toBe(4.2e9);
    expect(p?.total).toBe(10e9);
    expect(p?.ratePerS).toBe(140e6);
  });

  it('reads a bar whose postfix holds several values (set_postfix with a dict)', () => {
    const p = parseProgress('100%|██████████| 1000/1000 [02:41<00:00,  6.19it/s, loss=0.0311, lr=1e-4]');
    expect(p?.percent).toBe(100);
    expect(p?.loss).toBe(0.0311);
    expect(p?.postfix).toBe('loss=0.0311, lr=1e-4');
  });

  it('reads an unknown-total counter', () => {
    const p = parseProgress('Steps: 123it [00:01, 99.50it/s, loss=0.5]');
    expect(p).toMatchObject({
      desc: 'Steps',
      percent: null,
      n: 123,
      total: null,
      elapsedS: 1,
      ratePerS: 99.5,
      loss: 0.5,
    });
  });

  it('does not take ordinary log lines for bars', () => {
    expect(
      parseProgress(
        '[2026-05-01 12:00:00,123] [INFO] [comm.py:658:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl',
      ),
    ).toBeNull();
    expect(parseProgress('memory used: 45% | 12/24 GB [cuda:0]')).toBeNull();
    expect(parseProgress('')).toBeNull();
  });

  it('parses the pieces on their own', () => {
    expect(parseScaled('1.23k')).toBe(1230);
    expect(parseInterval('05:07')).toBe(307);
    expect(parseInterval('2d 1:00:00')).toBe(2 * 86400 + 3600);
    expect(parseInterval('?')).toBeNull();
    expect(parseRate('1.5kit/s')).toBe(1500);
    expect(parseRate('2.00s/it')).toBe(0.5);
    expect(parseRate('?it/s')).toBeNull();
    expect(formatClock(3723)).toBe('1:02:03');
    expect(formatClock(null)).toBe('--:--');
    expect(formatTallyRate(0.5)).toBe('2.00s/it');
  });
});

describe('loss parsing', () => {
  it('finds the loss in tqdm postfixes, HF-style dicts and DeepSpeed-style log lines', () => {
    expect(parseLoss('loss=0.1234')).toBe(0.1234);
    expect(parseLoss("{'loss': 1.0453, 'grad_norm': 0.52, 'learning_rate': 5e-05, 'epoch': 0.5}")).toBe(1.0453);
    expect(parseLoss('[2026-05-01 12:00:00,123] [INFO] [engine.py:2100:step] step=10, loss: 2.5e-3, lr=[0.0001]')).toBe(
      0.0025,
    );
    expect(parseLoss('train_loss=0.8')).toBe(0.8);
    expect(parseLoss('loss=nan')).toBeNaN();
  });

  it("reads kohya's averaged loss (avr_loss) and a signed infinity as Python prints it", () => {
    // sd-scripts / musubi-tuner: progress_bar.set_postfix(**{"avr_loss": avr_loss}) -> tqdm prints `avr_loss=0.123`.
    expect(parseLoss('steps:  10%|█         | 100/1000 [01:40<15:00,  1.00s/it, avr_loss=0.123]')).toBe(0.123);
    expect(parseLoss('avr_loss=nan')).toBeNaN();
    expect(parseLoss("{'loss': -inf, 'grad_norm': nan}")).toBe(-Infinity);
    expect(parseLoss('loss=inf')).toBe(Infinity);
    // Other prefixes stay out.
    expect(parseLoss('xavr_loss=0.5')).toBeNull();
    expect(parseLoss('mavg_loss=0.5')).toBeNull();
  });

  it('ignores values that are not the training loss', () => {
    expect(
      parseLoss('[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768'),
    ).toBeNull();
    expect(parseLoss('loss_scale=65536')).toBeNull();
    expect(parseLoss('val_loss=0.3')).toBeNull();
    expect(parseLoss('no numbers here')).toBeNull();
  });
});

describe('sparkline', () => {
  it('scales the last values between the lowest and highest', () => {
    expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8], 8)).toBe('▁▂▃▄▅▆▇█');
    expect(sparkline([5, 5, 5], 10)).toBe('▄▄▄');
    expect(sparkline([1, 2, 3, 4], 2)).toBe('▁█');
    expect(sparkline([], 5)).toBe('');
  });
});

describe('lines', () => {
  const collect = (chunks: (string | Buffer)[]) => {
    const s = new LineSplitter();
    const lines: string[] = [];
    const partials: string[] = [];
    const segments: string[] = [];
    const sink = {
      line: (t: string) => lines.push(t),
      partial: (t: string) => partials.push(t),
      segment: (b: Buffer, start: number, end: number) => segments.push(b.toString('utf8', start, end)),
    };
    for (const c of chunks) s.feed(c, sink);
    s.flush(sink);
    return { lines, partials, segments };
  };

  it('collapses \\r updates into one line, as a terminal shows it', () => {
    const bars = Array.from(
      { length: 1000 },
      (_, i) => `\r${String(Math.floor(i / 10)).padStart(3)}%|          | ${i}/1000 [00:00<00:00]`,
    ).join('');
    const { lines } = collect(['start\n', bars, '\n', 'after\n']);
    expect(lines).toEqual(['start', ' 99%|          | 999/1000 [00:00<00:00]', 'after']);
  });

  it('reports the open line at most once per chunk, and every \\r segment for thinning', () => {
    const { partials, segments } = collect(['\ra 1\ra 2', '\ra 3']);
    expect(partials).toEqual(['a 2', 'a 3']);
    expect(segments).toEqual(['a 1', 'a 2', 'a 3']);
  });

  it('joins a line split across chunks, and keeps a final line without newline', () => {
    expect(collect(['hel', 'lo\nwor', 'ld']).lines).toEqual(['hello', 'world']);
  });

  it('treats \\r\\n as a plain line end', () => {
    expect(collapseCarriageReturns('abc\r')).toBe('abc');
    expect(collect(['one\r\ntwo\r\n']).lines).toEqual(['one', 'two']);
  });

  it('strips ANSI colours, cursor moves and other control characters, expands tabs', () => {
    expect(cleanLine('\x1b[32m[INFO]\x1b[0m ok')).toBe('[INFO] ok');
    expect(cleanLine('\x1b[2J\x1b[Hclear\x07 me\x1b]0;title\x07')).toBe('clear me');
    expect(cleanLine('a\tb')).toBe('a       b');
  });

  it('keeps only the newest lines in the ring buffer and counts the dropped ones', () => {
    const r = new RingBuffer<number>(3);
    for (let i = 0; i < 10; i++) r.push(i);
    expect(r.length).toBe(3);
    expect(r.dropped).toBe(7);
    expect(r.total).toBe(10);
    expect(r.tail(5)).toEqual([7, 8, 9]);
    expect(r.at(0)).toBe(7);
    expect(r.slice(1, 3)).toEqual([8, 9]);
  });
});

describe('parseLoss, scanned by hand', () => {
  // The pattern the scanner replaced, kept as its specification.
  const SPEC = /loss['"]?\s*[=:]\s*['"]?([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf))(?![\w.])/iy;
  function bySpec(line: string): number | null {
    for (let j = line.indexOf('oss'); j !== -1; j = line.indexOf('oss', j + 3)) {
      const at = j - 1;
      if (at < 0 || (line[at] !== 'l' && line[at] !== 'L')) continue;
      const before = line.slice(Math.max(0, at - 6), at);
      if (
        at > 0 &&
        /\w/.test(line[at - 1]!) &&
        !/(?:^|\W)train[_ ]$/i.test(before) &&
        !/(?:^|\W)av[rg]_$/i.test(before)
      )
        continue;
      SPEC.lastIndex = at;
      const m = SPEC.exec(line);
      if (!m) continue;
      const t = m[1]!.toLowerCase();
      if (t.endsWith('nan')) return Number.NaN;
      if (t.endsWith('inf')) return t.startsWith('-') ? -Infinity : Infinity;
      return Number(t);
    }
    return null;
  }

  it('agrees with the regex it replaced on 20,000 generated lines', () => {
    const parts = ['loss', 'Loss', 'train_loss', 'val_loss', 'avr_loss', 'loss_scale', "'loss'", '"loss"', 'xloss'];
    const seps = ['=', ':', ' = ', ': ', "': ", '":"', ' ', '==', ''];
    const values = [
      '0.1234',
      '.5',
      '1.',
      '2.5e-3',
      '1e5',
      '3E+2',
      '1e+5x',
      '-0.25',
      '+3',
      'nan',
      'NaN',
      '-inf',
      'inf',
      'infinity',
      '1e',
      '1.2.3',
      '7x',
      '',
      'abc',
      '12,',
      '0.5]',
    ];
    const tails = ['', ',', ' ', ']', '}', '.', 'x', "'", ', lr=1e-4'];
    let seed = 42;
    const pick = <T>(xs: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return xs[seed % xs.length]!;
    };
    let disagreements = 0;
    const examples: string[] = [];
    for (let k = 0; k < 20_000; k++) {
      const line = `${pick(['', 'step=3 ', '[INFO] ', '{'])}${pick(parts)}${pick(seps)}${pick(values)}${pick(tails)}`;
      const a = parseLoss(line);
      const b = bySpec(line);
      if (!Object.is(a, b)) {
        disagreements++;
        if (examples.length < 5) examples.push(`${line} -> ${a} vs ${b}`);
      }
    }
    expect(examples).toEqual([]);
    expect(disagreements).toBe(0);
  });
});

describe('the loss as stream mode and `runs` print it', () => {
  it('is the last loss, with the lowest only when it is another value', () => {
    expect(formatLossPair(0.25, 0.25)).toBe('0.2500');
    expect(formatLossPair(0.3, 0.25)).toBe('0.3000 (min 0.2500)');
    expect(formatLossPair(0.3, null)).toBe('0.3000');
    expect(formatLossPair(Number.NaN, 0.25)).toBe('nan (min 0.2500)');
    expect(formatLossPair('inf', 0.25)).toBe('inf (min 0.2500)');
    expect(formatLossPair(12345, 12345)).toBe('1.23e+4');
  });
});
