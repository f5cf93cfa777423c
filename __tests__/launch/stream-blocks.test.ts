// Runs of finished lines handed over in one go (LineSink.lines, PipelineListener.lines/needsLines): the flood's
// fast path must tell every subscriber exactly what the line-by-line path tells it, in the same order, and fall
// back to it whenever a subscriber reacts to a line (an alert, a metric) or a line may be a tqdm bar.
import { describe, expect, it } from 'vitest';
import { LineSplitter, MAX_DISPLAY_LINE_CHARS, forEachLine, type LineSink } from '../../src/observe/lines.js';
import {
  mayHoldNonFiniteLoss,
  mayHoldProgress,
  mayBeProgress,
  parseLoss,
  type Progress,
  splitGluedBar,
} from '../../src/observe/logparse.js';
import { RunModel } from '../../src/pane/model.js';
import { StepOutput } from '../../src/observe/step-output.js';
import type { PipelineListener } from '../../src/observe/events.js';
import { StreamPrinter } from '../../src/launch/stream.js';
import { RunWatch } from '../../src/observe/watch.js';
import type { Alert } from '../../src/observe/alerts.js';

const LOG_LINE = (i: number) =>
  `[2026-05-01 12:00:00,123] [INFO] [engine.py:2100:step] step=${i} loss=${(1 / (1 + i)).toFixed(4)} lr=1.00e-04`;
const BAR = (pct: number) =>
  `Steps: ${String(pct).padStart(3)}%|${'█'.repeat(Math.floor(pct / 10)).padEnd(10)}| ${pct}/100 [00:01<00:01, 99.00it/s, loss=0.1234]`;

/** Feeds chunks through a splitter into a sink; returns the lines it saw, runs expanded, and how many runs. */
function split(chunks: (string | Buffer)[], withRuns: boolean): { lines: string[]; runs: number } {
  const lines: string[] = [];
  let runs = 0;
  const sink: LineSink = { line: (t) => lines.push(t), partial: () => {} };
  if (withRuns)
    sink.lines = (text) => {
      runs++;
      forEachLine(text, (t) => lines.push(t));
    };
  const s = new LineSplitter();
  for (const c of chunks) s.feed(c, sink);
  s.flush(sink);
  return { lines, runs };
}

/** A deterministic pseudo-random generator (tests must not depend on luck). */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
}

describe('the splitter hands runs of clean lines over in one go', () => {
  it('gives the same lines as line by line, however the bytes are cut, for clean and unclean output', () => {
    const rand = rng(7);
    const pieces = [
      ...Array.from({ length: 300 }, (_, i) => `${LOG_LINE(i)}\n`),
      'tab\there\n',
      '\x1b[32mgreen\x1b[0m line\n',
      `${'x'.repeat(MAX_DISPLAY_LINE_CHARS + 10)}\n`,
      'ünïcödé ✓ line\n',
      `\r${BAR(1)}\r${BAR(2)}\n`,
      'last without newline',
    ];
    const bytes = Buffer.from(pieces.join(''));
    for (let round = 0; round < 20; round++) {
      const cuts: number[] = [];
      for (let p = 0; p < bytes.length; p += 1 + Math.floor(rand() * 4000)) cuts.push(p);
      const chunks = cuts.map((c, k) => bytes.subarray(c, cuts[k + 1] ?? bytes.length));
      const perLine = split(chunks, false);
      const withRuns = split(chunks, true);
      expect(withRuns.lines).toEqual(perLine.lines);
      expect(withRuns.runs).toBeGreaterThan(0);
    }
  });

  it('never gives a run with a control character, a tab or an overlong line in it', () => {
    const seen: string[] = [];
    const sink: LineSink = { line: () => {}, lines: (t) => seen.push(t), partial: () => {} };
    const s = new LineSplitter();
    s.feed(Buffer.from('plain one\nplain two\n'), sink);
    s.feed(Buffer.from('a\x1b[1mbold\x1b[0m\nok\n'), sink);
    s.feed(Buffer.from('a\ttab\nok\n'), sink);
    s.feed(Buffer.from(`short\n${'y'.repeat(MAX_DISPLAY_LINE_CHARS + 1)}\n`), sink);
    expect(seen).toEqual(['plain one\nplain two']);
  });
});

describe('a run of lines through the step output', () => {
  interface Heard {
    events: string[];
  }
  /** A subscriber that records what it hears; `runs` makes it take runs of lines in one go. */
  function listener(name: string, heard: Heard, opts: { runs?: boolean; needs?: (t: string) => boolean } = {}) {
    const l: PipelineListener = {
      line: (_i, t, p) => heard.events.push(`${name} line ${t}${p ? ` (bar ${p.percent}%)` : ''}`),
      progress: (_i, p: Progress) => heard.events.push(`${name} progress ${p.percent}%`),
    };
    if (opts.runs) l.lines = (_i, t) => forEachLine(t, (x) => heard.events.push(`${name} line ${x}`));
    if (opts.needs) l.needsLines = (_i, t) => opts.needs!(t);
    return l;
  }

  function feed(listeners: PipelineListener[], text: string): void {
    const out = new StepOutput(0, () => listeners);
    const s = new LineSplitter();
    const sink = out.sink();
    s.feed(Buffer.from(text), sink);
    s.flush(sink);
  }

  const text = `${LOG_LINE(1)}\n${LOG_LINE(2)}\n${LOG_LINE(3)}\n`;

  it('tells a subscriber without `lines` every line, and one with it the same lines', () => {
    const heard: Heard = { events: [] };
    feed([listener('a', heard), listener('b', heard, { runs: true })], text);
    const a = heard.events.filter((e) => e.startsWith('a ')).map((e) => e.slice(2));
    const b = heard.events.filter((e) => e.startsWith('b ')).map((e) => e.slice(2));
    expect(a).toEqual([1, 2, 3].map((i) => `line ${LOG_LINE(i)}`));
    expect(b).toEqual(a);
  });

  it('goes line by line for every subscriber, in order, when one of them needs it', () => {
    const heard: Heard = { events: [] };
    feed(
      [listener('a', heard, { runs: true }), listener('b', heard, { runs: true, needs: (t) => t.includes('step=2') })],
      text,
    );
    // Interleaved per line: a reaction to line 2 (an alert) keeps its place among the lines.
    expect(heard.events).toEqual([1, 2, 3].flatMap((i) => [`a line ${LOG_LINE(i)}`, `b line ${LOG_LINE(i)}`]));
  });

  it('parses a finished bar among the lines and reports its progress, as line by line does', () => {
    const heard: Heard = { events: [] };
    feed([listener('a', heard, { runs: true })], `${LOG_LINE(1)}\n${BAR(40)}\n${LOG_LINE(2)}\n`);
    expect(heard.events).toEqual([
      `a line ${LOG_LINE(1)}`,
      `a line ${BAR(40)} (bar 40%)`,
      'a progress 40%',
      `a line ${LOG_LINE(2)}`,
    ]);
  });

  it('finds a bar line wherever it is in a run (mayHoldProgress agrees with mayBeProgress line by line)', () => {
    const samples = [
      '',
      'a',
      ']',
      'x]',
      'x] ',
      'x]  \nb',
      'a\n[b] c',
      'a\n\nb',
      '\n',
      'a\nx]',
      '[x]\n[y] z',
      ' ]',
      'x]\u00a0',
      'x] \u2003',
      'x]\u00a0y',
    ];
    for (const a of samples)
      for (const b of samples) {
        const t = `${a}\n${b}`;
        const lines: string[] = [];
        forEachLine(t, (l) => lines.push(l));
        expect([t, mayHoldProgress(t)]).toEqual([t, lines.some(mayBeProgress)]);
      }
    // Whatever white space follows the `]`: what trim() takes off, as stream mode compares a bar's last line.
    for (const ws of [' ', '\t', '\u00a0', '\u2003', '\u3000', '\ufeff', ' \u00a0 '])
      expect([ws, mayBeProgress(`${BAR(40)}${ws}`), mayHoldProgress(`a\n${BAR(40)}${ws}\nb`)]).toEqual([
        ws,
        true,
        true,
      ]);
    expect(mayBeProgress(`${BAR(40)}\u00a0x`)).toBe(false);
  });
});

describe("the watch's test of a run of lines", () => {
  function fed(lines: string[], opts: { tqdmFirst?: boolean } = {}) {
    const alerts: Alert[] = [];
    const watch = new RunWatch({ steps: [{ name: 'train' }], onAlert: (a) => alerts.push(a) });
    const out = new StepOutput(0, () => [watch]);
    const sink = out.sink();
    const s = new LineSplitter();
    // tqdm's bar first, as the log has it: a redraw, then the lines (the next line ends the bar's).
    if (opts.tqdmFirst) s.feed(Buffer.from(`\r${BAR(5)}\n`), sink);
    s.feed(Buffer.from(`${lines.join('\n')}\n`), sink);
    return { watch, alerts };
  }

  it('takes each log line loss while no better source has spoken', () => {
    const { watch } = fed([LOG_LINE(1), LOG_LINE(3)]);
    const m = watch.steps[0]!.metrics;
    expect(m.lossSource).toBe('log');
    expect(m.lossCount).toBe(2);
    expect(m.lastLoss).toBe(0.25);
  });

  it('still raises the NaN alert for a log line when tqdm gives the loss', () => {
    const { watch, alerts } = fed([LOG_LINE(1), 'step=2 loss=nan lr=1e-4', LOG_LINE(3)], { tqdmFirst: true });
    expect(watch.steps[0]!.metrics.lossSource).toBe('tqdm');
    expect(alerts.map((a) => a.id)).toEqual(['nan-loss']);
  });

  it('reads Trainer dicts and alert lines inside a run', () => {
    // None of these lines ends in `]` (as a bar would): only the watch's own test sends them line by line.
    const { watch, alerts } = fed(
      [
        LOG_LINE(1),
        "{'loss': 0.5, 'grad_norm': 0.52, 'learning_rate': 0.0001, 'epoch': 0.5}",
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.',
        LOG_LINE(2),
      ],
      { tqdmFirst: true },
    );
    expect(watch.steps[0]!.metrics.lossSource).toBe('hf');
    expect(alerts.map((a) => a.id)).toContain('cuda-oom');
  });

  it("reads DeepSpeed's step report inside a run", () => {
    const { watch } = fed(
      [
        LOG_LINE(1),
        '[2026-05-01 12:00:00,123] [INFO] [logging.py:128:log_dist] [Rank 0] step=40, skipped=2, lr=[0.0001], mom=[(0.9, 0.999)]',
      ],
      { tqdmFirst: true },
    );
    expect(watch.steps[0]!.metrics.optimizerStep).toBe(40);
  });

  it('lets a run without anything for the watch through without a per-line parse', () => {
    const { watch } = fed([LOG_LINE(1)], { tqdmFirst: true });
    expect(watch.needsLines(0, `${LOG_LINE(2)}\n${LOG_LINE(3)}`)).toBe(false);
    expect(watch.needsLines(0, `${LOG_LINE(2)}\nloss = -Inf`)).toBe(true);
  });

  it('mayHoldNonFiniteLoss holds every line whose parseLoss is NaN or infinite', () => {
    const rand = rng(11);
    const parts = [
      'loss',
      'Loss',
      'train_loss',
      'avr_loss',
      'val_loss',
      "'loss'",
      '"loss"',
      'boss',
      ' ',
      '=',
      ':',
      ' = ',
      "'",
      '"',
    ];
    const values = ['nan', 'NaN', 'inf', '-inf', '+Inf', 'INF', '0.5', '1e3', '-2', 'nanx', 'info', '.5', 'nan.'];
    let nonFinite = 0;
    for (let n = 0; n < 5000; n++) {
      let line = '';
      const k = 1 + Math.floor(rand() * 6);
      for (let j = 0; j < k; j++) line += parts[Math.floor(rand() * parts.length)];
      line += values[Math.floor(rand() * values.length)];
      if (rand() < 0.3) line += parts[Math.floor(rand() * parts.length)];
      const v = parseLoss(line);
      if (v !== null && !Number.isFinite(v)) {
        nonFinite++;
        expect([line, mayHoldNonFiniteLoss(line)]).toEqual([line, true]);
        expect([line, mayHoldNonFiniteLoss(`${LOG_LINE(1)}\n${line}\n${LOG_LINE(2)}`)]).toEqual([line, true]);
      }
    }
    expect(nonFinite).toBeGreaterThan(100);
  });
});

describe('stream mode and the pane model take runs of lines', () => {
  it('prints a run exactly as line by line, and leaves out a bar final state among them', () => {
    let runs = 0;
    const printOf = (useRuns: boolean, text: string) => {
      let out = '';
      const p = new StreamPrinter({ write: (t) => (out += t) }, ['train'], { now: () => 0 });
      p.progress(0, { ...barProgress(40), text: BAR(40) });
      if (useRuns) {
        // Runs reach stream mode through the step output, which tells a run that may hold a bar line by line.
        const printer: PipelineListener = {
          line: (i, t) => p.line(i, t),
          lines: (i, t) => {
            runs++;
            p.lines(i, t);
          },
          progress: (i, x) => p.progress(i, x),
        };
        const sink = new StepOutput(0, () => [printer]).sink();
        const s = new LineSplitter();
        s.feed(Buffer.from(`${text}\n`), sink);
        s.flush(sink);
      } else forEachLine(text, (t) => p.line(0, t));
      p.flush();
      return out;
    };
    const plain = `${LOG_LINE(1)}\n${LOG_LINE(2)}`;
    expect(printOf(true, plain)).toBe(printOf(false, plain));
    expect(runs).toBe(1);
    const withBar = `${LOG_LINE(1)}\n${BAR(40)}\n${LOG_LINE(2)}`;
    expect(printOf(true, withBar)).toBe(printOf(false, withBar));
    expect(printOf(true, withBar).match(/40%/g)).toHaveLength(1);
    // A bar line with other white space after its `]` than spaces (the regexes and the trim allow any).
    for (const ws of ['\u00a0', '\u3000 ', '\ufeff']) {
      const odd = `${LOG_LINE(1)}\n${BAR(40)}${ws}\n${LOG_LINE(2)}`;
      expect(printOf(true, odd)).toBe(printOf(false, odd));
      expect(printOf(true, odd).match(/40%/g)).toHaveLength(1);
    }
  });

  it('keeps the same ring of lines and count as line by line', () => {
    const text = Array.from({ length: 25 }, (_, i) => LOG_LINE(i)).join('\n');
    const a = new RunModel([{ name: 'train', logPath: null, command: 'x' }], 10);
    const b = new RunModel([{ name: 'train', logPath: null, command: 'x' }], 10);
    a.lines(0, text);
    forEachLine(text, (t) => b.line(0, t));
    expect(a.steps[0]!.lines.tail(10)).toEqual(b.steps[0]!.lines.tail(10));
    expect(a.steps[0]!.lines.total).toBe(25);
    expect(a.version).toBeGreaterThan(0);
  });
});

function barProgress(pct: number): Progress {
  return {
    desc: 'Steps',
    percent: pct,
    n: pct,
    total: 100,
    elapsedS: 1,
    remainingS: 1,
    ratePerS: 99,
    rateText: '99.00it/s',
    postfix: 'loss=0.1234',
    loss: 0.1234,
    text: BAR(pct),
  };
}

describe("one log for a step's stdout and stderr (as the terminal shows them)", () => {
  it("a line written while tqdm's bar was the open line is told as a line of its own, and the bar as a redraw", () => {
    const seen: string[] = [];
    const progress: number[] = [];
    const out = new StepOutput(0, () => [
      { line: (_i, t) => void seen.push(t), progress: (_i, p) => void progress.push(p.n) },
    ]);
    const s = new LineSplitter();
    s.feed(
      Buffer.from(
        `\r  5%|▌         | 5/100 [00:00<00:02, 43.26it/s][2026-12-02 08:49:00,961] [INFO] [Rank 0] step=10, skipped=0\n\r 10%|█         | 10/100 [00:00<00:02, 44.22it/s]\n`,
      ),
      out.sink(),
    );
    expect(seen).toEqual([
      '[2026-12-02 08:49:00,961] [INFO] [Rank 0] step=10, skipped=0',
      ' 10%|█         | 10/100 [00:00<00:02, 44.22it/s]',
    ]);
    expect(progress).toEqual([5, 10]);
    expect(splitGluedBar('plain line')).toBeNull();
    expect(splitGluedBar(' 10%|█         | 10/100 [00:00<00:02, 44.22it/s]')).toBeNull();
  });
});

describe("stream mode's output when its reader stops reading", () => {
  it('drops lines past the backlog limit, counts them, and says so once the reader takes them again', () => {
    let backlog = 0;
    const written: string[] = [];
    const p = new StreamPrinter({ write: (t) => void written.push(t), backlog: () => backlog }, ['train']);
    p.line(0, 'first');
    p.flush();
    backlog = 2 * 1024 * 1024;
    for (let i = 0; i < 10; i++) p.line(0, `dropped ${i}`);
    p.flush();
    expect(p.dropped).toBe(10);
    backlog = 0;
    p.line(0, 'after');
    p.flush();
    expect(written.join('')).toMatch(
      /^\[train\] +first\n\[zerowiz\] 10 line\(s\) not shown here: stdout was not read fast enough \(the run went on; the step logs have every line\)\n\[train\] +after\n$/,
    );
  });
});
