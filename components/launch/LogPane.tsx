/**
 * The launch log pane: a step list (status, elapsed), the selected step's log (follow, scroll, search
 * with highlights, wrap), a tqdm progress bar with a loss sparkline, and key hints. Renders from the
 * RunModel at a capped frame rate; keys go through the keymap and the pure reducer in ./state.ts.
 */
import React, { useCallback, useEffect, useRef, useState } from 'react';
import { Box, Text, useInput, useStdout } from 'ink';
import type { RunModel, StepState } from '../../src/launch/model.js';
import { formatClock, formatCount, formatRate, sparkline } from '../../src/launch/logparse.js';
import { formatDuration } from '../../src/launch/stream.js';
import { SIGINT_GRACE_MS, SIGTERM_GRACE_MS } from '../../src/launch/group.js';
import { LOG_FRAME_INTERVAL_MS, type FrameStats } from './frames.js';
import { commandFor, highlightParts, initialPaneState, paneReducer, visibleRows, type KeyInfo, type LinesView, type PaneAction, type PaneState } from './state.js';

/** How often the pane redraws for new output at most (the full log goes to disk regardless). */
export { LOG_FRAME_INTERVAL_MS };
/** How often the pane looks at the model's version (a redraw happens only when one is due). */
const FRAME_TICK_MS = 50;
/** Redraw at least this often while a step runs, so elapsed times tick. */
const CLOCK_TICK_MS = 1_000;
/** Step rows shown at most (the list scrolls with the selection beyond that). */
const MAX_STEP_ROWS = 6;

/** What the pane can ask of the run. */
export interface PaneControls {
  stop(): void;
  killNow(): void;
}

/** Props of the pane. */
export interface LogPaneProps {
  model: RunModel;
  controls: PaneControls;
  /** Called once with the exit code when the pane is done (after the run ended). */
  onExit(code: number): void;
  title: string;
  /** Grace periods shown in the stop prompt. */
  grace?: { sigintMs: number; sigtermMs: number };
  /** Size override (tests); defaults to the terminal's. */
  size?: { columns: number; rows: number };
  /** Ink's frame times (fed by run.ts): redraws for new output are spaced to what frames cost. */
  frames?: FrameStats;
}

const STATUS_ICON: Record<StepState['status'], string> = { pending: '·', running: '▶', done: '✔', failed: '✘', stopped: '■' };
const STATUS_COLOR: Record<StepState['status'], string | undefined> = { pending: 'gray', running: 'cyan', done: 'green', failed: 'red', stopped: 'yellow' };

function linesView(step: StepState, height: number): LinesView {
  const ring = step.lines;
  return { first: ring.dropped, end: ring.total, at: (abs) => ring.at(abs - ring.dropped), height };
}

function useTerminalSize(override?: { columns: number; rows: number }): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => override ?? { columns: stdout.columns || 80, rows: stdout.rows || 24 };
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (override) return;
    const on = () => setSize(read());
    stdout.on('resize', on);
    return () => {
      stdout.off('resize', on);
    };
  }, [stdout, override]);
  return override ?? size;
}

/** The pane. */
export function LogPane({ model, controls, onExit, title, grace, size: sizeOverride, frames }: LogPaneProps): React.ReactElement {
  const size = useTerminalSize(sizeOverride);
  // The reducer state lives in a ref too, so keys that arrive before the next render see each other.
  const stateRef = useRef<PaneState>(initialPaneState());
  const [state, setState] = useState<PaneState>(stateRef.current);
  const dispatch = useCallback((a: PaneAction) => {
    const next = paneReducer(stateRef.current, a);
    if (next !== stateRef.current) {
      stateRef.current = next;
      setState(next);
    }
  }, []);
  const [, setFrame] = useState(0);
  const drawn = useRef(-1);
  const exited = useRef(false);
  const lastClock = useRef(0);

  // Capped frame rate: look at the model's version every FRAME_TICK_MS and redraw when it changed and a
  // frame is due (every LOG_FRAME_INTERVAL_MS, more apart when frames are slow); milestones draw at once.
  useEffect(() => {
    let lastDraw = 0;
    const tick = () => {
      const now = Date.now();
      const running = model.steps.some((s) => s.status === 'running');
      const due = now - lastDraw >= (frames ? frames.interval() : LOG_FRAME_INTERVAL_MS);
      if ((model.version !== drawn.current && due) || (running && now - lastClock.current >= CLOCK_TICK_MS)) {
        drawn.current = model.version;
        lastClock.current = now;
        lastDraw = now;
        setFrame((f) => f + 1);
      }
    };
    const timer = setInterval(tick, FRAME_TICK_MS);
    const off = model.onMilestone(() => setFrame((f) => f + 1));
    return () => {
      clearInterval(timer);
      off();
    };
  }, [model, frames]);

  const active = model.activeStep;
  useEffect(() => {
    dispatch({ type: 'autoStep', index: active });
  }, [active]);

  const outcome = model.outcome;
  useEffect(() => {
    if (!outcome || exited.current) return;
    // A finished or stopped run closes the pane; a failed one stays open to read the log (q closes it).
    if (outcome.outcome !== 'failed') {
      exited.current = true;
      onExit(outcome.exitCode);
    }
  }, [outcome, onExit]);

  // Layout: header, steps, rule, log, progress, status, keys; one row spare so Ink never clears the screen.
  const stepRows = Math.min(model.steps.length, MAX_STEP_ROWS);
  const logHeight = Math.max(3, size.rows - 1 - (1 + stepRows + 1 + 2 + 1 + 1));
  const selected = Math.min(state.selected, model.steps.length - 1);
  const step = model.steps[selected]!;
  const view = linesView(step, logHeight);

  const onKey = (input: string, key: KeyInfo & { meta?: boolean }) => {
    const state = stateRef.current;
    if (state.search.mode === 'input') {
      if (key.escape) dispatch({ type: 'searchCancel' });
      else if (key.return) dispatch({ type: 'searchCommit', view });
      else if (key.backspace || key.delete) dispatch({ type: 'searchBackspace' });
      else if (key.ctrl && input === 'c') dispatch({ type: 'searchCancel' });
      else if (input && !key.ctrl && !key.meta) dispatch({ type: 'searchInput', text: input });
      return;
    }
    const ended = model.outcome !== null;
    if (state.confirmStop) {
      if (input === 'y' || input === 'Y' || input === 'q' || (key.ctrl && input === 'c')) {
        dispatch({ type: 'confirmStop', on: false });
        controls.stop();
      } else dispatch({ type: 'confirmStop', on: false });
      return;
    }
    const cmd = commandFor(input, key);
    if (key.escape && state.search.mode === 'active') {
      dispatch({ type: 'searchCancel' });
      return;
    }
    switch (cmd) {
      case 'quit':
        if (ended) {
          if (!exited.current) {
            exited.current = true;
            onExit(model.outcome!.exitCode);
          }
        } else if (model.stoppingRequested) {
          if (key.ctrl && input === 'c') controls.killNow();
        } else dispatch({ type: 'confirmStop', on: true });
        return;
      case 'up': return dispatch({ type: 'scroll', delta: -1, view });
      case 'down': return dispatch({ type: 'scroll', delta: 1, view });
      case 'pageUp': return dispatch({ type: 'scroll', delta: -(logHeight - 1), view });
      case 'pageDown': return dispatch({ type: 'scroll', delta: logHeight - 1, view });
      case 'top': return dispatch({ type: 'top', view });
      case 'bottom': return dispatch({ type: 'bottom' });
      case 'follow': return dispatch({ type: 'toggleFollow', view });
      case 'wrap': return dispatch({ type: 'toggleWrap' });
      case 'nextStep': return dispatch({ type: 'selectStep', index: (selected + 1) % model.steps.length });
      case 'prevStep': return dispatch({ type: 'selectStep', index: (selected - 1 + model.steps.length) % model.steps.length });
      case 'searchStart': return dispatch({ type: 'searchStart' });
      case 'searchNext': return dispatch({ type: 'searchMove', dir: 1, view });
      case 'searchPrev': return dispatch({ type: 'searchMove', dir: -1, view });
      default:
        return;
    }
  };

  useInput((input, key) => {
    // Several plain keys in one read (typed fast, or pasted) are handled one by one.
    const plain = input.length > 1 && !key.ctrl && !key.meta && !key.escape && !input.includes('\x1b');
    if (plain) for (const ch of input.replace(/\r$/, '')) onKey(ch, {});
    else onKey(input, key);
    if (plain && input.endsWith('\r')) onKey('', { return: true });
  });

  const cols = Math.max(20, size.columns);
  const rows = visibleRows(state, view, step.open, cols);
  const now = Date.now();
  const firstStepRow = Math.max(0, Math.min(selected - Math.floor(MAX_STEP_ROWS / 2), model.steps.length - stepRows));
  const g = grace ?? { sigintMs: SIGINT_GRACE_MS, sigtermMs: SIGTERM_GRACE_MS };

  return (
    <Box flexDirection="column" width={cols}>
      <Header title={title} model={model} cols={cols} />
      {model.steps.slice(firstStepRow, firstStepRow + stepRows).map((s, k) => (
        <StepRow key={s.name + (firstStepRow + k)} step={s} index={firstStepRow + k} selected={firstStepRow + k === selected} now={now} cols={cols} />
      ))}
      <Text dimColor wrap="truncate-end">{ruleText(`${step.name} · ${step.lines.total} lines${step.lines.dropped > 0 ? ` (last ${step.lines.length} kept)` : ''} · log ${step.logPath ?? '-'}`, cols)}</Text>
      <Box flexDirection="column" height={logHeight}>
        {rows.map((r, k) => (
          <LogRow key={k} text={r.text} query={state.search.query} current={state.search.match === r.abs} open={r.abs === view.end} />
        ))}
      </Box>
      <ProgressRow step={step} cols={cols} />
      <Text dimColor wrap="truncate-end">{'─'.repeat(cols)}</Text>
      <StatusRow state={state} model={model} stepStatus={step.status} cols={cols} grace={g} />
      <Text dimColor wrap="truncate-end">
        {state.search.mode === 'input'
          ? 'Enter search · Esc cancel'
          : '↑↓ PgUp/PgDn g/G scroll · f follow · / search n/N · w wrap · Tab step · q ' + (model.outcome ? 'close' : 'stop')}
      </Text>
    </Box>
  );
}

function ruleText(label: string, cols: number): string {
  const text = `── ${label} `;
  return text.length >= cols ? text.slice(0, cols) : text + '─'.repeat(cols - text.length);
}

function Header({ title, model, cols }: { title: string; model: RunModel; cols: number }): React.ReactElement {
  const o = model.outcome;
  const state = o
    ? o.outcome === 'succeeded' ? 'all steps done' : o.outcome === 'failed' ? 'failed: q to close' : 'stopped'
    : model.stoppingRequested ? 'stopping…' : 'running';
  const color = o ? (o.outcome === 'succeeded' ? 'green' : o.outcome === 'failed' ? 'red' : 'yellow') : model.stoppingRequested ? 'yellow' : 'cyan';
  return (
    <Box width={cols}>
      <Text bold wrap="truncate-end">zerowiz launch {title} </Text>
      <Text color={color}>[{state}]</Text>
    </Box>
  );
}

function StepRow({ step, index, selected, now, cols }: { step: StepState; index: number; selected: boolean; now: number; cols: number }): React.ReactElement {
  const elapsed = step.startedAt === null ? '' : formatDuration((step.endedAt ?? now) - step.startedAt);
  const r = step.result;
  const extra = step.status === 'failed' && r ? (r.error ? ` ${r.error}` : r.signal ? ` signal ${r.signal}` : ` exit ${r.exitCode}`) : step.status === 'stopped' && r?.stopSignal && r.stopSignal !== 'none' ? ` by ${r.stopSignal}` : '';
  return (
    <Box width={cols}>
      <Text inverse={selected}>{selected ? '›' : ' '}</Text>
      <Text color={STATUS_COLOR[step.status]}> {STATUS_ICON[step.status]} </Text>
      <Text wrap="truncate-end">
        {`${index + 1}. ${step.name}`.padEnd(24)} {step.status.padEnd(8)} {elapsed.padStart(7)}{extra}
      </Text>
    </Box>
  );
}

const LogRow = React.memo(function LogRow({ text, query, current, open }: { text: string; query: string; current: boolean; open: boolean }): React.ReactElement {
  if (query === '' || !text) return <Text wrap="truncate-end" dimColor={open}>{text === '' ? ' ' : text}</Text>;
  const parts = highlightParts(text, query);
  return (
    <Text wrap="truncate-end" dimColor={open}>
      {parts.map((p, i) => (p.hit ? <Text key={i} inverse color={current ? 'yellow' : undefined}>{p.text}</Text> : <Text key={i}>{p.text}</Text>))}
    </Text>
  );
});

function ProgressRow({ step, cols }: { step: StepState; cols: number }): React.ReactElement {
  const p = step.progress;
  const lossNow = step.losses.length > 0 ? step.losses[step.losses.length - 1]! : null;
  const lossText = lossNow === null ? '' : `loss ${formatLoss(lossNow)} `;
  if (!p) {
    return <Text dimColor wrap="truncate-end">{step.status === 'running' ? `no progress bar yet${lossText ? ` · ${lossText}` : ''}` : lossText || ' '}</Text>;
  }
  const desc = p.desc ? `${p.desc} ` : '';
  const tail = p.percent !== null
    ? ` ${String(p.percent).padStart(3)}% ${formatCount(p.n)}/${formatCount(p.total ?? 0)} ${formatRate(p.ratePerS)} ETA ${formatClock(p.remainingS)}`
    : ` ${formatCount(p.n)}it ${formatRate(p.ratePerS)} elapsed ${formatClock(p.elapsedS)}`;
  const sparkWidth = Math.max(0, Math.min(40, Math.floor(cols / 4)));
  const spark = sparkline(step.losses, sparkWidth);
  const barWidth = p.percent !== null ? Math.max(5, Math.min(40, cols - desc.length - tail.length - lossText.length - spark.length - 6)) : 0;
  const filled = p.percent !== null ? Math.round((Math.min(100, p.percent) / 100) * barWidth) : 0;
  return (
    <Box width={cols}>
      <Text wrap="truncate-end">
        {desc}
        {p.percent !== null ? <Text color="cyan">{'█'.repeat(filled)}</Text> : null}
        {p.percent !== null ? <Text dimColor>{'░'.repeat(barWidth - filled)}</Text> : null}
        {tail}
        {lossText ? `  ${lossText}` : ''}
        <Text color="magenta">{spark}</Text>
      </Text>
    </Box>
  );
}

function formatLoss(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 1000 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : v.toFixed(4);
}

function StatusRow({ state, model, stepStatus, cols, grace }: { state: PaneState; model: RunModel; stepStatus: StepState['status']; cols: number; grace: { sigintMs: number; sigtermMs: number } }): React.ReactElement {
  if (state.confirmStop) {
    return (
      <Text color="yellow" bold wrap="truncate-end">
        {`Stop the run? y/q/Ctrl+C: stop (SIGINT, SIGTERM after ${grace.sigintMs / 1000}s, SIGKILL ${grace.sigtermMs / 1000}s later) · any other key: keep running`}
      </Text>
    );
  }
  if (state.search.mode === 'input') return <Text wrap="truncate-end">/{state.search.draft}<Text inverse> </Text></Text>;
  const parts = [
    state.follow ? 'follow on' : 'follow paused (f/G)',
    state.wrap ? 'wrap on' : 'wrap off',
    state.search.query ? `search "${state.search.query}"${state.search.note ? `: ${state.search.note}` : ''}` : state.search.note,
    model.stoppingRequested && !model.outcome ? 'stopping… Ctrl+C again kills at once' : '',
    stepStatus === 'pending' ? 'this step has not started' : '',
  ].filter((x) => x !== '');
  return <Text wrap="truncate-end">{parts.join(' · ').slice(0, cols * 2)}</Text>;
}
