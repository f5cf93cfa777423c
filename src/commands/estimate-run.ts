/** `zerowiz estimate`'s work, loaded only when the command runs (the model catalog needs yaml and zod). */
import type { EstimateFlags } from './estimate.js';
import { activationBytes } from '../activations.js';
import type { ActivationInput, Checkpointing } from '../activations.js';
import { describeGpus, detectHost } from '../detect.js';
import type { HostDetection } from '../detect.js';
import { UsageError } from '../errors.js';
import { EstimateInputError, MAX_PARAMS, estimateModes } from '../estimate.js';
import type { EstimateReport, ModeEstimate } from '../estimate.js';
import { MODE_INFO } from '../modes.js';
import { findModel, loadModelCatalog } from '../models.js';
import type { ModelEntry } from '../models.js';
import { formatBytes, formatCount, parseBytes, parseCount, parseInteger } from '../units.js';

/** Prints the estimate table or JSON for these flags. */
export async function runEstimate(flags: EstimateFlags): Promise<void> {
  if (flags.listModels) {
    process.stdout.write(renderCatalog(loadModelCatalog(), flags.json === true));
    return;
  }
  const built = await buildInput(flags);
  let report: EstimateReport;
  try {
    report = estimateModes(built.input);
  } catch (err) {
    if (err instanceof EstimateInputError) throw new UsageError(err.message);
    throw err;
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(toJson(report, built), null, 2)}\n`);
  } else {
    process.stdout.write(renderTable(report, built));
  }
}

/** What the flags resolve to, plus context for the output. */
interface BuiltInput {
  input: Parameters<typeof estimateModes>[0];
  model: ModelEntry | null;
  activation: ActivationInput | null;
  detection: HostDetection | null;
  notes: string[];
}

async function buildInput(flags: EstimateFlags): Promise<BuiltInput> {
  const notes: string[] = [];
  const model = flags.model !== undefined ? findModel(flags.model) : null;
  if (model && (flags.params !== undefined || flags.largestLayer !== undefined)) {
    throw new UsageError(
      `--model ${model.id} already sets the parameter count and largest layer; --params/--largest-layer would contradict it`,
      'give either --model, or --params (with --largest-layer) for another model',
    );
  }
  if (flags.params === undefined && !model) {
    throw new UsageError(
      '--params is required (or --model NAME)',
      'e.g. zerowiz estimate --params 20.4B --largest-layer 57M --gpus-per-node 8 --gpu-memory 80GiB',
    );
  }
  const params = flags.params !== undefined ? parseCount(flags.params, '--params') : model!.params;
  if (params > MAX_PARAMS)
    throw new UsageError(
      `--params '${flags.params}' is beyond ${formatCount(MAX_PARAMS)}`,
      'the estimator works up to 100T parameters',
    );
  if (params < 1e6)
    notes.push(
      `--params ${flags.params} means ${params} parameters; did you mean ${flags.params}B or ${flags.params}M?`,
    );
  let largestLayer: number;
  if (flags.largestLayer !== undefined) largestLayer = parseCount(flags.largestLayer, '--largest-layer');
  else if (model && flags.params === undefined) largestLayer = model.largestLayer;
  else {
    largestLayer = 0;
    notes.push('--largest-layer not given: ZeRO-3 GPU figures leave out the 4 x largest-layer bytes gathered per GPU.');
  }
  if (largestLayer > params) {
    throw new UsageError(
      `--largest-layer (${formatCount(largestLayer)}) cannot exceed --params (${formatCount(params)})`,
      'the largest layer is one module of the model',
    );
  }
  let gpusPerNode =
    flags.gpusPerNode !== undefined ? parseInteger(flags.gpusPerNode, '--gpus-per-node', 1, 1024) : null;
  const nodes = flags.nodes !== undefined ? parseInteger(flags.nodes, '--nodes', 1, 100_000) : 1;
  let gpuMemoryBytes = flags.gpuMemory !== undefined ? parseBytes(flags.gpuMemory, '--gpu-memory') : null;
  let cpuMemoryBytes = flags.cpuMemory !== undefined ? parseBytes(flags.cpuMemory, '--cpu-memory') : null;
  const activation = buildActivation(flags, model);
  let detection: HostDetection | null = null;
  let nvmeFreeBytes: number | null = null;
  if (flags.detect || flags.nvmePath !== undefined) {
    detection = await detectHost({ nvmePath: flags.nvmePath ?? null });
    if (flags.nvmePath !== undefined) {
      nvmeFreeBytes = detection.nvmeFreeBytes;
      if (nvmeFreeBytes === null) notes.push(`cannot read free space at ${flags.nvmePath}; NVMe space is not checked.`);
    }
    if (flags.detect) {
      const gpu = detection.gpu;
      notes.push(`detected: ${describeGpus(gpu)}; CPU memory ${formatBytes(detection.cpuMemoryBytes)}.`);
      if (gpu.detected) {
        gpusPerNode ??= gpu.gpus.length;
        gpuMemoryBytes ??= gpu.minMemoryBytes;
      } else if (gpusPerNode === null || gpuMemoryBytes === null) {
        notes.push('give --gpus-per-node and --gpu-memory yourself.');
      }
      cpuMemoryBytes ??= detection.cpuMemoryBytes;
    } else {
      detection = {
        ...detection,
        gpu: { detected: false, gpus: [], mixed: false, minMemoryBytes: null, reason: 'not asked (--detect)' },
      };
    }
  }
  return {
    input: {
      params,
      largestLayer,
      gpusPerNode: gpusPerNode ?? 1,
      nodes,
      zeroInit: flags.zeroInit !== false,
      gpuMemoryBytes,
      cpuMemoryBytes,
      nvmeFreeBytes,
      activationBytes: activation ? activationBytes(activation) : null,
      includeNvme: flags.nvme !== false,
    },
    model,
    activation,
    detection,
    notes,
  };
}

function buildActivation(flags: EstimateFlags, model: ModelEntry | null): ActivationInput | null {
  if (flags.seqLen !== undefined && flags.imageTokens !== undefined) {
    throw new UsageError(
      'give --seq-len or --image-tokens, not both',
      'for a DiT, --image-tokens is the sequence length (image + text tokens)',
    );
  }
  const seqText = flags.seqLen ?? flags.imageTokens;
  const explicit = {
    '--layers': flags.layers,
    '--hidden': flags.hidden,
    '--heads': flags.heads,
    '--seq-len': seqText,
    '--micro-batch': flags.microBatch,
  };
  const anyGiven = Object.values(explicit).some((v) => v !== undefined) || flags.checkpointing !== undefined;
  if (!anyGiven) return null;
  const num = (text: string | undefined, what: string, fromModel: number | null | undefined): number | null =>
    text !== undefined ? parseInteger(text, what, 1, 10_000_000) : (fromModel ?? null);
  const values = {
    '--layers': num(flags.layers, '--layers', model?.layers),
    '--hidden': num(flags.hidden, '--hidden', model?.hidden),
    '--heads': num(flags.heads, '--heads', model?.heads),
    '--seq-len': num(seqText, flags.seqLen !== undefined ? '--seq-len' : '--image-tokens', null),
    '--micro-batch': num(flags.microBatch, '--micro-batch', null),
  };
  const missing = Object.entries(values)
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  if (missing.length > 0) {
    throw new UsageError(
      `the activation estimate also needs ${missing.join(', ')}`,
      'give all of --layers --hidden --heads --seq-len --micro-batch (or --model NAME for the first three)',
    );
  }
  let checkpointing: Checkpointing = 'none';
  if (flags.checkpointing !== undefined) {
    if (flags.checkpointing !== 'none' && flags.checkpointing !== 'full') {
      throw new UsageError(
        `--checkpointing '${flags.checkpointing}' is not none or full`,
        'use --checkpointing none or --checkpointing full',
      );
    }
    checkpointing = flags.checkpointing;
  }
  return {
    layers: values['--layers']!,
    hidden: values['--hidden']!,
    heads: values['--heads']!,
    seqLen: values['--seq-len']!,
    microBatch: values['--micro-batch']!,
    checkpointing,
  };
}

/** The `--json` document: the issue's shape plus extra fields. */
function toJson(report: EstimateReport, built: BuiltInput): unknown {
  const { input } = report;
  return {
    input: {
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
      activationBytes: input.activationBytes,
      activation: built.activation,
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
    modes: report.modes.map((m) => ({
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
    })),
    deepspeed: report.deepspeed,
    recommended: report.recommended,
    recommendedOffloadDevice: report.recommendedOffloadDevice,
    reason: report.reason,
    notes: built.notes,
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
  return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
}

function modeLabel(m: ModeEstimate): string {
  return m.offloadDevice === 'nvme' ? `${m.mode} nvme` : m.mode;
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

function renderTable(report: EstimateReport, built: BuiltInput): string {
  const { input } = report;
  const out: string[] = [];
  const who = built.model ? `${built.model.name}: ` : '';
  out.push(
    `${who}${formatCount(input.params)} params, largest layer ${formatCount(input.largestLayer)}; ${input.nodes} node(s) x ${input.gpusPerNode} GPU(s) = ${input.totalGpus}; zero_init ${input.zeroInit ? 'on' : 'off'}`,
  );
  out.push(
    `GPU memory ${input.gpuMemoryBytes === null ? 'unknown' : `${formatBytes(input.gpuMemoryBytes)} (usable ${formatBytes(input.usableGpuBytes!)})`}; CPU memory per node ${input.cpuMemoryBytes === null ? 'unknown' : `${formatBytes(input.cpuMemoryBytes)} (usable ${formatBytes(input.usableCpuBytes!)})`}`,
  );
  if (input.activationBytes !== null && built.activation) {
    const a = built.activation;
    out.push(
      `activations per GPU: ${formatBytes(input.activationBytes)} (layers ${a.layers}, hidden ${a.hidden}, heads ${a.heads}, seq ${a.seqLen}, micro-batch ${a.microBatch}, checkpointing ${a.checkpointing}); counted in "fits"`,
    );
  }
  out.push('');
  const rows: string[][] = [['mode', 'GPU per GPU', 'CPU per node', 'comm/step', 'offload/step', 'fits', '']];
  for (const m of report.modes) {
    const rec = report.recommended === m.mode && report.recommendedOffloadDevice === m.offloadDevice;
    rows.push([
      modeLabel(m),
      gib(m.gpuBytes),
      gib(m.cpuBytes),
      gib(m.commBytesPerStep),
      gib(m.offloadBytesPerStep),
      fitsText(m),
      rec ? '<- recommended' : '',
    ]);
  }
  out.push(pad(rows, [5, 6]));
  out.push('');
  out.push(
    `${report.recommended ? `Recommended: ${MODE_INFO[report.recommended].label}${report.recommendedOffloadDevice === 'nvme' ? ' (NVMe)' : ''}. ` : 'No recommendation. '}${report.reason}`,
  );
  out.push('');
  out.push("DeepSpeed's estimators (estimate_zero2/zero3_model_states_mem_needs_all_cold; model states only):");
  const ds: string[][] = [['estimator', 'per CPU', 'per GPU', 'options']];
  for (const r of report.deepspeed) {
    const opts =
      r.estimator === 'zero2'
        ? `offload_optimizer=${r.offloadOptimizer}`
        : `offload_param=${r.offloadParam}, offload_optimizer=${r.offloadOptimizer}, zero_init=${r.zeroInit ? 1 : 0}`;
    ds.push([r.estimator, gib(r.cpuBytes), gib(r.gpuBytes), opts]);
  }
  out.push(pad(ds, [3]));
  const notes = [...built.notes, ...new Set(report.modes.map((m) => m.note).filter((n): n is string => n !== null))];
  if (notes.length > 0) {
    out.push('');
    for (const n of notes) out.push(`note: ${n}`);
  }
  out.push('');
  out.push('Formulas, headroom and units: zerowiz estimate --help');
  return `${out.join('\n')}\n`;
}

function renderCatalog(models: ModelEntry[], json: boolean): string {
  if (json) return `${JSON.stringify(models, null, 2)}\n`;
  const rows = [['id', 'params', 'largest layer', 'name']];
  for (const m of models) rows.push([m.id, formatCount(m.params), formatCount(m.largestLayer), m.name]);
  return `${pad(rows, [3])}\n`;
}
