/**
 * The log pane's frame as plain strings: one string per terminal row, styled with SGR sequences built
 * by hand. No Ink, no React, no layout engine: the pane's layout is a fixed stack of rows, so a frame is
 * a few dozen string concatenations (well under a millisecond), and nothing here is cached across
 * frames (Ink kept every distinct line it ever measured in module-level caches).
 */
import type { RunModel, StepState } from '../../src/launch/model.js';
import { formatClock, formatCount, formatRate, sparkline } from '../../src/launch/logparse.js';
import { formatDuration } from '../../src/launch/stream.js';
import { highlightParts, visibleRows, type LinesView, type PaneState } from './state.js';

/** Step rows shown at most (the list scrolls with the selection beyond that). */
export const MAX_STEP_ROWS = 6;

// SGR sequences (what chalk emits for Ink's props of the same names).
export const SGR = {
  reset: '\x1b[0m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
  inverse: '\x1b[7m',
  red: '\x1b[31m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
  magenta: '\x1b[35m',
  cyan: '\x1b[36m',
  gray: '\x1b[90m',
} as const;

const STATUS_ICON: Record<StepState['status'], string> = {
  pending: '·',
  running: '▶',
  done: '✔',
  failed: '✘',
  stopped: '■',
};
const STATUS_COLOR: Record<StepState['status'], string> = {
  pending: SGR.gray,
  running: SGR.cyan,
  done: SGR.green,
  failed: SGR.red,
  stopped: SGR.yellow,
};

const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** Columns a code point takes in a terminal: 0 (combining, zero-width), 1, or 2 (East Asian wide, emoji). */
function charWidth(cp: number): number {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp < 0x300) return 1;
  if (
    cp <= 0x36f ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x20d0 && cp <= 0x20ff) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xe0100 && cp <= 0xe01ef)
  )
    return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    cp === 0x2329 ||
    cp === 0x232a ||
    (cp >= 0x231a && cp <= 0x231b) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  )
    return 2;
  return 1;
}

/** Columns a plain (unstyled) string takes. */
export function textWidth(s: string): number {
  if (!NOT_PRINTABLE_ASCII.test(s)) return s.length;
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0)!);
  return w;
}

/** The longest prefix of a plain string that fits in `cols` columns. */
function prefixFitting(s: string, cols: number): string {
  if (cols <= 0) return '';
  if (!NOT_PRINTABLE_ASCII.test(s)) return s.slice(0, cols);
  let w = 0;
  let end = 0;
  for (const ch of s) {
    const cw = charWidth(ch.codePointAt(0)!);
    if (w + cw > cols) break;
    w += cw;
    end += ch.length;
  }
  return s.slice(0, end);
}

/**
 * One terminal row built from styled pieces, cut at `cols` columns with an ellipsis (Ink's
 * `wrap="truncate-end"`). The text pieces are plain (the child's lines are cleaned of escapes before
 * they reach the model), so widths are those of the text itself.
 */
export class RowBuilder {
  private out = '';
  private w = 0;
  private full = false;

  constructor(private readonly cols: number) {}

  add(text: string, sgr = ''): this {
    if (this.full || text === '') return this;
    const tw = textWidth(text);
    let piece = text;
    if (this.w + tw > this.cols) {
      piece = `${prefixFitting(text, this.cols - this.w - 1)}…`;
      this.full = true;
    }
    this.out += sgr === '' ? piece : sgr + piece + SGR.reset;
    this.w = this.full ? this.cols : this.w + tw;
    return this;
  }

  /** Columns used so far. */
  get width(): number {
    return this.w;
  }

  toString(): string {
    return this.out;
  }
}

/** Where things go for a terminal size: what the keys and the frame both need. */
export interface PaneLayout {
  cols: number;
  stepRows: number;
  firstStepRow: number;
  logHeight: number;
  /** The shown step. */
  selected: number;
  step: StepState;
  view: LinesView;
}

function linesView(step: StepState, height: number): LinesView {
  const ring = step.lines;
  return { first: ring.dropped, end: ring.total, at: (abs) => ring.at(abs - ring.dropped), height };
}

/** The layout: header, steps, rule, log, progress, rule, status, keys; one row spare at the bottom. */
export function paneLayout(model: RunModel, state: PaneState, size: { columns: number; rows: number }): PaneLayout {
  const cols = Math.max(20, size.columns);
  const stepRows = Math.min(model.steps.length, MAX_STEP_ROWS);
  const headline = model.headline ? 1 : 0;
  const logHeight = Math.max(3, size.rows - 1 - (1 + headline + stepRows + 1 + 2 + 1 + 1));
  const selected = Math.min(state.selected, model.steps.length - 1);
  const step = model.steps[selected]!;
  const firstStepRow = Math.max(0, Math.min(selected - Math.floor(MAX_STEP_ROWS / 2), model.steps.length - stepRows));
  return { cols, stepRows, firstStepRow, logHeight, selected, step, view: linesView(step, logHeight) };
}

/** What the frame shows besides the model and the view state. */
export interface FrameInfo {
  title: string;
  now: number;
  grace: { sigintMs: number; sigtermMs: number };
  /** The stop question, when it is not the grace periods' (a Slurm job). */
  stopPrompt?: string;
  /** Whether `d` leaves the pane with the run going on (the key hints say so). */
  canDetach?: boolean;
}

/** The frame: one string per row, top to bottom (exactly the layout's rows). */
export function paneLines(model: RunModel, state: PaneState, layout: PaneLayout, info: FrameInfo): string[] {
  const { cols, step, view, logHeight } = layout;
  const out: string[] = [headerRow(model, info.title, cols)];
  if (model.headline) out.push(new RowBuilder(cols).add(model.headline.text, TONE[model.headline.tone]).toString());
  for (let k = 0; k < layout.stepRows; k++) {
    const i = layout.firstStepRow + k;
    out.push(stepRow(model.steps[i]!, i, i === layout.selected, info.now, cols));
  }
  out.push(
    new RowBuilder(cols)
      .add(
        ruleText(
          `${step.name} · ${step.lines.total} lines${step.lines.dropped > 0 ? ` (last ${step.lines.length} kept)` : ''} · log ${step.logPath ?? '-'}`,
          cols,
        ),
        SGR.dim,
      )
      .toString(),
  );
  const rows = visibleRows(state, view, step.open, cols);
  const query = state.search.query;
  for (let k = 0; k < logHeight; k++) {
    const r = rows[k];
    out.push(r ? logRow(r.text, query, state.search.match === r.abs, r.abs === view.end, cols) : '');
  }
  out.push(progressRow(step, cols));
  out.push(SGR.dim + '─'.repeat(cols) + SGR.reset);
  out.push(statusRow(state, model, step.status, cols, info.grace, info.stopPrompt));
  out.push(
    new RowBuilder(cols)
      .add(
        state.search.mode === 'input'
          ? 'Enter search · Esc cancel'
          : '↑↓ PgUp/PgDn g/G scroll · f follow · / search n/N · w wrap · Tab step · q ' +
              (model.outcome ? 'close' : info.canDetach ? 'stop · d leave running' : 'stop'),
        SGR.dim,
      )
      .toString(),
  );
  return out;
}

const TONE: Record<NonNullable<RunModel['headline']>['tone'], string> = {
  info: SGR.cyan,
  warn: SGR.yellow,
  ok: SGR.green,
  error: SGR.red,
};

function ruleText(label: string, cols: number): string {
  const text = `── ${label} `;
  return text.length >= cols ? text.slice(0, cols) : text + '─'.repeat(cols - text.length);
}

function headerRow(model: RunModel, title: string, cols: number): string {
  const o = model.outcome;
  const state = o
    ? o.outcome === 'succeeded'
      ? 'all steps done'
      : o.outcome === 'failed'
        ? 'failed: q to close'
        : 'stopped'
    : model.stoppingRequested
      ? 'stopping…'
      : (model.headline?.tag ?? 'running');
  const color = o
    ? o.outcome === 'succeeded'
      ? SGR.green
      : o.outcome === 'failed'
        ? SGR.red
        : SGR.yellow
    : model.stoppingRequested
      ? SGR.yellow
      : SGR.cyan;
  const tag = `[${state}]`;
  const titleRow = new RowBuilder(Math.max(1, cols - textWidth(tag))).add(`zerowiz launch ${title} `, SGR.bold);
  return titleRow.toString() + new RowBuilder(cols - titleRow.width).add(tag, color).toString();
}

function stepRow(step: StepState, index: number, selected: boolean, now: number, cols: number): string {
  const elapsed = step.startedAt === null ? '' : formatDuration((step.endedAt ?? now) - step.startedAt);
  const r = step.result;
  const extra =
    step.status === 'failed' && r
      ? r.error
        ? ` ${r.error}`
        : r.signal
          ? ` signal ${r.signal}`
          : ` exit ${r.exitCode}`
      : step.status === 'stopped' && r?.stopSignal && r.stopSignal !== 'none'
        ? ` by ${r.stopSignal}`
        : '';
  return new RowBuilder(cols)
    .add(selected ? '›' : ' ', selected ? SGR.inverse : '')
    .add(` ${STATUS_ICON[step.status]} `, STATUS_COLOR[step.status])
    .add(`${`${index + 1}. ${step.name}`.padEnd(24)} ${step.status.padEnd(8)} ${elapsed.padStart(7)}${extra}`)
    .toString();
}

/** A log row: dim while it is the open (`\r`) line, search hits in inverse (the current one yellow). */
export function logRow(text: string, query: string, current: boolean, open: boolean, cols: number): string {
  const base = open ? SGR.dim : '';
  const b = new RowBuilder(cols);
  if (query === '' || text === '') return b.add(text, base).toString();
  for (const p of highlightParts(text, query))
    b.add(p.text, p.hit ? base + SGR.inverse + (current ? SGR.yellow : '') : base);
  return b.toString();
}

function progressRow(step: StepState, cols: number): string {
  const p = step.progress;
  const lossNow = step.losses.length > 0 ? step.losses[step.losses.length - 1]! : null;
  const lossText = lossNow === null ? '' : `loss ${formatLoss(lossNow)} `;
  const b = new RowBuilder(cols);
  if (!p) {
    return b
      .add(step.status === 'running' ? `no progress bar yet${lossText ? ` · ${lossText}` : ''}` : lossText, SGR.dim)
      .toString();
  }
  const desc = p.desc ? `${p.desc} ` : '';
  const tail =
    p.percent !== null
      ? ` ${String(p.percent).padStart(3)}% ${formatCount(p.n)}/${formatCount(p.total ?? 0)} ${formatRate(p.ratePerS)} ETA ${formatClock(p.remainingS)}`
      : ` ${formatCount(p.n)}it ${formatRate(p.ratePerS)} elapsed ${formatClock(p.elapsedS)}`;
  const sparkWidth = Math.max(0, Math.min(40, Math.floor(cols / 4)));
  const spark = sparkline(step.losses, sparkWidth);
  b.add(desc);
  if (p.percent !== null) {
    const barWidth = Math.max(5, Math.min(40, cols - desc.length - tail.length - lossText.length - spark.length - 6));
    const filled = Math.round((Math.min(100, p.percent) / 100) * barWidth);
    b.add('█'.repeat(filled), SGR.cyan).add('░'.repeat(barWidth - filled), SGR.dim);
  }
  return b
    .add(tail)
    .add(lossText ? `  ${lossText}` : '')
    .add(spark, SGR.magenta)
    .toString();
}

function formatLoss(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 1000 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : v.toFixed(4);
}

function statusRow(
  state: PaneState,
  model: RunModel,
  stepStatus: StepState['status'],
  cols: number,
  grace: { sigintMs: number; sigtermMs: number },
  stopPrompt?: string,
): string {
  const b = new RowBuilder(cols);
  if (state.confirmStop) {
    return b
      .add(
        stopPrompt ??
          `Stop the run? y/q/Ctrl+C: stop (SIGINT, SIGTERM after ${grace.sigintMs / 1000}s, SIGKILL ${grace.sigtermMs / 1000}s later) · any other key: keep running`,
        SGR.yellow + SGR.bold,
      )
      .toString();
  }
  if (state.search.mode === 'input') return b.add(`/${state.search.draft}`).add(' ', SGR.inverse).toString();
  const parts = [
    state.follow ? 'follow on' : 'follow paused (f/G)',
    state.wrap ? 'wrap on' : 'wrap off',
    state.search.query
      ? `search "${state.search.query}"${state.search.note ? `: ${state.search.note}` : ''}`
      : state.search.note,
    model.stoppingRequested && !model.outcome ? 'stopping… Ctrl+C again kills at once' : '',
    stepStatus === 'pending' ? 'this step has not started' : '',
  ].filter((x) => x !== '');
  return b.add(parts.join(' · ')).toString();
}
