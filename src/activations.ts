/**
 * Activation memory per GPU for a transformer (Korthikanti et al. 2022, "Reducing Activation Recomputation
 * in Large Transformer Models", no tensor or sequence parallelism, 16-bit activations):
 * - without recomputation, per layer: s*b*h*(34 + 5*a*s/h) bytes  =  34*s*b*h + 5*a*s^2*b;
 * - with full checkpointing: each layer keeps only its 16-bit input (2*s*b*h bytes), and one layer's full
 *   activations exist at a time while it is recomputed: layers*2*s*b*h + one layer without recomputation.
 * s = sequence length (for a DiT: image tokens + text tokens), b = micro-batch per GPU, h = hidden size,
 * a = attention heads. The 5*a*s^2*b term is the attention score matrix; fused attention kernels
 * (FlashAttention, SDPA) do not keep it, so this is an upper bound for them.
 */
import { UsageError } from './errors.js';

/** Activation checkpointing: `none` keeps every activation; `full` recomputes each layer in backward. */
export type Checkpointing = 'none' | 'full';

/** The transformer shape the activation formula needs. */
export interface ActivationInput {
  layers: number;
  hidden: number;
  /** Sequence length, or image tokens (+ text tokens) for a DiT. */
  seqLen: number;
  microBatch: number;
  heads: number;
  checkpointing: Checkpointing;
}

/** Activation bytes per layer without recomputation: 34*s*b*h + 5*a*s^2*b. */
export function activationBytesPerLayer(a: Omit<ActivationInput, 'layers' | 'checkpointing'>): number {
  const { seqLen: s, microBatch: b, hidden: h, heads } = a;
  return 34 * s * b * h + 5 * heads * s * s * b;
}

/** Activation bytes per GPU for the whole model. */
export function activationBytes(a: ActivationInput): number {
  for (const [k, v] of Object.entries({
    layers: a.layers,
    hidden: a.hidden,
    seqLen: a.seqLen,
    microBatch: a.microBatch,
    heads: a.heads,
  })) {
    if (!Number.isInteger(v) || v < 1)
      throw new UsageError(`activation ${k} must be a whole number of at least 1, got ${v}`);
  }
  const perLayer = activationBytesPerLayer(a);
  if (a.checkpointing === 'full') return a.layers * 2 * a.seqLen * a.microBatch * a.hidden + perLayer;
  return a.layers * perLayer;
}
