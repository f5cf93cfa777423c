/**
 * The glossary: the words the ZeRO screen uses, each in two or three plain sentences and with the number it
 * changes in the tradeoff table. Data plus a pure renderer that wraps to the width and scrolls by lines;
 * the numbers of this user's model come in through GlossaryContext (from the estimator), never computed here.
 */
import type { QuestionId } from '../config/index.js';
import { wrap } from '../text/index.js';

/** One glossary entry. */
export interface GlossaryEntry {
  id: string;
  term: string;
  /** What it is, plainly. */
  text: string;
  /** Which number in the table it changes, and how (with this user's figure when the context has it). */
  changes: (c: GlossaryContext) => string;
}

/** This user's figures, formatted, when known (the estimator's, passed in by the view). */
export interface GlossaryContext {
  /** `20.43B`. */
  params?: string;
  /** `8`. */
  gpus?: string;
  /** DDP's traffic per GPU per step, what the comm column's 1x is: `66.6 GiB`. */
  ddpPerStep?: string;
  /** Model states of the whole model, unsharded: `304 GiB`. */
  modelStates?: string;
  /** When not every parameter is trained: the trained count (`235.93M`) and the bytes per trained parameter. */
  trained?: string;
  bytesPerTrained?: string;
  /** ZeRO-3's collectives as a multiple of DDP's, the table's comm figure: `1.5x`, `88.1x`. */
  zero3Multiple?: string;
  /** The headroom rule: `10% of each GPU; 10% of the CPU memory`. */
  headroom?: string;
}

const forModel = (c: GlossaryContext) => {
  if (!c.params) return '';
  // A LoRA or a frozen backbone trains few of them: the frozen ones cost only their 16-bit weights.
  if (c.trained)
    return ` (for ${c.params} params of which ${c.trained} are trained: 2 bytes for every one, ${c.bytesPerTrained ?? '?'} more for each trained one, ${c.modelStates ?? '?'})`;
  return ` (for ${c.params} params: ${c.modelStates ?? '?'})`;
};

/** The entries, in the order a newcomer meets them. */
export const GLOSSARY: readonly GlossaryEntry[] = [
  {
    id: 'ddp',
    term: 'DDP (distributed data parallel)',
    text: 'Every GPU keeps a whole copy of the model and its training state and trains on its own part of each batch; after the backward pass the GPUs average their gradients with an all-reduce. ZeRO is DDP with those copies split up.',
    changes: (c) =>
      `comm: 1x is what DDP moves per GPU per step${c.ddpPerStep ? `, ${c.ddpPerStep} for your model` : ''}.`,
  },
  {
    id: 'model-states',
    term: 'Model states',
    text: "What training keeps for each parameter besides activations: its 16-bit weight (2 bytes) and, for a trained one, its 16-bit gradient (2 bytes), the fp32 copy of that gradient DeepSpeed steps the optimizer with (4 bytes) and the optimizer states (12 bytes with Adam): 20 bytes per trained parameter, 2 per frozen one. The ZeRO paper counts 16, without the fp32 gradient; DeepSpeed's own estimator counts it since v0.14.3 (and every parameter as trained). 8-bit AdamW, Adafactor or no fp32 master weights need less.",
    changes: (c) => `GPU peak and CPU/node count model states${forModel(c)}; the modes differ in where they keep them.`,
  },
  {
    id: 'optimizer-states',
    term: 'Optimizer states',
    text: "Adam's fp32 master copy of the weights, its momentum and its variance: 4 + 4 + 4 = 12 bytes per parameter, three fifths of the model states. ZeRO-1 shards these first.",
    changes: () => 'GPU peak: sharding them (ZeRO-1) or moving them to the CPU (offload) removes the largest part.',
  },
  {
    id: 'sharding',
    term: 'Sharding',
    text: 'Splitting a tensor into N slices, one per GPU: each GPU keeps 1/N and gets the rest from the others when it needs it. ZeRO-1 shards the optimizer states, ZeRO-2 the gradients too, ZeRO-3 the parameters too.',
    changes: (c) =>
      `GPU peak shrinks as GPUs are added${c.gpus ? ` (here 1/${c.gpus} of each sharded piece)` : ''}; press p on the ZeRO question to see the slices.`,
  },
  {
    id: 'offload',
    term: 'Offload (CPU or NVMe)',
    text: 'Keeping the optimizer states (and at ZeRO-3 the parameters) in CPU memory or on an NVMe drive instead of the GPU; the CPU then runs the Adam step. It trades GPU memory for PCIe traffic and CPU time.',
    changes: () =>
      "moves bytes from GPU peak to CPU/node, and adds the panel's GPU<->CPU bytes (over PCIe, per GPU per step) and their time to the s/step column.",
  },
  {
    id: 'collectives',
    term: 'All-gather, reduce-scatter',
    text: "All-gather: every GPU sends its slice to all the others, so each ends with the whole tensor. Reduce-scatter: the GPUs add up their gradients and each keeps only its slice of the sum. DDP's all-reduce is one reduce-scatter plus one all-gather.",
    changes: (c) =>
      `comm: the bytes these move per GPU per step, as a multiple of DDP's${c.ddpPerStep ? ` (1x = ${c.ddpPerStep} per step here)` : ''}.`,
  },
  {
    id: '1.5x',
    term: "ZeRO-3's traffic (1.5x DDP and more)",
    text: 'ZeRO-3 all-gathers the parameters twice per step (forward and backward) and reduce-scatters the gradients once. DDP moves the trained gradients twice (its all-reduce); with every parameter trained ZeRO-3 moves three times the parameters instead of twice: 1.5x DDP. With LoRA or a frozen backbone DDP moves only the few trained gradients while ZeRO-3 still gathers every parameter, so the multiple is far larger. ZeRO-1 and ZeRO-2 move the same as DDP.',
    changes: (c) =>
      `comm shows 1x for ZeRO-1 and 2, ${c.zero3Multiple ? `${c.zero3Multiple} for ZeRO-3 here` : '1.5x for ZeRO-3 when every parameter is trained'}${c.ddpPerStep ? `; 1x = ${c.ddpPerStep} per GPU per step here` : ''}.`,
  },
  {
    id: 'headroom',
    term: 'Headroom',
    text: 'Memory left free for what the estimate does not count: the CUDA context, NCCL buffers and the allocator on the GPU; the OS and data loaders on the CPU.',
    changes: (c) =>
      `fit: ✓ only when GPU peak fits what is left after the headroom${c.headroom ? ` (${c.headroom})` : ''}.`,
  },
  {
    id: 'micro-batch',
    term: 'Micro-batch',
    text: 'The samples one GPU processes in one forward and backward pass (train_micro_batch_size_per_gpu; accelerate fills it from your data loader). Activations grow with it.',
    changes: () => 'the activations, and so the GPU peak; the model states do not change.',
  },
  {
    id: 'grad-accum',
    term: 'Gradient accumulation',
    text: 'Running several micro-batches before one optimizer step: the batch the optimizer sees is micro-batch x accumulation steps x GPUs. Memory per GPU stays the same.',
    changes: () =>
      'comm and GPU↔CPU are per optimizer step, so they are spread over more samples (with offload DeepSpeed still copies gradients every micro-batch).',
  },
  {
    id: 'grad-ckpt',
    term: 'Gradient checkpointing',
    text: "Recomputing activations in the backward pass instead of keeping them: activations shrink to one checkpoint per layer plus one layer, for about a third more compute. Under ZeRO-3 offload it must be DeepSpeed's (the activation_checkpointing block of the JSON).",
    changes: () =>
      'the activations part of the GPU peak; it also decides whether the JSON gets activation_checkpointing.',
  },
  {
    id: 'precision',
    term: 'bf16 / fp16',
    text: "16-bit number formats for weights and gradients: 2 bytes instead of 4. bf16 has fp32's range and needs no loss scaling (Ampere GPUs and newer); fp16 needs loss scaling and can overflow on models trained in bf16. The optimizer states stay fp32.",
    changes: () => 'the 2 bytes per parameter of params and grads (the picture\'s "2 B").',
  },
  {
    id: 'zero-init',
    term: 'ZeRO-Init (zero3_init_flag)',
    text: 'Building the model already sharded (deepspeed.zero.Init), so no process ever holds the whole model in CPU memory while it starts. Only ZeRO-3 uses it.',
    changes: () =>
      'CPU/node of the ZeRO-3 rows: with it off, every GPU process loads the whole model on the CPU first.',
  },
];

/** A rendered glossary line. */
export interface GlossaryLine {
  text: string;
  role: 'term' | 'text' | 'changes' | null;
  /** The entry this line belongs to. */
  id: string | null;
}

/** The whole glossary at `width` columns: term, text, the number it changes, a blank line between entries. */
export function glossaryLines(width: number, ctx: GlossaryContext = {}): GlossaryLine[] {
  const out: GlossaryLine[] = [];
  GLOSSARY.forEach((e, i) => {
    if (i > 0) out.push({ text: '', role: null, id: null });
    out.push({ text: e.term, role: 'term', id: e.id });
    for (const l of wrap(e.text, width - 2)) out.push({ text: `  ${l}`, role: 'text', id: e.id });
    for (const l of wrap(`▸ in the table: ${e.changes(ctx)}`, width - 2))
      out.push({ text: `  ${l}`, role: 'changes', id: e.id });
  });
  return out;
}

/** What the glossary screen shows: a window of lines and where it is. */
export interface GlossaryView {
  lines: GlossaryLine[];
  /** The first line shown (clamped). */
  top: number;
  maxTop: number;
  /** `lines 12-31 of 70`. */
  position: string;
}

/**
 * The window of the glossary for `height` rows starting at line `top` (clamped); with `at`, the window
 * starts at that entry instead (help screens open the glossary on the word they use).
 */
export function glossaryView(
  width: number,
  height: number,
  top: number,
  ctx: GlossaryContext = {},
  at?: string,
): GlossaryView {
  const all = glossaryLines(width, ctx);
  const rows = Math.max(1, height);
  const maxTop = Math.max(0, all.length - rows);
  const anchor = at === undefined ? -1 : all.findIndex((l) => l.id === at);
  const start = Math.min(maxTop, Math.max(0, anchor >= 0 ? anchor : top));
  const lines = all.slice(start, start + rows);
  return { lines, top: start, maxTop, position: `lines ${start + 1}-${start + lines.length} of ${all.length}` };
}

/** The glossary entry a question's help opens on (the word it uses), by question. */
const TERM_OF: Partial<Record<QuestionId, string>> = {
  mode: 'sharding',
  offload_device: 'offload',
  offload_param_device: 'offload',
  nvme_path: 'offload',
  micro_batch: 'micro-batch',
  gradient_accumulation_steps: 'grad-accum',
  gradient_checkpointing: 'grad-ckpt',
  mixed_precision: 'precision',
  zero3_init: 'zero-init',
  headroom: 'headroom',
};

/** The entry the glossary opens on from the help of question `id` (none: its top). */
export function glossaryTermFor(id: QuestionId | null): string | undefined {
  return id === null ? undefined : TERM_OF[id];
}
