/**
 * The ZeRO mode question's tradeoff, as plain data the view prints: one row per mode (and NVMe variant)
 * with the estimator's figures formatted, bar fractions, fits, the recommendation and the two-line
 * explanation of the highlighted mode with the user's numbers. Pure; the estimator does the maths.
 */
import { estimateModes, type EstimateReport, type ModeEstimate } from '../estimate.js';
import { MODE_INFO, type Mode, type OffloadDevice } from '../modes.js';
import type { Answers } from '../questions.js';
import { formatCount } from '../units.js';

/** One row of the tradeoff table. */
export interface TradeoffRow {
  /** `3-offload` or `3-offload:nvme`: unique per row. */
  key: string;
  mode: Mode;
  offloadDevice: OffloadDevice | null;
  label: string;
  /** Figures, formatted (at most 8 characters each). */
  gpu: string;
  cpu: string;
  /** Communication per step as a multiple of DDP's, e.g. `1.5x`; `-` with one GPU. */
  comm: string;
  /** GPU<->CPU bytes per GPU per step, `-` when the mode does not offload. */
  offload: string;
  /** 0..1 of the bar scale (GPU: usable GPU memory or the largest row; CPU likewise). */
  gpuBar: number;
  cpuBar: number;
  fits: boolean | null;
  recommended: boolean;
  estimate: ModeEstimate;
}

/** The whole tradeoff panel. */
export interface Tradeoff {
  /** False when no parameter count was given: only the descriptions can be shown. */
  available: boolean;
  /** "20.4B params · 8 GPUs (1 node x 8) · 80 GiB per GPU · 1 TiB RAM per node". */
  context: string;
  rows: TradeoffRow[];
  recommendedKey: string | null;
  /** The recommendation's one sentence (or why there is none). */
  reason: string;
  report: EstimateReport | null;
}

/** Bytes in at most 8 characters: `79.6 GiB`, `312 GiB`, `1.2 TiB`, `640 MiB`. */
export function compactBytes(bytes: number): string {
  const units: [number, string][] = [
    [2 ** 40, 'TiB'],
    [2 ** 30, 'GiB'],
    [2 ** 20, 'MiB'],
    [2 ** 10, 'KiB'],
  ];
  for (const [size, unit] of units) {
    if (bytes >= size) {
      const v = bytes / size;
      return `${v >= 100 ? Math.round(v) : Number(v.toFixed(1))} ${unit}`;
    }
  }
  return bytes === 0 ? '0' : `${bytes} B`;
}

/** The row key of a mode and offload device. */
export function rowKey(mode: Mode, device: OffloadDevice | null): string {
  return device === 'nvme' ? `${mode}:nvme` : mode;
}

/** The row key the answers select now. */
export function selectedKey(a: Pick<Answers, 'mode' | 'offload_device'>): string {
  const info = MODE_INFO[a.mode];
  return rowKey(a.mode, info.offloadOptimizer || info.offloadParam ? a.offload_device : null);
}

function labelOf(mode: Mode, device: OffloadDevice | null): string {
  return device === 'nvme' ? `${MODE_INFO[mode].label} NVMe` : MODE_INFO[mode].label;
}

/** GPUs per node and nodes as the estimator wants them. */
export function topology(a: Pick<Answers, 'num_processes' | 'num_machines'>): { gpusPerNode: number; nodes: number } {
  const nodes = Math.max(1, a.num_machines);
  return { gpusPerNode: Math.max(1, Math.floor(a.num_processes / nodes)), nodes };
}

/**
 * The tradeoff for these answers. `zeroInit` is the zero.Init answer if the user gave one; otherwise the
 * stage-3 rows assume it on (the default once a stage-3 mode is chosen).
 */
export function tradeoffOf(a: Answers, zeroInit?: boolean): Tradeoff {
  const { gpusPerNode, nodes } = topology(a);
  const gpus = `${gpusPerNode * nodes} GPU${gpusPerNode * nodes === 1 ? '' : 's'}${nodes > 1 ? ` (${nodes} nodes x ${gpusPerNode})` : ''}`;
  const parts = [a.model_params === null ? 'model size not given' : `${formatCount(a.model_params)} params`, gpus];
  parts.push(a.gpu_memory === null ? 'GPU memory unknown' : `${compactBytes(a.gpu_memory)}/GPU`);
  if (a.cpu_memory !== null) parts.push(`${compactBytes(a.cpu_memory)} RAM/node`);
  const context = parts.join(' · ');
  const plain = (): Tradeoff => ({
    available: false,
    context,
    rows: [],
    recommendedKey: null,
    reason: 'Give the model size (the parameters question; Esc goes back) to see memory, traffic and fit per mode.',
    report: null,
  });
  if (a.model_params === null) return plain();
  const largest = a.largest_layer_params ?? Math.max(1, Math.round(a.model_params * 0.01));
  let report: EstimateReport;
  try {
    report = estimateModes({
      params: a.model_params,
      largestLayer: Math.min(largest, a.model_params),
      gpusPerNode,
      nodes,
      zeroInit: zeroInit ?? true,
      gpuMemoryBytes: a.gpu_memory,
      cpuMemoryBytes: a.cpu_memory,
    });
  } catch {
    return plain();
  }
  const ddp = report.modes.find((m) => m.mode === '1')?.commBytesPerStep ?? 0;
  const maxGpu = Math.max(1, ...report.modes.map((m) => m.gpuNeedBytes));
  const maxCpu = Math.max(1, ...report.modes.map((m) => m.cpuBytes));
  const gpuScale = report.input.gpuMemoryBytes ?? maxGpu;
  const cpuScale = report.input.cpuMemoryBytes ?? maxCpu;
  const recommendedKey =
    report.recommended === null ? null : rowKey(report.recommended, report.recommendedOffloadDevice);
  const rows = report.modes.map((m): TradeoffRow => {
    const key = rowKey(m.mode, m.offloadDevice);
    return {
      key,
      mode: m.mode,
      offloadDevice: m.offloadDevice,
      label: labelOf(m.mode, m.offloadDevice),
      gpu: compactBytes(m.gpuNeedBytes),
      cpu: compactBytes(m.cpuBytes),
      comm: ddp === 0 ? '-' : `${Number((m.commBytesPerStep / ddp).toFixed(2))}x`,
      offload: m.offloadBytesPerStep === 0 ? '-' : compactBytes(m.offloadBytesPerStep),
      gpuBar: Math.min(1, m.gpuNeedBytes / gpuScale),
      cpuBar: Math.min(1, m.cpuBytes / cpuScale),
      fits: m.fits,
      recommended: key === recommendedKey,
      estimate: m,
    };
  });
  return { available: true, context, rows, recommendedKey, reason: report.reason, report };
}

/**
 * Two sentences on one mode: what it shards or offloads (with the memory it leaves per GPU and per node),
 * and what it costs (with the traffic per GPU per step). Without a model size, the seed's words alone.
 */
export function explainRow(t: Tradeoff, key: string): [string, string] {
  const [modePart, dev] = key.split(':') as [Mode, string | undefined];
  const info = MODE_INFO[modePart];
  const row = t.rows.find((r) => r.key === key);
  const shards = dev === 'nvme' ? info.shards.replace('to the CPU', 'to NVMe (through CPU buffers)') : info.shards;
  if (!row) return [shards, info.cost];
  const m = row.estimate;
  const line1 = `${shards} Needs ${row.gpu} per GPU, ${row.cpu} CPU per node${m.nvmeBytes > 0 ? `, ${compactBytes(m.nvmeBytes)} NVMe` : ''}${row.fits === null ? '' : row.fits ? ': fits.' : ': does not fit.'}`;
  const traffic = [`${compactBytes(m.commBytesPerStep)} network (${row.comm} DDP)`];
  if (m.offloadBytesPerStep > 0) traffic.push(`${row.offload} GPU<->CPU`);
  if (m.nvmeBytesPerStep > 0) traffic.push(`${compactBytes(m.nvmeBytesPerStep)} CPU<->NVMe`);
  return [line1, `${info.cost} Per GPU and step: ${traffic.join(', ')}.`];
}
