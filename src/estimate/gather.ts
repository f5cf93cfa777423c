/**
 * What one save of the weights costs, per mode (DeepSpeed v0.19.6 and accelerate 1.15.0, read at their source):
 *
 * - ZeRO-3 with `stage3_gather_16bit_weights_on_model_save`: accelerate's `get_state_dict` (DiffSynth's
 *   ModelLogger.save_model calls it at every save; `save_model` does too) runs DeepSpeed's
 *   `_zero3_consolidated_16bit_state_dict`: module by module, `GatheredParameters(module.parameters(recurse=False))`
 *   all-gathers that module's partitions on every rank, and rank 0 copies them to the CPU (`param.detach().cpu()`)
 *   before the next. So each GPU holds one module whole at a time (the largest layer L: the catalog's
 *   `largest_layer` counts exactly parameters(recurse=False)), rank 0's host ends up with every parameter, frozen
 *   ones included (P x w bytes), and the all-gathers move P x w x (N-1)/N per GPU. With offload_param the
 *   partitions come from the CPU (or NVMe) first: P x w / N per rank. The trainer then writes what it keeps
 *   (DiffSynth: the trainable parameters; a full save: all), which safetensors serialises into one more copy.
 * - Stages 1-2: nothing is gathered (each rank holds the whole 16-bit model), but accelerate's `get_state_dict`
 *   returns `clone_tensors_for_torch_save(state_dict)`, a CPU copy on every rank: P x w per process, so
 *   GPUs-per-node times that on a node's host.
 * - ZeRO-3 without the gather: `get_state_dict` raises ("Cannot get 16bit model weights ..."): no cost, an error
 *   (src/rules/checkpoint-save.ts).
 *
 * Times assume no overlap (an upper bound), the links of the step-time model (./time.ts), and
 * DISK_WRITE_BYTES_PER_S for the file.
 */
import { estimateInputFromSetup, placementOfAnswers, type EstimateAnswers, type EstimateContext } from './input.js';
import { type EstimateInput, type NormalizedInput, normalizeInput } from './estimate.js';
import type { ModelEntry } from './models.js';
import { weightBytes } from './peak.js';
import { pcieBytesPerS } from './gpus.js';
import { collectiveLink } from './time.js';
import type { Placement } from '../config/index.js';
import type { Answers } from '../config/index.js';
import { formatBytesShort } from '../text/index.js';

/** Writing the saved file: 1 GB/s, an assumption (a local NVMe writes 2-3 GB/s, a shared file system less). */
export const DISK_WRITE_BYTES_PER_S = 1e9;
/**
 * The collective timeout a save must finish within while the other ranks wait: 600 s for NCCL in accelerate
 * (InitProcessGroupKwargs: 600 s for nccl, 1800 s otherwise) and DeepSpeed (default_pg_timeout, 10 minutes,
 * DEEPSPEED_TIMEOUT).
 */
export const NCCL_TIMEOUT_S = 600;

/** The cost of one save of the weights. */
export interface SaveCost {
  /** True at ZeRO-3 (the 16-bit gather); false at stages 1-2 (a CPU copy on every rank). */
  gathers: boolean;
  /** Host memory the save takes on the busiest node (rank 0's), at its peak. */
  hostBytesPerNode: number;
  /** GPU memory the save takes on each GPU, transient (one module gathered whole). */
  gpuBytesPerGpu: number;
  /** What the file holds. */
  savedBytes: number;
  commSeconds: number;
  pcieSeconds: number;
  nvmeSeconds: number;
  diskSeconds: number;
  /** The sum: no overlap assumed. */
  seconds: number;
  /** The link the all-gathers run on, in words. */
  link: string;
}

/** The cost of saving for a placement. `saved`: what the script writes (DiffSynth: the trainable parameters). */
export function saveCost(placement: Placement, n: NormalizedInput, saved: 'trainable' | 'all'): SaveCost {
  const w = weightBytes(n.precision);
  const all = n.params * w;
  const savedBytes = (saved === 'trainable' ? n.trainable : n.params) * w;
  const diskSeconds = savedBytes / DISK_WRITE_BYTES_PER_S;
  const { link, bytesPerS } = collectiveLink(n);
  const pcie = pcieBytesPerS(n.timing.gpu);
  if (placement.stage !== 3) {
    const pcieSeconds = all / pcie;
    return {
      gathers: false,
      hostBytesPerNode: n.gpusPerNode * all + savedBytes,
      gpuBytesPerGpu: 0,
      savedBytes,
      commSeconds: 0,
      pcieSeconds,
      nvmeSeconds: 0,
      diskSeconds,
      seconds: pcieSeconds + diskSeconds,
      link,
    };
  }
  const N = n.totalGpus;
  const commSeconds = N <= 1 ? 0 : (all * (N - 1)) / N / bytesPerS;
  const partition = all / N;
  const pcieSeconds = (all + (placement.param === 'cpu' ? partition : 0)) / pcie;
  const nvmeSeconds = placement.param === 'nvme' ? partition / n.timing.nvmeBytesPerS : 0;
  return {
    gathers: true,
    hostBytesPerNode: all + savedBytes,
    gpuBytesPerGpu: n.largestLayer * w,
    savedBytes,
    commSeconds,
    pcieSeconds,
    nvmeSeconds,
    diskSeconds,
    seconds: commSeconds + pcieSeconds + nvmeSeconds + diskSeconds,
    link,
  };
}

function seconds(s: number): string {
  if (s < 10) return `${Number(s.toFixed(1))} s`;
  if (s < 120) return `${Math.round(s)} s`;
  return `${Math.round(s / 60)} min`;
}

/**
 * The cost of saving for a placement of an estimate's input (the ZeRO table's rows): a LoRA or a given
 * trainable count saves the trainable parameters (DiffSynth's trainer), else the whole model.
 */
export function saveCostOfInput(placement: Placement, input: EstimateInput): SaveCost | null {
  try {
    const saved = input.lora || (input.trainableParams ?? null) !== null ? 'trainable' : 'all';
    return saveCost(placement, normalizeInput(input), saved);
  } catch {
    return null;
  }
}

/** One sentence for where the mode is chosen (and the review): what each save costs, and the timeout when near. */
export function saveCostText(c: SaveCost): string {
  const head = c.gathers
    ? `each save gathers the 16-bit weights: ${formatBytesShort(c.hostBytesPerNode)} of host memory on rank 0's node, +${formatBytesShort(c.gpuBytesPerGpu)} per GPU (the largest layer)`
    : `each save copies the weights to the CPU on every process: ${formatBytesShort(c.hostBytesPerNode)} of host memory per node`;
  const parts = [
    c.commSeconds > 0 ? `all-gather over ${c.link}` : null,
    'PCIe to the host',
    c.nvmeSeconds > 0 ? 'NVMe reads' : null,
    `${formatBytesShort(c.savedBytes)} written at an assumed 1 GB/s`,
  ].filter((x) => x !== null);
  const near =
    c.seconds > NCCL_TIMEOUT_S / 2
      ? `; the other ranks wait for it in the next collective: near the NCCL timeout (${NCCL_TIMEOUT_S / 60} min; raise it with accelerate's InitProcessGroupKwargs(timeout=...) or DEEPSPEED_TIMEOUT)`
      : '';
  return `${head}, about ${seconds(c.seconds)} (${parts.join(', ')})${near}`;
}

/**
 * The save cost of a setup's own mode, or null when there is nothing to say: no model size, answers that
 * cannot be estimated, or ZeRO-3 without the gather (the save fails; the step finding says so).
 */
export function saveCostOfSetup(
  a: EstimateAnswers & Pick<Answers, 'zero3_save_16bit_model'>,
  models: readonly ModelEntry[],
  ctx: Omit<EstimateContext, 'models'> = {},
): SaveCost | null {
  const placement = placementOfAnswers(a);
  if (placement.stage === 3 && !a.zero3_save_16bit_model) return null;
  try {
    const { input } = estimateInputFromSetup(a, { ...ctx, models });
    if (!input) return null;
    return saveCost(placement, normalizeInput(input), a.fine_tuning === 'lora' ? 'trainable' : 'all');
  } catch {
    return null;
  }
}
