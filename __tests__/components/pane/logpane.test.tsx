import { describe, expect, it } from 'vitest';
import xterm from '@xterm/headless';
import { RunModel } from '../../../src/pane/model.js';
import { Pane, type PaneOptions } from '../../../components/pane/pane.js';
import { parseKeys } from '../../../src/pane/keys.js';
import { RowBuilder, keyHints, textWidth } from '../../../src/pane/view.js';
import { commandFor, initialPaneState, paneReducer, visibleRows, type LinesView } from '../../../src/pane/state.js';
import { parseProgress } from '../../../src/observe/logparse.js';
import { RunWatch } from '../../../src/observe/watch.js';
import { GpuTelemetry } from '../../../src/observe/telemetry.js';

function view(lines: string[], height: number, first = 0): LinesView {
  return { first, end: first + lines.length, at: (abs) => lines[abs - first], height };
}
const lines = Array.from({ length: 100 }, (_, i) => `line ${i}${i % 10 === 0 ? ' loss=0.5' : ''}`);

describe('pane reducer (no rendering)', () => {
  it('follows by default, pauses when scrolled up, resumes at the bottom', () => {
    const v = view(lines, 10);
    let s = initialPaneState();
    expect(visibleRows(s, v, '', 80).map((r) => r.text)).toEqual(lines.slice(90));
    s = paneReducer(s, { type: 'scroll', delta: -5, view: v });
    expect(s.follow).toBe(false);
    expect(visibleRows(s, v, '', 80)[0]?.text).toBe('line 85');
    s = paneReducer(s, { type: 'scroll', delta: 9, view: v });
    expect(s.follow).toBe(true);
    s = paneReducer(s, { type: 'top', view: v });
    expect(visibleRows(s, v, '', 80)[0]?.text).toBe('line 0 loss=0.5');
  });

  it('searches backwards from the screen on Enter, then n/N move and wrap around', () => {
    const v = view(lines, 10);
    let s = paneReducer(initialPaneState(), { type: 'searchStart' });
    for (const ch of 'LOSS') s = paneReducer(s, { type: 'searchInput', text: ch.toLowerCase() });
    s = paneReducer(s, { type: 'searchCommit', view: v });
    expect(s.search).toMatchObject({ match: 90, note: 'match 10 of 10' });
    s = paneReducer(s, { type: 'searchMove', dir: -1, view: v });
    expect(s.search).toMatchObject({ match: 80, note: 'match 9 of 10' });
    s = paneReducer(s, { type: 'searchMove', dir: 1, view: v });
    s = paneReducer(s, { type: 'searchMove', dir: 1, view: v });
    expect(s.search).toMatchObject({ match: 0, note: 'match 1 of 10, search wrapped' });
  });

  it('wraps long lines into rows and keeps the newest rows when following', () => {
    const v = view(['x'.repeat(25), 'short'], 3);
    const s = paneReducer(initialPaneState(), { type: 'toggleWrap' });
    expect(visibleRows(s, v, '', 10).map((r) => r.text)).toEqual(['x'.repeat(10), 'x'.repeat(5), 'short']);
  });

  it('maps keys to named commands', () => {
    expect(commandFor('', { upArrow: true })).toBe('up');
    expect(commandFor('', { pageDown: true })).toBe('pageDown');
    expect(commandFor('G', {})).toBe('bottom');
    expect(commandFor('', { tab: true, shift: true })).toBe('prevStep');
    expect(commandFor('c', { ctrl: true })).toBe('quit');
  });
});

/** A pane drawing into a headless xterm, the way a user's terminal shows it. */
function mount(
  model: RunModel,
  size = { columns: 100, rows: 20 },
  extra: Partial<PaneOptions> & { detachable?: boolean } = {},
) {
  const term = new xterm.Terminal({ cols: size.columns, rows: size.rows, allowProposedApi: true, scrollback: 0 });
  const writes: string[] = [];
  const calls = { stop: 0, killNow: 0, detach: 0, exit: [] as number[] };
  const clock = Date.now();
  // What run.ts writes before the first frame.
  term.write('\x1b[?7l');
  const pane = new Pane({
    model,
    controls: {
      stop: () => void calls.stop++,
      killNow: () => void calls.killNow++,
      ...(extra.detachable ? { detach: () => void calls.detach++ } : {}),
    },
    onExit: (code) => void calls.exit.push(code),
    title: 't',
    grace: { sigintMs: 5000, sigtermMs: 5000 },
    // A clock that stands still: the elapsed times drawn do not change between two frames of a test.
    now: () => clock,
    size: () => size,
    write: (d) => {
      writes.push(d);
      term.write(d);
    },
    ...extra,
  });
  const lines = async () => {
    await new Promise<void>((r) => term.write('', r));
    const b = term.buffer.active;
    return Array.from({ length: size.rows }, (_, i) => b.getLine(i)?.translateToString(true) ?? '');
  };
  const screen = async () => (await lines()).join('\n');
  /** The cell at (row, col) of the screen. */
  const cell = async (row: number, col: number) => {
    await lines();
    return term.buffer.active.getLine(row)!.getCell(col)!;
  };
  return { pane, term, writes, calls, lines, screen, cell };
}

function runningModel(): RunModel {
  const model = new RunModel([
    { name: 'data_process', logPath: 'a.log', command: '' },
    { name: 'train', logPath: 'b.log', command: '' },
  ]);
  model.stepStart(0, { pid: 1, startedAt: Date.now() - 3000 });
  return model;
}

describe('the pane (drawn into a headless terminal)', () => {
  it('shows steps, the log, the progress bar with rate/ETA and the loss row with its sparkline', async () => {
    const model = runningModel();
    const watch = new RunWatch({ steps: [{ name: 'data_process' }, { name: 'train' }] });
    model.line(0, '[INFO] Setting ds_accelerator to cuda');
    model.line(0, '\u001b[31mred\u001b[0m is never printed raw'.replace(/\u001b\[\d+m/g, ''));
    model.partial(0, '  3%|▎         | 30/1000 [00:05<02:41,  6.00it/s, loss=0.1234]');
    model.progress(0, parseProgress('  3%|▎         | 30/1000 [00:05<02:41,  6.00it/s, loss=0.1234]')!);
    for (const v of [0.9, 0.7, 0.5, 0.3, 0.4]) watch.steps[0]!.metrics.loss(v, 'tqdm');
    const m = mount(model, undefined, {
      live: { watch, telemetry: null, noTelemetry: 'not here', estimateBytes: null },
    });
    m.pane.draw();
    const frame = await m.screen();
    expect(frame).toMatch(/▶ 1\. data_process +running +3\.\ds/);
    expect(frame).toMatch(/· 2\. train +pending/);
    expect(frame).toContain('Setting ds_accelerator to cuda');
    expect(frame).toMatch(/3% 30\/1000 6\.00it\/s ETA 02:41/);
    expect(frame).toMatch(/loss 0\.4000 · min 0\.3000 · tqdm █▆▃▁▂ recent/);
    expect(frame).toContain('no GPU telemetry: not here');
    expect(frame).toContain('follow on · wrap off');
    // The last row stays free.
    expect((await m.lines())[19]).toBe('');
    // Styles are SGR sequences the terminal applies, never text on screen.
    expect(frame).not.toMatch(/\[\d+m/);
    expect((await m.cell(1, 3)).getFgColor()).toBe(6); // ▶ in cyan
  });

  it('writes only the rows that changed', async () => {
    const model = runningModel();
    for (let i = 0; i < 30; i++) model.line(0, `line ${i}`);
    const m = mount(model);
    m.pane.draw();
    const before = m.writes.length;
    m.pane.draw();
    expect(m.writes.length).toBe(before); // nothing changed: nothing written
    m.pane.key('w', {});
    m.pane.draw();
    const last = m.writes.at(-1)!;
    // Only the status row (row 18 of 20) changed.
    expect(last.match(/\x1b\[\d+;1H/g)).toEqual(['\x1b[18;1H']);
    expect(await m.screen()).toContain('wrap on');
    model.line(0, 'line 30');
    m.pane.draw();
    const screen = await m.screen();
    expect(screen).toContain('line 30');
    expect(screen).not.toContain('line 17\n');
    expect(screen).toMatch(/data_process · 31 lines/);
  });

  it('highlights search matches in inverse, the current one in yellow', async () => {
    const model = runningModel();
    for (let i = 0; i < 30; i++) model.line(0, i % 10 === 0 ? `step ${i} loss=0.5` : `step ${i}`);
    const m = mount(model);
    m.pane.draw();
    m.pane.input('/loss\r');
    const screen = await m.screen();
    expect(screen).toContain('search "loss"');
    expect(screen).toContain('follow paused');
    const rows = await m.lines();
    const r20 = rows.findIndex((l) => l.startsWith('step 20 loss'));
    const r10 = rows.findIndex((l) => l.startsWith('step 10 loss'));
    expect(r20).toBeGreaterThan(0);
    const hit = await m.cell(r20, 'step 20 '.length);
    expect(hit.isInverse()).toBeTruthy();
    expect(hit.getFgColor()).toBe(3); // yellow: the current match
    expect((await m.cell(r20, 0)).isInverse()).toBeFalsy();
    if (r10 > 0) {
      const other = await m.cell(r10, 'step 10 '.length);
      expect(other.isInverse()).toBeTruthy();
      expect(other.getFgColor()).not.toBe(3);
    }
    m.pane.input('\x1b');
    expect(await m.screen()).not.toContain('search "loss"');
  });

  it('asks before stopping, stops on y, and keeps running on any other key', async () => {
    const model = runningModel();
    const m = mount(model);
    m.pane.draw();
    m.pane.input('q');
    // Whole, every answer in it: the signals' details go when the row is too narrow for them (100 columns here).
    expect(await m.screen()).toContain('Stop the run? y/q/Ctrl+C: stop · any other key: keep running');
    m.pane.input('x');
    expect(await m.screen()).not.toContain('Stop the run?');
    expect(m.calls.stop).toBe(0);
    m.pane.input('\x03');
    m.pane.input('y');
    expect(m.calls.stop).toBe(1);
    model.stopping();
    m.pane.input('\x03');
    expect(m.calls.killNow).toBe(1);
  });

  it('Tab shows the next step; a run that ended by itself waits for q (failed or not), one stopped from the pane closes it', async () => {
    const model = runningModel();
    model.line(0, 'first pass output');
    const m = mount(model);
    m.pane.draw();
    m.pane.input('\t');
    expect(await m.screen()).toMatch(/── train · 0 lines/);
    expect(await m.screen()).toContain('this step has not started');
    m.pane.input('\x1b[Z');
    expect(await m.screen()).toMatch(/── data_process · 1 lines/);
    const r = { status: 'failed' as const, exitCode: 3, signal: null, startedAt: 0, endedAt: 1000 };
    model.stepEnd(0, r);
    model.end({ outcome: 'failed', exitCode: 1, failedStep: 0, results: [r, null] });
    m.pane.draw();
    expect(await m.screen()).toMatch(/✘ 1\. data_process +failed .* exit 3/);
    expect(await m.screen()).toContain('[failed: q to close]');
    expect(m.calls.exit).toEqual([]);
    m.pane.input('q');
    expect(m.calls.exit).toEqual([1]);

    // Its end is read first: the pane closes on q.
    const done = runningModel();
    const m2 = mount(done);
    done.end({ outcome: 'succeeded', exitCode: 0, failedStep: null, results: [] });
    m2.pane.draw();
    expect(await m2.screen()).toContain('[all steps done: q to close]');
    expect(m2.calls.exit).toEqual([]);
    m2.pane.input('q');
    expect(m2.calls.exit).toEqual([0]);

    // Stopped from this pane (q, then y): it closes as the run ends.
    const stopped = runningModel();
    const m3 = mount(stopped);
    m3.pane.draw();
    m3.pane.input('q');
    m3.pane.input('y');
    expect(m3.calls.stop).toBe(1);
    stopped.end({ outcome: 'interrupted', exitCode: 130, failedStep: 0, results: [] });
    m3.pane.draw();
    expect(m3.calls.exit).toEqual([130]);
  });

  it('after a failure the progress row says where the bar stopped, not an ETA that will never come', async () => {
    const model = runningModel();
    const bar = '  3%|▎         | 30/1000 [00:05<02:41,  6.00it/s, loss=0.1234]';
    model.partial(0, bar);
    model.progress(0, parseProgress(bar)!);
    const m = mount(model);
    m.pane.draw();
    const progress = async () => (await m.lines()).find((l) => l.includes('░') && l.includes('30/1000')) ?? '';
    expect(await progress()).toMatch(/ETA 02:41/);
    const r = { status: 'failed' as const, exitCode: 1, signal: null, startedAt: 0, endedAt: 5000 };
    model.stepEnd(0, r);
    model.end({ outcome: 'failed', exitCode: 1, failedStep: 0, results: [r, null] });
    m.pane.draw();
    const after = await progress();
    expect(after).not.toMatch(/ETA/);
    expect(after).toMatch(/3% 30\/1000 .*failed here/);
  });

  it('redraws everything after a resize, at the new size', async () => {
    const model = runningModel();
    for (let i = 0; i < 50; i++) model.line(0, `line ${i}`);
    const size = { columns: 100, rows: 20 };
    const m = mount(model, size);
    m.pane.draw();
    size.rows = 30;
    m.term.resize(100, 30);
    m.term.write('\x1b[2J');
    m.pane.resize();
    await m.screen();
    const rows = m.term.buffer.active;
    const text = Array.from({ length: 30 }, (_, i) => rows.getLine(i)?.translateToString(true) ?? '');
    expect(text.filter((l) => /^line \d+$/.test(l))).toHaveLength(30 - 1 - (1 + 2 + 1 + 2 + 1 + 1));
    expect(text[28]).toMatch(/^↑↓ PgUp/);
  });
});

describe('keys and widths', () => {
  it('splits a read into key presses', () => {
    const keys = parseKeys('/ab\r\x1b[A\x1b[B\x1b[5~\x1b[6~\x1b[H\x1b[4~\t\x1b[Z\x03\x7f\x1b[3~\x1b');
    expect(keys.map(([input]) => input).join('')).toBe('/abc');
    expect(keys.map(([, key]) => Object.keys(key).sort().join('+'))).toEqual([
      '',
      '',
      '',
      'return',
      'upArrow',
      'downArrow',
      'pageUp',
      'pageDown',
      'home',
      'end',
      'tab',
      'shift+tab',
      'ctrl',
      'backspace',
      'delete',
      'escape',
    ]);
    expect(parseKeys('\x1bOA')[0]![1]).toEqual({ upArrow: true });
    expect(parseKeys('\x1bx')[0]).toEqual(['x', { meta: true }]);
    expect(parseKeys('é😀')).toEqual([
      ['é', {}],
      ['😀', {}],
    ]);
  });

  it('cuts rows by terminal columns, wide characters counted twice', () => {
    expect(textWidth('abc')).toBe(3);
    expect(textWidth('日本語')).toBe(6);
    expect(textWidth('e\u0301')).toBe(1);
    expect(new RowBuilder(10).add('日本語日本語').toString()).toBe('日本語日…');
    expect(new RowBuilder(10).add('abcdefghijkl').toString()).toBe('abcdefghi…');
    expect(new RowBuilder(10).add('abcde', '\x1b[2m').add('fghij').toString()).toBe('\x1b[2mabcde\x1b[0mfghij');
  });

  it('a wide line never spills into the next row', async () => {
    const model = runningModel();
    model.line(0, '日本語'.repeat(40));
    model.line(0, 'next line');
    const m = mount(model);
    m.pane.draw();
    const rows = await m.lines();
    const k = rows.findIndex((l) => l.startsWith('日本語'));
    expect(rows[k]!.endsWith('…')).toBe(true);
    expect(rows[k + 1]).toBe('next line');
  });
});

describe('the pane over a run that outlives it (a Slurm job)', () => {
  const stopPrompt = 'Cancel Slurm job 12? y: scancel · d: leave it running · any other key: keep watching';

  it('shows the headline under the title, its tag instead of [running], and keeps the last row free', async () => {
    const model = runningModel();
    model.setHeadline({ text: 'Slurm job 12 · pending (Resources): waiting for nodes', tone: 'warn', tag: 'pending' });
    const m = mount(model, { columns: 100, rows: 20 }, { detachable: true, stopPrompt });
    m.pane.draw();
    const rows = await m.lines();
    expect(rows[0]).toMatch(/zerowiz launch t +\[pending\]/);
    expect(rows[1]).toBe('Slurm job 12 · pending (Resources): waiting for nodes');
    expect(rows[2]).toMatch(/▶ 1\. data_process/);
    expect(rows.at(-2)).toContain('q stop · d leave running');
    expect(rows[19]).toBe('');
    expect((await m.cell(1, 0)).getFgColor()).toBe(3); // warn: yellow
    // A local run has no headline row and no `d`.
    const local = mount(runningModel());
    local.pane.draw();
    expect((await local.lines())[1]).toMatch(/▶ 1\. data_process/);
    expect(await local.screen()).not.toContain('d leave running');
  });

  it('d leaves the pane (exit 0) and the run goes on; a local pane ignores d', async () => {
    const m = mount(runningModel(), undefined, { detachable: true, stopPrompt });
    m.pane.draw();
    m.pane.input('d');
    expect(m.calls).toMatchObject({ detach: 1, stop: 0, exit: [0] });
    const local = mount(runningModel());
    local.pane.draw();
    local.pane.input('d');
    expect(local.calls).toMatchObject({ stop: 0, exit: [] });
  });

  it('q asks the given question: y stops, d leaves, any other key keeps watching', async () => {
    const m = mount(runningModel(), undefined, { detachable: true, stopPrompt });
    m.pane.draw();
    m.pane.input('q');
    expect(await m.screen()).toContain('Cancel Slurm job 12? y: scancel');
    m.pane.input('x');
    expect(m.calls).toMatchObject({ stop: 0, detach: 0, exit: [] });
    m.pane.input('q');
    m.pane.input('d');
    expect(m.calls).toMatchObject({ stop: 0, detach: 1, exit: [0] });
    const m2 = mount(runningModel(), undefined, { detachable: true, stopPrompt });
    m2.pane.draw();
    m2.pane.input('q');
    m2.pane.input('y');
    expect(m2.calls).toMatchObject({ stop: 1, detach: 0 });
  });

  it('closeOnEnd false: a finished run stays open to read until q (attach to a finished job)', async () => {
    const model = runningModel();
    const m = mount(model, undefined, { detachable: true, closeOnEnd: false });
    model.end({ outcome: 'succeeded', exitCode: 0, failedStep: null, results: [] });
    m.pane.draw();
    expect(m.calls.exit).toEqual([]);
    m.pane.input('d');
    expect(m.calls.detach).toBe(0);
    m.pane.input('q');
    expect(m.calls.exit).toEqual([0]);
  });
});

describe('the live rows: metrics, alerts, GPU bars', () => {
  const GIB = 2 ** 30;
  /** Telemetry as nvidia-smi left it: the samples of eight 80 GiB GPUs (no process). */
  function gpus(usedGiB: number[]): GpuTelemetry {
    const t = new GpuTelemetry();
    t.state = 'running';
    for (const [index, u] of usedGiB.entries()) {
      t.latest.set(index, { index, usedBytes: u * GIB, totalBytes: 80 * GIB, utilPercent: index === 7 ? 0 : 97 });
    }
    return t;
  }
  function liveModel() {
    const model = runningModel();
    const watch = new RunWatch({ steps: [{ name: 'data_process' }, { name: 'train' }] });
    return { model, watch };
  }

  it('80x24: four GPUs a row, the estimate as ┃, green under it, yellow over it, red above 95%; utilisation', async () => {
    const { model, watch } = liveModel();
    const live = {
      watch,
      telemetry: gpus([20, 50, 77, 20, 20, 20, 20, 20]),
      noTelemetry: null,
      estimateBytes: 40 * GIB,
    };
    const m = mount(model, { columns: 80, rows: 24 }, { live });
    m.pane.draw();
    const rows = await m.lines();
    const r0 = rows.findIndex((l) => l.startsWith('0 '));
    // 7-cell bars: 20 GiB fills 2 cells, 50 GiB 4 (the 4th behind the marker), 77 GiB all 7.
    expect(rows[r0]).toBe('0 ██░┃░░░  20G  97% 1 ███┃░░░  50G  97% 2 ███┃███  77G  97% 3 ██░┃░░░  20G  97%');
    expect(rows[r0 + 1]).toBe('4 ██░┃░░░  20G  97% 5 ██░┃░░░  20G  97% 6 ██░┃░░░  20G  97% 7 ██░┃░░░  20G   0%');
    expect((await m.cell(r0, 2)).getFgColor()).toBe(2); // green: under the estimate
    expect((await m.cell(r0, 5)).getFgColor()).toBe(5); // the estimate's marker ...
    expect((await m.cell(r0, 5)).isBgDefault()).toBeTruthy(); // ... past the filled part
    expect((await m.cell(r0, 22)).getFgColor()).toBe(3); // yellow: over the estimate
    expect((await m.cell(r0, 25)).getBgColor()).toBe(3); // the marker inside the filled part
    expect((await m.cell(r0, 42)).getFgColor()).toBe(1); // red: above 95% of the GPU
    // Every row is used, the last one kept free.
    expect(rows[23]).toBe('');
    expect(rows[22]).toMatch(/q stop$/);
  });

  it('one dim row instead of the bars when there is no telemetry, with the reason', async () => {
    const { model, watch } = liveModel();
    const t = new GpuTelemetry();
    t.state = 'lost';
    t.reason = 'nvidia-smi exited with code 15 after 3 samples: GPU is lost';
    const m = mount(model, undefined, { live: { watch, telemetry: t, noTelemetry: null, estimateBytes: null } });
    m.pane.draw();
    const rows = await m.lines();
    const k = rows.findIndex((l) => l.startsWith('GPU telemetry lost: '));
    expect(rows[k]).toBe('GPU telemetry lost: nvidia-smi exited with code 15 after 3 samples: GPU is lost');
    expect((await m.cell(k, 0)).isDim()).toBeTruthy();
    const slurm = mount(liveModel().model, undefined, {
      live: { watch, telemetry: null, noTelemetry: "the GPUs are on the job's nodes", estimateBytes: null },
    });
    slurm.pane.draw();
    expect(await slurm.screen()).toContain("no GPU telemetry: the GPUs are on the job's nodes");
  });

  it('the newest alert of the step in inverse red (yellow for a warning); a lists every alert; Esc goes back', async () => {
    const { model, watch } = liveModel();
    const m = mount(
      model,
      { columns: 100, rows: 24 },
      { live: { watch, telemetry: null, noTelemetry: 'x', estimateBytes: null } },
    );
    watch.steps[0]!.metrics.loss(Number.NaN, 'tqdm');
    m.pane.draw();
    let rows = await m.lines();
    let k = rows.findIndex((l) => l.startsWith(' ALERT '));
    expect(rows[k]).toMatch(/^ ALERT loss is NaN \(tqdm\) +fix: lower the learning rate/);
    expect((await m.cell(k, 1)).isInverse()).toBeTruthy();
    expect((await m.cell(k, 1)).getFgColor()).toBe(3);
    watch.line(
      0,
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.00 GiB is free.',
    );
    m.pane.draw();
    rows = await m.lines();
    k = rows.findIndex((l) => l.startsWith(' ALERT '));
    expect(rows[k]).toMatch(/^ ALERT \(2\) CUDA out of memory on GPU 0 trying to allocate 2 GiB +fix: /);
    expect((await m.cell(k, 1)).getFgColor()).toBe(1);
    expect(rows.at(-2)).toContain('a alerts');
    m.pane.input('a');
    const list = await m.screen();
    expect(list).toContain('alerts of this run (2) · a or Esc: back to the log');
    expect(list).toMatch(/\d\d:\d\d:\d\d data_process: loss is NaN \(tqdm\)\n {2}fix: lower the learning rate/);
    expect(list).toMatch(/data_process: CUDA out of memory on GPU 0 trying to allocate 2 GiB\n {2}fix: /);
    m.pane.input('\x1b');
    expect(await m.screen()).toMatch(/── data_process · 0 lines/);
  });

  it("the alert list shows the trainer's line with its own spacing (only the fix is wrapped at words)", async () => {
    const { model, watch } = liveModel();
    const m = mount(
      model,
      { columns: 100, rows: 24 },
      { live: { watch, telemetry: null, noTelemetry: 'x', estimateBytes: null } },
    );
    watch.line(0, '[rank0]:    torch.OutOfMemoryError:  CUDA out of memory. Tried to allocate 2.00 GiB.');
    m.pane.input('a');
    const list = await m.screen();
    expect(list).toContain('  [rank0]:    torch.OutOfMemoryError:  CUDA out of memory. Tried to allocate 2.00 GiB.');
  });

  it('s switches the sparkline between the recent values and the whole step', async () => {
    const { model, watch } = liveModel();
    const metrics = watch.steps[0]!.metrics;
    // 2,000 values: falling, then a late bump that only the recent view shows at full height.
    for (let i = 0; i < 2000; i++) metrics.loss(i < 1990 ? 2 - i / 1000 : 1.5, 'tqdm');
    const m = mount(model, undefined, { live: { watch, telemetry: null, noTelemetry: 'x', estimateBytes: null } });
    m.pane.draw();
    const row = async () => (await m.lines()).find((l) => l.startsWith('loss '))!;
    const recent = await row();
    expect(recent).toMatch(/^loss 1\.5000 · min 0\.0110 · tqdm (\S+) recent/);
    m.pane.input('s');
    const all = await row();
    expect(all).toMatch(/^loss 1\.5000 · min 0\.0110 · tqdm (\S+) whole step/);
    // The whole step starts high (2.0) and falls: its first cell is the top one.
    expect(/tqdm (\S)/.exec(all)?.[1]).toBe('█');
    expect(/tqdm (\S)/.exec(recent)?.[1]).not.toBe('█');
  });

  it("the side panel says at which step the smallest loss came (it said 'at value #31')", async () => {
    const { model, watch } = liveModel();
    const metrics = watch.steps[0]!.metrics;
    // loss.csv rows every 10 steps: the smallest loss is the 31st row, at step 310.
    for (let i = 1; i <= 40; i++) metrics.csvRow(i * 10, 'loss', i === 31 ? 0.1643 : 0.5 + i / 100);
    const m = mount(
      model,
      { columns: 160, rows: 30 },
      { live: { watch, telemetry: null, noTelemetry: 'x', estimateBytes: null } },
    );
    m.pane.draw();
    expect(await m.screen()).toMatch(/min\s+0\.1643 at step 310/);
    // A source without steps (a log line's loss=) says which value it was.
    const other = liveModel();
    for (let i = 1; i <= 5; i++) other.watch.steps[0]!.metrics.loss(i === 3 ? 0.2 : 1, 'log');
    const n = mount(
      other.model,
      { columns: 160, rows: 30 },
      {
        live: { watch: other.watch, telemetry: null, noTelemetry: 'x', estimateBytes: null },
      },
    );
    n.pane.draw();
    expect(await n.screen()).toMatch(/min\s+0\.2000 at loss value 3 of 5/);
  });
});

describe('key hints', () => {
  it('leave out the least important hints first, never q', () => {
    const items = [
      ['↑↓ PgUp/PgDn g/G scroll', 6],
      ['f follow', 5],
      ['w wrap', 7],
      ['q stop', 1],
    ] as const;
    expect(keyHints(items, 80)).toBe('↑↓ PgUp/PgDn g/G scroll · f follow · w wrap · q stop');
    expect(keyHints(items, 45)).toBe('↑↓ PgUp/PgDn g/G scroll · f follow · q stop');
    expect(keyHints(items, 40)).toBe('f follow · q stop');
    expect(keyHints(items, 30)).toBe('f follow · q stop');
    expect(keyHints(items, 5)).toBe('q stop');
  });
});

describe('the pane at 80 columns', () => {
  it("the stop question reads whole, with all its answers, and the log row keeps the log's file name", async () => {
    const log =
      '/home/researcher/projects/DiffSynth-Studio/.zerowiz/runs/20261203-182533-qwen-image-lora-lowvram/01-data_process.log';
    const model = new RunModel([
      { name: 'data_process', logPath: log, command: '' },
      { name: 'train', logPath: 'b.log', command: '' },
    ]);
    model.stepStart(0, { pid: 1, startedAt: Date.now() - 3000 });
    const stopPrompt =
      'Stop the run? y/q/Ctrl+C: stop (SIGINT, SIGTERM after 10s, SIGKILL 5s later) · d: leave it running · any other key: keep watching';
    const m = mount(model, { columns: 80, rows: 24 }, { detachable: true, stopPrompt });
    m.pane.draw();
    const rule = (await m.lines()).find((l) => l.startsWith('── data_process'))!;
    expect(rule).toMatch(/ · log .*01-data_process\.log ─*$/);
    m.pane.input('q');
    const screen = await m.screen();
    expect(screen).toContain('Stop the run? y: stop it · d: leave it running · any other key: keep watching');
  });
});
