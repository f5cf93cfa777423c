/**
 * The log pane's frame as plain strings: one string per terminal row, styled with SGR sequences built
 * by hand. No Ink, no React, no layout engine: the pane's layout is a fixed stack of rows, so a frame is
 * a few dozen string concatenations (well under a millisecond), and nothing here is cached across
 * frames (Ink kept every distinct line it ever measured in module-level caches).
 */
import type { Alert } from '../observe/index.js';
import type { RunModel, StepState } from './model.js';
import { formatLoss, sparkline } from '../observe/index.js';
import { formatClock, formatTally, formatTallyRate, gibFigure } from '../text/index.js';
import { LOSS_SOURCE_NAMES } from '../observe/index.js';
import type { TelemetryView } from '../observe/index.js';
import type { RunWatch } from '../observe/index.js';
import { formatDuration, hasControl, printable } from '../text/index.js';
import { fitHints, softWrap, wrap } from '../text/index.js';
import { colorAllowed } from '../text/index.js';
import { highlightParts, hintItems, visibleRows, type LinesView, type PaneState } from './state.js';

/** Step rows shown at most (the list scrolls with the selection beyond that). */
export const MAX_STEP_ROWS = 6;

/** A colour's SGR sequence, or nothing under NO_COLOR (https://no-color.org; the wizard's rule, theme.ts). */
/** True when colours are allowed (NO_COLOR unset): the rule every screen uses. */
const COLOR_ENABLED = colorAllowed();
const colour = (seq: string): string => (COLOR_ENABLED ? seq : '');

// SGR sequences (what chalk emits for Ink's props of the same names). Under NO_COLOR the colours are empty:
// bold, dim and inverse video (not colours) still mark the selection, the alert and what is dimmed.
export const SGR = {
  reset: '\x1b[0m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
  inverse: '\x1b[7m',
  red: colour('\x1b[31m'),
  green: colour('\x1b[32m'),
  yellow: colour('\x1b[33m'),
  magenta: colour('\x1b[35m'),
  cyan: colour('\x1b[36m'),
  gray: colour('\x1b[90m'),
  bgRed: colour('\x1b[41m'),
  bgGreen: colour('\x1b[42m'),
  bgYellow: colour('\x1b[43m'),
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
 * `wrap="truncate-end"`). The child's lines are cleaned of escapes before they reach the model; every other
 * piece (a step name from a preset or a record, an alert's text) is shown with its control characters escaped
 * (src/text/printable.ts), so widths are those of the text itself and nothing a file holds drives the terminal.
 */
export class RowBuilder {
  private out = '';
  private w = 0;
  private full = false;

  constructor(private readonly cols: number) {}

  add(raw: string, sgr = ''): this {
    if (this.full || raw === '') return this;
    const text = hasControl(raw) ? printable(raw) : raw;
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

  /** Fills the rest of the row with spaces (for a row with more drawn right of it). */
  pad(): this {
    if (this.w < this.cols) this.out += ' '.repeat(this.cols - this.w);
    this.w = this.cols;
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

/** What the pane shows besides the log: the run's watch, its GPUs and the estimate (absent in bare tests). */
export interface PaneLive {
  watch: RunWatch;
  telemetry: TelemetryView | null;
  /** Why there is no telemetry at all (a Slurm job's GPUs are on its nodes), else null. */
  noTelemetry: string | null;
  /** The estimate's peak per GPU (the marker on each GPU bar), or null. */
  estimateBytes: number | null;
  /**
   * The measured step of pass `i` against the predicted band (src/observe/step-time.ts): a short form for the
   * progress row and a long one (the pass's ETA, the term that disagrees) for the side panel; null before the
   * pass's first steady iterations or without a prediction. Absent: nothing is shown.
   */
  stepTime?: (i: number) => { short: string; long: string } | null;
}

/** From this width on, the GPUs and the metrics go into a side panel right of the log. */
export const WIDE_LAYOUT_MIN_COLS = 140;
/** The side panel's width (with its left border). */
export const SIDE_PANEL_COLS = 45;
/** Rows the GPU bars take at most below the log (narrow layout); more GPUs are summed up in the last cell. */
export const GPU_ROWS_MAX = 2;
/** Columns one GPU takes in the narrow layout's rows. */
const GPU_CELL_MIN_COLS = 20;

/** Where things go for a terminal size: what the keys and the frame both need. */
export interface PaneLayout {
  cols: number;
  stepRows: number;
  firstStepRow: number;
  logHeight: number;
  /** Columns of the log area (less than `cols` when the side panel is shown). */
  logCols: number;
  /** The side panel is shown (wide terminals). */
  wide: boolean;
  /** Rows below the progress row: the metrics row, the alert row, the GPU rows. */
  metricsRows: number;
  alertRows: number;
  gpuRows: number;
  /** The shown step. */
  selected: number;
  step: StepState;
  view: LinesView;
}

function linesView(step: StepState, height: number): LinesView {
  const ring = step.lines;
  return { first: ring.dropped, end: ring.total, at: (abs) => ring.at(abs - ring.dropped), height };
}

/** Whether the GPU bars can be drawn (samples, and telemetry neither failed nor lost). */
function gpuBarsShown(t: TelemetryView | null): t is TelemetryView {
  return t !== null && t.latest.size > 0 && t.state !== 'lost' && t.state !== 'unavailable';
}

/** GPUs per row in the narrow layout. */
function gpusPerRow(cols: number, n: number): number {
  return Math.max(1, Math.min(n, Math.floor(cols / GPU_CELL_MIN_COLS)));
}

/**
 * The layout: header, (headline), steps, rule, log (with the side panel on wide terminals), progress, the
 * metrics row, the alert row (while the step has alerts), the GPU rows (narrow), rule, status, keys; one
 * row spare at the bottom.
 */
export function paneLayout(
  model: RunModel,
  state: PaneState,
  size: { columns: number; rows: number },
  live?: PaneLive | null,
): PaneLayout {
  const cols = Math.max(20, size.columns);
  const stepRows = Math.min(model.steps.length, MAX_STEP_ROWS);
  const headline = model.headline ? 1 : 0;
  const selected = Math.min(state.selected, model.steps.length - 1);
  const step = model.steps[selected]!;
  const wide = live != null && cols >= WIDE_LAYOUT_MIN_COLS;
  const metricsRows = live ? 1 : 0;
  const alertRows = live?.watch.alerts.alerts.some((a) => a.step === selected) ? 1 : 0;
  let gpuRows = 0;
  if (live && !wide) {
    const t = live.telemetry;
    gpuRows = gpuBarsShown(t) ? Math.min(GPU_ROWS_MAX, Math.ceil(t.latest.size / gpusPerRow(cols, t.latest.size))) : 1;
  }
  const fixed = 1 + headline + stepRows + 1 + 1 + metricsRows + alertRows + gpuRows + 1 + 1 + 1 + 1;
  const logHeight = Math.max(3, size.rows - fixed);
  const logCols = wide ? cols - SIDE_PANEL_COLS : cols;
  const firstStepRow = Math.max(0, Math.min(selected - Math.floor(MAX_STEP_ROWS / 2), model.steps.length - stepRows));
  return {
    cols,
    stepRows,
    firstStepRow,
    logHeight,
    logCols,
    wide,
    metricsRows,
    alertRows,
    gpuRows,
    selected,
    step,
    view: linesView(step, logHeight),
  };
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
  live?: PaneLive | null;
}

/** The frame: one string per row, top to bottom (exactly the layout's rows). */
export function paneLines(model: RunModel, state: PaneState, layout: PaneLayout, info: FrameInfo): string[] {
  const { cols, step, view, logHeight, logCols } = layout;
  const live = info.live ?? null;
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
          state.alertsOpen && live
            ? `alerts of this run (${live.watch.alerts.alerts.length}) · a or Esc: back to the log`
            : stepRuleLabel(
                `${step.name} · ${step.lines.total} lines${step.lines.dropped > 0 ? ` (last ${step.lines.length} kept)` : ''}`,
                step.logPath,
                cols,
              ),
          cols,
        ),
        SGR.dim,
      )
      .toString(),
  );
  const area: (RowBuilder | undefined)[] = [];
  if (state.alertsOpen && live) {
    const rows = alertListRows(live, model, logCols);
    for (let k = 0; k < logHeight; k++) area.push(rows[state.alertsTop + k]);
  } else {
    const rows = visibleRows(state, view, step.open, logCols);
    const query = state.search.query;
    for (let k = 0; k < logHeight; k++) {
      const r = rows[k];
      area.push(r && logRow(r.text, query, state.search.match === r.abs, r.abs === view.end, logCols));
    }
  }
  if (layout.wide && live) {
    // The log's rows are padded to their full width, so the panel's border stays in one column.
    const side = sidePanel(live, layout, state, SIDE_PANEL_COLS - 2);
    for (let k = 0; k < logHeight; k++) {
      const left = (area[k] ?? new RowBuilder(logCols)).pad().toString();
      out.push(`${left}${SGR.dim}│${SGR.reset} ${side[k] ?? ''}`);
    }
  } else out.push(...area.map((b) => b?.toString() ?? ''));
  out.push(progressRow(step, cols, live?.stepTime?.(layout.selected)?.short ?? null));
  if (live) {
    out.push(metricsRow(live, layout.selected, state, cols, !layout.wide));
    const alert = layout.alertRows > 0 ? newestAlert(live, layout.selected) : null;
    if (alert) out.push(alertRow(alert, live.watch.alerts.alerts.length, cols));
    if (layout.gpuRows > 0) out.push(...gpuRows(live, layout, cols));
  }
  out.push(SGR.dim + '─'.repeat(cols) + SGR.reset);
  out.push(statusRow(state, model, step.status, cols, info.grace, info.stopPrompt));
  out.push(
    new RowBuilder(cols)
      .add(
        state.search.mode === 'input'
          ? 'Enter search · Esc cancel'
          : keyHints(
              hintItems({
                ended: model.outcome !== null,
                live: live !== null,
                alerts: live !== null && live.watch.alerts.alerts.length > 0,
                canDetach: info.canDetach === true,
              }),
              cols,
            ),
        SGR.dim,
      )
      .toString(),
  );
  return out;
}

/** Key hints that fit `cols`: the least important ones are left out first (`rank`: 1 is kept longest). */
export function keyHints(items: readonly (readonly [string, number])[], cols: number): string {
  return (
    fitHints(
      items.map(([text, rank]) => ({ text, keep: -rank })),
      cols,
    )[0] ?? ''
  );
}

const TONE: Record<NonNullable<RunModel['headline']>['tone'], string> = {
  info: SGR.cyan,
  warn: SGR.yellow,
  ok: SGR.green,
  error: SGR.red,
};

/** The stop question in few words (80 columns), for a kind whose prompt offers d (leave it running). */
const SHORT_STOP_PROMPT = 'Stop the run? y: stop it · d: leave it running · any other key: keep watching';
/** The same without d. */
const SHORT_STOP_PROMPT_NO_LEAVE = 'Stop the run? y/q/Ctrl+C: stop it · any other key: keep running';

/** `step · N lines · log PATH`, the path shortened from its start (`…/runs/ID/01-train.log`) to fit `cols`. */
function stepRuleLabel(head: string, logPath: string | null, cols: number): string {
  const path = logPath ?? '-';
  const room = cols - 4 - head.length - ' · log '.length - 1;
  const shown = path.length <= room || room < 8 ? path : `…${path.slice(path.length - (room - 1))}`;
  return `${head} · log ${shown}`;
}

function ruleText(label: string, cols: number): string {
  const text = `── ${label} `;
  return text.length >= cols ? text.slice(0, cols) : text + '─'.repeat(cols - text.length);
}

function headerRow(model: RunModel, title: string, cols: number): string {
  const o = model.outcome;
  const state = o
    ? o.outcome === 'succeeded'
      ? 'all steps done: q to close'
      : o.outcome === 'failed'
        ? 'failed: q to close'
        : 'stopped: q to close'
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
export function logRow(text: string, query: string, current: boolean, open: boolean, cols: number): RowBuilder {
  const base = open ? SGR.dim : '';
  const b = new RowBuilder(cols);
  if (query === '' || text === '') return b.add(text, base);
  for (const p of highlightParts(text, query))
    b.add(p.text, p.hit ? base + SGR.inverse + (current ? SGR.yellow : '') : base);
  return b;
}

/** Columns the progress bar keeps before the measured step's text is added to its row. */
const PROGRESS_BAR_MIN_COLS = 10;

function progressRow(step: StepState, cols: number, stepTime: string | null = null): string {
  const p = step.progress;
  const b = new RowBuilder(cols);
  if (!p) return b.add(step.status === 'running' ? 'no progress bar yet' : '', SGR.dim).toString();
  const desc = p.desc ? `${p.desc} ` : '';
  // A step that ended keeps where its bar stopped; the ETA of a bar that will not move again is left out.
  const ended = step.status === 'failed' || step.status === 'stopped' ? ` · ${step.status} here` : null;
  const base =
    p.percent !== null
      ? ` ${String(p.percent).padStart(3)}% ${formatTally(p.n)}/${formatTally(p.total ?? 0)} ${formatTallyRate(p.ratePerS)}${ended ?? ` ETA ${formatClock(p.remainingS)}`}`
      : ` ${formatTally(p.n)}it ${formatTallyRate(p.ratePerS)} elapsed ${formatClock(p.elapsedS)}${ended ?? ''}`;
  // The measured step against the estimate, when the row has room for it beside a usable bar.
  const extra = stepTime ? ` · ${stepTime}` : '';
  const tail = cols - desc.length - base.length - extra.length >= PROGRESS_BAR_MIN_COLS ? base + extra : base;
  b.add(desc);
  if (p.percent !== null) {
    const barWidth = Math.max(5, Math.min(60, cols - desc.length - tail.length - 1));
    const filled = Math.round((Math.min(100, p.percent) / 100) * barWidth);
    b.add('█'.repeat(filled), SGR.cyan).add('░'.repeat(barWidth - filled), SGR.dim);
  }
  return b.add(tail).toString();
}

/** The newest alert of step `i`, or null. */
function newestAlert(live: PaneLive, i: number): Alert | null {
  const all = live.watch.alerts.alerts;
  for (let k = all.length - 1; k >= 0; k--) if (all[k]!.step === i) return all[k]!;
  return null;
}

/**
 * The metrics row: `loss 0.0871 · min 0.0801 · csv ▁▂▃▅▂▁ recent`, then (narrow layout, where no side
 * panel has them) the learning rate and skipped steps; while there is no loss, why (a DiffSynth step
 * without its loss log says how to get it).
 */
function metricsRow(live: PaneLive, i: number, state: PaneState, cols: number, withDetails: boolean): string {
  const w = live.watch.steps[i];
  const b = new RowBuilder(cols);
  if (!w) return '';
  const m = w.metrics;
  if (m.lastLoss === null) {
    const hint = w.noLossHint ?? 'no loss seen yet (loss.csv, Trainer logs, tqdm postfix or a `loss=` line)';
    b.add(`loss: ${hint}`, SGR.dim);
  } else {
    b.add('loss ').add(formatLoss(m.lastLoss), Number.isFinite(m.lastLoss) ? SGR.bold : SGR.red + SGR.bold);
    if (m.minLoss !== null) b.add(` · min ${formatLoss(m.minLoss)}`);
    b.add(` · ${LOSS_SOURCE_NAMES[m.lossSource ?? 'log']}`, SGR.dim);
    const width = Math.max(8, Math.min(60, Math.floor(cols / 4)));
    const values = state.sparkAll ? m.series.overview(width) : m.series.recent(width);
    const spark = sparkline(values, width);
    if (spark !== '')
      b.add(' ')
        .add(spark, SGR.magenta)
        .add(state.sparkAll ? ' whole step' : ' recent', SGR.dim);
  }
  if (withDetails) {
    if (m.learningRate !== null) b.add(` · lr ${formatNumber(m.learningRate)}`);
    if (m.skippedSteps > 0) b.add(` · skipped ${m.skippedSteps}`, SGR.yellow);
  }
  return b.toString();
}

/** A number in a few characters: `1.0e-4`, `0.52`, `1024`. */
function formatNumber(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a < 1e-2 || a >= 1e5) return v.toExponential(1);
  return String(Number(v.toPrecision(3)));
}

/**
 * The alert row: the newest alert of the shown step, highlighted (red when it explains a failure), with its
 * fix as far as the row goes (`a` lists them all in full; the key hints say so).
 */
function alertRow(a: Alert, total: number, cols: number): string {
  const style = SGR.inverse + (a.fatal ? SGR.red : SGR.yellow);
  return new RowBuilder(cols)
    .add(` ALERT${total > 1 ? ` (${total})` : ''} ${a.title} `, style + SGR.bold)
    .add(` fix: ${a.fix}`, a.fatal ? SGR.red : SGR.yellow)
    .toString();
}

/** Every alert of the run, oldest first: title, fix and the line that raised it, wrapped to `cols`. */
function alertListRows(live: PaneLive, model: RunModel, cols: number): RowBuilder[] {
  const all = live.watch.alerts.alerts;
  if (all.length === 0) return [new RowBuilder(cols).add('no alerts in this run', SGR.dim)];
  const out: RowBuilder[] = [];
  // The fix is prose (wrapped at words); the log line is the trainer's, its spacing kept (softWrap).
  const wrapped = (text: string, indent: string, sgr: string, how = wrap) => {
    for (const piece of how(text, cols - indent.length)) out.push(new RowBuilder(cols).add(indent).add(piece, sgr));
  };
  for (const a of all) {
    const at = new Date(a.at).toTimeString().slice(0, 8);
    out.push(
      new RowBuilder(cols)
        .add(`${at} ${model.steps[a.step]?.name ?? a.step + 1}: `, SGR.dim)
        .add(a.title, (a.fatal ? SGR.red : SGR.yellow) + SGR.bold),
    );
    wrapped(`fix: ${a.fix}`, '  ', '');
    wrapped(a.line, '  ', SGR.dim, softWrap);
  }
  return out;
}

/** How many rows the alert list has (the reducer bounds its scrolling with it). */
export function alertListLength(live: PaneLive, model: RunModel, cols: number): number {
  return alertListRows(live, model, cols).length;
}

/**
 * One GPU's bar, `width` cells: filled to memory used of total, the estimate's peak as `┃`; green under the
 * estimate, yellow above it, red above 95% of the GPU.
 */
function gpuBar(used: number | null, total: number | null, estimate: number | null, width: number): [string, string][] {
  if (width <= 0) return [];
  if (used === null || total === null || total <= 0) return [['?'.padEnd(width, ' '), SGR.dim]];
  const filled = Math.max(0, Math.min(width, Math.round((used / total) * width)));
  const marker = estimate !== null && estimate > 0 ? Math.min(width - 1, Math.floor((estimate / total) * width)) : -1;
  const level = used > 0.95 * total ? 2 : estimate !== null && used > estimate ? 1 : 0;
  const color = [SGR.green, SGR.yellow, SGR.red][level]!;
  const out: [string, string][] = [];
  for (let k = 0; k < width; k++) {
    // The marker inside the filled part keeps the fill's colour behind it.
    if (k === marker)
      out.push(['┃', SGR.bold + SGR.magenta + (k < filled ? [SGR.bgGreen, SGR.bgYellow, SGR.bgRed][level]! : '')]);
    else if (k < filled) out.push(['█', color]);
    else out.push(['░', SGR.dim]);
  }
  // Neighbouring cells of one style as one piece.
  const merged: [string, string][] = [];
  for (const [t, st] of out) {
    const last = merged.at(-1);
    if (last && last[1] === st) last[0] += t;
    else merged.push([t, st]);
  }
  return merged;
}

/** `61.2` GiB with one decimal (the unit is said once per row). */
function gib(bytes: number | null): string {
  return bytes === null ? '?' : gibFigure(bytes);
}

/** Why there are no GPU bars (a dim row), or null when there are. */
function noGpuReason(live: PaneLive): string | null {
  const t = live.telemetry;
  if (!t) return `no GPU telemetry: ${live.noTelemetry ?? 'not watched'}`;
  if (t.state === 'unavailable') return `no GPU telemetry: ${t.reason}`;
  if (t.state === 'lost') return `GPU telemetry lost: ${t.reason}`;
  if (t.latest.size === 0)
    return t.state === 'stopped'
      ? 'no GPU telemetry: nvidia-smi gave no sample'
      : 'GPU telemetry: waiting for nvidia-smi…';
  return null;
}

/** The narrow layout's GPU rows: several GPUs per row (index, bar with the estimate, GiB used, utilisation). */
function gpuRows(live: PaneLive, layout: PaneLayout, cols: number): string[] {
  const why = noGpuReason(live);
  if (why !== null) return [new RowBuilder(cols).add(why, SGR.dim).toString()];
  const gpus = live.telemetry!.latestList;
  const perRow = gpusPerRow(cols, gpus.length);
  const cell = Math.floor(cols / perRow);
  const idxW = String(Math.max(...gpus.map((g) => g.index))).length;
  const room = perRow * layout.gpuRows;
  const shown = gpus.length > room ? gpus.slice(0, room - 1) : gpus;
  const rows: string[] = [];
  for (let r = 0; r < layout.gpuRows; r++) {
    const b = new RowBuilder(cols);
    for (let k = 0; k < perRow; k++) {
      const at = r * perRow + k;
      const g = shown[at];
      const start = b.width;
      if (g) {
        const util = (g.utilPercent === null ? '?%' : `${Math.round(g.utilPercent)}%`).padStart(4);
        // Wide cells say used/total; narrow ones only what is used (whole GiB from 10 on).
        const used =
          cell >= 40
            ? `${gib(g.usedBytes)}/${gib(g.totalBytes)} GiB`
            : g.usedBytes !== null && g.usedBytes >= 9.95 * 2 ** 30
              ? `${gibFigure(g.usedBytes, 0)}G`.padStart(4)
              : `${gib(g.usedBytes)}G`;
        const barW = Math.max(3, Math.min(40, cell - (idxW + 1 + 1 + used.length + 1 + util.length + 1)));
        b.add(`${String(g.index).padStart(idxW)} `, SGR.dim);
        for (const [t, st] of gpuBar(g.usedBytes, g.totalBytes, live.estimateBytes, barW)) b.add(t, st);
        b.add(` ${used} ${util}`);
      } else if (at === shown.length && gpus.length > shown.length) {
        const rest = gpus.slice(shown.length);
        const top = Math.max(...rest.map((x) => x.usedBytes ?? 0));
        b.add(`+${rest.length} GPUs, max ${gib(top)}G`, SGR.dim);
      } else break;
      const pad = cell - (b.width - start);
      if (k < perRow - 1 && pad > 0) b.add(' '.repeat(pad));
    }
    rows.push(b.toString());
  }
  return rows;
}

/**
 * The side panel of wide terminals (`width` columns): one row per GPU with its peak in this step, then the
 * step's metrics in full.
 */
function sidePanel(live: PaneLive, layout: PaneLayout, state: PaneState, width: number): string[] {
  const out: string[] = [];
  const est = live.estimateBytes;
  out.push(
    new RowBuilder(width)
      .add('GPU memory', SGR.bold)
      .add(est !== null ? ` · ┃ estimate ${gib(est)} GiB` : ' · no estimate', SGR.dim)
      .toString(),
  );
  const why = noGpuReason(live);
  if (why !== null) {
    for (const piece of wrap(why, width).slice(0, 3)) out.push(new RowBuilder(width).add(piece, SGR.dim).toString());
  } else {
    const t = live.telemetry!;
    const gpus = t.latestList;
    const peaks = new Map(t.peaksOf(layout.selected).map((p) => [p.index, p.usedBytes]));
    const idxW = String(Math.max(...gpus.map((g) => g.index))).length;
    const maxRows = Math.max(1, layout.logHeight - 8);
    const shown = gpus.length > maxRows ? gpus.slice(0, maxRows - 1) : gpus;
    for (const g of shown) {
      const util = g.utilPercent === null ? '  ?%' : `${String(Math.round(g.utilPercent)).padStart(3)}%`;
      const used = `${gib(g.usedBytes).padStart(5)}/${gib(g.totalBytes)}G`;
      const peak = peaks.get(g.index);
      const pk = ` pk ${peak === undefined ? '-' : gib(peak)}`;
      const barW = Math.max(4, width - (idxW + 1 + 1 + used.length + 1 + util.length + pk.length));
      const b = new RowBuilder(width).add(`${String(g.index).padStart(idxW)} `, SGR.dim);
      for (const [tx, st] of gpuBar(g.usedBytes, g.totalBytes, est, barW)) b.add(tx, st);
      b.add(` ${used} ${util}`).add(pk, SGR.dim);
      out.push(b.toString());
    }
    if (shown.length < gpus.length) out.push(`${SGR.dim}+${gpus.length - shown.length} more GPUs${SGR.reset}`);
  }
  out.push('');
  const w = live.watch.steps[layout.selected];
  if (!w) return out;
  const m = w.metrics;
  const row = (label: string, value: string, sgr = '') =>
    out.push(new RowBuilder(width).add(label.padEnd(10), SGR.dim).add(value, sgr).toString());
  if (m.lastLoss === null) row('loss', w.noLossHint ?? 'none yet', SGR.dim);
  else {
    row(
      'loss',
      `${formatLoss(m.lastLoss)} (${LOSS_SOURCE_NAMES[m.lossSource ?? 'log']})`,
      Number.isFinite(m.lastLoss) ? SGR.bold : SGR.red,
    );
    if (m.minLoss !== null)
      row(
        'min',
        `${formatLoss(m.minLoss)} ${m.minLossStep !== null ? `at step ${m.minLossStep}` : `at loss value ${m.minLossAt} of ${m.lossCount}`}`,
      );
    const values = state.sparkAll ? m.series.overview(width - 10) : m.series.recent(width - 10);
    row(state.sparkAll ? 'all' : 'recent', sparkline(values, width - 10), SGR.magenta);
  }
  if (m.ratePerS !== null) row('speed', m.rateText ?? formatTallyRate(m.ratePerS));
  if (m.learningRate !== null) row('lr', formatNumber(m.learningRate));
  if (m.optimizerStep !== null) row('step', String(m.optimizerStep));
  if (m.epoch !== null) row('epoch', formatNumber(m.epoch));
  if (m.gradNorm !== null) row('grad norm', formatNumber(m.gradNorm));
  if (m.skippedSteps > 0 || m.lossScale !== null)
    row(
      'skipped',
      `${m.skippedSteps}${m.lossScale !== null ? ` · loss scale ${m.lossScale}` : ''}`,
      m.skippedSteps > 0 ? SGR.yellow : '',
    );
  if (m.dsPeakAllocatedBytes !== null) row('Max_MA', `${gib(m.dsPeakAllocatedBytes)} GiB (DeepSpeed)`);
  // The measured step against the estimate, last: the pass's ETA and the term it disagrees with under it.
  const st = live.stepTime?.(layout.selected) ?? null;
  if (st) {
    const pieces = wrap(st.long, width - 10);
    for (const [k, piece] of pieces.entries()) row(k === 0 ? 's/step' : '', piece);
  }
  return out;
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
    const full =
      stopPrompt ??
      `Stop the run? y/q/Ctrl+C: stop (SIGINT, SIGTERM after ${grace.sigintMs / 1000}s, SIGKILL ${grace.sigtermMs / 1000}s later) · any other key: keep running`;
    // A narrow terminal gets the question whole in fewer words rather than cut before its answers.
    const compact = full.replace(/ \([^)]*\)/g, '');
    const text =
      full.length <= cols
        ? full
        : compact.length <= cols
          ? compact
          : full.includes(' d: ')
            ? SHORT_STOP_PROMPT
            : SHORT_STOP_PROMPT_NO_LEAVE;
    return b.add(text, SGR.yellow + SGR.bold).toString();
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
