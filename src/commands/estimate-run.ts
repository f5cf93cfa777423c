import { UsageError } from '../text/index.js';
import * as output from './output.js';
import {
  DEEPSPEED_ESTIMATOR_WHY,
  EstimateInputError,
  describeInternode,
  zeroPaperBytes,
  estimateModes,
  formatBand,
} from '../estimate/index.js';
import type { EstimateReport, ModeEstimate } from '../estimate/index.js';
import { measuredContradiction, measuredStepText, measuredText, placementKey } from '../estimate/index.js';
import { rowLabel } from '../config/index.js';
import { loadModelCatalog } from '../estimate/index.js';
import type { ModelEntry } from '../estimate/index.js';
import { formatByteRate, formatBytes, formatCount, formatGiB, gibFigure } from '../text/index.js';
import {
  boundCell,
  gpuCatalogText,
  machineJson,
  minBoxFor,
  minBoxJson,
  minBoxTable,
  pipelineFor,
  pipelineJson,
  pipelineText,
  recommendedRow,
  timeJson,
} from './estimate-time.js';
import type { MinBoxRow, PipelineEstimate } from '../estimate/index.js';

import { buildInput, type BuiltInput, type EstimateFlags } from './estimate-input.js';

export type { EstimateFlags } from './estimate-input.js';

/** Prints the estimate table or JSON for these flags. */
export async function runEstimate(flags: EstimateFlags): Promise<void> {
  if (flags.listModels) {
    output.data(renderCatalog(loadModelCatalog(), flags.json === true));
    return;
  }
  if (flags.listGpus) {
    output.data(gpuCatalogText(flags.json === true, pad));
    return;
  }
  const built = await buildInput(flags);
  let report: EstimateReport;
  let extra: Extra;
  try {
    report = estimateModes(built.input);
    extra = {
      pipeline: pipelineFor(report, built.time, built.preset?.dataSeconds ?? null),
      minBox: minBoxFor(built.input, built.time),
    };
  } catch (err) {
    if (err instanceof EstimateInputError) throw new UsageError(err.message, err.hint);
    throw err;
  }
  if (flags.json) {
    const doc = toJson(report, built, extra);
    assertSafeNumbers(doc, '');
    output.json(doc);
  } else {
    output.data(renderTable(report, built, extra));
  }
}

/** What the run adds beside the modes: the pipeline (--steps or --epochs) and --min-box. */
interface Extra {
  pipeline: PipelineEstimate | null;
  minBox: MinBoxRow[];
}

/** Subtrees of the --json document that hold seconds, prices and TFLOPS: finite decimals, not byte counts. */
const DECIMAL_KEYS = new Set(['time', 'pipeline', 'minBox', 'gpu', 'measuredStep']);

/**
 * Every number in the JSON document must be a safe integer (no 5e+35, nothing above 2^53), except the seconds,
 * prices and peaks under DECIMAL_KEYS, which must be finite.
 */
function assertSafeNumbers(v: unknown, path: string, decimals = false): void {
  if (typeof v === 'number') {
    if (decimals ? !Number.isFinite(v) : !Number.isSafeInteger(v))
      throw new UsageError(
        `the estimate's ${path || 'value'} (${v}) is not a whole number below 2^53`,
        'check the inputs: zerowiz sizes runs up to 100T parameters, 64 TiB per GPU and 1 PiB per node',
      );
    return;
  }
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) assertSafeNumbers(x, `${path}[${i}]`, decimals);
  } else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v))
      assertSafeNumbers(x, path ? `${path}.${k}` : k, decimals || DECIMAL_KEYS.has(k));
}

/** The `--json` document: the issue's shape plus extra fields. */
function toJson(report: EstimateReport, built: BuiltInput, extra: Extra): unknown {
  const { input } = report;
  const b = report.baseline;
  return {
    input: {
      ...(machineJson(report, built.time) as object),
      params: input.params,
      largestLayer: input.largestLayer,
      gpusPerNode: input.gpusPerNode,
      nodes: input.nodes,
      totalGpus: input.totalGpus,
      zeroInit: input.zeroInit,
      gpuMemoryBytes: input.gpuMemoryBytes,
      cpuMemoryBytes: input.cpuMemoryBytes,
      nvmeFreeBytes: input.nvmeFreeBytes,
      usableGpuBytes: input.usableGpuBytes,
      usableCpuBytes: input.usableCpuBytes,
      headroomPercent: input.headroomPercent,
      baseParams: input.baseParams,
      trainableParams: input.trainable,
      precision: input.precision,
      optimizer: input.optimizer,
      masterWeights: input.masterWeights,
      frames: built.answers.model_kind === 'video' ? built.answers.frames : null,
      encodersOnGpu: built.answers.encoders_on_gpu,
      fp8Models: built.answers.fp8_models,
      frozenGpuBytes: input.frozenGpuBytes,
      encoderTransientBytes: input.encoderTransientBytes,
      gpuLinks: built.answers.gpu_links,
      preset: built.preset?.name ?? null,
      extraGpuParams: input.extraGpuParams,
      knobs: input.knobs,
      activationBytes: input.activationBytes,
      activation: input.activation,
      interconnect: input.interconnect,
      model: built.model ? { id: built.model.id, name: built.model.name } : null,
      detected: built.detection
        ? {
            gpus: built.detection.gpu.gpus,
            mixed: built.detection.gpu.mixed,
            reason: built.detection.gpu.reason,
            cpuMemoryBytes: built.detection.cpuMemoryBytes,
          }
        : null,
    },
    modes: [
      {
        mode: b.mode,
        zeroInit: null,
        gpuBytes: zeroPaperBytes(0, input.params, 1),
        cpuBytes: report.deepspeed.find((r) => r.estimator === 'zero2' && r.offloadOptimizer === 'none')?.cpuBytes ?? 0,
        commBytesPerStep: b.commBytesPerStep,
        offloadBytesPerStep: 0,
        offloadDevice: null,
        fits: b.fits,
        gpuNeedBytes: b.gpuNeedBytes,
        gpuFits: b.gpuFits,
        cpuFits: b.cpuFits,
        peak: { gpuBytes: b.peak.gpuBytes, cpuBytes: b.peak.cpuBytes, items: b.peak.items, cpu: b.peak.cpu },
        time: timeJson(b.time),
      },
      ...report.modes.map((m) => ({
        mode: m.mode,
        zeroInit: m.zeroInit,
        gpuBytes: m.gpuBytes,
        cpuBytes: m.cpuBytes,
        commBytesPerStep: m.commBytesPerStep,
        offloadBytesPerStep: m.offloadBytesPerStep,
        fits: m.fits,
        offloadDevice: m.offloadDevice,
        gpuNeedBytes: m.gpuNeedBytes,
        nvmeBytes: m.nvmeBytes,
        nvmeBytesPerStep: m.nvmeBytesPerStep,
        gpuFits: m.gpuFits,
        cpuFits: m.cpuFits,
        nvmeFits: m.nvmeFits,
        note: m.note,
        peak: { gpuBytes: m.peak.gpuBytes, cpuBytes: m.peak.cpuBytes, items: m.peak.items, cpu: m.peak.cpu },
        measured: measuredJson(built, m),
        measuredStep: measuredStepJson(built, m),
        time: timeJson(m.time),
      })),
    ],
    deepspeed: report.deepspeed,
    recommended: report.recommended,
    recommendedOffloadDevice: report.recommendedOffloadDevice,
    reason: report.reason,
    advice: report.advice,
    ...(extra.pipeline ? { pipeline: pipelineJson(extra.pipeline) } : {}),
    ...(built.time.minBox ? { minBox: minBoxJson(extra.minBox) } : {}),
    notes: built.notes,
  };
}

/** The last step time the preset's runs measured for a row, for --json (null without --preset or a run). */
function measuredStepJson(built: BuiltInput, m: ModeEstimate): unknown {
  const hit = built.preset?.steps.get(placementKey(m.placement)) ?? null;
  if (!hit) return null;
  return { runId: hit.runId, day: hit.day, seconds: hit.seconds, text: measuredStepText(hit, m.time.stepSeconds) };
}

/** The last peak the preset's runs measured for a row, for --json (null without --preset or a run). */
function measuredJson(built: BuiltInput, m: ModeEstimate): unknown {
  const hit = built.preset?.measured.get(placementKey(m.placement)) ?? null;
  if (!hit) return null;
  return {
    runId: hit.runId,
    day: hit.day,
    peakBytes: hit.peakBytes,
    oom: hit.oom,
    text: measuredText(hit, m.peak.gpuBytes),
  };
}

/** Aligns columns: the first and any listed in `left` are left-aligned, the rest right-aligned. */
function pad(cells: string[][], left: number[] = []): string {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === 0 || left.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Bytes as GiB with two decimals, the unit DeepSpeed's estimator prints (labelled "GB" there). */
function gib(bytes: number): string {
  return formatGiB(bytes, 2);
}

function fitsText(m: ModeEstimate): string {
  if (m.fits === null) return '?';
  if (m.fits) return 'yes';
  const why = [
    m.gpuFits === false ? 'GPU' : '',
    m.cpuFits === false ? 'CPU' : '',
    m.nvmeFits === false ? 'NVMe' : '',
  ].filter(Boolean);
  return `no (${why.join('+')})`;
}

function renderTable(report: EstimateReport, built: BuiltInput, extra: Extra): string {
  const { input } = report;
  const out: string[] = [];
  const who = built.model ? `${built.model.name}: ` : '';
  const trained =
    input.trainable === input.params
      ? 'all trainable'
      : `${formatCount(input.trainable)} trainable${input.lora ? ` (LoRA rank ${input.lora.rank})` : ''}`;
  const largest =
    input.largestLayer === 0 ? 'largest layer not given' : `largest layer ${formatCount(input.largestLayer)}`;
  const master = input.masterWeights === 'none' ? 'no fp32 master weights' : 'fp32 master weights';
  out.push(
    `${built.preset ? `preset ${built.preset.name}: ` : ''}${who}${formatCount(input.params)} params (${trained}), ${largest}; ${input.nodes} node(s) x ${input.gpusPerNode} GPU(s) = ${input.totalGpus}; ${input.precision}, ${input.optimizer}, ${master}; zero_init ${input.zeroInit ? 'on' : 'off'}`,
  );
  out.push(
    `GPU memory ${input.gpuMemoryBytes === null ? 'unknown' : `${formatBytes(input.gpuMemoryBytes)} (usable ${formatBytes(input.usableGpuBytes!)} with ${input.headroomPercent}% headroom)`}; CPU memory per node ${input.cpuMemoryBytes === null ? 'unknown' : `${formatBytes(input.cpuMemoryBytes)} (usable ${formatBytes(input.usableCpuBytes!)})`}`,
  );
  const a = input.activation;
  if (a && input.activationBytes !== null) {
    out.push(
      `activations per GPU: ${formatBytes(input.activationBytes)} (${a.tokens} tokens x micro-batch ${a.microBatch}, ${a.layers} layers, hidden ${a.hidden}, heads ${a.heads}/${a.kvHeads} kv, ffn ${a.ffn}${a.vocab ? `, vocab ${a.vocab}` : ''}, checkpointing ${a.checkpointing})`,
    );
  }
  // What was said of the frozen encoders belongs beside the answers it changes (or did not change).
  for (const n of built.notes.filter((x) => x.startsWith('encoders on the GPU'))) out.push(n);
  out.push('');
  const rows: string[][] = [['mode', 'GPU peak', 'CPU/node', 'step time', 'bound by', 'fits', '']];
  const b = report.baseline;
  rows.push([
    input.totalGpus > 1 ? '0 no DeepSpeed (DDP)' : '0 no DeepSpeed',
    gib(b.peak.gpuBytes),
    gib(b.peak.cpuBytes),
    formatBand(b.time),
    boundCell(b.time),
    b.fits === null ? '?' : b.fits ? 'yes' : `no (${b.gpuFits === false ? 'GPU' : 'CPU'})`,
    '',
  ]);
  for (const m of report.modes) {
    const rec = report.recommended === m.mode && report.recommendedOffloadDevice === m.offloadDevice;
    rows.push([
      rowLabel(m.mode, m.offloadDevice),
      gib(m.peak.gpuBytes),
      gib(m.peak.cpuBytes),
      formatBand(m.time),
      boundCell(m.time),
      fitsText(m),
      rec ? '<- recommended' : '',
    ]);
  }
  out.push(pad(rows, [4, 5, 6]));
  const t = input.timing;
  const nvme = report.modes.some((m) => m.time.nvme !== null)
    ? `; NVMe ${formatByteRate(t.nvmeBytesPerS)} (${t.nvmeMeasured ? 'measured by `zerowiz check`' : 'assumed; `zerowiz check` measures the drive'})`
    : '';
  out.push(
    `step time: ${t.gpu.name} (${built.time.gpuSource}), ${report.modes[0]?.time.link ?? ''}${input.nodes > 1 ? `, ${describeInternode(t.internode)} between nodes` : ''}; ${t.hostCores} CPU cores per node (${built.time.coresSource})${nvme}; gradient accumulation ${t.accumulation}; per optimizer step`,
  );
  if (extra.pipeline)
    out.push(
      pipelineText(
        extra.pipeline,
        recommendedRow(report)
          ? rowLabel(recommendedRow(report)!.mode, recommendedRow(report)!.offloadDevice)
          : 'no DeepSpeed',
      ),
    );
  if (built.time.minBox) {
    out.push('', 'Smallest box per GPU that runs this job (its fastest mode that fits):');
    out.push(
      extra.minBox.length > 0 ? minBoxTable(extra.minBox, pad) : '  none: no catalog GPU fits it up to 64 nodes of 8',
    );
  }
  if (built.preset) {
    const lines: string[] = [];
    for (const m of report.modes) {
      const hit = built.preset.measured.get(placementKey(m.placement));
      const step = built.preset.steps.get(placementKey(m.placement));
      if ((!hit && !step) || m.offloadDevice === 'nvme') continue;
      const what = [
        hit ? `${measuredText(hit, m.peak.gpuBytes)} (run ${hit.runId})` : null,
        step ? `${measuredStepText(step, m.time.stepSeconds)} (run ${step.runId})` : null,
      ].filter((x) => x !== null);
      lines.push(`  ${rowLabel(m.mode, m.offloadDevice)}: ${what.join('; ')}`);
    }
    if (lines.length > 0)
      out.push('', 'Measured here (the last run of this setup: nvidia-smi, the progress bar):', ...lines);
  }
  out.push('');
  out.push(
    'GPU peak line items (GiB): context, params, grads, optimizer, activations, optimizer step, encoders, buffers, extra models, margin',
  );
  const items: string[][] = [
    ['mode', 'ctx', 'params', 'grads', 'optim', 'acts', 'step', 'enc', 'buffers', 'extra', 'margin'],
  ];
  const g1 = (b: number) => gibFigure(b, 2);
  for (const m of report.modes) {
    const i = m.peak.items;
    items.push([
      rowLabel(m.mode, m.offloadDevice),
      g1(i.cudaContext),
      g1(i.params),
      g1(i.grads),
      g1(i.optimizer),
      g1(i.activations),
      g1(i.optimizerStep),
      g1(i.encoders),
      g1(i.buffers),
      g1(i.extraModels),
      g1(i.margin),
    ]);
  }
  out.push(pad(items));
  out.push('');
  out.push(
    `CPU memory per node line items (GiB): loading (every rank's copy: weights at ${input.loadBytesPerParam} bytes a parameter${input.loadExtraBytes > 0 ? ', the frozen encoders' : ''}) or training (offloaded states, pinned buffers, NVMe swap buffers), whichever is larger`,
  );
  const cpuRows: string[][] = [['mode', 'load weights', 'load encoders', 'states', 'pinned', 'swap', 'CPU/node']];
  for (const m of [report.baseline, ...report.modes]) {
    const c = m.peak.cpu;
    cpuRows.push([
      m === report.baseline ? '0 no DeepSpeed' : rowLabel((m as ModeEstimate).mode, (m as ModeEstimate).offloadDevice),
      g1(c.loadWeights),
      g1(c.loadEncoders),
      g1(c.states),
      g1(c.pinned),
      g1(c.swap),
      g1(m.peak.cpuBytes),
    ]);
  }
  out.push(pad(cpuRows));
  out.push('');
  const rec = report.recommended ? rowLabel(report.recommended, report.recommendedOffloadDevice) : null;
  const recRow = report.modes.find(
    (m) => m.mode === report.recommended && m.offloadDevice === report.recommendedOffloadDevice,
  );
  const hit = recRow && built.preset ? built.preset.measured.get(placementKey(recRow.placement)) : undefined;
  const against = rec && recRow && hit ? measuredContradiction(rec, hit, input.usableGpuBytes, recRow.fits) : null;
  out.push(
    `${rec ? `Recommended: ${rec}. ` : 'No recommendation. '}${report.reason}${against ? ` ${against[0]!.toUpperCase()}${against.slice(1)}.` : ''}`,
  );
  out.push('');
  out.push(
    `DeepSpeed's estimators (estimate_zero2/zero3_model_states_mem_needs_all_cold; ${DEEPSPEED_ESTIMATOR_WHY}${input.trainable < input.params ? `: it counts all ${formatCount(input.params)} parameters as trained, where ${formatCount(input.trainable)} are` : ''}):`,
  );
  const ds: string[][] = [['estimator', 'per CPU', 'per GPU', 'options']];
  for (const r of report.deepspeed) {
    const opts =
      r.estimator === 'zero2'
        ? `offload_optimizer=${r.offloadOptimizer}`
        : `offload_param=${r.offloadParam}, offload_optimizer=${r.offloadOptimizer}, zero_init=${r.zeroInit ? 1 : 0}`;
    ds.push([r.estimator, gib(r.cpuBytes), gib(r.gpuBytes), opts]);
  }
  out.push(pad(ds, [3]));
  const notes = [
    ...built.notes.filter((x) => !x.startsWith('encoders on the GPU')),
    ...new Set(report.modes.map((m) => m.note).filter((n): n is string => n !== null)),
  ];
  if (notes.length > 0) {
    out.push('');
    for (const n of notes) out.push(`note: ${n}`);
  }
  out.push('');
  out.push('Line items, sources, headroom and units: zerowiz estimate --help');
  return `${out.join('\n')}\n`;
}

function renderCatalog(models: ModelEntry[], json: boolean): string {
  if (json) return `${JSON.stringify(models, null, 2)}\n`;
  const rows = [['id', 'kind', 'params', 'largest layer', 'name']];
  for (const m of models) rows.push([m.id, m.kind, formatCount(m.params), formatCount(m.largestLayer), m.name]);
  return `${pad(rows, [1, 4])}\n`;
}
