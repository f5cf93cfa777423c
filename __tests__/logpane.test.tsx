import { describe, expect, it } from 'vitest';
import React from 'react';
import { render } from 'ink-testing-library';
import stripAnsi from 'strip-ansi';
import { RunModel } from '../src/launch/model.js';
import { LogPane } from '../components/launch/LogPane.js';
import { commandFor, initialPaneState, paneReducer, visibleRows, type LinesView } from '../components/launch/state.js';
import { parseProgress } from '../src/launch/logparse.js';

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
    expect(s.search.match).toBe(90);
    s = paneReducer(s, { type: 'searchMove', dir: -1, view: v });
    expect(s.search.match).toBe(80);
    s = paneReducer(s, { type: 'searchMove', dir: 1, view: v });
    s = paneReducer(s, { type: 'searchMove', dir: 1, view: v });
    expect(s.search).toMatchObject({ match: 0, note: 'search wrapped' });
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

describe('the pane (ink-testing-library)', () => {
  it('shows steps, the log, the progress bar with rate/ETA and the loss sparkline', () => {
    const model = new RunModel([{ name: 'data_process', logPath: 'a.log', command: '' }, { name: 'train', logPath: 'b.log', command: '' }]);
    model.stepStart(0, { pid: 1, startedAt: Date.now() - 3000 });
    model.line(0, '[INFO] Setting ds_accelerator to cuda');
    model.line(0, '\u001b[31mred\u001b[0m is never printed raw'.replace(/\u001b\[\d+m/g, ''));
    model.partial(0, '  3%|▎         | 30/1000 [00:05<02:41,  6.00it/s, loss=0.1234]');
    model.progress(0, parseProgress('  3%|▎         | 30/1000 [00:05<02:41,  6.00it/s, loss=0.1234]')!);
    for (const v of [0.9, 0.7, 0.5, 0.3]) model.loss(0, v);
    const r = render(<LogPane model={model} controls={{ stop: () => {}, killNow: () => {} }} onExit={() => {}} title="t" size={{ columns: 100, rows: 20 }} />);
    const frame = stripAnsi(r.lastFrame() ?? '');
    expect(frame).toMatch(/▶ 1\. data_process +running/);
    expect(frame).toMatch(/· 2\. train +pending/);
    expect(frame).toContain('Setting ds_accelerator to cuda');
    expect(frame).toMatch(/3% 30\/1000 6\.00it\/s ETA 02:41/);
    expect(frame).toMatch(/loss 0\.3000 █▆▃▁/);
    expect(frame.split('\n').length).toBeLessThan(20);
    r.unmount();
  });
});
