/**
 * The ZeRO mode question's tradeoff, as plain data the view prints: one row per mode (and NVMe variant)
 * with the peak figures formatted, bar fractions, fits, the recommendation, and the panel on the
 * highlighted mode (its peak line items beside DeepSpeed's figure). Pure; the estimator does the maths,
 * on the same input as the fit finding and `zerowiz estimate` (src/estimate/input.ts).
 */
import { saveCostOfInput, saveCostText } from '../estimate/index.js';
import {
  CPU_HEADROOM_FRACTION,
  DEEPSPEED_ESTIMATOR_WHY,
  EstimateInputError,
  commMultipleText,
  ddpBytesOf,
  estimateModes,
  estimatePlacement,
  timeWords,
} from '../estimate/index.js';
import {
  measuredContradiction,
  measuredPeaks,
  measuredStepText,
  measuredSteps,
  measuredText,
  placementKey,
} from '../estimate/index.js';
import type { MeasuredPeak, MeasuredRun, MeasuredStep } from '../estimate/index.js';
import type { EstimateReport, ModeEstimate } from '../estimate/index.js';
import { estimateInputFromSetup, placementOfAnswers, topology } from '../estimate/index.js';
import type { ModelEntry } from '../estimate/index.js';
import { MODE_INFO, MODES, modeDevice, placementOf, rowFromKey, rowKey, rowLabel } from '../config/index.js';
import type { Mode, OffloadDevice, OffloadTarget, Placement } from '../config/index.js';
import { memoryLayout, pictureBreakdown, type PictureBreakdown } from '../estimate/index.js';
import type { Interconnect } from '../config/index.js';
import type { Answers } from '../config/index.js';
import { formatCount } from '../text/index.js';
import { humanAnswer } from './display.js';
import type { GlossaryContext } from './glossary.js';
import { formatBytesCompact, formatSeconds, gibFigure, gibFigureShort } from '../text/index.js';

export { rowKey, topology };

/** One row of the tradeoff table. */
export interface TradeoffRow {
  /** `3-offload` or `3-offload:nvme`: unique per row. */
  key: string;
  mode: Mode;
  offloadDevice: OffloadDevice | null;
  label: string;
  /** Figures, formatted (at most 8 characters each): the GPU peak and the CPU peak per node. */
  gpu: string;
  cpu: string;
  /** Communication per step as a multiple of DDP's, e.g. `1.5x`; `-` with one GPU. */
  comm: string;
  /** Seconds per optimizer step (src/estimate/time.ts), e.g. `12s`, `0.42s`, `1m05s`. */
  time: string;
  /** 0..1 of the bar scale (GPU: GPU memory or the largest row; CPU likewise). */
  gpuBar: number;
  cpuBar: number;
  fits: boolean | null;
  /** The last peak a run of this setup measured here for this row's placement (run records), or null. */
  measured: MeasuredPeak | null;
  /** The last step time a run of this setup measured here for this row's placement, or null. */
  measuredStep: MeasuredStep | null;
  /** What does not fit (empty when it fits or is not known): the GPU bar is red only when `GPU` is here. */
  failsOn: ('GPU' | 'CPU' | 'NVMe')[];
  recommended: boolean;
  estimate: ModeEstimate;
}

/** The whole tradeoff panel. */
export interface Tradeoff {
  /** False when no parameter count was given (or it cannot be estimated): only the descriptions can be shown. */
  available: boolean;
  /** "20.4B params · 8 GPUs · 80 GiB/GPU · 1 TiB RAM/node · LoRA r32 · 4608 tok x1 · ckpt". */
  context: string;
  rows: TradeoffRow[];
  recommendedKey: string | null;
  /** The recommendation's sentence (or why there is none). */
  reason: string;
  /** What the estimate assumes or leaves out (e.g. activations not estimated). */
  notes: string[];
  report: EstimateReport | null;
  /** What the comm column's 1x is: plain DDP's traffic per GPU per step (ZeRO-1's), in bytes; 0 with one GPU. */
  ddpBytesPerStep: number;
}

/** The key of the row for answers whose offload devices are split (a placement that is no mode's own). */
export const SPLIT_ROW_KEY = 'split';
/** That row's label (as wide as the table's label column). */
export const SPLIT_ROW_LABEL = 'ZeRO-3 your split';

/**
 * The placement the answers choose when it is not their mode's own (accelerate's two offload questions
 * answered apart: offload_param_device), else null.
 */
export function splitPlacement(a: Pick<Answers, 'mode' | 'offload_device' | 'offload_param_device'>): Placement | null {
  const own = placementOf(a.mode, modeDevice(a.mode, a.offload_device));
  const chosen = placementOfAnswers(a);
  return chosen.optimizer === own.optimizer && chosen.param === own.param ? null : chosen;
}

const WHERE: Record<OffloadTarget, string> = { none: 'on the GPUs', cpu: 'in CPU memory', nvme: 'on NVMe' };

/** What a placement keeps where, in words: `optimizer states in CPU memory, parameters on the GPUs`. */
export function placementWords(p: Placement): string {
  return `ZeRO-${p.stage}: optimizer states ${WHERE[p.optimizer]}, parameters ${WHERE[p.stage === 3 ? p.param : 'none']}`;
}

/** What the wizard knows beyond the answers: the model catalog, the GPU links, the runs measured here. */
export interface TradeoffContext {
  models?: readonly ModelEntry[];
  interconnect?: Interconnect;
  /** The run records of this directory (src/rules/fit.ts loadMeasuredRuns): measured peaks beside the estimate. */
  measured?: readonly MeasuredRun[];
}

/** The row key the answers select now (the split row when their offload devices are split). */
export function selectedKey(
  a: Pick<Answers, 'mode' | 'offload_device'> & Partial<Pick<Answers, 'offload_param_device'>>,
): string {
  if (a.offload_param_device !== undefined && splitPlacement(a as Answers) !== null) return SPLIT_ROW_KEY;
  return rowKey(a.mode, modeDevice(a.mode, a.offload_device));
}

/** The row keys of the mode list, in order: the table's rows, or the five modes without a model size. */
export function modeKeys(t: Tradeoff): string[] {
  return t.available ? t.rows.map((r) => r.key) : [...MODES];
}

/**
 * The row the mode question starts on: the highlight left behind (the picture or the list moved it), else
 * the answer's row once a mode is given, else the recommendation.
 */
export function startKey(t: Tradeoff, answers: Answers, given: boolean, highlight: string | null = null): string {
  if (highlight !== null && modeKeys(t).includes(highlight)) return highlight;
  const current = selectedKey(answers);
  return given || !t.recommendedKey ? current : t.recommendedKey;
}

/** A row key as the screen labels it: the table's label, else its mode's (`ZeRO-3 offload NVMe`). */
export function keyLabel(t: Tradeoff, key: string): string {
  const row = rowFromKey(key);
  return t.rows.find((r) => r.key === key)?.label ?? (row ? rowLabel(row.mode, row.device) : key);
}

/** Where the mode question starts (startKey), its label, and whether it is there as the recommendation. */
export interface ModeStart {
  key: string;
  label: string;
  recommended: boolean;
  /** The recommendation's label (null when nothing is recommended). */
  recommendedLabel: string | null;
  /** Whether a mode was given (Enter keeps it) rather than only highlighted. */
  given: boolean;
}

/** The mode question's start row (see startKey), as the list and the help's "Default" both name it. */
export function modeStart(t: Tradeoff, answers: Answers, given: boolean, highlight: string | null = null): ModeStart {
  const key = startKey(t, answers, given, highlight);
  return {
    key,
    label: keyLabel(t, key),
    recommended: key === t.recommendedKey,
    recommendedLabel: t.recommendedKey === null ? null : keyLabel(t, t.recommendedKey),
    given: given && highlight === null,
  };
}

/** The workload in a few words: `full` or `LoRA r32`, tokens x micro-batch, checkpointing. */
function workloadText(r: EstimateReport): string {
  const n = r.input;
  const parts = [
    n.lora ? `LoRA r${n.lora.rank}` : n.trainable < n.params ? `${formatCount(n.trainable)} trained` : 'full FT',
  ];
  const a = n.activation;
  if (a) parts.push(`${a.tokens} tok x${a.microBatch}${a.checkpointing === 'full' ? ' ckpt' : ''}`);
  return parts.join(' · ');
}

/**
 * The tradeoff for these answers. `zeroInit` is the zero.Init answer if the user gave one; otherwise the
 * stage-3 rows assume it on (the default once a stage-3 mode is chosen).
 */
export function tradeoffOf(a: Answers, zeroInit?: boolean, ctx: TradeoffContext = {}): Tradeoff {
  const { gpusPerNode, nodes } = topology(a);
  const gpus = `${gpusPerNode * nodes} GPU${gpusPerNode * nodes === 1 ? '' : 's'}${nodes > 1 ? ` (${nodes} nodes x ${gpusPerNode})` : ''}`;
  const parts = [a.model_params === null ? 'model size not given' : `${formatCount(a.model_params)} params`, gpus];
  parts.push(a.gpu_memory === null ? 'GPU memory unknown' : `${formatBytesCompact(a.gpu_memory)}/GPU`);
  if (a.cpu_memory !== null) parts.push(`${formatBytesCompact(a.cpu_memory)} RAM/node`);
  const plain = (reason: string, notes: string[] = []): Tradeoff => ({
    available: false,
    context: parts.join(' · '),
    rows: [],
    recommendedKey: null,
    reason,
    notes,
    report: null,
    ddpBytesPerStep: 0,
  });
  if (a.model_params === null)
    return plain(
      'Give the model size (the parameters question; Esc goes back) to see memory, traffic and fit per mode.',
    );
  let report: EstimateReport;
  let notes: string[];
  try {
    const setup = estimateInputFromSetup(
      { ...a, zero3_init: zeroInit ?? true },
      { models: ctx.models ?? [], ...(ctx.interconnect ? { interconnect: ctx.interconnect } : {}) },
    );
    notes = setup.notes;
    report = estimateModes(setup.input!);
  } catch (err) {
    if (err instanceof EstimateInputError) return plain(`Cannot estimate: ${err.message} (${err.hint}).`);
    return plain('Cannot estimate this setup; check the model size and memory answers.');
  }
  const ddp = ddpBytesOf(report.modes);
  const measured =
    ctx.measured && ctx.measured.length > 0 ? measuredPeaks(ctx.measured, a) : new Map<string, MeasuredPeak>();
  const steps =
    ctx.measured && ctx.measured.length > 0 ? measuredSteps(ctx.measured, a).steps : new Map<string, MeasuredStep>();
  const maxGpu = Math.max(1, ...report.modes.map((m) => m.peak.gpuBytes));
  const maxCpu = Math.max(1, ...report.modes.map((m) => m.peak.cpuBytes));
  const gpuScale = report.input.gpuMemoryBytes ?? maxGpu;
  const cpuScale = report.input.cpuMemoryBytes ?? maxCpu;
  const recommendedKey =
    report.recommended === null ? null : rowKey(report.recommended, report.recommendedOffloadDevice);
  const row = (m: ModeEstimate, key: string, label: string): TradeoffRow => {
    const failsOn: TradeoffRow['failsOn'] = [];
    if (m.gpuFits === false) failsOn.push('GPU');
    if (m.cpuFits === false) failsOn.push('CPU');
    if (m.nvmeFits === false) failsOn.push('NVMe');
    return {
      key,
      mode: m.mode,
      offloadDevice: m.offloadDevice,
      label,
      gpu: formatBytesCompact(m.peak.gpuBytes),
      cpu: formatBytesCompact(m.peak.cpuBytes),
      comm: commMultipleText(m.commBytesPerStep, ddp),
      time: formatSeconds(m.time.stepSeconds).replace(' s', 's'),
      gpuBar: Math.min(1, m.peak.gpuBytes / gpuScale),
      cpuBar: Math.min(1, m.peak.cpuBytes / cpuScale),
      fits: m.fits,
      measured: measured.get(placementKey(m.placement)) ?? null,
      measuredStep: steps.get(placementKey(m.placement)) ?? null,
      failsOn,
      recommended: key === recommendedKey,
      estimate: m,
    };
  };
  const rows = report.modes.map((m) => row(m, rowKey(m.mode, m.offloadDevice), rowLabel(m.mode, m.offloadDevice)));
  // Answers that split the offload devices get a row of their own, after their mode's.
  const split = splitPlacement(a);
  if (split) {
    const device = modeDevice(a.mode, a.offload_device);
    const at = rows.findIndex((r) => r.key === rowKey(a.mode, device));
    rows.splice(at + 1, 0, row(estimatePlacement(split, report.input, a.mode, device), SPLIT_ROW_KEY, SPLIT_ROW_LABEL));
  }
  parts.push(workloadText(report));
  // A recommendation the measurement contradicts says so.
  const rec = rows.find((r) => r.recommended);
  const against =
    rec?.measured && rec.estimate.fits
      ? measuredContradiction(rec.label, rec.measured, report.input.usableGpuBytes, rec.fits)
      : null;
  return {
    available: true,
    context: parts.join(' · '),
    rows,
    recommendedKey,
    reason: against ? `${report.reason.replace(/\.$/, '')}, ${against}.` : report.reason,
    notes,
    report,
    ddpBytesPerStep: ddp,
  };
}

/**
 * The ZeRO picture's numbers for a row of the table: the peak model's split (pictureBreakdown) of that
 * row's placement, on the same input as the table, so the picture and the table agree. Null without an
 * estimate.
 */
export function pictureOf(
  t: Tradeoff,
  key: string,
): (PictureBreakdown & { gpuPeakBytes: number; stepTime: string }) | null {
  const r = t.rows.find((x) => x.key === key);
  if (!r || !t.report) return null;
  return {
    ...pictureBreakdown(r.label, r.estimate.placement, t.report.input),
    gpuPeakBytes: r.estimate.peak.gpuBytes,
    stepTime: timeWords(r.estimate.time),
  };
}

/** The line items of a row's peak per GPU, short: `GiB/GPU: ctx 2.4, params 1.9, ..., margin 0.9`. */
export function itemsText(m: ModeEstimate): string {
  const i = m.peak.items;
  const parts = [
    `ctx ${gibFigureShort(i.cudaContext)}`,
    `params ${gibFigureShort(i.params)}`,
    `grads ${gibFigureShort(i.grads)}`,
    `optim ${gibFigureShort(i.optimizer)}`,
    `acts ${gibFigureShort(i.activations)}`,
  ];
  if (i.optimizerStep > 0) parts.push(`step ${gibFigureShort(i.optimizerStep)}`);
  if (i.encoders > 0) parts.push(`enc ${gibFigureShort(i.encoders)}`);
  parts.push(`buf ${gibFigureShort(i.buffers)}`);
  if (i.extraModels > 0) parts.push(`extra ${gibFigureShort(i.extraModels)}`);
  parts.push(`margin ${gibFigureShort(i.margin)}`);
  return `GiB/GPU: ${parts.join(', ')}`;
}

/** The CPU column's line items: what a node holds while loading and while training (the peak is the larger). */
export function cpuItemsText(m: Pick<ModeEstimate, 'peak'>): string {
  const c = m.peak.cpu;
  const g = (b: number) => gibFigure(b);
  const load = [`load weights ${g(c.loadWeights)}`, c.loadEncoders > 0 ? `encoders ${g(c.loadEncoders)}` : null];
  const train = [
    `states ${g(c.states)}`,
    c.pinned > 0 ? `pinned ${g(c.pinned)}` : null,
    c.swap > 0 ? `swap buffers ${g(c.swap)}` : null,
  ];
  const list = (xs: (string | null)[]) => xs.filter((x) => x !== null).join(', ');
  return `GiB/node (CPU, the larger of loading and training): ${list(load)}; ${list(train)}`;
}

/**
 * The panel on one mode, three lines: its peak per GPU and CPU per node and whether it fits, beside
 * DeepSpeed's estimator figure (model states only); the peak's line items; its traffic and the time it adds
 * per step. Without a model size, the seed's words on what it shards and costs.
 */
export function explainRow(t: Tradeoff, key: string): string[] {
  const row = rowFromKey(key);
  const mode = row?.mode ?? '2';
  const info = MODE_INFO[mode];
  const r = t.rows.find((x) => x.key === key);
  const shards =
    row?.device === 'nvme' ? info.shards.replace('to the CPU', 'to NVMe (through CPU buffers)') : info.shards;
  if (!r) return [shards, info.cost];
  const m = r.estimate;
  const fit =
    r.fits === null
      ? ''
      : r.fits
        ? ': fits'
        : `: does not fit${r.failsOn.length > 0 ? ` (${r.failsOn.join(', ')})` : ''}`;
  const line1 = `peak ${r.gpu}/GPU, ${r.cpu} CPU/node${m.nvmeBytes > 0 ? `, ${formatBytesCompact(m.nvmeBytes)} NVMe` : ''}${fit}. DeepSpeed's estimator: ${formatBytesCompact(m.gpuBytes)} (${DEEPSPEED_ESTIMATOR_WHY}).`;
  const traffic = [
    t.ddpBytesPerStep > 0
      ? `${formatBytesCompact(m.commBytesPerStep)} network (${r.comm} DDP; 1x = ${formatBytesCompact(t.ddpBytesPerStep)}/step)`
      : `${formatBytesCompact(m.commBytesPerStep)} network`,
  ];
  if (m.offloadBytesPerStep > 0) traffic.push(`${formatBytesCompact(m.offloadBytesPerStep)} GPU<->CPU`);
  if (m.nvmeBytesPerStep > 0) traffic.push(`${formatBytesCompact(m.nvmeBytesPerStep)} CPU<->NVMe`);
  const lines = [
    line1,
    itemsText(m),
    `Per GPU and step: ${traffic.join(', ')}; ${timeWords(m.time)}.`,
    cpuItemsText(m),
  ];
  // What each save of the weights costs in this mode (the 16-bit gather at ZeRO-3).
  const save = t.report ? saveCostOfInput(m.placement, t.report.input) : null;
  if (save) lines.push(`Saving: ${saveCostText(save)}.`);
  const here = [
    r.measured ? measuredText(r.measured, m.peak.gpuBytes) : null,
    r.measuredStep ? measuredStepText(r.measuredStep, m.time.stepSeconds) : null,
  ].filter((x) => x !== null);
  if (here.length > 0) lines.push(`Here: ${here.join('; ')}.`);
  // The split row says what it keeps where (its label cannot).
  if (key === SPLIT_ROW_KEY) lines.push(`${placementWords(m.placement)} (your offload_param_device answer).`);
  return lines;
}

/**
 * What the glossary says with this user's numbers: the estimator's parameter count, DDP's traffic (the
 * comm column's 1x), the model states of the whole model unsharded (the memory layout's states, every slice
 * at its full size) and the headroom rule (the answer, and the estimator's CPU fraction).
 */
export function glossaryContext(t: Tradeoff | null, a: Answers): GlossaryContext {
  const ctx: GlossaryContext = {
    gpus: String(a.num_processes),
    headroom: `${humanAnswer('headroom', a)}; ${Math.round(CPU_HEADROOM_FRACTION * 100)}% of the CPU memory`,
  };
  const row = t?.rows[0];
  if (!t?.available || !t.report || !row) return ctx;
  const n = t.report.input;
  ctx.params = formatCount(n.params);
  if (t.ddpBytesPerStep > 0) ctx.ddpPerStep = formatBytesCompact(t.ddpBytesPerStep);
  // Unsharded, the states weigh the same in every placement without offload: the first row's layout will do.
  const states = memoryLayout(row.estimate.placement, n).states;
  ctx.modelStates = formatBytesCompact(states.reduce((sum, x) => sum + x.elements * x.bytesPerElement, 0));
  if (n.trainable < n.params) {
    ctx.trained = formatCount(n.trainable);
    const perTrained = states.filter((x) => x.state !== 'params').reduce((sum, x) => sum + x.bytesPerElement, 0);
    ctx.bytesPerTrained = `${perTrained} bytes`;
  }
  const z3 = t.rows.find((r) => r.mode === '3' && r.key === '3');
  if (z3 && z3.comm !== '-') ctx.zero3Multiple = z3.comm;
  return ctx;
}
